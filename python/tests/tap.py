"""Runs the unittest suite in this folder and prints TAP (`ok N - name` / `not ok N - name`)
for tests/run.sh to tally. Standard library only: Debian's python3 has no pytest.

usage: python3 tap.py [PATTERN]   (default test_*.py)
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the runmon package, uninstalled
sys.path.insert(0, HERE)


class TapResult(unittest.TestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.n = 0

    def _emit(self, test, ok, detail=None):
        self.n += 1
        print("%s %d - python/%s" % ("ok" if ok else "not ok", self.n, test.id()))
        if detail:
            for line in detail.rstrip().splitlines():
                print("#   " + line)
        sys.stdout.flush()

    def addSuccess(self, test):
        super().addSuccess(test)
        self._emit(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._emit(test, False, self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._emit(test, False, self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.n += 1
        print("ok %d - python/%s # SKIP %s" % (self.n, test.id(), reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._emit(test, True)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._emit(test, False, "unexpected success")


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    result = TapResult()
    suite.run(result)
    print("1..%d" % result.n)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
