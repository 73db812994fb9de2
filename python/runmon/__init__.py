"""runmon for Python: phases and events into runmon's JSONL run log, written exactly as the
C writer writes them, with framework memory peaks; plus a drop-in for the old monitor.

    import runmon
    with runmon.phase("train", lr=0.1):      # also @runmon.phase("step")
        ...
    runmon.event("checkpoint", step=10)
    runmon.log_phase("eval", 12.5, accuracy=0.93)
    runmon.params(lr=0.1, batch=64, sweep="lr-sweep")   # the sweep table's columns
    runmon.metric(step=120, loss=0.41, acc=0.87)       # what the run achieved
    runmon.objective("acc:max", "loss:min:best")       # what the sweep table judges it by

Lines go to $RUNMON_RUNLOG (set by `runmon record`) or to runmon.open(path). Without
either, calls do nothing (one RuntimeWarning). Write failures never raise: they warn once
and are counted in runmon.stats().
"""
import os as _os
from builtins import open as _builtin_open

from . import _writer
from ._cli import RunmonError
from ._metric import metric, objective
from ._compat import HWMonitor, ResourceSummary, RunLog, build_resource_summary
from ._phase import current_path, event, log_phase, params, phase

__all__ = [
    "phase", "event", "log_phase", "params", "metric", "objective", "open", "close", "stats", "current_path",
    "RunLog", "HWMonitor", "ResourceSummary", "build_resource_summary", "RunmonError",
]


def _find_version():
    """The version has one home, the checkout's VERSION file: make install, the Debian package
    and the pip build (python/_build) write it into _version.py."""
    try:
        from ._version import __version__ as v  # make install, python3-runmon, pip
        return v
    except ImportError:
        pass
    here = _os.path.dirname(_os.path.abspath(__file__))
    try:  # a checkout: python/runmon/ -> VERSION at its top
        with _builtin_open(_os.path.join(here, "..", "..", "VERSION"), encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        pass
    try:  # pip install ./python
        from importlib.metadata import version
        return version("runmon")
    except Exception:  # noqa: BLE001 - any failure means: not known
        return "unknown"


__version__ = _find_version()


_env_set_by_open = {}  # {"before": RUNMON_RUNLOG before open(), "set": what open() put}


def open(path):  # noqa: A001 - runmon.open is the documented name
    """Sends lines to `path` (created if needed, appended to) instead of $RUNMON_RUNLOG.
    Also sets RUNMON_RUNLOG to its absolute path, so `runmon log`/`runmon phase` started
    from this program write to the same file. Raises OSError if it cannot be opened."""
    _writer.destination.open(path)
    if not _env_set_by_open:
        _env_set_by_open["before"] = _os.environ.get("RUNMON_RUNLOG")
    _env_set_by_open["set"] = _os.path.abspath(path)
    _os.environ["RUNMON_RUNLOG"] = _env_set_by_open["set"]


def close():
    """Stops writing to the file given to open(); RUNMON_RUNLOG gets back the value it had
    before open() (unless changed since), and applies again."""
    _writer.destination.close()
    if _env_set_by_open and _os.environ.get("RUNMON_RUNLOG") == _env_set_by_open["set"]:
        before = _env_set_by_open["before"]
        if before is None:
            _os.environ.pop("RUNMON_RUNLOG", None)
        else:
            _os.environ["RUNMON_RUNLOG"] = before
    _env_set_by_open.clear()


def stats():
    """Counters: lines_written, write_failures, dropped_no_log, probe_errors."""
    return _writer.stats()
