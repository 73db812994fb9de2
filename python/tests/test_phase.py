"""Nesting (threads, RUNMON_PHASE_PATH both ways), status, the decorator, and what happens
without a log or when writes fail."""
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import runmon
from runmon import _writer
from helpers import RUNMON, Clean, needs_runmon, read_lines


class PhaseTest(Clean):
    def setUp(self):
        super().setUp()
        self.log = self.path("r.jsonl")
        runmon.open(self.log)

    def test_nested_paths_and_depths(self):
        with runmon.phase("train"):
            with runmon.phase("forward"):
                self.assertEqual(runmon.current_path(), "train/forward")
        lines = read_lines(self.log)
        self.assertEqual([(l["type"], l["path"], l["depth"]) for l in lines], [
            ("phase_enter", "train", 0), ("phase_enter", "train/forward", 1),
            ("phase_exit", "train/forward", 1), ("phase_exit", "train", 0)])
        self.assertTrue(all(isinstance(l["seconds"], float) for l in lines[2:]))

    def test_params_line(self):
        runmon.params(lr=0.1, batch=64, opt="adam", sweep="s1")
        runmon.params(seed=3)
        lines = read_lines(self.log)
        self.assertEqual([l["type"] for l in lines], ["params", "params"])
        self.assertEqual(lines[0]["params"], {"lr": 0.1, "batch": 64, "opt": "adam"})
        self.assertEqual(lines[0]["sweep"], "s1")
        self.assertNotIn("sweep", lines[1])
        with open(self.log, encoding="utf-8") as f:
            first = f.readline()
        self.assertRegex(first, r'^\{"ts":"[^"]+","type":"params","params":\{"lr":0\.1,'
                         r'"batch":64,"opt":"adam"\},"sweep":"s1","pid":\d+,"t":\d+\.\d{3}\}\n$')

    def test_params_checks_keys_and_the_sweep_name(self):
        with self.assertRaises(ValueError):
            runmon.params(**{"": 1})
        with self.assertRaises(ValueError):
            runmon.params(**{"a\x1b": 1})
        with self.assertRaises(ValueError):
            runmon.params(lr=1, sweep="")
        with self.assertRaises(ValueError):
            runmon.params(lr=1, sweep="a\nb")
        self.assertEqual(read_lines(self.log), [])

    def test_extras_go_on_both_lines(self):
        with runmon.phase("train", lr=0.1):
            pass
        self.assertEqual([l["lr"] for l in read_lines(self.log)], [0.1, 0.1])

    def test_an_exception_gives_status_error_and_propagates(self):
        with self.assertRaises(KeyError):
            with runmon.phase("bad"):
                raise KeyError("x")
        exit_line = read_lines(self.log)[-1]
        self.assertEqual((exit_line["status"], exit_line["exception"]), ("error", "KeyError"))

    def test_decorator(self):
        @runmon.phase("step")
        def step(x):
            return x * 2

        self.assertEqual(step(2), 4)
        self.assertEqual(step(3), 6)
        self.assertEqual([l["type"] for l in read_lines(self.log)],
                         ["phase_enter", "phase_exit"] * 2)

    def test_seconds_measure_the_block(self):
        import time
        with runmon.phase("sleep"):
            time.sleep(0.05)
        self.assertGreaterEqual(read_lines(self.log)[-1]["seconds"], 0.05)

    def test_inherited_prefix(self):
        os.environ["RUNMON_PHASE_PATH"] = "outer/mid"
        with runmon.phase("inner"):
            pass
        first = read_lines(self.log)[0]
        self.assertEqual((first["path"], first["depth"]), ("outer/mid/inner", 2))

    def test_main_thread_phase_sets_and_restores_the_variable(self):
        os.environ["RUNMON_PHASE_PATH"] = "outer"
        with runmon.phase("a"):
            self.assertEqual(os.environ["RUNMON_PHASE_PATH"], "outer/a")
            with runmon.phase("b"):
                self.assertEqual(os.environ["RUNMON_PHASE_PATH"], "outer/a/b")
            self.assertEqual(os.environ["RUNMON_PHASE_PATH"], "outer/a")
        self.assertEqual(os.environ["RUNMON_PHASE_PATH"], "outer")
        del os.environ["RUNMON_PHASE_PATH"]
        with runmon.phase("c"):
            pass
        self.assertNotIn("RUNMON_PHASE_PATH", os.environ)

    def test_threads_have_their_own_stack_from_the_inherited_prefix(self):
        os.environ["RUNMON_PHASE_PATH"] = "job"
        seen = {}

        def worker(name):
            with runmon.phase(name):
                with runmon.phase("inner"):
                    seen[name] = runmon.current_path()

        with runmon.phase("main"):
            threads = [threading.Thread(target=worker, args=("w%d" % i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(os.environ["RUNMON_PHASE_PATH"], "job/main")  # not a worker's
        self.assertEqual(seen, {"w%d" % i: "job/w%d/inner" % i for i in range(4)})
        self.assertEqual(len(read_lines(self.log)), 2 + 4 * 4)

    def test_bad_inherited_prefix_is_ignored_with_a_warning(self):
        os.environ["RUNMON_PHASE_PATH"] = "a//b"
        with warnings.catch_warnings(record=True) as caught:
            with runmon.phase("x"):
                pass
        self.assertEqual(read_lines(self.log)[0]["path"], "x")
        self.assertTrue(any("RUNMON_PHASE_PATH" in str(w.message) for w in caught))

    @needs_runmon
    def test_a_runmon_phase_started_inside_nests_under_it(self):
        runmon.close()
        os.environ["RUNMON_RUNLOG"] = self.log
        with runmon.phase("py"):
            subprocess.run([RUNMON, "phase", "sub", "--", "true"], check=True)
        paths = [(l["type"], l["path"], l["depth"]) for l in read_lines(self.log)]
        self.assertIn(("phase_enter", "py/sub", 1), paths)
        self.assertIn(("phase_exit", "py/sub", 1), paths)

    @needs_runmon
    def test_open_points_runmon_children_at_the_same_file(self):
        with runmon.phase("py"):
            subprocess.run([RUNMON, "log", "event", "child"], check=True)
        self.assertEqual(read_lines(self.log)[1]["event"], "child")

    @needs_runmon
    def test_a_python_phase_inside_runmon_phase(self):
        script = self.path("x.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""\
                import runmon
                with runmon.phase("inner"):
                    pass
                """))
        env = dict(os.environ, RUNMON_RUNLOG=self.log, PYTHONPATH=_package_dir())
        runmon.close()
        subprocess.run([RUNMON, "phase", "outer", "--", sys.executable, script], env=env,
                       check=True)
        inner = [l for l in read_lines(self.log) if l["name"] == "inner"]
        self.assertEqual([(l["path"], l["depth"]) for l in inner], [("outer/inner", 1)] * 2)


def _package_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ForkTest(Clean):
    def test_a_forked_child_writes_whole_lines_with_its_own_pid(self):
        runmon.open(self.path("f.jsonl"))
        runmon.event("parent")
        pid = os.fork()
        if pid == 0:
            try:
                for i in range(200):
                    runmon.event("child", i=i)
            finally:
                os._exit(0)
        for i in range(200):
            runmon.event("parent", i=i)
        os.waitpid(pid, 0)
        lines = read_lines(self.path("f.jsonl"))
        self.assertEqual(len(lines), 401)
        self.assertEqual({l["pid"] for l in lines if l["event"] == "child"}, {pid})
        self.assertEqual({l["pid"] for l in lines if l["event"] == "parent"}, {os.getpid()})


class ManyWritersTest(Clean):
    def test_phases_from_threads_and_a_forked_child_are_whole_lines(self):
        # Several writers on one O_APPEND file, each line one write under flock: threads of
        # this process and a forked child (its own pid in its lines, from the fork hook).
        runmon.open(self.path("m.jsonl"))
        with runmon.phase("warm"):  # the parent's fragments exist before the fork
            pass
        pid = os.fork()
        if pid == 0:
            try:
                for i in range(300):
                    with runmon.phase("warm"):
                        runmon.event("child", i=i)
            finally:
                os._exit(0)

        def worker(w):
            for i in range(300):
                with runmon.phase("w%d" % w):
                    with runmon.phase("s", i=i):
                        pass

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        os.waitpid(pid, 0)
        lines = read_lines(self.path("m.jsonl"))
        self.assertEqual(len(lines), 2 + 300 * 3 + 3 * 300 * 4)
        child = [l for l in lines if l["pid"] == pid]
        self.assertEqual(len(child), 300 * 3)
        self.assertEqual({l["type"] for l in child}, {"phase_enter", "phase_exit", "event"})
        mine = [l for l in lines if l["pid"] == os.getpid()]
        self.assertEqual(len(mine), 2 + 3 * 300 * 4)
        self.assertEqual({l["path"] for l in mine}, {"warm"} | {"w%d" % w for w in range(3)} |
                         {"w%d/s" % w for w in range(3)})
        self.assertEqual(runmon.stats()["lines_written"], 2 + 3 * 300 * 4)


class OpenCloseTest(Clean):
    def test_open_sets_runmon_runlog_and_close_restores_it(self):
        os.environ["RUNMON_RUNLOG"] = self.path("env.jsonl")
        runmon.open(self.path("explicit.jsonl"))
        self.assertEqual(os.environ["RUNMON_RUNLOG"], self.path("explicit.jsonl"))
        runmon.event("a")
        runmon.close()
        self.assertEqual(os.environ["RUNMON_RUNLOG"], self.path("env.jsonl"))
        runmon.event("b")
        self.assertEqual(read_lines(self.path("explicit.jsonl"))[0]["event"], "a")
        self.assertEqual(read_lines(self.path("env.jsonl"))[0]["event"], "b")


class NoLogTest(Clean):
    def test_without_a_log_calls_do_nothing_and_warn_once(self):
        with warnings.catch_warnings(record=True) as caught:
            with runmon.phase("a"):
                runmon.event("e", x=1)
            runmon.log_phase("p", 1.0)
            runmon.event("e2")
        self.assertEqual(len([w for w in caught if issubclass(w.category, RuntimeWarning)]), 1)
        self.assertIn("RUNMON_RUNLOG", str(caught[0].message))
        self.assertEqual(runmon.stats()["lines_written"], 0)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_runmon_runlog_is_used(self):
        os.environ["RUNMON_RUNLOG"] = self.path("env.jsonl")
        runmon.event("e")
        self.assertEqual(read_lines(self.path("env.jsonl"))[0]["event"], "e")


class FailureTest(Clean):
    def test_a_removed_log_never_raises_warns_once_and_counts(self):
        runmon.open(self.path("gone.jsonl"))
        runmon.event("before")
        os.unlink(self.path("gone.jsonl"))
        # Removal is checked once per REMOVED_CHECK_NS (an fstat per line would cost more
        # than the write): past that, every line is refused.
        time.sleep(_writer.REMOVED_CHECK_NS / 1e9 * 2)
        with warnings.catch_warnings(record=True) as caught:
            for _ in range(3):
                with runmon.phase("p"):
                    runmon.event("e")
        self.assertEqual(len(caught), 1)
        self.assertIn("removed", str(caught[0].message))
        self.assertEqual(runmon.stats()["write_failures"], 9)
        self.assertEqual(runmon.stats()["lines_written"], 1)

    def test_a_closed_descriptor_never_raises(self):
        log = _writer.destination.open(self.path("bad.jsonl"))
        os.close(log._fd)  # EBADF from under the writer
        with warnings.catch_warnings(record=True) as caught:
            runmon.event("e")
            runmon.event("e")
        self.assertEqual(len(caught), 1)
        self.assertEqual(runmon.stats()["write_failures"], 2)
        log._fd = -1

    def test_an_unwritable_runmon_runlog_never_raises(self):
        os.environ["RUNMON_RUNLOG"] = self.path("no/such/dir/r.jsonl")
        with warnings.catch_warnings(record=True) as caught:
            with runmon.phase("p"):
                runmon.event("e")
        self.assertEqual(len(caught), 1)
        self.assertEqual(runmon.stats()["write_failures"], 3)  # the open is tried once

    def test_a_partial_write_is_cut_back(self):
        # A file-size limit makes Linux write part of a line; the writer cuts it back.
        script = textwrap.dedent("""\
            import resource, sys, warnings
            sys.path.insert(0, %r)
            import runmon
            resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
            runmon.open(%r)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for i in range(100):
                    runmon.event("e", i=i, pad="x" * 40)
            print(runmon.stats()["write_failures"], len(caught), caught[0].message)
            """) % (_package_dir(), self.path("small.jsonl"))
        out = subprocess.run([sys.executable, "-c", script], check=True,
                             stdout=subprocess.PIPE).stdout.decode()
        failures, warned, message = out.split(" ", 2)
        self.assertGreater(int(failures), 0)
        self.assertEqual(warned, "1")
        self.assertIn("partial line removed", message)
        with open(self.path("small.jsonl"), "rb") as f:
            data = f.read()
        self.assertTrue(data.endswith(b"\n"))
        self.assertLessEqual(len(data), 1000)
        self.assertEqual(len(read_lines(self.path("small.jsonl"))), data.count(b"\n"))
