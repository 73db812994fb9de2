#!/usr/bin/env python3
"""Grows a sink to COUNT runs of one sweep, cloned from one real recording (the sweep page's
tests and `make bench`).

Run i is a real session folder: the template's CSV segments and run log copied (or hard-linked
with --link), its gpu.csv's memory.used, utilization.gpu and power.draw scaled by a factor of
the run (so each run draws its own line), session.json with the id, the sweep's name, the
parameters (lr, batch) and a command `python3 train.py --lr LR --batch B`, summary.json with
its figures scaled alike; the run log's `metric` values are scaled by the same factor (and
summary.json's "metrics" are those of the scaled lines; with --link the run log is linked and
only the statistics are scaled). One index.jsonl line per run is appended (as gen_sink.py does).
--samples N writes the template's GPU rows N times over, at the same times (N times the
samples to stream: the page's size and memory must not follow them).
--metric-lines N gives each run N metric lines (loss and acc, steps 0..N-1) in its run log
and their statistics in summary.json "metrics" (as the summary makes them), and the
objective line acc:max loss:min:best: the sweep table's objectives (issue 39). The run log is
written once and hard-linked with --link (N lines x COUNT runs would be gigabytes).
"""
import argparse
import json
import os
import shutil
import sys


def scale_gpu_csv(src, dst, f, repeat):
    with open(src) as fi:
        lines = fi.read().splitlines()
    head = lines[0].split(",")
    idx = {n.split(" [")[0].strip(): k for k, n in enumerate(head)}
    cols = {idx.get("memory.used"): f, idx.get("utilization.gpu"): min(1.0, f),
            idx.get("power.draw"): f}
    cols.pop(None, None)
    out = [lines[0]]
    rows = [l for l in lines[1:] if l and not l.startswith(head[0] + ",")]
    for rep in range(repeat):
        for l in rows:
            c = l.split(",")
            for k, m in cols.items():
                try:
                    v = float(c[k]) * m
                    c[k] = ("%.2f" % v) if "." in c[k] else str(int(round(v)))
                except (ValueError, IndexError):
                    pass
            out.append(",".join(c))
    with open(dst, "w") as fo:
        fo.write("\n".join(out) + "\n")


def has_metrics(path):
    with open(path, "rb") as fi:
        return b'"type":"metric"' in fi.read()


def objectives_of(path):
    """The run log's objective lines' objectives, as summary.json keeps them."""
    out = []
    with open(path) as fi:
        for line in fi:
            if '"type":"objective"' in line:
                try:
                    out += json.loads(line).get("objectives", [])
                except ValueError:
                    pass
    return out


def scale_metrics(src, dst, f):
    """The run log's `metric` lines with each value times f (each run draws its own curve).
    Returns the statistics of the lines written, as summary.json's "metrics" keeps them."""
    out, stats = [], {}
    with open(src) as fi:
        for line in fi:
            if '"type":"metric"' in line and line.endswith("\n"):
                try:
                    j = json.loads(line)
                    j["values"] = {k: v * f if isinstance(v, (int, float)) else v
                                   for k, v in j.get("values", {}).items()}
                    line = json.dumps(j, separators=(",", ":")) + "\n"
                    for k, v in j["values"].items():
                        if not isinstance(v, (int, float)):
                            continue
                        st = stats.setdefault(k, {"last": v, "min": v, "max": v, "count": 0})
                        st["last"], st["count"] = v, st["count"] + 1
                        st["min"], st["max"] = min(st["min"], v), max(st["max"], v)
                except (ValueError, AttributeError):
                    pass
            out.append(line)
    with open(dst, "w") as fo:
        fo.writelines(out)
    return stats
OBJECTIVES = [{"metric": "acc", "goal": "max", "pick": "last"},
              {"metric": "loss", "goal": "min", "pick": "best"}]


def loss_at(step, f=1.0):
    return 2.0 * f / (1 + step / 100.0)


def write_metric_runlog(src, dst, n, started_at):
    """The template's run log, then n metric lines and the objective line."""
    shutil.copyfile(src, dst)
    with open(dst, "a") as fo:
        fo.write('{"ts":"%s","type":"objective","objectives":%s,"pid":1}\n'
                 % (started_at, json.dumps(OBJECTIVES, separators=(",", ":"))))
        for step in range(n):
            loss = loss_at(step)
            fo.write('{"ts":"%s","type":"metric","step":%d,"values":{"loss":%r,"acc":%r},'
                     '"pid":1}\n' % (started_at, step, loss, 1 - loss / 2))


def metric_stats(n, f, duration):
    """summary.json's statistics of the run's n lines (its values scaled by f: runs differ)."""
    last = loss_at(n - 1, f)
    t = 1.8e9
    end = t + (duration or 1)
    return {
        "loss": {"last": last, "min": last, "max": loss_at(0, f), "count": n, "first_step": 0,
                 "last_step": n - 1, "first_t": t, "last_t": end},
        "acc": {"last": 1 - last / 2, "min": 1 - loss_at(0, f) / 2, "max": 1 - last / 2,
                "count": n, "first_step": 0, "last_step": n - 1, "first_t": t, "last_t": end},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", required=True, help="a recorded session folder")
    ap.add_argument("--dest", required=True, help="the sink to grow")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--sweep", default="lr-sweep")
    ap.add_argument("--host", default=None, help="the runs' host (default: the template's)")
    ap.add_argument("--link", action="store_true", help="hard-link the unchanged files")
    ap.add_argument("--samples", type=int, default=1, help="repeat the GPU rows N times")
    ap.add_argument("--first", type=int, default=0, help="the first run's number (ids differ)")
    ap.add_argument("--metric-lines", type=int, default=0, help="metric lines per run")
    a = ap.parse_args()

    with open(os.path.join(a.template, "session.json")) as f:
        ses = json.load(f)
    summ = None
    if os.path.exists(os.path.join(a.template, "summary.json")):
        with open(os.path.join(a.template, "summary.json")) as f:
            summ = json.load(f)
    tid = ses["session_id"]
    host = a.host or ses.get("host", "bench")
    os.makedirs(a.dest, exist_ok=True)
    ip = os.path.join(a.dest, "index.jsonl")
    if not os.path.exists(ip):
        with open(ip, "w") as f:
            f.write('{"format":"runmon-sink-index","schema_version":1,"created_at":null}\n')
    lines = []
    tstats = None
    shared_runlog = None  # with --link: the run log with metric lines, written once
    for i in range(a.first, a.first + a.count):
        lr = round(0.1 / (1 + i), 6)
        batch = 32 * (1 + i % 4)
        f = 0.5 + (i % 10) / 10.0 + (i // 10) * 0.03
        sid = "%s-%s-%04d" % (tid.split("-")[0], a.sweep.replace("/", "_"), i)
        d = os.path.join(a.dest, sid)
        if os.path.exists(d):
            continue
        os.mkdir(d)
        metrics = None
        for n in sorted(os.listdir(a.template)):
            s = os.path.join(a.template, n)
            if n in ("session.json", "summary.json", "state.json", "report.html") or \
                    not os.path.isfile(s):
                continue
            if n.startswith("gpu") and n.endswith(".csv"):
                scale_gpu_csv(s, os.path.join(d, n), f, a.samples)
            elif n == "runlog.jsonl" and a.metric_lines:
                dst = os.path.join(d, n)
                if a.link and shared_runlog:
                    os.link(shared_runlog, dst)
                else:
                    write_metric_runlog(s, dst, a.metric_lines, ses.get("started_at"))
                    shared_runlog = dst
            elif n == "runlog.jsonl" and has_metrics(s) and not a.link:
                metrics = scale_metrics(s, os.path.join(d, n), f)
            elif n == "runlog.jsonl" and has_metrics(s):
                # Linked (a bench's 1,000 runs): the template's lines, the summary's
                # statistics scaled as the lines would be.
                os.link(s, os.path.join(d, n))
                if tstats is None:
                    tstats = scale_metrics(s, os.devnull, 1.0)
                metrics = {k: dict(v, last=v["last"] * f, min=v["min"] * f, max=v["max"] * f)
                           for k, v in tstats.items()}
            elif a.link:
                os.link(s, os.path.join(d, n))
            else:
                shutil.copyfile(s, os.path.join(d, n))
        cmd = ["python3", "train.py", "--lr", str(lr), "--batch", str(batch)]
        x = dict(ses, session_id=sid, host=host, command=cmd, sweep=a.sweep,
                 params={"lr": lr, "batch": batch})
        with open(os.path.join(d, "session.json"), "w") as fo:
            json.dump(x, fo)
        if summ is not None:
            y = json.loads(json.dumps(summ))
            y["session"] = dict(y.get("session", {}), id=sid, host=host, command=cmd)
            for k in ("gpu_util_mean_pct",):
                if isinstance(y.get(k), (int, float)):
                    y[k] = min(100.0, y[k] * f)
            for k in ("peak_vram_mb", "workload_peak_vram_mb"):
                if isinstance(y.get(k), (int, float)):
                    y[k] = y[k] * f
            # The fake GPU's workload (a sleep) holds no memory: give it a share to draw.
            if not y.get("workload_peak_vram_mb") and isinstance(y.get("peak_vram_mb"), (int, float)):
                y["workload_peak_vram_mb"] = round(y["peak_vram_mb"] * 0.9, 1)
            t = y.get("totals", {})
            for k in ("energy_wh", "energy_wh_low", "energy_wh_high"):  # the value and its bar
                if isinstance(t.get(k), (int, float)):
                    t[k] = t[k] * f
            if isinstance(y["session"].get("duration_s"), (int, float)):
                y["session"]["duration_s"] = round(y["session"]["duration_s"] * (0.8 + 0.04 * (i % 10)), 3)
            if metrics is not None:  # the run's metrics as the scaled run log has them
                y["metrics"] = metrics
                if not y.get("objectives"):  # a template summarized before objectives
                    y["objectives"] = objectives_of(os.path.join(a.template, "runlog.jsonl"))
            if a.metric_lines:
                y["metrics"] = metric_stats(a.metric_lines, f, y["session"].get("duration_s"))
                y["objectives"] = OBJECTIVES
            with open(os.path.join(d, "summary.json"), "w") as fo:
                json.dump(y, fo)
        lines.append(json.dumps({
            "event": "adopted", "session_id": sid, "status": ses.get("status"), "host": host,
            "pid": ses.get("pid", 1), "started_at": ses.get("started_at"),
            "ended_at": ses.get("ended_at"), "exit_code": ses.get("exit_code"), "command": cmd,
            "sweep": a.sweep, "params": {"lr": lr, "batch": batch}, "files": 0, "bytes": 0,
        }, separators=(",", ":")) + "\n")
    with open(ip, "a") as fo:
        fo.writelines(lines)
    print(len(lines))


if __name__ == "__main__":
    sys.exit(main())
