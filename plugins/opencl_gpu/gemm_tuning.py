"""Choosing the GEMM kernel of a device: candidates, a heuristic, a small autotune.

``opencl_kernels/matmul.cl`` holds two algorithms (see its header): ``tiled``
(local-memory tiles of A and B, a register block per work item — what a GPU
needs) and ``packed`` (operands copied into panels, vector registers per work
item — what a CPU device such as PoCL needs, where local memory is emulated
in ordinary memory).  Each has sizes to choose: the tile of C a work group
covers, the block each work item keeps in registers.  The best choice
depends on the device, so minitf does what cuDNN's and TF's autotuners do:

1. :func:`candidates` lists a handful of configurations that fit the
   device's limits (work-group size, local memory, vector width);
2. the first matmul on a device times each a few times, on a
   representative product (:data:`TUNE_SIZE`), and keeps the fastest;
3. the choice is cached in memory and on disk, in
   ``<user cache dir>/minitf/opencl-gemm-<device hash>.json`` (written
   atomically), so later processes skip step 2.  The hash covers the device,
   its driver and the kernel source, so a new driver or kernel tunes again.

``MINITF_GEMM_AUTOTUNE=0`` skips the timing and uses :func:`heuristic`'s
choice (as does a failure to time).  Every candidate computes the same
product — the tests run each of them — so tuning only changes speed.
"""

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time

from minitf_opencl_gpu import programs

ENV_VAR = "MINITF_GEMM_AUTOTUNE"

#: ``M = N = K`` of the product a candidate is timed on, and how many runs
#: it is timed (the best counts: a busy moment of the machine only slows some).
TUNE_SIZE = {"cpu": 512, "gpu": 1024}
TUNE_RUNS = 3

_lock = threading.Lock()
_chosen = {}       # OpenCLTarget -> GemmConfig
_forced = None     # a GemmConfig that ``override`` imposes (tests)


class GemmConfig:
    """One GEMM configuration: an algorithm and its sizes.

    ``tiled``: ``TSM x TSN`` tile of C per work group, ``TSK`` deep steps
    through K, ``WPTM x WPTN`` elements of C per work item.  ``packed``:
    ``TM`` rows by ``TN`` columns per work item (``TN`` for 4-byte elements;
    scaled to keep the vector's bytes for other types), work groups of up to
    ``GX x GY`` items.
    """

    __slots__ = ("kind", "sizes")

    def __init__(self, kind, **sizes):
        self.kind = kind
        self.sizes = dict(sorted(sizes.items()))

    def __getattr__(self, name):
        try:
            return self.sizes[name]
        except KeyError:
            raise AttributeError(name) from None

    def __eq__(self, other):
        return isinstance(other, GemmConfig) and (self.kind, self.sizes) == (
            other.kind, other.sizes)

    def __hash__(self):
        return hash((self.kind, tuple(self.sizes.items())))

    def __repr__(self):
        return "GemmConfig(%r, %s)" % (self.kind, ", ".join(
            "%s=%d" % item for item in self.sizes.items()))

    def to_json(self):
        return {"kind": self.kind, **self.sizes}

    @classmethod
    def from_json(cls, data):
        data = dict(data)
        return cls(data.pop("kind"), **{k: int(v) for k, v in data.items()})

    def group_size(self):
        """Work items per group of the tiled kernel."""
        return (self.TSM // self.WPTM) * (self.TSN // self.WPTN)

    def local_bytes(self, itemsize):
        """Local memory the tiled kernel needs for elements of ``itemsize`` bytes."""
        return self.TSK * (self.TSM + self.TSN) * itemsize

    def vector_width(self, itemsize):
        """The packed kernel's ``TN`` for elements of ``itemsize`` bytes (4 to 16)."""
        return max(4, min(16, self.TN * 4 // itemsize))


def tiled(tsm, tsn, tsk, wptm, wptn):
    return GemmConfig("tiled", TSM=tsm, TSN=tsn, TSK=tsk, WPTM=wptm, WPTN=wptn)


def packed(tm, tn, gx=8, gy=8):
    return GemmConfig("packed", TM=tm, TN=tn, GX=gx, GY=gy)


_TILED = [tiled(64, 64, 16, 4, 4), tiled(128, 64, 16, 8, 4), tiled(64, 64, 8, 8, 8),
          tiled(32, 32, 16, 2, 2), tiled(16, 16, 16, 1, 1)]


def _packed_for(width):
    """Packed configurations for a vector of ``width`` floats, the first the usual best."""
    half = [packed(8, width // 2, 16, 8)] if width >= 8 else []
    return [packed(16, width), packed(8, width), packed(12, width, 8, 4)] + half


def fits(config, cl_device, itemsize=8):
    """Whether ``config`` respects the device's limits (for elements up to ``itemsize``)."""
    if config.kind == "packed":
        return config.GX * config.GY <= cl_device.max_work_group_size
    sizes = cl_device.max_work_item_sizes
    return (config.group_size() <= cl_device.max_work_group_size
            and config.TSN // config.WPTN <= sizes[0] and config.TSM // config.WPTM <= sizes[1]
            and config.local_bytes(itemsize) <= cl_device.local_mem_size)


def _is_gpu(cl_device):
    import pyopencl as cl
    return bool(cl_device.type & (cl.device_type.GPU | cl.device_type.ACCELERATOR))


def candidates(cl_device):
    """The configurations worth timing on ``cl_device``, most promising first.

    A CPU device gets the packed kernel at its preferred vector width (and
    half of it), plus one tiled configuration; a GPU gets the tiled ones
    that fit its work-group size and local memory, plus one packed.
    """
    width = max(4, min(16, cl_device.preferred_vector_width_float))
    own_packed = _packed_for(width)
    fitting_tiled = [c for c in _TILED if fits(c, cl_device)]
    if _is_gpu(cl_device):
        chosen = fitting_tiled + own_packed[:1]
    else:
        chosen = own_packed + fitting_tiled[:1]
    return [c for c in chosen if fits(c, cl_device)]


def all_configs(cl_device):
    """Every configuration any device could choose that runs on ``cl_device`` (for tests)."""
    configs = [c for c in _TILED if fits(c, cl_device)]
    for width in (4, 8, 16):
        configs += [c for c in _packed_for(width) if c not in configs and fits(c, cl_device)]
    return configs


def heuristic(cl_device):
    """The choice without timing: the first candidate (see :func:`candidates`)."""
    return candidates(cl_device)[0]


def cache_dir():
    """The user's cache folder for minitf (``platformdirs.user_cache_dir``)."""
    import platformdirs
    return platformdirs.user_cache_dir("minitf")


def cache_path(cl_device):
    """Where the tuned choice of ``cl_device`` is kept."""
    key = "|".join([cl_device.platform.name, cl_device.name, cl_device.driver_version,
                    cl_device.version, programs.source("matmul"),
                    repr(candidates(cl_device))])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(cache_dir(), "opencl-gemm-%s.json" % digest)


def config_for(target, time_config):
    """The GEMM configuration of ``target``, tuned on first use.

    Args:
        target: the :class:`~minitf_opencl_gpu.platform.OpenCLTarget`.
        time_config: ``time_config(config, size) -> seconds`` runs one product
            of ``size``-square float32 matrices with ``config`` (given by
            :mod:`~minitf_opencl_gpu.kernels.linalg`, which knows how to launch).
    """
    if _forced is not None:
        return _forced
    config = _chosen.get(target)
    if config is not None:
        return config
    with _lock:
        if target not in _chosen:
            _chosen[target] = _load_or_tune(target.cl_device, time_config)
        return _chosen[target]


def _load_or_tune(cl_device, time_config):
    if os.environ.get(ENV_VAR, "1").strip() == "0":
        return heuristic(cl_device)
    path = cache_path(cl_device)
    try:
        with open(path) as f:
            config = GemmConfig.from_json(json.load(f)["config"])
        if config in candidates(cl_device):
            return config
    except (OSError, ValueError, KeyError, TypeError):
        pass
    timings = autotune(cl_device, time_config)
    if not timings:
        return heuristic(cl_device)
    best = min(timings, key=lambda item: item[1])[0]
    _write_atomically(path, {"device": cl_device.name.strip(), "config": best.to_json(),
                             "seconds": [[c.to_json(), s] for c, s in timings]})
    return best


def autotune(cl_device, time_config):
    """``[(config, seconds)]``: each candidate's best of :data:`TUNE_RUNS` runs,
    after a warm-up run (which builds its program).

    A candidate that fails to build or launch (a driver's own limit) is left out.
    """
    size = TUNE_SIZE["gpu" if _is_gpu(cl_device) else "cpu"]
    timings = []
    for config in candidates(cl_device):
        try:
            time_config(config, size)
            best = float("inf")
            for _ in range(TUNE_RUNS):
                start = time.perf_counter()
                time_config(config, size)
                best = min(best, time.perf_counter() - start)
            timings.append((config, best))
        except Exception:   # noqa: BLE001 - any failure only removes a candidate
            continue
    return timings


def _write_atomically(path, data):
    """Writes JSON to ``path`` through a temporary file and a rename; errors are ignored
    (a read-only cache only costs a tuning per process)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass


@contextlib.contextmanager
def override(config):
    """Makes every GEMM use ``config`` inside the ``with`` block (for tests)."""
    global _forced
    previous, _forced = _forced, config
    try:
        yield
    finally:
        _forced = previous


def forget():
    """Drops the in-memory choices (the next matmul loads or tunes again)."""
    with _lock:
        _chosen.clear()
