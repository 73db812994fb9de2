#!/usr/bin/env python3
"""A session folder whose run log names many distinct phases (issue 27, item 6).

A runaway loop that names a phase per step: one outer phase `train` open for the whole run,
and inside it `train/step_<i>` for i in 0..N-1, one after the other, each lasting one sampling
interval, written as runmon's Python module writes them (phase_enter / phase_exit pairs, the
format of docs/FORMATS.md). Beside it a session.json and a gpu.csv of G GPUs at that interval
(one sample group per step, so every phase holds one sample per GPU), and a cpu.csv.

    gen_phases.py DIR --phases N [--gpus G] [--interval S]
"""
import argparse
import json
import os

T0 = 1795410049.0  # 2026-11-23T05:00:49Z


def ts(t):
    ms = int(round(t * 1000))
    s, ms = divmod(ms, 1000)
    import time

    g = time.gmtime(s)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03d+00:00" % (g[0], g[1], g[2], g[3], g[4], g[5], ms)


def smi_ts(t):
    ms = int(round(t * 1000))
    s, ms = divmod(ms, 1000)
    import time

    g = time.gmtime(s)
    return "%04d/%02d/%02d %02d:%02d:%02d.%03d" % (g[0], g[1], g[2], g[3], g[4], g[5], ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dest")
    ap.add_argument("--phases", type=int, required=True)
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--interval", type=float, default=0.1)
    a = ap.parse_args()
    os.makedirs(a.dest, exist_ok=True)
    n, g, iv = a.phases, a.gpus, a.interval
    start, end = T0, T0 + (n + 2) * iv
    pid = 4242
    gpus = [
        {"index": k, "uuid": "GPU-%08d-0000-0000-0000-000000000000" % k,
         "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:%02X:00.0" % (k + 1),
         "memory_total_mb": 81559.0}
        for k in range(g)
    ]
    fields = ["timestamp", "index", "uuid", "name", "pci.bus_id", "utilization.gpu",
              "utilization.memory", "memory.used", "memory.total", "power.draw",
              "temperature.gpu", "clocks.current.sm", "clocks.current.memory"]
    ses = {"format": "runmon-session", "schema_version": 1, "session_id": "phases-%d" % n,
           "status": "completed", "host": "bench", "pid": pid, "started_at": ts(start),
           "ended_at": ts(end), "command": ["python3", "loop.py"], "exit_code": 0,
           "interval_s": iv, "gpu_fields": fields, "gpus": gpus}
    with open(os.path.join(a.dest, "session.json"), "w") as f:
        json.dump(ses, f, indent=2)
        f.write("\n")

    def line(f, t, typ, **kw):
        d = {"ts": ts(t), "type": typ}
        d.update(kw)
        d["pid"] = pid
        d["t"] = round(t, 3)
        f.write(json.dumps(d, separators=(",", ":")) + "\n")

    with open(os.path.join(a.dest, "runlog.jsonl"), "w") as f:
        line(f, start, "event", event="session_start")
        t = start + iv / 2
        line(f, t, "phase_enter", name="train", path="train", depth=0)
        for i in range(n):
            name = "step_%d" % i
            path = "train/" + name
            line(f, t, "phase_enter", name=name, path=path, depth=1)
            t += iv
            line(f, t, "phase_exit", name=name, path=path, depth=1, seconds=round(iv, 3),
                 status="ok")
        line(f, t, "phase_exit", name="train", path="train", depth=0,
             seconds=round(t - start - iv / 2, 3), status="ok")
        line(f, end, "event", event="session_end")

    with open(os.path.join(a.dest, "gpu.csv"), "w") as f:
        f.write("ts," + ",".join(fields) + "\n")
        rows = []
        for i in range(n + 2):
            t = start + i * iv
            a_ts, s_ts = ts(t), smi_ts(t)
            for k in range(g):
                u = (i * 7 + k * 13) % 101
                rows.append("%s,%s,%d,%s,NVIDIA H100 80GB HBM3,%s,%d,%d,%d,81559,%.2f,%d,1980,2619\n" % (
                    a_ts, s_ts, k, gpus[k]["uuid"], gpus[k]["pci_bus_id"], u, u // 2,
                    3000 + u * 10, 100 + u * 3.5, 40 + u // 10))
            if len(rows) > 65536:
                f.write("".join(rows))
                rows = []
        f.write("".join(rows))

    with open(os.path.join(a.dest, "cpu.csv"), "w") as f:
        f.write("ts,cpu,usr_pct,nice_pct,sys_pct,iowait_pct,irq_pct,softirq_pct,steal_pct,"
                "idle_pct,mem_total_mb,mem_available_mb,mem_used_mb\n")
        rows = []
        for i in range(1, n + 2):
            u = (i * 3) % 90
            rows.append("%s,all,%d.00,0.00,2.00,0.00,0.00,0.00,0.00,%d.00,64000.00,40000.00,24000.00\n"
                        % (ts(start + i * iv), u, 98 - u))
            if len(rows) > 65536:
                f.write("".join(rows))
                rows = []
        f.write("".join(rows))


if __name__ == "__main__":
    main()
