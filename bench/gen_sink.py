#!/usr/bin/env python3
"""Grows a sink to COUNT sessions cloned from one real recording (make bench, "sink index").

Each clone is a real session folder: its CSV segments, run log and summary.json are hard links
to the template's, its session.json and state.json the template's with the id replaced (sealed
segments marked pruned, as the default retention would have left them, their aggregates
kept). --layout new appends one index.jsonl line per clone and rewrites sink.json;
--layout old writes the manifest.json of runmon 0.1.0 instead (for the before figures).
Running it again with a larger COUNT adds the missing clones only.
"""
import argparse
import errno
import json
import os
import shutil
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--template", required=True, help="a sink holding one recorded session")
    ap.add_argument("--dest", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--layout", choices=("new", "old"), default="new")
    ap.add_argument("--sweep", help="index lines of one sweep: this name, params lr (4 values) "
                    "and seed (the clone's number / 4), as runmon record --sweep/--param write")
    a = ap.parse_args()

    tid = os.readlink(os.path.join(a.template, "latest"))
    tdir = os.path.join(a.template, tid)
    with open(os.path.join(tdir, "state.json")) as f:
        state = json.load(f)
    with open(os.path.join(tdir, "session.json")) as f:
        session_text = f.read()
    linked = [n for n in sorted(os.listdir(tdir)) if n not in ("session.json", "state.json")]
    for seg in state["segments"]:
        if seg["state"] == "sealed" and not seg.get("pruned"):
            seg["pruned"] = True
            seg["pruned_at"] = seg.get("sealed_at")
            linked = [n for n in linked if n != seg["file"]]
    state_text = json.dumps(state, separators=(",", ":"))
    ses = state["session"]
    active = [s for s in state["segments"] if s["state"] == "active"]
    sealed = [s for s in state["segments"] if s["state"] == "sealed"]
    line_tpl = {
        "event": "adopted", "session_id": tid, "status": ses["status"], "host": ses["host"],
        "pid": ses["pid"], "started_at": ses["started_at"], "ended_at": ses["ended_at"],
        "exit_code": ses.get("exit_code"), "command": ses.get("command"),
        "files": len(active), "bytes": sum(s["bytes"] for s in active),
    }

    os.makedirs(a.dest, exist_ok=True)
    have = sorted(n for n in os.listdir(a.dest) if n.startswith("2") and "-bench-" in n)
    start = len(have)
    lines = []
    src = {n: os.path.join(tdir, n) for n in linked}
    copies = 0

    def link(n, to):
        nonlocal copies
        try:
            os.link(src[n], to)
        except OSError as e:  # ext4 allows 65000 links to a file: link to a fresh copy
            if e.errno != errno.EMLINK:
                raise
            copies += 1
            cd = os.path.join(a.dest, ".clone-src-%d" % copies)
            os.makedirs(cd, exist_ok=True)
            shutil.copyfile(src[n], os.path.join(cd, n))
            src[n] = os.path.join(cd, n)
            os.link(src[n], to)

    for i in range(start, a.count):
        sid = "20260101T000000Z-bench-%07d" % i
        d = os.path.join(a.dest, sid)
        os.mkdir(d)
        for n in linked:
            link(n, os.path.join(d, n))
        with open(os.path.join(d, "session.json"), "w") as f:
            f.write(session_text.replace(tid, sid))
        with open(os.path.join(d, "state.json"), "w") as f:
            f.write(state_text.replace(tid, sid))
        line = dict(line_tpl, session_id=sid)
        if a.sweep:
            line["sweep"] = a.sweep
            line["params"] = {"lr": (0.1, 0.01, 0.001, 0.0001)[i % 4], "seed": i // 4}
        lines.append(json.dumps(line, separators=(",", ":")) + "\n")

    n = a.count
    if a.layout == "new":
        ip = os.path.join(a.dest, "index.jsonl")
        if not os.path.exists(ip):
            with open(ip, "w") as f:
                f.write('{"format":"runmon-sink-index","schema_version":1,"created_at":null}\n')
        with open(ip, "a") as f:
            f.writelines(lines)
        sp = os.path.join(a.dest, "sink.json")
        if os.path.exists(sp):  # what the bench's own recordings added stays counted
            with open(sp) as f:
                tot = json.load(f)
        else:
            tot = {
                "format": "runmon-sink-totals", "schema_version": 1, "updated_at": None,
                "counters": {"rollover_count": 0, "pruned_segment_count": 0, "pruned_bytes": 0},
                "finished": {"active_files": 0, "active_bytes": 0, "rows_dropped": 0,
                             "write_errors": 0},
                "running": {}, "sealed": [], "index": {"lines": 0, "dead": 0, "compactions": 0},
            }
        k = n - start
        c = tot["counters"]  # the accumulated counts; runmon derives the rest when it writes
        c["rollover_count"] = c.get("rollover_count", 0) + k * len(sealed)
        c["pruned_segment_count"] = c.get("pruned_segment_count", 0) + k * len(sealed)
        c["pruned_bytes"] = c.get("pruned_bytes", 0) + k * sum(s["bytes"] for s in sealed)
        tot["finished"]["active_files"] += k * len(active)
        tot["finished"]["active_bytes"] += k * sum(s["bytes"] for s in active)
        tot["index"]["lines"] += k
        with open(sp, "w") as f:
            json.dump(tot, f)
    else:
        entry = {k: v for k, v in ses.items()}
        m = {"format": "runmon-sink-manifest", "schema_version": 1, "updated_at": None,
             "counters": {}, "sessions": [], "segments": []}
        for i in range(n):
            sid = "20260101T000000Z-bench-%07d" % i
            m["sessions"].append(dict(entry, session_id=sid))
            for s in state["segments"]:
                m["segments"].append(dict(s, session_id=sid))
        with open(os.path.join(a.dest, "manifest.json"), "w") as f:
            json.dump(m, f, separators=(",", ":"))
    print(n - start)


if __name__ == "__main__":
    sys.exit(main())
