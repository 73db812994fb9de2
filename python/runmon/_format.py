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


good_phase_names = set()  # names checked already (a loop names the same phases again)


def check_phase_name(name):
    if name.__class__ is str and name in good_phase_names:
        return
    check_text(name, "phase name")
    if "/" in name:
        raise ValueError("phase name %r contains '/' (it separates nested phases)" % name)
    if len(good_phase_names) >= 4096:  # names made per call (f"step{i}"): stay bounded
        good_phase_names.clear()
    good_phase_names.add(name)


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


# (epoch second, '{"ts":"YYYY-MM-DDTHH:MM:SS.', 'SSSSSSSSSS.'): one strftime per second.
# Replaced as a whole tuple so threads never see a half-updated one.
_second = (None, "", "")
_MS = tuple("%03d" % i for i in range(1000))


def _second_of(secs):
    global _second
    cached = (secs, '{"ts":"' + time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(secs)),
              "%d." % secs)
    _second = cached
    return cached


def stamp(now_ns):
    """`ts` and `t` of one instant, both from the floored milliseconds (as the C writer)."""
    secs, msec = divmod(now_ns // 1000000, 1000)
    cached = _second  # read once: another thread may replace it
    if cached[0] != secs:
        cached = _second_of(secs)
    return cached[1][7:] + _MS[msec] + "+00:00", cached[2] + _MS[msec]


def round_ms(seconds):
    """Seconds rounded half away from zero to the millisecond, as C's round()."""
    if seconds >= 1e15:
        return float(seconds)
    return math.floor(seconds * 1000.0 + 0.5) / 1000.0


# The environment as bytes, read without os.environ's per-call encode and decode (lines
# are written in hot loops); os.environ keeps it current. Elsewhere, os.environ.get.
_env_data = getattr(os.environ, "_data", None)
if os.name == "posix" and isinstance(_env_data, dict):
    _env_get = _env_data.get
    _RANK_VARS = (b"RANK", b"SLURM_PROCID")
else:  # pragma: no cover - not POSIX
    _env_get = os.environ.get
    _RANK_VARS = ("RANK", "SLURM_PROCID")


def env_key(name):
    """The key of environment variable `name` for env_get."""
    return name.encode() if _RANK_VARS[0].__class__ is bytes else name


env_get = _env_get


if _RANK_VARS[0].__class__ is bytes:
    _putenv, _unsetenv = os.putenv, os.unsetenv

    def env_set(key, value):
        """Sets (a str, or bytes as env_get gave it) or, for None, removes variable `key`
        (from env_key), as os.environ does but without its per-call encoding (a phase
        does it twice)."""
        if value is None:
            _unsetenv(key)
            _env_data.pop(key, None)
        else:
            if value.__class__ is str:
                value = os.fsencode(value)
            _putenv(key, value)
            _env_data[key] = value
else:  # pragma: no cover - not POSIX

    def env_set(key, value):
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _rank_of(values):
    for value in values:
        if value is not None and value.isdigit() and value.isascii() and len(value) < 10:
            return int(value)
    return None


def job_rank():
    """This process's rank in a multi-process job: RANK (torchrun, DeepSpeed, accelerate),
    else SLURM_PROCID (srun's task); None outside one or when not a decimal number."""
    return _rank_of([_env_get(var) for var in _RANK_VARS])


# (RANK, SLURM_PROCID as last seen, the ',"rank":N' they give): two dict lookups per line.
_rank_seen = (None, None, "")


def rank_field():
    """',"rank":N' for this process's job rank, or ""."""
    rank, procid = _env_get(_RANK_VARS[0]), _env_get(_RANK_VARS[1])
    seen = _rank_seen
    if rank != seen[0] or procid != seen[1]:
        seen = _rank_text(rank, procid)
    return seen[2]


# This process's pid as text: kept, and renewed in a forked child (os.getpid is a system call).
pid_text = str(os.getpid())
# Per phase path: the constant middles of its phase_enter and phase_exit lines (they hold
# the pid: emptied in a forked child).
_phase_parts = {}


def _after_fork():
    global pid_text
    pid_text = str(os.getpid())
    _phase_parts.clear()


os.register_at_fork(after_in_child=_after_fork)

_join = "".join


# (millisecond, '{"ts":"YYYY-MM-DDTHH:MM:SS.mmm', 'SSSSSSSSSS.mmm') of the last line: a
# loop writes many lines in the same millisecond.
_last_ms = (None, "", "")


def _ms_of(msecs):
    global _last_ms
    secs, msec = divmod(msecs, 1000)
    cached = _second  # read once: another thread may replace it
    if cached[0] != secs:
        cached = _second_of(secs)
    ms = _MS[msec]
    last = _last_ms = (msecs, cached[1] + ms, cached[2] + ms)
    return last


def _rank_text(rank, procid):
    global _rank_seen
    value = _rank_of((rank, procid))
    seen = _rank_seen = (rank, procid, "" if value is None else ',"rank":%d' % value)
    return seen


def stamped(now_ns, middle):
    """A whole line as bytes: '{"ts":"<ts>' + middle + '<t>' + rank + '}\\n'.

    middle runs from the '+00:00"' closing ts to '"t":' (see phase_parts): a line without
    extra fields costs one join, the time and the rank."""
    last = _last_ms
    if last[0] != now_ns // 1000000:
        last = _ms_of(now_ns // 1000000)
    rank, procid = _env_get(_RANK_VARS[0]), _env_get(_RANK_VARS[1])
    seen = _rank_seen
    if rank != seen[0] or procid != seen[1]:
        seen = _rank_text(rank, procid)
    text = _join((last[1], middle, last[2], seen[2], "}\n"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate (from a file name, say)
        return text.encode("utf-8", "replace")


def phase_parts(path, depth):
    """(enter middle, exit middle up to seconds, exit middle after seconds, the path as
    env_set takes it) of a phase without extra fields, for stamped(); its name is the last
    part of its path."""
    parts = _phase_parts.get(path)
    if parts is None:
        scope = scope_text(path.rpartition("/")[2], path, depth)
        pid_t = ',"pid":' + pid_text + ',"t":'
        parts = ('+00:00","type":"phase_enter"' + scope + pid_t,
                 '+00:00","type":"phase_exit"' + scope + ',"seconds":',
                 ',"status":"ok"' + pid_t,
                 os.fsencode(path) if _RANK_VARS[0].__class__ is bytes else path)
        if len(_phase_parts) >= 4096:  # paths made per call (f"step{i}"): stay bounded
            _phase_parts.clear()
        _phase_parts[path] = parts
    return parts


def extras_text(extra):
    """The extra fields of a line as ',"key":value' text, in order ("" for none)."""
    if not extra:
        return ""
    parts = []
    for key, value in extra.items():
        parts.append(",")
        parts.append(_quote(key))
        parts.append(":")
        _value(value, parts)
    return "".join(parts)


def _line(now_ns, line_type, fields, pid, extra):
    ts, t = stamp(now_ns)
    parts = ['{"ts":"', ts, '","type":"', line_type, '"']
    for key, value in fields:
        parts.append(',"%s":' % key)
        parts.append(value)
    parts.append(',"pid":%d,"t":%s' % (pid, t))
    # The ranks of one job share the node's run log: each line says whose it is, unless
    # the caller gave its own "rank".
    if not (extra and "rank" in extra):
        parts.append(rank_field())
    parts.append(extras_text(extra))
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


def scope_text(name, path, depth):
    """',"name":..,"path":..,"depth":N' of a phase's enter and exit lines."""
    return ',"name":' + _quote(name) + ',"path":' + _quote(path) + ',"depth":' + str(depth)


def params_line(now_ns, pid, params, sweep):
    """A run's parameters (runmon.params): "params" an object, "sweep" only when given."""
    obj = []
    _object(params, obj)
    fields = [("params", "".join(obj))]
    if sweep is not None:
        fields.append(("sweep", _quote(sweep)))
    return _line(now_ns, "params", fields, pid, None)
