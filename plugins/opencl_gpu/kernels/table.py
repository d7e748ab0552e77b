"""The table of GPU kernels, and what every kernel module shares.

**Where a value lives.**  On the GPU device a tensor is a
:class:`~minitf_opencl_gpu.memory.DeviceArray` — except the small integer
tensors of shape arithmetic (``tf.shape(x)``, reduction axes, the
``BroadcastGradientArgs`` of every gradient), which stay NumPy arrays in host
memory, as TF's GPU kernels declare them ``HostMemory``.  Hence the rule the
:func:`kernel` decorator applies: when *every* input of a GPU kernel is in
host memory, the op runs on the host, through the CPU kernel the registry
holds for it (looked up by op type, never imported); otherwise the device
kernel runs, and a host-memory input it needs on the device is uploaded
(``device.ensure_device``).

**Dtype groups.**  Kernels are registered for ``"float"`` (float32, and float64
when every OpenCL device has ``cl_khr_fp64``; elsewhere float64 ops fall back to
the CPU or fail with the placer's clear error), ``"int"`` (int32, int64),
``"small_int"`` (int8, int16, uint8, uint16: only ``Cast`` and ``OneHot``, so
that ``tf.truediv`` and ``tf.one_hot`` of such tensors stay on the device),
``"bool"``, and ``"resource"`` (the handles control flow passes around).
"""

import numpy as np

from minitf.plugin import dtypes as tf_dtypes, get_registry, kernel_dtypes

from minitf_opencl_gpu import programs
from minitf_opencl_gpu.memory import DeviceArray

KERNELS = []   # (op_type, fn, dtype groups)

GROUPS = {"float": (tf_dtypes.float32, tf_dtypes.float64),
          "int": (tf_dtypes.int32, tf_dtypes.int64),
          "small_int": (tf_dtypes.int8, tf_dtypes.int16, tf_dtypes.uint8, tf_dtypes.uint16),
          "bool": (tf_dtypes.bool,),
          "resource": (tf_dtypes.resource,)}

HOST_TYPES = (np.ndarray, np.generic)


def kernel(*op_types, dtypes=("float",)):
    """Registers the decorated device kernel, run on the host when all inputs are there."""
    def register(fn):
        wrapped = _host_or_device(fn)
        for op_type in op_types:
            KERNELS.append((op_type, wrapped, tuple(dtypes)))
        return fn
    return register


def host_kernel(*op_types, dtypes=("int",)):
    """Registers an op that always runs on the host: TF's int32 ``HostMemory`` kernels.

    An input still on the device (rare: an integer a device kernel computed)
    is downloaded first.
    """
    for op_type in op_types:
        KERNELS.append((op_type, on_host, tuple(dtypes)))


def on_host(ctx, *inputs, **attrs):
    """Runs the op's CPU kernel on host copies of ``inputs`` (for integer data
    that a device kernel happens to hold; shape arithmetic is already on the host)."""
    inputs = [ctx.device.to_host(x) for x in inputs]
    return cpu_kernel(ctx)(ctx, *inputs, **attrs)


def _host_or_device(fn):
    def run(ctx, *inputs, **attrs):
        if inputs and all(isinstance(x, HOST_TYPES) for x in inputs):
            return cpu_kernel(ctx)(ctx, *inputs, **attrs)
        return fn(ctx, *inputs, **attrs)
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    run.__wrapped__ = fn   # so the registry reports where the device kernel is defined
    run.device_kernel = fn
    return run


_cpu_kernels = {}


def cpu_kernel(ctx):
    """The CPU kernel function of ``ctx.op`` (from the registry, cached)."""
    key = (ctx.op.type, kernel_dtypes(ctx.op))
    fn = _cpu_kernels.get(key)
    if fn is None:
        fn = get_registry().kernel(key[0], "CPU", key[1], node=ctx.op).fn
        _cpu_kernels[key] = fn
    return fn


def expand_groups(groups, has_fp64):
    """The tf dtypes of dtype ``groups``; float64 only with fp64 support."""
    result = []
    for group in groups:
        for dtype in GROUPS[group]:
            if dtype == tf_dtypes.float64 and not has_fp64:
                continue
            result.append(dtype)
    return result


# ---- helpers the kernel modules share ---------------------------------------------------
def on_device(ctx, x, dtype=None):
    """``x`` as a DeviceArray (uploading a host-memory value)."""
    return ctx.device.ensure_device(x, dtype)


def empty(ctx, shape, dtype):
    """A new output buffer from the device's pool."""
    return ctx.device.allocate(shape, dtype)


def run(ctx, source, name, dtype, n, *args, **defines):
    """Enqueues kernel ``name`` of ``opencl_kernels/<source>.cl`` over ``n`` work items.

    ``args`` may hold DeviceArrays (passed as their buffers), host-memory
    arrays (uploaded, see ``device.ensure_device``) and NumPy scalars.
    Nothing is enqueued for ``n == 0``: empty tensors need no work.
    """
    if n == 0:
        return
    cl_kernel = programs.get_kernel(ctx.device.target, source, name, dtype, **defines)
    args = _kernel_args(ctx, args)
    programs.launch(ctx.device.queue, cl_kernel, (int(n),), args)


def run2d(ctx, source, name, dtype, global_size, local_size, *args, **defines):
    """Like :func:`run` over a 2-D or 3-D range with an explicit work-group size."""
    if 0 in global_size:
        return
    cl_kernel = programs.get_kernel(ctx.device.target, source, name, dtype, **defines)
    args = _kernel_args(ctx, args)
    programs.launch(ctx.device.queue, cl_kernel, tuple(int(g) for g in global_size), args,
                    None if local_size is None else tuple(int(s) for s in local_size))


def _kernel_args(ctx, args):
    """Buffers for DeviceArrays and host-memory arrays; scalars unchanged."""
    return [a.data if isinstance(a, DeviceArray) else
            ctx.device.ensure_device(a).data if isinstance(a, np.ndarray) else a
            for a in args]


def i32(value):
    return np.int32(value)


_INT32 = np.iinfo(np.int32)


def position_text(position):
    """``[1,0]`` for the index tuple ``(1, 0)``, as TF's messages write it."""
    return "[%s]" % ",".join(str(i) for i in position)


def int32_indices(ctx, indices, describe=None, refuse_below=True):
    """``indices`` as int32 on the device: the OpenCL kernels index with ``int``.

    Narrowing an int64 index that int32 cannot hold would wrap it — 2**32 + 1
    becomes 1 — and silently read or write the wrong element, so such a
    value is dealt with first, on the host: refused with the CPU kernel's
    ``InvalidArgumentError``, or made -1 where the CPU kernel gives an index
    out of range a meaning (``one_hot``'s all-off row, a dropped negative
    segment id), which the OpenCL kernel then gives it too.

    Args:
        ctx: the kernel context.
        indices: an int32 or int64 tensor (DeviceArray or host array).
        describe: ``describe(values, position) -> message`` for a value too
            large for int32 (``position``: its index tuple in ``values``, see
            :func:`position_text`); None: such values become -1.
        refuse_below: refuse values below -2**31 as well (else they become -1).

    Raises:
        InvalidArgumentError: for a value int32 cannot hold that is refused.
    """
    if indices.dtype == np.int32:
        return on_device(ctx, indices)
    values = np.asarray(indices if isinstance(indices, np.ndarray)
                        else ctx.device.to_host(indices), dtype=np.int64)
    too_large, too_small = values > _INT32.max, values < _INT32.min
    refused = (too_large | too_small) if refuse_below else too_large
    if describe is not None and refused.any():
        position = tuple(int(i) for i in np.unravel_index(int(np.argmax(refused)),
                                                          values.shape))
        raise ctx.invalid_argument(describe(values, position))
    values = np.where(too_large | too_small, -1, values)
    return on_device(ctx, values.astype(np.int32))


MAX_DIMS = 8


def int8(values):
    """The OpenCL ``int8`` vector argument holding the 8 ints ``values``."""
    import pyopencl.cltypes as cltypes
    # A NumPy scalar, not a host-memory array.  Built directly: pyopencl's
    # ``make_int8`` compiles its constructor with ``eval`` on every call (~20 us).
    return np.array(tuple(values), dtype=cltypes.int8)[()]


def strided_args(shape, *strides):
    """Collapsed ``(shape, strides...)`` padded to 8 dimensions as ``int8`` vectors.

    Adjacent dimensions are merged where every strides list is contiguous
    across them, so most broadcasts need only one to three dimensions.

    Raises:
        ValueError: if more than 8 dimensions remain.
    """
    shape = list(shape)
    strides = [list(s) for s in strides]
    merged_shape, merged = [], [[] for _ in strides]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if merged_shape and all(m[-1] == s[d] * size for m, s in zip(merged, strides)):
            merged_shape[-1] *= size
            for m, s in zip(merged, strides):
                m[-1] = s[d]
            continue
        merged_shape.append(size)
        for m, s in zip(merged, strides):
            m.append(s[d])
    if len(merged_shape) > MAX_DIMS:
        raise ValueError("The OpenCL kernels handle at most %d dimensions after merging, "
                         "got shape %s" % (MAX_DIMS, shape))
    pad = MAX_DIMS - len(merged_shape)
    return (int8([1] * pad + merged_shape),) + tuple(int8([0] * pad + m) for m in merged)


def contiguous_strides(shape):
    """Element strides of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return strides[::-1]


def broadcast_strides(in_shape, out_shape):
    """The strides of ``in_shape`` seen in ``out_shape`` (0 on broadcast dimensions)."""
    padded = [1] * (len(out_shape) - len(in_shape)) + list(in_shape)
    return [0 if size == 1 else stride
            for size, stride in zip(padded, contiguous_strides(padded))]


def broadcast_shape(ctx, *shapes):
    """NumPy's broadcast of ``shapes``, or TF's ``Incompatible shapes`` error.

    Written out in Python rather than calling ``np.broadcast_shapes``, which
    builds arrays to broadcast and costs more than the rest of a tiny op.
    """
    first = tuple(shapes[0])
    if all(s == first for s in shapes):
        return first
    rank = max(len(s) for s in shapes)
    result = [1] * rank
    for shape in shapes:
        for axis, size in enumerate(shape, rank - len(shape)):
            if size == result[axis] or size == 1:
                continue
            if result[axis] != 1:
                raise ctx.invalid_argument("Incompatible shapes: %s" % " vs. ".join(
                    "[%s]" % ",".join(map(str, s)) for s in shapes))
            result[axis] = size
    return tuple(result)
