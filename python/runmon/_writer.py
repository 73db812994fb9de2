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
import warnings
import weakref

_counts = {"lines_written": 0, "write_failures": 0, "dropped_no_log": 0, "probe_errors": 0}
_warned = set()
_state_lock = threading.Lock()
_open_files = weakref.WeakSet()


def count(key, n=1):
    with _state_lock:
        _counts[key] += n


def stats():
    """Counters since the process started (or since reset_stats())."""
    with _state_lock:
        return dict(_counts)


def reset_stats():
    with _state_lock:
        for key in _counts:
            _counts[key] = 0
        _warned.clear()


def warn_once(kind, message):
    with _state_lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn("runmon: " + message, RuntimeWarning, stacklevel=4)


class LogFile:
    """One open run log. Thread-safe; reopened in a forked child so that flock (which
    belongs to the open file description) keeps excluding the parent."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._use_flock = True
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
        if fd >= 0:
            os.close(fd)

    def append(self, line):
        """Writes one line (bytes ending in b"\\n"); raises OSError on any failure."""
        with self._lock:
            if self._fd < 0:
                raise OSError(errno.EBADF, "run log %s is closed" % self.path)
            locked = self._lock_file()
            try:
                self._write(line)
            finally:
                if locked:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _lock_file(self):
        if not self._use_flock:
            return False
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            return True
        except OSError as e:
            if e.errno in (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
                self._use_flock = False  # not supported here: write unlocked, as C does
                return False
            raise

    def _write(self, line):
        before = os.fstat(self._fd)
        regular = stat.S_ISREG(before.st_mode)
        if regular and before.st_nlink == 0:
            # The lines would be lost with the inode.
            raise OSError(errno.ENOENT, "run log %s was removed; line not written" % self.path)
        written = os.write(self._fd, line)
        if written < len(line):
            self._cut_back(before, regular, written, len(line))

    def _cut_back(self, before, regular, written, wanted):
        cut = False
        if regular and os.fstat(self._fd).st_size == before.st_size + written:
            os.ftruncate(self._fd, before.st_size)  # the tail is still ours
            cut = True
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        too_big = limit != resource.RLIM_INFINITY and before.st_size + wanted > limit
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


def write_line(log, line):
    """Appends line to log (a LogFile); False (warned once, counted) if it failed."""
    try:
        log.append(line)
    except OSError as e:
        count("write_failures")
        warn_once("write", "cannot write to run log %s: %s; lines are dropped (see runmon.stats())"
                  % (log.path, e))
        return False
    count("lines_written")
    return True


def no_log():
    """A line with nowhere to go: a failure if $RUNMON_RUNLOG could not be opened."""
    if os.environ.get("RUNMON_RUNLOG") and destination._explicit is None:
        count("write_failures")
        return
    count("dropped_no_log")
    warn_once("no-log", "no run log: set RUNMON_RUNLOG (runmon record does) or call "
              "runmon.open(path); phases and events are not recorded")
