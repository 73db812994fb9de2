"""Drop-in for the old Python monitor's API: RunLog, HWMonitor, build_resource_summary.

Old code switches by changing its import to `from runmon import RunLog, HWMonitor,
build_resource_summary`.
"""
import atexit
import csv
import io
import os
import signal
import subprocess
import threading
import time

from . import _cli, _format, _phase, _writer


class RunLog:
    """The old RunLog. Live when a path is known at construction (the argument, else
    $RUNMON_RUNLOG): each line is appended as it is logged. Batch otherwise: lines are kept
    in memory until write(path). Either way the lines are also kept in `self.lines`."""

    def __init__(self, path=None):
        self._file = _writer.LogFile(path) if path else self._from_env()
        self.path = self._file.path if self._file is not None else None
        self.lines = []  # bytes, in the order logged
        self._copied = {}  # file identity -> how many of self.lines it already holds
        if self._file is not None:
            self._copied[_identity(self.path)] = 0
        self._lock = threading.Lock()

    @staticmethod
    def _from_env():
        """$RUNMON_RUNLOG, else None (batch). One that cannot be opened warns and gives
        batch mode: the training script was not asking for this file by name."""
        path = os.environ.get("RUNMON_RUNLOG")
        if not path:
            return None
        try:
            return _writer.LogFile(path)
        except OSError as e:
            _writer.warn_once("write", "cannot open run log %s: %s; RunLog keeps its lines "
                              "for write()" % (path, e))
            return None

    def log_phase(self, name, seconds, **extra):
        seconds = _phase.check_phase_args(name, seconds, extra)
        self._keep(_phase.write_phase(self._file, name, seconds, extra) if self._file
                   else _format.phase_line(time.time_ns(), os.getpid(), name, seconds, extra))

    def log_event(self, event_type, data=None):
        _format.check_text(event_type, "event type")
        data = dict(data) if data else None
        self._keep(_phase.write_event(self._file, event_type, data) if self._file
                   else _format.event_line(time.time_ns(), os.getpid(), event_type, data))

    def _keep(self, line):
        with self._lock:
            self.lines.append(line)
            if self._file is not None:
                self._copied[_identity(self._file.path)] = len(self.lines)

    def write(self, path):
        """Appends to `path` the lines it does not hold yet, and returns how many: all of
        them the first time, none for the live file itself, only the newer ones after an
        earlier write(path) to the same file. It never truncates: `path` may be shared."""
        with self._lock:
            lines = list(self.lines)
        key = _identity(path)
        start = self._copied.get(key, 0)
        if start < len(lines):
            log = _writer.LogFile(path)
            try:
                for line in lines[start:]:
                    log.append(line)  # raises: write() is a user call, not the hot loop
            finally:
                log.close()
        with self._lock:
            self._copied[_identity(path)] = max(start, len(lines))
        return len(lines) - start


def _identity(path):
    """The same file under any name: (device, inode) when it exists, else its real path."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except OSError:
        return os.path.realpath(path)


class HWMonitor:
    """The old hardware monitor, now a background `runmon record` with no command.

    start(output_dir) records into output_dir/runmon_session/; stop() ends the recorder and
    writes the old files hw_metrics.csv, cpu_metrics.csv and hw_dmon.csv into output_dir."""

    STOP_TIMEOUT_S = 15.0

    def __init__(self):
        self._proc = None
        self.output_dir = None
        self.sink_dir = None
        self.session_dir = None

    def start(self, output_dir, interval_sec=2):
        if self._proc is not None:
            raise _cli.RunmonError("HWMonitor already started")
        self.output_dir = os.fspath(output_dir)
        self.sink_dir = os.path.join(self.output_dir, "runmon_session")
        os.makedirs(self.sink_dir, exist_ok=True)
        cmd = [_cli.runmon_binary(), "record", "-q", "-o", self.sink_dir,
               "-i", str(interval_sec)]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        atexit.register(self._stop_recorder)  # never outlive the program
        return self

    def stop(self):
        """Stops the recorder and returns (gpu_csv, cpu_csv, dmon_csv); each is None when
        that stream produced no data (no GPU, say)."""
        if self._proc is None:
            return (None, None, None)
        self._stop_recorder()
        atexit.unregister(self._stop_recorder)
        self._proc = None
        self.session_dir = _newest_session(self.sink_dir)
        if self.session_dir is None:
            return (None, None, None)
        return convert_session(self.session_dir, self.output_dir)

    def _stop_recorder(self):
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=self.STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _newest_session(sink):
    names = sorted(n for n in os.listdir(sink)
                   if n != "latest" and os.path.isfile(os.path.join(sink, n, "session.json")))
    return os.path.join(sink, names[-1]) if names else None


def _stream_files(session_dir, stream):
    """A stream's sealed segments (stream-NNNNNN.csv, in name order), then its active file."""
    names = sorted(n for n in os.listdir(session_dir)
                   if n.startswith(stream + "-") and n.endswith(".csv"))
    names.append(stream + ".csv")
    paths = [os.path.join(session_dir, n) for n in names]
    return [p for p in paths if os.path.isfile(p)]


def _read_rows(paths):
    """(header, rows) over all files; files whose header differs from the first's are
    skipped (a driver change mid-session), and so is a torn last line."""
    header, rows = None, []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
        if text and not text.endswith("\n"):
            text = text[: text.rfind("\n") + 1]
        records = list(csv.reader(io.StringIO(text)))
        if not records:
            continue
        if header is None:
            header = records[0]
        if records[0] == header:
            rows.extend(r for r in records[1:] if len(r) == len(header))
    return header, rows


def convert_session(session_dir, output_dir):
    """Writes the old monitor's three files from a session folder; see HWMonitor."""
    return (_write_gpu(session_dir, os.path.join(output_dir, "hw_metrics.csv")),
            _write_cpu(session_dir, os.path.join(output_dir, "cpu_metrics.csv")),
            _write_dmon(session_dir, os.path.join(output_dir, "hw_dmon.csv")))


def _write_gpu(session_dir, out):
    # nvidia-smi --query-gpu --format=csv,nounits: ", " between fields, no quoting.
    header, rows = _read_rows(_stream_files(session_dir, "gpu"))
    if not rows or header[0] != "ts":
        return None
    with open(out, "w", encoding="utf-8") as f:
        for record in [header] + rows:
            f.write(", ".join(record[1:]) + "\n")
    return out


def _write_cpu(session_dir, out):
    header, rows = _read_rows(_stream_files(session_dir, "cpu"))
    if not rows:
        return None
    col = {name: i for i, name in enumerate(header)}
    wanted = ("usr_pct", "sys_pct", "idle_pct")
    rows = [r for r in rows if r[col["cpu"]] == "all"]
    if not rows:
        return None
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(("timestamp",) + wanted)
        for r in rows:
            w.writerow([r[col["ts"]]] + [r[col[name]] for name in wanted])
    return out


def _write_dmon(session_dir, out):
    header, rows = _read_rows(_stream_files(session_dir, "dmon"))
    if not rows:
        return None
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return out


_SUMMARY_FIELDS = (
    "peak_vram_mb", "gpu_util_mean_pct", "gpu_util_max_pct", "mem_util_mean_pct",
    "mem_util_max_pct", "mem_util_source", "power_watts_mean", "power_watts_max",
    "cpu_usr_mean_pct", "cpu_idle_mean_pct", "jax_peak_bytes_mb", "generated_at",
)


class ResourceSummary:
    """The old ResourceSummary: summary.json's top-level figures as attributes (None when
    there was no data). `full` holds the whole summary.json object."""

    __slots__ = _SUMMARY_FIELDS + ("full",)

    def __init__(self, full):
        self.full = full
        for name in _SUMMARY_FIELDS:
            setattr(self, name, full.get(name))

    def to_dict(self):
        return {name: getattr(self, name) for name in _SUMMARY_FIELDS}

    def __repr__(self):
        return "ResourceSummary(%s)" % ", ".join("%s=%r" % kv for kv in self.to_dict().items())


def build_resource_summary(gpu_csv, cpu_csv, dmon_csv=None, runlog=None):
    """Summarizes the files with `runmon summary`; None inputs are left out. Raises
    RunmonError when runmon refuses them (exit 2: missing file, no data)."""
    args = []
    for option, path in (("--gpu-csv", gpu_csv), ("--cpu-csv", cpu_csv),
                         ("--dmon", dmon_csv), ("--runlog", runlog)):
        if path is not None:
            args += [option, os.fspath(path)]
    if not args:
        raise _cli.RunmonError("build_resource_summary: no input file given")
    return ResourceSummary(_cli.summary_json(args))
