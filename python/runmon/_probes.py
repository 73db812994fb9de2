"""Framework memory peaks at phase boundaries, for frameworks the program already imported.

Nothing is imported here: a framework counts only when it is in sys.modules, so a program
that does not use one pays one dict lookup per phase boundary.

PyTorch's peak counters are per device and process-wide, and resetting them at a phase's
enter erases the peaks of every phase open at that moment (in any thread). So each open
phase keeps a running peak: every enter first folds the current counters into all open
phases, then resets; every exit folds them in again and reports the phase's running peak.
All phases open now were open since the last reset (that reset was the latest enter), so
what the counters hold belongs to each of them, and a parent's peak is always at least
each child's.
"""
import sys
import threading

from . import _writer

MIB = 1048576.0

_torch_lock = threading.Lock()
_torch_open = []  # frames with a running torch peak, in all threads


def _mib(nbytes):
    return round(nbytes / MIB, 3)


def _torch_devices(torch):
    """CUDA device indexes worth probing, or () without CUDA in use."""
    cuda = torch.cuda
    if not cuda.is_available():
        return ()
    is_initialized = getattr(cuda, "is_initialized", None)
    if is_initialized is not None and not is_initialized():
        return ()  # reading the counters would create a CUDA context on every device
    return tuple(range(cuda.device_count()))


def _torch_read(cuda, devices):
    return {d: (cuda.max_memory_allocated(d), cuda.max_memory_reserved(d)) for d in devices}


def _fold(frames, current):
    for frame in frames:
        peaks = frame.torch_peaks
        for d, (alloc, reserved) in current.items():
            old = peaks.get(d, (0, 0))
            peaks[d] = (max(old[0], alloc), max(old[1], reserved))


def _torch_enter(frame, torch):
    devices = _torch_devices(torch)
    if not devices:
        return
    cuda = torch.cuda
    with _torch_lock:
        _fold(_torch_open, _torch_read(cuda, devices))
        for d in devices:
            cuda.reset_peak_memory_stats(d)
        frame.torch_peaks = {}
        _torch_open.append(frame)


def _torch_exit(frame, torch):
    cuda = torch.cuda
    with _torch_lock:
        _torch_open.remove(frame)
        current = _torch_read(cuda, tuple(frame.torch_peaks) or _torch_devices(torch))
        _fold(_torch_open + [frame], current)
    peaks = frame.torch_peaks
    return {
        "name": "torch",
        "peak_allocated_mb": {str(d): _mib(a) for d, (a, _r) in sorted(peaks.items())},
        "peak_reserved_mb": {str(d): _mib(r) for d, (_a, r) in sorted(peaks.items())},
    }


def _jax_backends_started():
    """False when jax has not created its backends yet: jax.devices() would create them
    (and preallocate GPU memory). A private detail, so unknown means yes."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    backends = getattr(bridge, "_backends", None)
    return backends is None or bool(backends)


def _jax_exit(jax):
    if not _jax_backends_started():
        return None
    peaks = {}
    for dev in jax.devices():
        if getattr(dev, "platform", "") not in ("gpu", "cuda"):
            continue
        stats = dev.memory_stats()
        if stats and "peak_bytes_in_use" in stats:
            peaks[str(dev.id)] = _mib(stats["peak_bytes_in_use"])
    return {"name": "jax", "peak_allocated_mb": peaks} if peaks else None


def on_enter(frame):
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        _torch_enter(frame, torch)
    except Exception:  # a probe never breaks the phase
        _writer.count("probe_errors")


def on_exit(frame):
    """The phase_exit line's "framework" value, or None."""
    result = None
    if frame.torch_peaks is not None:
        result = _safely(_torch_exit, frame, sys.modules.get("torch"))
    jax = sys.modules.get("jax")
    if result is None and jax is not None:
        result = _safely(_jax_exit, jax)
    return result


def _safely(probe, *args):
    try:
        return probe(*args)
    except Exception:
        _writer.count("probe_errors")
        return None
