"""Builds run-log lines byte-compatible with the C writer (runlog/runlog.c).

Field order, the `ts`/`t` forms, string escaping and number formatting all follow the C
code, so a reader cannot tell which writer produced a line (docs/FORMATS.md, RunLog).
"""
import json
import math
import os
import re
import time

# The C writer escapes exactly what Python's json escapes without ensure_ascii:
# '"', '\\' and C0 controls (\b \f \n \r \t by name, others as \u00xx).
_quote = json.encoder.encode_basestring  # type: ignore[attr-defined]

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")

PHASE_RESERVED = frozenset(("ts", "type", "name", "seconds", "pid", "t"))
SCOPE_RESERVED = frozenset(("ts", "type", "name", "path", "depth", "seconds", "status", "pid", "t"))


def check_text(text, what):
    """Names, event types and keys: non-empty str without control characters (C0, DEL, C1)."""
    if not isinstance(text, str) or not text:
        raise ValueError("empty %s" % what if isinstance(text, str) else "%s must be a str" % what)
    if _CONTROL.search(text):
        raise ValueError("%s %r contains a control character" % (what, text))


def check_phase_name(name):
    check_text(name, "phase name")
    if "/" in name:
        raise ValueError("phase name %r contains '/' (it separates nested phases)" % name)


def check_extras(extra, reserved):
    for key in extra:
        check_text(key, "key")
        if key in reserved:
            raise ValueError("key %r is reserved on this line" % key)


_MIN_NORMAL = 2.2250738585072014e-308


def format_real(value):
    """Shortest round-trip text, always with '.' or an exponent (as the C put_real).

    For normal numbers below 1e15 Python's repr is that text. Above, C's %.15g..%.17g
    switches to an exponent earlier than repr does, and subnormals round-trip at 15 digits
    where repr is shorter, so there the C search is replayed."""
    if _MIN_NORMAL <= abs(value) < 1e15 or value == 0.0:
        return repr(value)
    for prec in (15, 16, 17):
        text = "%.*g" % (prec, value)
        if float(text) == value:
            break
    if "." not in text and "e" not in text:
        text += ".0"
    return text


def _value(value, out):
    kind = type(value)
    if kind is str:  # the common cases first, by exact type
        out.append(_quote(value))
    elif kind is int:
        out.append(str(value))
    elif kind is float:
        out.append(_real(value))
    else:
        _other_value(value, out)


def _real(value):
    # Non-finite numbers are not JSON; the CLI keeps `nan` as a string too.
    return format_real(value) if math.isfinite(value) else _quote(repr(value))


def _other_value(value, out):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(_real(float(value)))
    elif isinstance(value, dict):
        _object(value, out)
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _value(item, out)
        out.append("]")
    elif hasattr(value, "__index__"):  # numpy integers, 0-d integer tensors
        out.append(str(value.__index__()))
    elif hasattr(value, "__float__"):  # numpy floats, 0-d tensors
        out.append(_real(float(value)))
    else:
        out.append(_quote(str(value)))


def _object(obj, out):
    out.append("{")
    first = True
    for key, item in obj.items():
        if not first:
            out.append(",")
        first = False
        out.append(_quote(str(key)))
        out.append(":")
        _value(item, out)
    out.append("}")


# (epoch second, "YYYY-MM-DDTHH:MM:SS"): one strftime per second. Replaced as a whole
# tuple so threads never see a half-updated pair.
_ts_cache = (None, "")


def stamp(now_ns):
    """`ts` and `t` of one instant, both from the floored milliseconds (as the C writer)."""
    global _ts_cache
    secs, msec = divmod(now_ns // 1000000, 1000)
    cached = _ts_cache
    if cached[0] != secs:
        cached = (secs, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)))
        _ts_cache = cached
    return "%s.%03d+00:00" % (cached[1], msec), "%d.%03d" % (secs, msec)


def round_ms(seconds):
    """Seconds rounded half away from zero to the millisecond, as C's round()."""
    if seconds >= 1e15:
        return float(seconds)
    return math.floor(seconds * 1000.0 + 0.5) / 1000.0


def job_rank():
    """This process's rank in a multi-process job: RANK (torchrun, DeepSpeed, accelerate),
    else SLURM_PROCID (srun's task); None outside one or when not a decimal number."""
    for var in ("RANK", "SLURM_PROCID"):
        value = os.environ.get(var, "")
        if value.isdigit() and value.isascii() and len(value) < 10:
            return int(value)
    return None


def _line(now_ns, line_type, fields, pid, extra):
    ts, t = stamp(now_ns)
    parts = ['{"ts":"', ts, '","type":"', line_type, '"']
    for key, value in fields:
        parts.append(',"%s":' % key)
        parts.append(value)
    parts.append(',"pid":%d,"t":%s' % (pid, t))
    # The ranks of one job share the node's run log: each line says whose it is, unless
    # the caller gave its own "rank".
    rank = job_rank()
    if rank is not None and not (extra and "rank" in extra):
        parts.append(',"rank":%d' % rank)
    if extra:
        for key, value in extra.items():
            parts.append(",")
            parts.append(_quote(key))
            parts.append(":")
            _value(value, parts)
    parts.append("}\n")
    return "".join(parts).encode("utf-8", "replace")


def phase_line(now_ns, pid, name, seconds, extra):
    fields = (("name", _quote(name)), ("seconds", format_real(round_ms(seconds))))
    return _line(now_ns, "phase", fields, pid, extra)


def event_line(now_ns, pid, event, data):
    # "data" comes after pid and t, like an extra field, and only when non-empty.
    extra = {"data": data} if data else None
    return _line(now_ns, "event", (("event", _quote(event)),), pid, extra)


def _scope(name, path, depth):
    return [("name", _quote(name)), ("path", _quote(path)), ("depth", str(depth))]


def enter_line(now_ns, pid, name, path, depth, extra):
    return _line(now_ns, "phase_enter", _scope(name, path, depth), pid, extra)


def exit_line(now_ns, pid, name, path, depth, seconds, status, extra):
    fields = _scope(name, path, depth)
    fields.append(("seconds", format_real(seconds)))
    fields.append(("status", '"%s"' % status))
    return _line(now_ns, "phase_exit", fields, pid, extra)


def params_line(now_ns, pid, params, sweep):
    """A run's parameters (runmon.params): "params" an object, "sweep" only when given."""
    obj = []
    _object(params, obj)
    fields = [("params", "".join(obj))]
    if sweep is not None:
        fields.append(("sweep", _quote(sweep)))
    return _line(now_ns, "params", fields, pid, None)
