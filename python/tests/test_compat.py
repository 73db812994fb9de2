"""The drop-in for the old monitor: RunLog, HWMonitor, build_resource_summary."""
import os
import subprocess
import sys
import time
import warnings

import runmon
from runmon import HWMonitor, RunLog, RunmonError, build_resource_summary
from helpers import FAKEBIN, FIXTURES, RUNMON, Clean, needs_runmon, read_lines


class RunLogTest(Clean):
    def test_batch_lines_are_kept_until_write(self):
        log = RunLog()
        log.log_phase("load", 1.5, lr=0.1)
        log.log_event("checkpoint", {"step": 1})
        log.log_event("empty", {})
        self.assertEqual(os.listdir(self.tmp), [])
        self.assertEqual(log.write(self.path("out.jsonl")), 3)
        lines = read_lines(self.path("out.jsonl"))
        self.assertEqual([l["type"] for l in lines], ["phase", "event", "event"])
        self.assertEqual(lines[0]["lr"], 0.1)
        self.assertEqual(lines[1]["data"], {"step": 1})
        self.assertNotIn("data", lines[2])  # only when data is truthy

    def test_write_twice_copies_nothing_twice(self):
        log = RunLog()
        log.log_event("a")
        log.write(self.path("out.jsonl"))
        log.log_event("b")
        self.assertEqual(log.write(self.path("out.jsonl")), 1)
        self.assertEqual([l["event"] for l in read_lines(self.path("out.jsonl"))], ["a", "b"])

    def test_live_with_a_path(self):
        log = RunLog(self.path("live.jsonl"))
        log.log_phase("load", 2)
        self.assertEqual(read_lines(self.path("live.jsonl"))[0]["seconds"], 2.0)
        self.assertEqual(log.write(self.path("live.jsonl")), 0)  # already there
        self.assertEqual(log.write(self.path("copy.jsonl")), 1)
        self.assertEqual(len(read_lines(self.path("live.jsonl"))), 1)

    def test_an_unopenable_runmon_runlog_gives_batch_mode(self):
        os.environ["RUNMON_RUNLOG"] = self.path("no/such/dir/r.jsonl")
        with warnings.catch_warnings(record=True) as caught:
            log = RunLog()
        self.assertEqual(len(caught), 1)
        log.log_event("e")
        self.assertEqual(log.write(self.path("out.jsonl")), 1)

    def test_live_from_runmon_runlog(self):
        os.environ["RUNMON_RUNLOG"] = self.path("env.jsonl")
        RunLog().log_event("e", {"x": 1})
        self.assertEqual(read_lines(self.path("env.jsonl"))[0]["data"], {"x": 1})


SESSION1 = os.path.join(FIXTURES, "summary", "session1")


@needs_runmon
class SummaryTest(Clean):
    def setUp(self):
        super().setUp()
        os.environ["RUNMON_BIN"] = RUNMON

    def tearDown(self):
        os.environ.pop("RUNMON_BIN", None)
        super().tearDown()

    def test_fields_of_a_fixture(self):
        s = build_resource_summary(os.path.join(SESSION1, "gpu.csv"),
                                   os.path.join(FIXTURES, "summary", "cpu_metrics.csv"))
        self.assertEqual(s.peak_vram_mb, 46000)
        self.assertEqual(s.gpu_util_max_pct, 100)
        self.assertIsNone(s.jax_peak_bytes_mb)
        d = s.to_dict()
        self.assertEqual(d["power_watts_max"], 300)
        self.assertIn("cpu_usr_mean_pct", d)
        self.assertEqual(s.full["format"], "runmon-summary")

    def test_runlog_gives_the_jax_peak(self):
        s = build_resource_summary(os.path.join(SESSION1, "gpu.csv"), None,
                                   runlog=os.path.join(SESSION1, "runlog.jsonl"))
        self.assertEqual(s.jax_peak_bytes_mb, 2048)

    def test_a_missing_file_raises_a_clear_error(self):
        with self.assertRaises(RunmonError) as cm:
            build_resource_summary(self.path("nope.csv"), None)
        self.assertIn("exit 2", str(cm.exception))
        self.assertIn("nope.csv", str(cm.exception))

    def test_no_binary_raises(self):
        os.environ["RUNMON_BIN"] = ""
        path = os.environ.get("PATH", "")
        os.environ["PATH"] = self.tmp
        try:
            with self.assertRaises(RunmonError):
                build_resource_summary(self.path("x.csv"), None)
        finally:
            os.environ["PATH"] = path


@needs_runmon
class HWMonitorTest(Clean):
    def setUp(self):
        super().setUp()
        self._path = os.environ.get("PATH", "")
        os.environ["RUNMON_BIN"] = RUNMON

    def tearDown(self):
        os.environ["PATH"] = self._path
        for k in ("RUNMON_BIN", "FAKE_SMI_GPUS", "FAKE_SMI_CAPTURES"):
            os.environ.pop(k, None)
        super().tearDown()

    def record(self, seconds=1.5):
        mon = HWMonitor().start(self.path("out"), interval_sec=0.2)
        time.sleep(seconds)
        result = mon.stop()
        self.assertIsNotNone(mon._proc is None or mon._proc.poll())
        return mon, result

    def test_gpu_machine_gives_three_files_runmon_summary_reads(self):
        if not FAKEBIN:
            self.skipTest("no FAKEBIN (the fake nvidia-smi)")
        os.environ["PATH"] = FAKEBIN + os.pathsep + self._path
        os.environ["FAKE_SMI_GPUS"] = "2"
        os.environ["FAKE_SMI_CAPTURES"] = os.path.join(FIXTURES, "captures")
        mon, (gpu, cpu, dmon) = self.record()
        self.assertEqual([os.path.basename(p) for p in (gpu, cpu, dmon)],
                         ["hw_metrics.csv", "cpu_metrics.csv", "hw_dmon.csv"])
        with open(gpu) as f:
            header, first = f.readline(), f.readline()
        self.assertTrue(header.startswith("timestamp, index, uuid, name, "))
        self.assertEqual(len(first.split(", ")), len(header.split(", ")))
        with open(cpu) as f:
            self.assertEqual(f.readline(), "timestamp,usr_pct,sys_pct,idle_pct\n")
        with open(dmon) as f:
            self.assertTrue(f.readline().startswith("ts,gpu,pwr,"))
        s = build_resource_summary(gpu, cpu, dmon)
        self.assertGreater(s.peak_vram_mb, 0)
        self.assertIsNotNone(s.power_watts_mean)
        self.assertIsNotNone(s.cpu_idle_mean_pct)
        self.assertEqual(len(s.full["gpus"]), 2)
        out = subprocess.run([RUNMON, "summary", "--gpu-csv", gpu, "--cpu-csv", cpu,
                              "--dmon", dmon, "--format", "json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(os.path.isfile(os.path.join(mon.session_dir, "session.json")))

    def test_no_gpu_gives_none_for_the_gpu_files(self):
        os.environ["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        _mon, (gpu, cpu, dmon) = self.record(1.0)
        self.assertIsNone(gpu)
        self.assertIsNone(dmon)
        self.assertTrue(os.path.isfile(cpu))
        self.assertIsNotNone(build_resource_summary(gpu, cpu).cpu_usr_mean_pct)

    def test_stop_without_start(self):
        self.assertEqual(HWMonitor().stop(), (None, None, None))

    def test_a_recorder_that_ignores_sigterm_is_killed(self):
        mon = HWMonitor()
        mon.STOP_TIMEOUT_S = 0.5
        ignore_term = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
                      "time.sleep(30)"
        mon._proc = subprocess.Popen([sys.executable, "-c", ignore_term])
        mon.sink_dir = self.tmp
        time.sleep(0.2)
        started = time.monotonic()
        self.assertEqual(mon.stop(), (None, None, None))
        self.assertLess(time.monotonic() - started, 5)
