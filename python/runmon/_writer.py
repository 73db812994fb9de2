"""Appends whole lines to the run log the way the C writer does (runlog/runlog.c).

One os.write per line on an O_APPEND descriptor, under flock(LOCK_EX) so Python, the CLI
and C writers can share one file, and a short write is cut back so the file only ever
holds whole lines. Failures never raise into the caller: they warn once and are counted.
"""
import errno
import fcntl
import os
import resource
import stat
import threading
import time
import warnings
import weakref

_counts = {"lines_written": 0, "write_failures": 0, "dropped_no_log": 0, "probe_errors": 0}
_warned = set()
_state_lock = threading.RLock()  # reentrant: LogFile.__del__ may run inside stats()
_open_files = weakref.WeakSet()


def count(key, n=1):
    with _state_lock:
        _counts[key] += n


def stats():
    """Counters since the process started (or since reset_stats())."""
    with _state_lock:
        counts = dict(_counts)
        counts["lines_written"] += sum(log.lines_written for log in list(_open_files))
        return counts


def reset_stats():
    with _state_lock:
        for key in _counts:
            _counts[key] = 0
        for log in list(_open_files):
            log.lines_written = 0
        _warned.clear()


def warn_once(kind, message):
    with _state_lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn("runmon: " + message, RuntimeWarning, stacklevel=4)


_flock = fcntl.flock
_fstat = os.fstat
_write = os.write
_monotonic_ns = time.monotonic_ns
# How often (ns) append() checks that the run log was not removed: lines written between a
# removal and the next check are counted as written though they went with the inode.
REMOVED_CHECK_NS = 10_000_000
_LOCK_EX = fcntl.LOCK_EX
_LOCK_UN = fcntl.LOCK_UN


class LogFile:
    """One open run log. Thread-safe; reopened in a forked child so that flock (which
    belongs to the open file description) keeps excluding the parent.

    Lines written are counted per file under its own lock (no second lock per line);
    stats() adds them up and close() folds them into the process's counters."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self.lines_written = 0
        self._lock = threading.Lock()
        self._use_flock = True
        self._next_check = 0  # monotonic ns of the next removal check: the first line checks
        self._fd = -1
        self._pid = os.getpid()
        self._fd = self._open()
        _open_files.add(self)

    def _open(self):
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        return os.open(self.path, flags, 0o644)

    def after_fork(self):
        self._lock = threading.Lock()
        self._pid = os.getpid()
        old, self._fd = self._fd, -1
        try:
            self._fd = self._open()
        except OSError:
            pass  # append() reports it as EBADF
        if old >= 0:
            os.close(old)

    def close(self):
        with self._lock:
            fd, self._fd = self._fd, -1
            self._fold_count()
        if fd >= 0:
            os.close(fd)

    def _fold_count(self):
        with _state_lock:
            _counts["lines_written"] += self.lines_written
            self.lines_written = 0

    def __del__(self):  # a file dropped unclosed (RunLog's) keeps its count
        try:
            if self.lines_written:
                self._fold_count()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def append(self, line):
        """Writes one line (bytes ending in b"\\n"); raises OSError on any failure (and
        does not count it in lines_written)."""
        self.write_line(line, 0, True)

    def write_line(self, line, count=1, raise_errors=False):
        """Appends line; False (warned once, counted) if it failed. Never raises OSError
        unless raise_errors.

        As the C writer: flock, one write, unlock, and a short write cut back. Unlike it,
        whether the file was removed (its lines would be lost with the inode) is checked
        with fstat once per REMOVED_CHECK_NS, not before every line: an fstat costs more
        than the write itself. Module functions are bound once (a hot loop's cost)."""
        try:
            with self._lock:
                fd = self._fd
                if fd < 0:
                    raise OSError(errno.EBADF, "run log %s is closed" % self.path)
                locked = False
                if self._use_flock:
                    try:
                        _flock(fd, _LOCK_EX)
                        locked = True
                    except OSError as e:
                        if e.errno not in (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
                            raise
                        self._use_flock = False  # not supported: write unlocked, as C does
                try:
                    now = _monotonic_ns()
                    if now >= self._next_check:
                        self._check_not_removed(fd)
                        self._next_check = now + REMOVED_CHECK_NS
                    written = _write(fd, line)
                    if written < len(line):
                        self._cut_back(fd, written, len(line))
                finally:
                    if locked:
                        _flock(fd, _LOCK_UN)
                self.lines_written += count
        except OSError as e:
            if raise_errors:
                raise
            count_failure(self.path, e)
            return False
        return True

    def _check_not_removed(self, fd):
        st = _fstat(fd)
        if st.st_nlink == 0 and stat.S_ISREG(st.st_mode):
            raise OSError(errno.ENOENT, "run log %s was removed; line not written" % self.path)

    def _cut_back(self, fd, written, wanted):
        # O_APPEND leaves the offset at the end of what this write put in the file; under
        # flock no other writer (C, CLI or Python) appended since.
        cut, start = False, None
        try:
            end = os.lseek(fd, 0, os.SEEK_CUR)
            start = end - written
            after = os.fstat(fd)
            if stat.S_ISREG(after.st_mode) and after.st_size == end:
                os.ftruncate(fd, start)  # the tail is still ours
                cut = True
        except OSError:
            pass  # not a regular file (no offset), or the cut failed: said below
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        too_big = (limit != resource.RLIM_INFINITY and start is not None and
                   start + wanted > limit)
        err = errno.EFBIG if too_big else errno.ENOSPC
        raise OSError(err, "%s (short write of %d of %d bytes; %s)" % (
            os.strerror(err), written, wanted,
            "partial line removed" if cut else "PARTIAL LINE LEFT IN FILE"))


def _after_fork_in_child():
    for log in list(_open_files):
        log.after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Destination:
    """Where lines go: an explicit open(path), else $RUNMON_RUNLOG, else nowhere."""

    def __init__(self):
        self._explicit = None
        self._env_path = None
        self._env_file = None
        self._lock = threading.Lock()

    def open(self, path):
        log = LogFile(path)  # raises: an explicit open is a user call, not the hot loop
        with self._lock:
            old, self._explicit = self._explicit, log
        if old is not None:
            old.close()
        return log

    def close(self):
        with self._lock:
            old, self._explicit = self._explicit, None
        if old is not None:
            old.close()

    def current(self):
        explicit = self._explicit
        if explicit is not None:
            return explicit
        path = os.environ.get("RUNMON_RUNLOG")
        if not path:
            return None
        with self._lock:
            if path != self._env_path:
                if self._env_file is not None:
                    self._env_file.close()
                self._env_path, self._env_file = path, self._open_env(path)
            return self._env_file

    @staticmethod
    def _open_env(path):
        try:
            return LogFile(path)
        except OSError as e:
            warn_once("write", "cannot open run log %s: %s; lines are dropped (see "
                      "runmon.stats())" % (path, e))
            return None  # not retried for this path: a failing open would cost every call


destination = Destination()


def count_failure(path, error):
    count("write_failures")
    warn_once("write", "cannot write to run log %s: %s; lines are dropped (see runmon.stats())"
              % (path, error))


def write_line(log, line):
    """Appends line to log (a LogFile); False (warned once, counted) if it failed."""
    return log.write_line(line)


def no_log():
    """A line with nowhere to go: a failure if $RUNMON_RUNLOG could not be opened."""
    if os.environ.get("RUNMON_RUNLOG") and destination._explicit is None:
        count("write_failures")
        return
    count("dropped_no_log")
    warn_once("no-log", "no run log: set RUNMON_RUNLOG (runmon record does) or call "
              "runmon.open(path); phases and events are not recorded")
