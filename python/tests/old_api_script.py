"""How code written against the old Python monitor uses it; only the import changed.

usage: old_api_script.py OUTPUT_DIR   (prints the resource summary as JSON)
"""
import json
import os
import sys
import time

from runmon import HWMonitor, RunLog, build_resource_summary


def train(log):
    for step in range(3):
        start = time.time()
        time.sleep(0.3)
        log.log_phase("step", time.time() - start, step=step, loss=1.0 / (step + 1))
    log.log_event("checkpoint", {"step": 3, "jax_peak_bytes": 2 * 1024 ** 3})
    log.log_event("done")


def main(output_dir):
    monitor = HWMonitor()
    monitor.start(output_dir, interval_sec=0.2)
    log = RunLog()
    try:
        train(log)
    finally:
        gpu_csv, cpu_csv, dmon_csv = monitor.stop()
    runlog_path = os.path.join(output_dir, "runlog.jsonl")
    log.write(runlog_path)
    summary = build_resource_summary(gpu_csv, cpu_csv, dmon_csv)
    result = summary.to_dict()
    result["files"] = [gpu_csv, cpu_csv, dmon_csv, runlog_path]
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
