"""Metric and objective lines (runmon.metric, runmon.objective), byte-compatible with the C
writer (rm_runlog_metric, rm_runlog_objective in runlog/runlog.c).

A metric line costs about what a phase line does: the names of a call are checked once per
set of names (a training loop logs the same ones every step) and the line is joined from a
fragment made once for them, so a call is the values' text, the time and one write.
"""
import math
import time

from . import _format, _writer

# The rules of model/objective.h: 1 to 127 bytes of UTF-8 without control characters, none
# of / : = < > , and no space at either end; 1 to 256 values a line, 1 to 64 objectives.
NAME_MAX_BYTES = 127
BAD_CHARS = "/:=<>,"
LINE_MAX = 256
OBJECTIVES_MAX = 64

_heads = {}  # the names of a call, in order -> ('"loss":', '"acc":', ...)
_time_ns = time.time_ns
_stamped = _format.stamped
_quote = _format._quote  # noqa: SLF001 - the one string escaping of both writers
_destination = _writer.destination
_MIN_NORMAL = _format._MIN_NORMAL  # noqa: SLF001
_format_real = _format.format_real


def check_metric_name(name):
    """Raises ValueError naming the problem when `name` is not a metric name."""
    if not isinstance(name, str) or not name:
        raise ValueError("empty metric name" if isinstance(name, str) else
                         "a metric name must be a str, not %r" % (name,))
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("metric name %r is not UTF-8 text" % name) from None
    if size > NAME_MAX_BYTES:
        raise ValueError("metric name %r is longer than %d bytes" % (name[:40] + "...",
                                                                      NAME_MAX_BYTES))
    if _format._CONTROL.search(name):  # noqa: SLF001
        raise ValueError("metric name %r is not UTF-8 text (control characters)" % name)
    for c in BAD_CHARS:
        if c in name:
            raise ValueError("metric name %r contains %r (none of %s may appear)"
                             % (name, c, BAD_CHARS))
    if name[0] == " " or name[-1] == " ":
        raise ValueError("metric name %r starts or ends with a space" % name)


def _head(names):
    if not 1 <= len(names) <= LINE_MAX:
        raise ValueError("a metric line carries 1 to %d values, not %d" % (LINE_MAX, len(names)))
    for name in names:
        check_metric_name(name)
    head = tuple(("," if i else "") + _quote(name) + ":" for i, name in enumerate(names))
    if len(_heads) >= 4096:  # names made per call: stay bounded
        _heads.clear()
    _heads[names] = head
    return head


def _refuse(name, value):
    text = repr(value)
    raise ValueError("metric %r: the value must be a finite number, not %s"
                     % (name, text if len(text) <= 60 else text[:60] + "..."))


def _value_text(name, value):
    """The value as the C writer's put_real writes it; ValueError unless a finite number."""
    if value.__class__ is not float:
        if isinstance(value, bool) or not (isinstance(value, (int, float)) or
                                           hasattr(value, "__float__")) or isinstance(value, str):
            _refuse(name, value)
        try:
            value = float(value)
        except (OverflowError, TypeError, ValueError):
            _refuse(name, value)
    if _MIN_NORMAL <= abs(value) < 1e15 or value == 0.0:
        return repr(value)  # finite: nan and inf compare false above
    if not math.isfinite(value):
        _refuse(name, value)
    return _format_real(value)


def metric(step=None, **values):
    """Writes a metric line: `runmon.metric(step=120, loss=0.41, acc=0.87)`. Values must be
    finite numbers (ValueError otherwise, nothing written); `step`, when given, an integer
    >= 0. The summary keeps each metric's last, min, max, count and first/last step and
    time, over the run and per phase."""
    names = tuple(values)
    head = _heads.get(names)
    if head is None:
        head = _head(names)
    parts = []
    for key, name, value in zip(head, names, values.values()):
        parts.append(key)
        parts.append(_value_text(name, value))
    if step is None:
        step_text = ""
    elif step.__class__ is int and step >= 0:
        step_text = ',"step":%d' % step
    else:
        step_text = _step_text(step)
    log = _destination._explicit or _destination.current()  # noqa: SLF001
    if log is None:
        _writer.no_log()
        return
    middle = ('+00:00","type":"metric"' + step_text + ',"values":{' + "".join(parts) +
              '},"pid":' + _format.pid_text + ',"t":')
    log.write_line(_stamped(_time_ns(), middle))


def _step_text(step):
    if isinstance(step, bool) or not hasattr(step, "__index__") or step.__index__() < 0:
        raise ValueError("step must be an integer >= 0, not %r" % (step,))
    return ',"step":%d' % step.__index__()


def parse_objective(spec):
    """(metric, goal, pick) of "METRIC:min|max[:last|best]"; ValueError naming the spec."""
    if not isinstance(spec, str):
        raise ValueError("an objective must be a str such as 'acc:max', not %r" % (spec,))
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise ValueError("objective %r: expected METRIC:min|max[:last|best]" % spec)
    try:
        check_metric_name(parts[0])
    except ValueError as e:
        raise ValueError("objective %r: %s" % (spec, e)) from None
    if parts[1] not in ("min", "max"):
        raise ValueError("objective %r: the goal must be min or max" % spec)
    pick = parts[2] if len(parts) == 3 else "last"
    if pick not in ("last", "best"):
        raise ValueError("objective %r: the pick must be last or best" % spec)
    return parts[0], parts[1], pick


def objective(*specs):
    """Writes an objective line: `runmon.objective("acc:max", "loss:min:best")`, what the
    run is judged by (the sweep table's objectives when it is given no --objective)."""
    if not 1 <= len(specs) <= OBJECTIVES_MAX:
        raise ValueError("an objective line names 1 to %d objectives, not %d"
                         % (OBJECTIVES_MAX, len(specs)))
    items = []
    for spec in specs:
        name, goal, pick = parse_objective(spec)
        items.append('{"metric":%s,"goal":"%s","pick":"%s"}' % (_quote(name), goal, pick))
    log = _destination.current()
    if log is None:
        _writer.no_log()
        return
    middle = ('+00:00","type":"objective","objectives":[' + ",".join(items) + '],"pid":' +
              _format.pid_text + ',"t":')
    log.write_line(_stamped(_time_ns(), middle))


