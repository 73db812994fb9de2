"""Phases (nested, per thread), events and completed phases.

Nesting is shared with the CLI: the path starts from RUNMON_PHASE_PATH (set by a parent
`runmon phase`), and while a phase is open in the main thread RUNMON_PHASE_PATH holds its
path, so a `runmon phase` started from inside it nests under it.
"""
import contextlib
import math
import os
import threading
import time

from . import _format, _probes, _writer

_ENV = "RUNMON_PHASE_PATH"
_local = threading.local()
_env_lock = threading.Lock()
_main_env = {"depth": 0, "before": None}  # main-thread phases that set the variable


class _Frame:
    __slots__ = ("name", "path", "depth", "extra", "log", "start_ns", "env_before",
                 "set_env", "torch_peaks")

    def __init__(self, name, path, depth, extra, log):
        self.name, self.path, self.depth, self.extra, self.log = name, path, depth, extra, log
        self.start_ns = 0
        self.env_before = None
        self.set_env = False
        self.torch_peaks = None


def _stack():
    try:
        return _local.stack
    except AttributeError:
        _local.stack = []
        return _local.stack


def _inherited_prefix():
    """RUNMON_PHASE_PATH as the process inherited it, ignoring what our own main-thread
    phases put there (another thread starts from the inherited prefix)."""
    with _env_lock:
        if _main_env["depth"]:
            value = _main_env["before"]
        else:
            value = os.environ.get(_ENV)
    if not value:
        return None
    try:
        for part in value.split("/"):
            _format.check_phase_name(part)
    except ValueError:
        _writer.warn_once("prefix", "ignoring bad RUNMON_PHASE_PATH %r" % value)
        return None
    return value


def current_path():
    """The '/'-joined path of the innermost open phase of this thread, or the inherited
    prefix, or None."""
    stack = _stack()
    return stack[-1].path if stack else _inherited_prefix()


def _is_main():
    return threading.current_thread() is threading.main_thread()


def _set_env(frame):
    with _env_lock:
        frame.env_before = os.environ.get(_ENV)
        if _main_env["depth"] == 0:
            _main_env["before"] = frame.env_before
        _main_env["depth"] += 1
        os.environ[_ENV] = frame.path
    frame.set_env = True


def _restore_env(frame):
    with _env_lock:
        if frame.env_before is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = frame.env_before
        _main_env["depth"] -= 1


def _enter(name, extra):
    stack = _stack()
    if stack:
        path, depth = stack[-1].path + "/" + name, stack[-1].depth + 1
    else:
        prefix = _inherited_prefix()
        path = prefix + "/" + name if prefix else name
        depth = path.count("/")
    log = _writer.destination.current()
    frame = _Frame(name, path, depth, extra, log)
    stack.append(frame)  # pushed even without a log, so exits always pair with enters
    if log is None:
        _writer.no_log()
        return
    line = _format.enter_line(time.time_ns(), os.getpid(), name, path, depth, extra)
    _writer.write_line(log, line)
    _probes.on_enter(frame)
    if _is_main():
        _set_env(frame)
    frame.start_ns = time.monotonic_ns()  # after the line is out: the write is not counted


def _exit(exc_type):
    end_ns = time.monotonic_ns()
    stack = _stack()
    if not stack:
        return
    frame = stack.pop()
    if frame.log is None:
        _writer.no_log()
        return
    if frame.set_env:
        _restore_env(frame)
    extra = dict(frame.extra)
    if exc_type is not None and "exception" not in extra:
        extra["exception"] = exc_type.__name__
    framework = _probes.on_exit(frame)
    if framework is not None and "framework" not in extra:
        extra["framework"] = framework
    seconds = math.floor((end_ns - frame.start_ns) / 1e6 + 0.5) / 1000.0
    status = "ok" if exc_type is None else "error"
    line = _format.exit_line(time.time_ns(), os.getpid(), frame.name, frame.path, frame.depth,
                             seconds, status, extra)
    _writer.write_line(frame.log, line)


class phase(contextlib.ContextDecorator):
    """`with runmon.phase("train", lr=0.1):` or `@runmon.phase("step")`.

    Writes phase_enter, then phase_exit with seconds and status ("error" when the block
    raised; the exception propagates). Extra fields go on both lines."""

    def __init__(self, name, /, **extra):
        _format.check_phase_name(name)
        _format.check_extras(extra, _format.SCOPE_RESERVED)
        self.name = name
        self.extra = extra

    def __enter__(self):
        _enter(self.name, self.extra)
        return self

    def __exit__(self, exc_type, exc, tb):
        _exit(exc_type)
        return False


def event(event_type, /, **data):
    """Writes an event line; keyword arguments go under "data" (left out when empty)."""
    _format.check_text(event_type, "event type")
    _format.check_extras(data, ())
    write_event(_writer.destination.current(), event_type, data)


def write_event(log, event_type, data):
    line = _format.event_line(time.time_ns(), os.getpid(), event_type, data)
    _write_or_drop(log, line)
    return line


def params(*, sweep=None, **values):
    """Writes the run's parameters (a `params` line) for the sweep table: numbers stay
    numbers, anything else is written as JSON or its str(). `sweep` names the sweep the run
    belongs to. A --param given to `runmon record` wins over a value logged here."""
    _format.check_extras(values, ())
    if sweep is not None:
        _format.check_text(sweep, "sweep name")
    line = _format.params_line(time.time_ns(), os.getpid(), values, sweep)
    _write_or_drop(_writer.destination.current(), line)
    return line


def log_phase(name, seconds, /, **extra):
    """Writes a completed phase of `seconds` (finite, >= 0; rounded to the millisecond)."""
    seconds = check_phase_args(name, seconds, extra)
    write_phase(_writer.destination.current(), name, seconds, extra)


def check_phase_args(name, seconds, extra):
    _format.check_text(name, "phase name")
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError("seconds must be a finite number >= 0, not %r" % (seconds,))
    _format.check_extras(extra, _format.PHASE_RESERVED)
    return value


def write_phase(log, name, seconds, extra):
    line = _format.phase_line(time.time_ns(), os.getpid(), name, seconds, extra)
    _write_or_drop(log, line)
    return line


def _write_or_drop(log, line):
    if log is None:
        _writer.no_log()
    else:
        _writer.write_line(log, line)
