"""Phases (nested, per thread), events and completed phases.

Nesting is shared with the CLI: the path starts from RUNMON_PHASE_PATH (set by a parent
`runmon phase`), and while a phase is open in the main thread RUNMON_PHASE_PATH holds its
path, so a `runmon phase` started from inside it nests under it.
"""
import contextlib
import math
import os
import sys
import threading
import time

from . import _format, _probes, _writer

_ENV = "RUNMON_PHASE_PATH"
_ENV_KEY = _format.env_key(_ENV)
_env_get = _format.env_get
_local = threading.local()
_modules = sys.modules
_env_lock = threading.Lock()
# [main-thread phases that set the variable, its raw value before the outermost of them]
_main_env = [0, None]


class _Frame:
    """One open phase. Attributes not given to __init__ keep their class defaults until
    set (a phase without a log, probes or environment work sets none of them)."""

    start_ns = 0
    env_before = None
    set_env = False
    torch_peaks = None
    parts = None  # _format.phase_parts, for a phase without extra fields

    def __init__(self, name, path, depth, extra, log):
        self.name, self.path, self.depth, self.extra, self.log = name, path, depth, extra, log


def _stack():
    try:
        return _local.stack
    except AttributeError:
        _local.stack = []
        return _local.stack


# (raw value, the prefix it gives): checked once per value, not once per phase.
_prefix_seen = (None, None)


def _inherited_prefix():
    """RUNMON_PHASE_PATH as the process inherited it, ignoring what our own main-thread
    phases put there (another thread starts from the inherited prefix)."""
    with _env_lock:
        if _main_env[0]:
            raw = _main_env[1]
        else:
            raw = _env_get(_ENV_KEY)
    return _prefix_of(raw)


def _prefix_of(raw):
    """The phase path prefix that RUNMON_PHASE_PATH's raw value gives, or None."""
    global _prefix_seen
    if not raw:
        return None
    seen = _prefix_seen
    if raw == seen[0]:
        return seen[1]
    value = os.fsdecode(raw)
    try:
        for part in value.split("/"):
            _format.check_phase_name(part)
    except ValueError:
        _writer.warn_once("prefix", "ignoring bad RUNMON_PHASE_PATH %r" % value)
        return None
    _prefix_seen = (raw, value)
    return value


def current_path():
    """The '/'-joined path of the innermost open phase of this thread, or the inherited
    prefix, or None."""
    stack = _stack()
    return stack[-1].path if stack else _inherited_prefix()


_current_thread = threading.current_thread
_main_thread = threading.main_thread
_time_ns = time.time_ns
_monotonic_ns = time.monotonic_ns
_stamped = _format.stamped
_phase_parts = _format.phase_parts
_format_real = _format.format_real
_floor = math.floor
_env_set = _format.env_set
_destination = _writer.destination
_good_names = _format.good_phase_names


def _set_env(frame):
    value = frame.parts[3] if frame.parts is not None else frame.path
    with _env_lock:
        frame.env_before = before = _env_get(_ENV_KEY)  # raw, put back as it was
        if not _main_env[0]:
            _main_env[1] = before
        _main_env[0] += 1
        _env_set(_ENV_KEY, value)
    frame.set_env = True


def _restore_env(frame):
    before = frame.env_before
    with _env_lock:
        _env_set(_ENV_KEY, before)
        _main_env[0] -= 1


def _exit_line_with_extras(frame, exc_type, framework, seconds):
    extra = dict(frame.extra)
    if exc_type is not None and "exception" not in extra:
        extra["exception"] = exc_type.__name__
    if framework is not None and "framework" not in extra:
        extra["framework"] = framework
    status = "ok" if exc_type is None else "error"
    return _format.exit_line(_time_ns(), os.getpid(), frame.name, frame.path, frame.depth,
                             seconds, status, extra)


class phase(contextlib.ContextDecorator):
    """`with runmon.phase("train", lr=0.1):` or `@runmon.phase("step")`.

    Writes phase_enter, then phase_exit with seconds and status ("error" when the block
    raised; the exception propagates). Extra fields go on both lines.

    __enter__ and __exit__ are the hot path of a training loop: module functions are bound
    once, and a phase without extra fields writes lines joined from fragments made once
    per path (_format.phase_parts)."""

    def __init__(self, name, /, **extra):
        if name.__class__ is not str or name not in _good_names:  # checked once per name
            _format.check_phase_name(name)
        if extra:
            _format.check_extras(extra, _format.SCOPE_RESERVED)
        self.name = name
        self.extra = extra

    def __enter__(self):
        try:
            stack = _local.stack
        except AttributeError:
            stack = _local.stack = []
        name = self.name
        main = _current_thread() is _main_thread()
        if stack:
            top = stack[-1]
            path, depth = top.path + "/" + name, top.depth + 1
        else:
            # The main thread with no phase open has not set the variable: no lock.
            prefix = _prefix_of(_env_get(_ENV_KEY)) if main else _inherited_prefix()
            path = prefix + "/" + name if prefix else name
            depth = path.count("/")
        log = _destination._explicit or _destination.current()
        frame = _Frame(name, path, depth, self.extra, log)
        stack.append(frame)  # pushed even without a log, so exits always pair with enters
        if log is None:
            _writer.no_log()
            return self
        if self.extra:
            log.write_line(_format.enter_line(_time_ns(), os.getpid(), name, path, depth,
                                              self.extra))
        else:
            frame.parts = parts = _phase_parts(path, depth)
            log.write_line(_stamped(_time_ns(), parts[0]))
        if "torch" in _modules:
            _probes.on_enter(frame)
        if main:
            _set_env(frame)
        frame.start_ns = _monotonic_ns()  # after the line is out: the write is not counted
        return self

    def __exit__(self, exc_type, exc, tb):
        end_ns = _monotonic_ns()
        try:
            frame = _local.stack.pop()
        except (AttributeError, IndexError):
            return False
        log = frame.log
        if log is None:
            _writer.no_log()
            return False
        if frame.set_env:
            _restore_env(frame)
        if frame.torch_peaks is None and "jax" not in _modules:
            framework = None  # no framework to ask (the usual case): no call
        else:
            framework = _probes.on_exit(frame)
        seconds = _floor((end_ns - frame.start_ns) / 1e6 + 0.5) / 1000.0
        parts = frame.parts
        if exc_type is None and framework is None and parts is not None:
            # seconds: 0 or at least a millisecond, so below 1e15 repr is format_real's text
            text = repr(seconds) if seconds < 1e15 else _format_real(seconds)
            log.write_line(_stamped(_time_ns(), parts[1] + text + parts[2]))
        else:
            log.write_line(_exit_line_with_extras(frame, exc_type, framework, seconds))
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
        log.write_line(line)
