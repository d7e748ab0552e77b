"""Choosing the GEMM kernel of a device: candidates, a heuristic, a small autotune.

``opencl_kernels/matmul.cl`` holds two algorithms (see its header): ``tiled``
(local-memory tiles of A and B, a register block per work item — what a GPU
needs) and ``packed`` (operands copied into panels, vector registers per work
item — what a CPU device such as PoCL needs, where local memory is emulated
in ordinary memory).  Each has sizes to choose: the tile of C a work group
covers, the block each work item keeps in registers.  The best choice
depends on the device and on the product's shape (a batch of 128 rows, a
128-deep weight gradient and a 1024-square product want different ones),
so minitf does what cuDNN's and TF's autotuners do:

1. :func:`candidates` lists a handful of configurations that fit the
   device's limits (work-group size, local memory, vector width);
2. the first product of a :func:`shape_class` times each, in turns, on
   that product's shape, and keeps the fastest;
3. the choice is cached in memory and on disk, in
   ``<user cache dir>/minitf/opencl-gemm-<device hash>.json`` (written
   atomically, one entry per shape class), so later processes skip step 2.
   The hash covers the device, its driver, the kernel source and the
   candidates, so a new driver or kernel tunes again.

``MINITF_GEMM_AUTOTUNE=0`` skips the timing and uses :func:`heuristic`'s
choice (as does a failure to time).  Every candidate computes the same
product — the tests run each of them — so tuning only changes speed.
"""

import contextlib
import functools
import hashlib
import json
import os
import tempfile
import threading
import time

from minitf_opencl_gpu import programs

ENV_VAR = "MINITF_GEMM_AUTOTUNE"

#: How many runs each candidate is timed (the best counts: a busy moment of
#: the machine only slows some), and how much slower than the best after
#: one run a candidate may be to be timed again.
TUNE_RUNS = 7
PRUNE = 2.0

_lock = threading.Lock()
_chosen = {}       # (OpenCLTarget, shape class) -> GemmConfig
_forced = None     # a GemmConfig that ``override`` imposes (tests)


class GemmConfig:
    """One GEMM configuration: an algorithm and its sizes.

    ``tiled``: ``TSM x TSN`` tile of C per work group, ``TSK`` deep steps
    through K, ``WPTM x WPTN`` elements of C per work item.  ``packed``:
    ``TM`` rows by ``NV`` vectors of ``TN`` columns per work item (``TN`` for
    4-byte elements; scaled to keep the vector's bytes for other types), work
    groups of up to ``GX x GY`` items, and K walked in blocks of ``KB`` with a
    barrier after each (``KB`` 0: in one go, no barrier).
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


def packed(tm, tn, gx=8, gy=8, nv=1, kb=0):
    return GemmConfig("packed", TM=tm, TN=tn, GX=gx, GY=gy, NV=nv, KB=kb)


_TILED = [tiled(64, 64, 16, 4, 4), tiled(128, 64, 16, 8, 4), tiled(64, 64, 8, 8, 8),
          tiled(32, 32, 16, 2, 2), tiled(16, 16, 16, 1, 1)]


def _packed_for(width):
    """Packed configurations for vectors of ``width`` floats, the first the usual best.

    A work item keeps ``TM x NV`` vectors of C in registers: 24 of the 32
    registers of AVX-512 (``width`` 16: an 8 x 48 block, three vectors of B
    and a broadcast of A beside them), 12 of the 16 of AVX2 or SSE.  Tall
    work groups (2 x 32 items) reuse a few column blocks of B, still in
    cache, for many row blocks of A; K blocking (``KB``) can pay off when
    the shared dimension is long.  On PoCL the 8 x 48 block ran the MLP's
    products (128 x 784 x 512 and its gradients) 1.2-2.3x faster than the
    8 x 32 one, and a 1024-square product 1.3x faster.
    """
    if width >= 16:
        configs = [packed(8, width, 2, 32, 3), packed(8, width, 4, 16, 3),
                   packed(10, width, 2, 32, 2), packed(12, width, 4, 16, 2),
                   packed(8, width, 4, 16, 2), packed(8, width, 2, 32, 3, kb=128),
                   packed(6, width, 2, 32, 4)]
    else:
        configs = [packed(6, width, 4, 16, 2), packed(4, width, 4, 16, 2),
                   packed(8, width, 8, 8, 1), packed(12, width, 8, 4, 1),
                   packed(6, width, 4, 16, 2, kb=128), packed(8, width, 8, 8, 1, kb=128)]
    return configs


def fits(config, cl_device, itemsize=8):
    """Whether ``config`` respects the device's limits (for elements up to ``itemsize``)."""
    if config.kind == "packed":
        return config.GX * config.GY <= cl_device.max_work_group_size
    sizes = cl_device.max_work_item_sizes
    return (config.group_size() <= cl_device.max_work_group_size
            and config.TSN // config.WPTN <= sizes[0] and config.TSM // config.WPTM <= sizes[1]
            and config.local_bytes(itemsize) <= cl_device.local_mem_size)


@functools.lru_cache(maxsize=None)
def has_fma(cl_device, dtype):
    """Whether ``cl_device`` fuses multiply-adds in hardware for ``dtype`` (float32/64).

    The packed kernel then calls ``fma()``: PoCL compiles ``mad()`` into a
    separate multiply and add, half the speed of one fused instruction, and
    on a device without the instruction ``fma()`` would be a slow emulation.
    """
    import numpy as np
    import pyopencl as cl
    kind = np.dtype(dtype)
    if kind == np.float32:
        config = cl_device.single_fp_config
    elif kind == np.float64:
        config = cl_device.double_fp_config
    else:
        return False
    return bool(config & cl.device_fp_config.FMA)


def _is_gpu(cl_device):
    import pyopencl as cl
    return bool(cl_device.type & (cl.device_type.GPU | cl.device_type.ACCELERATOR))


def candidates(cl_device):
    """The configurations worth timing on ``cl_device``, most promising first.

    A CPU device gets the packed kernel at its preferred vector width in
    several block and group shapes, plus one tiled configuration; a GPU
    gets the tiled ones that fit its work-group size and local memory, plus
    one packed.
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


def shape_class(m, n, k, a_transposed, b_transposed):
    """The class of a product that shares one tuned choice.

    The best kernel differs between a 1024-square product and the products
    of a small layer: 128 rows of a batch, a shared dimension of 128 in a
    weight gradient, 10 columns of logits.  Each dimension is rounded up to
    a power of two (so a 784-wide layer and a 1000-wide one share a class);
    the operands' layouts count too, since an operand read in place (see
    ``kernels/linalg.py``) is read differently when transposed.
    """
    def bucket(size):
        return 1 << max(0, min(size, MAX_BUCKET) - 1).bit_length()
    return "%s%s m%d n%d k%d" % ("T" if a_transposed else "N", "T" if b_transposed else "N",
                                  bucket(m), bucket(n), bucket(k))


#: Dimensions above this share the largest class.
MAX_BUCKET = 4096


def config_for(target, prepare, product):
    """The GEMM configuration of ``target`` for ``product``, tuned on first use.

    Args:
        target: the :class:`~minitf_opencl_gpu.platform.OpenCLTarget`.
        prepare: ``prepare(product) -> run_product``, where
            ``run_product(config)`` runs one float32 product of that shape with
            ``config`` and waits for it (given by
            :mod:`~minitf_opencl_gpu.kernels.linalg`, which knows how to
            launch; the operands are made once, so only the product is timed).
        product: ``(m, n, k, a_transposed, b_transposed)``; its
            :func:`shape_class` is tuned on this very shape, the first of the
            class to run.
    """
    if _forced is not None:
        return _forced
    key = (target, shape_class(*product))
    config = _chosen.get(key)
    if config is not None:
        return config
    with _lock:
        if key not in _chosen:
            _chosen[key] = _load_or_tune(target.cl_device, key[1], product, prepare)
        return _chosen[key]


def _load_or_tune(cl_device, shape_key, product, prepare):
    if os.environ.get(ENV_VAR, "1").strip() == "0":
        return heuristic(cl_device)
    path = cache_path(cl_device)
    saved = _read_cache(path)
    try:
        config = GemmConfig.from_json(saved[shape_key]["config"])
        if config in candidates(cl_device):
            return config
    except (KeyError, ValueError, TypeError):
        pass
    timings = autotune(cl_device, prepare(product))
    if not timings:
        return heuristic(cl_device)
    best = min(timings, key=lambda item: item[1])[0]
    saved = _read_cache(path)    # another process may have tuned other classes meanwhile
    saved[shape_key] = {"product": list(product), "config": best.to_json(),
                        "seconds": [[c.to_json(), s] for c, s in timings]}
    _write_atomically(path, {"device": cl_device.name.strip(), "classes": saved})
    return best


def _read_cache(path):
    """``{shape class: {"config": ...}}`` from the device's cache file ({} if none)."""
    try:
        with open(path) as f:
            classes = json.load(f)["classes"]
        return classes if isinstance(classes, dict) else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def autotune(cl_device, run_product):
    """``[(config, seconds)]``: each candidate's best of up to :data:`TUNE_RUNS` runs
    of ``run_product(config)``, after a warm-up run (which builds its program).

    The candidates are timed in turns, one run each per round, so that a
    busy moment of the machine slows every candidate a little rather than
    one a lot; after the first round a candidate more than :data:`PRUNE`
    times slower than the best is timed no more (a GPU kernel on a CPU
    device can be ten times slower).  A candidate that fails to build or
    launch (a driver's own limit) is left out.
    """
    best = {}
    for config in candidates(cl_device):
        try:
            run_product(config)
            best[config] = _seconds(run_product, config)
        except Exception:   # noqa: BLE001 - any failure only removes a candidate
            continue
    if best:
        fastest = min(best.values())
        racing = [c for c, seconds in best.items() if seconds <= PRUNE * fastest]
        for _ in range(TUNE_RUNS - 1):
            for config in racing:
                best[config] = min(best[config], _seconds(run_product, config))
    return list(best.items())


def _seconds(run_product, config):
    start = time.perf_counter()
    run_product(config)
    return time.perf_counter() - start


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
