#!/usr/bin/env python3
"""Lines per second of the Python module against bare os.write loops.

usage: bench/bench_python.py [--kv] [N]   (N lines per case, default 50000)

--kv prints NAME=VALUE lines for bench/run.sh (python_version, rounds, bare_lines_per_s,
bare_flock_lines_per_s, event_lines_per_s, phase_lines_per_s, phase_per_s,
bare_phase_lines_per_s, phase_vs_bare, metric_lines_per_s, bare_metric_lines_per_s,
metric_vs_bare, write_failures) instead of the table.

Cases, each appending to its own fresh O_APPEND file in a temp dir:
  bare os.write        a pre-built event line, one os.write per line (the floor)
  bare write + flock   the same under flock(LOCK_EX)/LOCK_UN, as runmon writes
  runmon.event         runmon.event("step", i=i): build the line, lock, write
  runmon.phase         `with runmon.phase("step"):` (two lines per phase)
  bare phase lines     os.write of the very two lines runmon.phase wrote (its first
                       phase_enter and phase_exit, read back from its file), alternately:
                       the same bytes on the same kind of descriptor, the phase's floor
  runmon.metric        runmon.metric(step=i, loss=..., acc=...): check, build, lock, write
  bare metric lines    os.write of the line runmon.metric wrote (its first, read back)
phase_vs_bare is the time of a phase over the time of those two bare writes (issue 24
goal: at most 10); metric_vs_bare the time of a metric line over two bare writes of it
(issue 39: as cheap as a phase line, at most 10). The machine may be shared: every case runs ROUNDS times (default 5,
BENCH_PYTHON_ROUNDS), interleaved, and its fastest round counts.
"""
import fcntl
import os
import shutil
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import runmon  # noqa: E402

LINE = (b'{"ts":"2026-11-21T10:15:02.200+00:00","type":"event","event":"step","pid":7115,'
        b'"t":1795256102.200,"data":{"i":12345}}\n')


def open_append(path):
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)


def bare(path, n):
    fd = open_append(path)
    start = time.perf_counter()
    for _ in range(n):
        os.write(fd, LINE)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return n, elapsed


def bare_flock(path, n):
    fd = open_append(path)
    start = time.perf_counter()
    for _ in range(n):
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, LINE)
        fcntl.flock(fd, fcntl.LOCK_UN)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return n, elapsed


def event(path, n):
    runmon.open(path)
    start = time.perf_counter()
    for i in range(n):
        runmon.event("step", i=i)
    elapsed = time.perf_counter() - start
    runmon.close()
    return n, elapsed


def phase(path, n):
    runmon.open(path)
    phases = n // 2
    start = time.perf_counter()
    for _ in range(phases):
        with runmon.phase("step"):
            pass
    elapsed = time.perf_counter() - start
    runmon.close()
    return 2 * phases, elapsed


def metric(path, n):
    runmon.open(path)
    start = time.perf_counter()
    for i in range(n):
        runmon.metric(step=i, loss=0.4137, acc=0.8712)
    elapsed = time.perf_counter() - start
    runmon.close()
    return n, elapsed


def bare_metric_lines(path, n, line):
    fd = open_append(path)
    start = time.perf_counter()
    for _ in range(n):
        os.write(fd, line)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return n, elapsed


def metric_line(path):
    with open(path, "rb") as f:
        line = f.readline()
    assert b'"type":"metric"' in line, line
    return line


def bare_phase_lines(path, n, lines):
    enter, exit_ = lines
    fd = open_append(path)
    phases = n // 2
    start = time.perf_counter()
    for _ in range(phases):
        os.write(fd, enter)
        os.write(fd, exit_)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return 2 * phases, elapsed


def phase_lines(path):
    """The first phase_enter and phase_exit lines of the phase case's file, as bytes."""
    with open(path, "rb") as f:
        enter, exit_ = f.readline(), f.readline()
    assert b'"phase_enter"' in enter and b'"phase_exit"' in exit_, (enter, exit_)
    return enter, exit_


def main():
    args = sys.argv[1:]
    kv = "--kv" in args
    args = [a for a in args if a != "--kv"]
    n = int(args[0]) if args else 50000
    rounds = int(os.environ.get("BENCH_PYTHON_ROUNDS", "5"))
    warnings.simplefilter("error")  # a failed write must not pass unnoticed here
    tmp = tempfile.mkdtemp(prefix="runmon-bench-py.")
    names = ("bare os.write", "bare write + flock", "runmon.event", "runmon.phase",
             "bare phase lines", "runmon.metric", "bare metric lines")
    best = dict.fromkeys(names, 0.0)
    try:
        lines = mline = None
        for r in range(rounds):
            for name, case in zip(names, (bare, bare_flock, event, phase, None, metric, None)):
                path = os.path.join(tmp, "%s.%d" % (name.replace(" ", "_"), r))
                if name == "bare phase lines":
                    count, elapsed = bare_phase_lines(path, n, lines)
                elif name == "bare metric lines":
                    count, elapsed = bare_metric_lines(path, n, mline)
                else:
                    count, elapsed = case(path, n)
                if case is phase and lines is None:
                    lines = phase_lines(path)
                if case is metric and mline is None:
                    mline = metric_line(path)
                best[name] = max(best[name], count / elapsed)
                os.unlink(path)
    finally:
        shutil.rmtree(tmp)
    results = [(name, best[name]) for name in names]
    floor = results[0][1]
    phase_vs_bare = best["bare phase lines"] / best["runmon.phase"]
    # a metric call against two bare writes of its line
    metric_vs_bare = best["bare metric lines"] / (2 * best["runmon.metric"])
    failures = runmon.stats()["write_failures"]
    if kv:
        keys = ("bare_lines_per_s", "bare_flock_lines_per_s", "event_lines_per_s",
                "phase_lines_per_s", "bare_phase_lines_per_s", "metric_lines_per_s",
                "bare_metric_lines_per_s")
        print("python_version=%s" % sys.version.split()[0])
        print("rounds=%d" % rounds)
        for key, (_, rate) in zip(keys, results):
            print("%s=%.0f" % (key, rate))
        print("phase_per_s=%.0f" % (best["runmon.phase"] / 2))
        print("phase_vs_bare=%.2f" % phase_vs_bare)
        print("metric_vs_bare=%.2f" % metric_vs_bare)
        print("write_failures=%d" % failures)
        return 1 if failures else 0
    print("python %s, %d lines per case, best of %d rounds, %s" % (
        sys.version.split()[0], n, rounds, tmp.rsplit("/", 1)[0]))
    print("%-20s %14s %10s %13s" % ("case", "lines/s", "us/line", "time vs bare"))
    for name, rate in results:
        print("%-20s %14.0f %10.2f %12.2fx" % (name, rate, 1e6 / rate, floor / rate))
    print("runmon.phase: %.0f phases/s (enter + exit), %.2fx the bare writes of its two "
          "lines (goal <= 10x)" % (best["runmon.phase"] / 2, phase_vs_bare))
    print("runmon.metric: %.0f lines/s, %.2fx two bare writes of its line (goal <= 10x)" % (
        best["runmon.metric"], metric_vs_bare))
    if failures:
        print("write failures: %d" % failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
