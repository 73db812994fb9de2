"""Shared test helpers: clean module state, run-log reading, binaries, stand-in frameworks.

There is no GPU and no torch/jax package on the test machines, so the framework probes are
tested with small stand-in modules put into sys.modules: they report programmable values
through the same calls runmon makes on the real ones.
"""
import json
import os
import shutil
import sys
import tempfile
import types
import unittest
import warnings

import runmon
from runmon import _writer

RUNMON = os.environ.get("RUNMON_REL") or os.environ.get("RUNMON") or shutil.which("runmon")
FAKEBIN = os.environ.get("FAKEBIN")
FIXTURES = os.environ.get("FIXTURES") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")

needs_runmon = unittest.skipUnless(RUNMON and os.path.exists(RUNMON),
                                   "no runmon binary (set RUNMON_REL or RUNMON)")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def raw_lines(path):
    with open(path, "rb") as f:
        return f.read().splitlines()


class Clean(unittest.TestCase):
    """Each test starts with no run log, no inherited phase path, zeroed counters, and a
    temp dir; stand-in frameworks are removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="runmon-py-test.")
        self._env = {k: os.environ.get(k) for k in ("RUNMON_RUNLOG", "RUNMON_PHASE_PATH",
                                                       "RANK", "SLURM_PROCID")}
        for k in self._env:
            os.environ.pop(k, None)
        runmon.close()
        _writer.reset_stats()
        self._modules = set(sys.modules)
        warnings.simplefilter("always")

    def tearDown(self):
        runmon.close()
        for name in set(sys.modules) - self._modules:
            if name in ("torch", "jax") or name.startswith(("torch.", "jax.")):
                del sys.modules[name]
        for k, v in self._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)


class FakeCuda:
    """torch.cuda stand-in: per device a current allocation and a peak since the last reset.
    alloc(d, nbytes) moves the current value (and the peak with it)."""

    def __init__(self, devices=2, initialized=True):
        self.devices = devices
        self.initialized = initialized
        self.cur = {d: 0 for d in range(devices)}
        self.peak = {d: 0 for d in range(devices)}
        self.resets = 0

    def alloc(self, d, nbytes):
        self.cur[d] = nbytes
        self.peak[d] = max(self.peak[d], nbytes)

    def is_available(self):
        return True

    def is_initialized(self):
        return self.initialized

    def device_count(self):
        return self.devices

    def reset_peak_memory_stats(self, d):
        self.resets += 1
        self.peak[d] = self.cur[d]

    def max_memory_allocated(self, d):
        return self.peak[d]

    def max_memory_reserved(self, d):
        return self.peak[d] * 2  # reserved is kept at twice allocated in the stand-in


def install_fake_torch(**kwargs):
    torch = types.ModuleType("torch")
    torch.cuda = FakeCuda(**kwargs)
    sys.modules["torch"] = torch
    return torch.cuda


class FakeJaxDevice:
    def __init__(self, id, platform, peak):
        self.id, self.platform, self.peak = id, platform, peak

    def memory_stats(self):
        return None if self.peak is None else {"peak_bytes_in_use": self.peak, "bytes_in_use": 1}


def install_fake_jax(devices):
    jax = types.ModuleType("jax")
    jax.devices = lambda: list(devices)
    sys.modules["jax"] = jax
    return jax
