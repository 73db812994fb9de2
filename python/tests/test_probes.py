"""Framework probes, with stand-in torch/jax modules (no GPU and no framework package on the
test machines; helpers.FakeCuda reports programmable values through the real API names)."""
import sys
import threading

import runmon
from helpers import Clean, FakeJaxDevice, install_fake_jax, install_fake_torch, read_lines

MIB = 1048576


def exits(path):
    return {l["path"]: l for l in read_lines(path) if l["type"] == "phase_exit"}


class TorchProbeTest(Clean):
    def setUp(self):
        super().setUp()
        self.log = self.path("r.jsonl")
        runmon.open(self.log)

    def test_no_framework_no_field(self):
        self.assertNotIn("torch", sys.modules)
        with runmon.phase("p"):
            pass
        self.assertNotIn("framework", read_lines(self.log)[-1])

    def test_peaks_per_device(self):
        cuda = install_fake_torch(devices=2)
        with runmon.phase("p"):
            cuda.alloc(0, 100 * MIB)
            cuda.alloc(1, 1.5 * MIB)
        fw = read_lines(self.log)[-1]["framework"]
        self.assertEqual(fw, {"name": "torch",
                              "peak_allocated_mb": {"0": 100.0, "1": 1.5},
                              "peak_reserved_mb": {"0": 200.0, "1": 3.0}})

    def test_a_parent_keeps_the_peak_its_child_reset(self):
        cuda = install_fake_torch(devices=1)
        with runmon.phase("parent"):
            cuda.alloc(0, 500 * MIB)  # the parent's own peak, before any child
            cuda.alloc(0, 10 * MIB)
            with runmon.phase("a"):  # resets the counters: the 500 would be lost
                cuda.alloc(0, 50 * MIB)
                cuda.alloc(0, 10 * MIB)
            with runmon.phase("b"):
                cuda.alloc(0, 800 * MIB)
                with runmon.phase("c"):
                    cuda.alloc(0, 20 * MIB)
                cuda.alloc(0, 10 * MIB)
        peak = {p: l["framework"]["peak_allocated_mb"]["0"] for p, l in exits(self.log).items()}
        self.assertEqual(peak, {"parent": 800.0, "parent/a": 50.0, "parent/b": 800.0,
                                "parent/b/c": 800.0})
        # c opened while 800 was current: a phase's peak includes what was already held.
        self.assertGreaterEqual(cuda.resets, 4)

    def test_parent_at_least_each_child_when_the_peak_is_before_the_children(self):
        cuda = install_fake_torch(devices=1)
        with runmon.phase("parent"):
            cuda.alloc(0, 900 * MIB)
            cuda.alloc(0, 0)
            for i in range(3):
                with runmon.phase("child%d" % i):
                    cuda.alloc(0, (i + 1) * 100 * MIB)
                    cuda.alloc(0, 0)
        peak = {p: l["framework"]["peak_allocated_mb"]["0"] for p, l in exits(self.log).items()}
        self.assertEqual(peak["parent"], 900.0)
        self.assertEqual([peak["parent/child%d" % i] for i in range(3)], [100.0, 200.0, 300.0])

    def test_a_phase_in_another_thread_does_not_erase_the_main_peak(self):
        cuda = install_fake_torch(devices=1)
        with runmon.phase("main"):
            cuda.alloc(0, 700 * MIB)
            cuda.alloc(0, 0)
            t = threading.Thread(target=lambda: runmon.phase("worker").__enter__().__exit__(
                None, None, None))
            t.start()
            t.join()
        self.assertEqual(exits(self.log)["main"]["framework"]["peak_allocated_mb"]["0"], 700.0)

    def test_cuda_not_initialized_is_not_touched(self):
        cuda = install_fake_torch(devices=1, initialized=False)
        with runmon.phase("p"):
            pass
        self.assertEqual(cuda.resets, 0)
        self.assertNotIn("framework", read_lines(self.log)[-1])

    def test_a_raising_probe_is_ignored(self):
        cuda = install_fake_torch(devices=1)

        def boom(d):
            raise RuntimeError("CUDA error")

        cuda.max_memory_allocated = boom
        with runmon.phase("p"):
            pass
        self.assertEqual(read_lines(self.log)[-1]["status"], "ok")
        self.assertNotIn("framework", read_lines(self.log)[-1])
        self.assertGreater(runmon.stats()["probe_errors"], 0)

    def test_jax_peaks_from_gpu_devices(self):
        install_fake_jax([FakeJaxDevice(0, "gpu", 2048 * MIB), FakeJaxDevice(1, "gpu", None),
                          FakeJaxDevice(2, "cuda", 3 * MIB), FakeJaxDevice(3, "cpu", 5 * MIB)])
        with runmon.phase("p"):
            pass
        self.assertEqual(read_lines(self.log)[-1]["framework"],
                         {"name": "jax", "peak_allocated_mb": {"0": 2048.0, "2": 3.0}})

    def test_jax_without_gpu_gives_no_field(self):
        install_fake_jax([FakeJaxDevice(0, "cpu", 5 * MIB)])
        with runmon.phase("p"):
            pass
        self.assertNotIn("framework", read_lines(self.log)[-1])
