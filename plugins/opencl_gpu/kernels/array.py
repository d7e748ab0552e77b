"""GPU kernels of the array ops: constants, placeholders, shapes, reshaping,
transposing, slicing, joining, padding (source: ``opencl_kernels/array.cl``).

Ops that only change how elements are *seen* (``Reshape``, ``ExpandDims``,
``Squeeze``, ``Identity``) return a new :class:`DeviceArray` over the same
buffer.  Ops that move elements are one strided copy.  Their index arithmetic
is not rewritten here: the CPU kernel runs on a *virtual* NumPy view — an
array of the input's shape whose memory is never read — and the view it
returns (``np.transpose``, ``x[start:stop]``, ``np.split``...) tells, through
its strides and offset, which input element each output element is; so those
GPU kernels check their arguments with the CPU kernel's own code.
``StridedSlice`` decodes its masks with the helpers the CPU kernel and the
shape function share (:func:`~minitf.ops.slicing_ops.strided_slice_index`).
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from minitf.plugin import sliced_shape, strided_slice_index

from minitf_opencl_gpu.kernels.elementwise import fill, zeros
from minitf_opencl_gpu.kernels.table import (
    contiguous_strides, cpu_kernel, empty, i32, int8, int32_indices, kernel, on_device, on_host,
    position_text, run, strided_args)
from minitf_opencl_gpu.memory import DeviceArray

ALL = ("float", "int", "bool")


# ---- constants, placeholders, identity ------------------------------------------------
@kernel("Const", dtypes=ALL + ("small_int",))
def const(ctx, value, dtype):
    """Uploaded once: the runtime folds constants when it compiles a step.

    Integer constants stay in host memory (they are shapes and axes).
    """
    if np.asarray(value).dtype.kind in "iu":
        return value
    return ctx.device.from_host(value)


@kernel("Placeholder", dtypes=ALL)
def placeholder(ctx, dtype, shape):
    return cpu_kernel(ctx)(ctx, dtype=dtype, shape=shape)  # raises "You must feed..."


@kernel("Identity", "StopGradient", "PlaceholderWithDefault", dtypes=ALL)
def identity(ctx, x, **attrs):
    return x


@kernel("NoOp", dtypes=())
def no_op(ctx):
    return None


# ---- shapes: always host memory ---------------------------------------------------------
@kernel("Shape", dtypes=ALL)
def shape(ctx, x, out_type):
    return np.array(x.shape, dtype=ctx.output_dtypes[0])


@kernel("ShapeN", dtypes=ALL)
def shape_n(ctx, *inputs, N, out_type):
    shapes = tuple(np.array(x.shape, dtype=ctx.output_dtypes[0]) for x in inputs)
    return shapes[0] if len(shapes) == 1 else shapes


@kernel("Size", dtypes=ALL)
def size(ctx, x, out_type):
    return np.array(int(np.prod(x.shape)), dtype=ctx.output_dtypes[0])


@kernel("Rank", dtypes=ALL)
def rank(ctx, x):
    return np.array(len(x.shape), dtype=np.int32)


def _raise_cpu_error(ctx, *inputs, **attrs):
    """Raises the error the CPU kernel raises for these shapes (TF's messages).

    Called only when a check failed, with :class:`_ShapeOnly` stand-ins: the
    CPU kernel's checks read shapes only, and it raises before touching data.
    """
    cpu_kernel(ctx)(ctx, *inputs, **attrs)
    raise ctx.invalid_argument("Invalid input shapes %s" % [list(x.shape) for x in inputs])


# ---- views: the same buffer, another shape -------------------------------------------------
class _ShapeOnly:
    """A stand-in with a DeviceArray's shape and dtype for CPU kernels that only read those."""

    def __init__(self, array):
        self.shape = array.shape
        self.dtype = array.dtype
        self.ndim = len(array.shape)
        self.size = int(np.prod(array.shape))


def _virtual(x, extra_axis=False):
    """A NumPy array of ``x``'s shape whose memory is never read.

    Its base is one element long; its strides say where every element of
    ``x`` *would* be.  Only operations that make views (transposing, basic
    slicing, splitting) may be applied to it: :func:`_gather_view` then reads
    the view's offset and strides.  ``extra_axis`` appends an axis of size 1.
    """
    base = np.zeros(1, x.dtype)
    itemsize = x.dtype.itemsize
    shape = tuple(x.shape) + ((1,) if extra_axis else ())
    return as_strided(base, shape=shape,
                      strides=[s * itemsize for s in contiguous_strides(shape)],
                      writeable=False), base


def _gather_view(ctx, x, view, base, extra_axis=False):
    """Copies the elements of ``x`` that ``view`` (a view of :func:`_virtual`) selects."""
    if not isinstance(view, np.ndarray) or view.base is None:
        # NumPy made a scalar of a 0-d view (x[()]), reading the base's one
        # element: the only element there is to select.
        view = as_strided(base, shape=np.shape(view), strides=(0,) * np.ndim(view))
    itemsize = x.dtype.itemsize
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
    shape, strides = view.shape, view.strides
    if extra_axis:
        shape, strides = shape[:-1], strides[:-1]
    out = empty(ctx, shape, x.dtype)
    if out.size:
        strides = [s // itemsize for s in strides]
        run(ctx, "array", "strided_gather", x.dtype, out.size, out, x, i32(out.size),
            i32(offset // itemsize), *strided_args(shape, strides))
    return out


def _through_view(ctx, x, *args, **attrs):
    """Runs the CPU kernel on a virtual view of ``x``; copies what its result selects."""
    view, base = _virtual(x)
    result = cpu_kernel(ctx)(ctx, view, *args, **attrs)
    if isinstance(result, tuple):
        return tuple(_gather_view(ctx, x, r, base) for r in result)
    return _gather_view(ctx, x, result, base)


@kernel("Reshape", dtypes=ALL)
def reshape(ctx, tensor, shape):
    result = cpu_kernel(ctx)(ctx, _virtual(tensor)[0], ctx.device.to_host(shape))
    return tensor.reshape(result.shape)


@kernel("ExpandDims", dtypes=ALL)
def expand_dims(ctx, x, dim):
    result = cpu_kernel(ctx)(ctx, _virtual(x)[0], ctx.device.to_host(dim))
    return x.reshape(result.shape)


@kernel("Squeeze", dtypes=ALL)
def squeeze(ctx, x, squeeze_dims):
    return x.reshape(cpu_kernel(ctx)(ctx, _virtual(x)[0], squeeze_dims=squeeze_dims).shape)


# ---- strided copies -----------------------------------------------------------------------
@kernel("Transpose", dtypes=ALL)
def transpose(ctx, x, perm):
    return _through_view(ctx, x, ctx.device.to_host(perm))


@kernel("Slice", dtypes=ALL)
def slice_(ctx, x, begin, size):
    return _through_view(ctx, x, ctx.device.to_host(begin), ctx.device.to_host(size))


def _index_view(ctx, x, index):
    """Copies ``x[index]`` for a basic NumPy index (ints, slices, None, Ellipsis).

    Indexing every axis with an int would make NumPy *read* an element (it
    returns a scalar, not a view), so the virtual array gets one extra
    trailing axis that the index never touches; it is dropped again here.
    """
    view, base = _virtual(x, extra_axis=True)
    if not any(item is Ellipsis for item in index):
        index = index + (Ellipsis,)
    result = view[index + (slice(None),)]
    return _gather_view(ctx, x, result, base, extra_axis=True)


@kernel("StridedSlice", dtypes=ALL)
def strided_slice(ctx, x, begin, end, strides, **masks):
    """Decodes the index exactly as the CPU kernel and the shape function do."""
    try:
        index = strided_slice_index([int(b) for b in ctx.device.to_host(begin)],
                                    [int(e) for e in ctx.device.to_host(end)],
                                    [int(s) for s in ctx.device.to_host(strides)], **masks)
        sliced_shape(list(x.shape), index)  # TF's errors for out-of-range indices
    except ValueError as e:
        raise ctx.invalid_argument(str(e)) from None
    return _index_view(ctx, x, tuple(index))


@kernel("StridedSliceGrad", dtypes=ALL)
def strided_slice_grad(ctx, shape, begin, end, strides, dy, **masks):
    """Zeros of ``shape`` with ``dy`` written where ``StridedSlice`` reads (a
    strided slice reads each element at most once, so no adding up)."""
    shape = [int(d) for d in ctx.device.to_host(shape)]
    try:
        index = strided_slice_index([int(b) for b in ctx.device.to_host(begin)],
                                    [int(e) for e in ctx.device.to_host(end)],
                                    [int(s) for s in ctx.device.to_host(strides)], **masks)
        sliced_shape(list(shape), index)
    except ValueError as e:
        raise ctx.invalid_argument(str(e)) from None
    dx = zeros(ctx, shape, dy.dtype)
    view, base = _virtual(dx, extra_axis=True)
    index = tuple(index) + (() if any(i is Ellipsis for i in index) else (Ellipsis,))
    view = view[index + (slice(None),)]
    if view.shape[:-1] != tuple(dy.shape):
        raise ctx.invalid_argument("shape of dy was [%s] instead of [%s]"
                                   % (",".join(map(str, dy.shape)),
                                      ",".join(map(str, view.shape[:-1]))))
    if dy.size:
        itemsize = dy.dtype.itemsize
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        run(ctx, "array", "strided_scatter", dy.dtype, dy.size, dx, dy, i32(dy.size),
            i32(offset // itemsize),
            *strided_args(dy.shape, [st // itemsize for st in view.strides[:-1]]))
    return dx


@kernel("Unpack", dtypes=ALL)
def unpack(ctx, value, num, axis):
    axis %= len(value.shape)
    if value.shape[axis] != num:
        raise ctx.invalid_argument("Input shape axis %d must equal %d, got shape [%s]"
                                   % (axis, num, ",".join(map(str, value.shape))))
    parts = tuple(_index_view(ctx, value, (slice(None),) * axis + (i,)) for i in range(num))
    return parts[0] if num == 1 else parts


@kernel("Split", dtypes=ALL)
def split(ctx, split_dim, value, num_split):
    view, base = _virtual(value)
    result = cpu_kernel(ctx)(ctx, ctx.device.to_host(split_dim), view, num_split=num_split)
    if not isinstance(result, tuple):
        return _gather_view(ctx, value, result, base)
    return tuple(_gather_view(ctx, value, r, base) for r in result)


@kernel("SplitV", dtypes=ALL)
def split_v(ctx, value, size_splits, split_dim, num_split):
    return _through_view(ctx, value, ctx.device.to_host(size_splits),
                         ctx.device.to_host(split_dim), num_split=num_split)


@kernel("Tile", dtypes=ALL)
def tile(ctx, x, multiples):
    """Each dimension ``d`` becomes two, ``[multiples[d], d]``, the first of stride 0."""
    multiples = [int(m) for m in ctx.device.to_host(multiples)]
    if len(multiples) != len(x.shape):
        raise ctx.invalid_argument("Expected multiples argument to be a vector of length %d "
                                   "but got length %d" % (len(x.shape), len(multiples)))
    out_shape = [m * d for m, d in zip(multiples, x.shape)]
    out = empty(ctx, out_shape, x.dtype)
    if out.size:
        split_shape, strides = [], []
        for m, d, s in zip(multiples, x.shape, contiguous_strides(x.shape)):
            split_shape += [m, d]
            strides += [0, s]
        run(ctx, "array", "strided_gather", x.dtype, out.size, out, x, i32(out.size), i32(0),
            *strided_args(split_shape, strides))
    return out


def _scatter(ctx, out, block, corner):
    """Writes ``block`` into ``out`` with its first element at index ``corner``."""
    if not block.size:
        return
    out_strides = contiguous_strides(out.shape)
    base = sum(c * s for c, s in zip(corner, out_strides))
    run(ctx, "array", "strided_scatter", block.dtype, block.size, out, block, i32(block.size),
        i32(base), *strided_args(block.shape, out_strides))


@kernel("ConcatV2", dtypes=ALL)
def concat_v2(ctx, *values_and_axis):
    *values, axis = values_and_axis
    axis = int(ctx.device.to_host(axis))
    rank = len(values[0].shape)
    if not -rank <= axis < rank or any(not _fits(v.shape, values[0].shape, axis % rank)
                                       for v in values):
        _raise_cpu_error(ctx, *[_ShapeOnly(v) for v in values], np.int32(axis))
    axis %= rank
    dtype = np.dtype(ctx.output_dtypes[0])
    values = [on_device(ctx, v, dtype) for v in values]
    out_shape = list(values[0].shape)
    out_shape[axis] = sum(v.shape[axis] for v in values)
    out = empty(ctx, out_shape, dtype)
    start = 0
    for v in values:
        _scatter(ctx, out, v, [start if d == axis else 0 for d in range(rank)])
        start += v.shape[axis]
    return out


def _fits(shape, first, axis):
    """Whether ``shape`` may be concatenated to ``first`` along ``axis``."""
    return len(shape) == len(first) and all(a == b for d, (a, b) in
                                            enumerate(zip(shape, first)) if d != axis)


@kernel("Pack", dtypes=ALL)
def pack(ctx, *values, axis):
    rank = len(values[0].shape) + 1
    axis = axis % rank
    expanded = [on_device(ctx, v, ctx.output_dtypes[0]) for v in values]
    if any(tuple(v.shape) != tuple(values[0].shape) for v in values):
        _raise_cpu_error(ctx, *[_ShapeOnly(v) for v in values], axis=axis)
    expanded = [v.reshape(v.shape[:axis] + (1,) + v.shape[axis:]) for v in expanded]
    shape = list(expanded[0].shape)
    shape[axis] = len(values)
    out = empty(ctx, shape, expanded[0].dtype)
    for i, v in enumerate(expanded):
        _scatter(ctx, out, v, [i if d == axis else 0 for d in range(rank)])
    return out


def _pad(ctx, x, paddings, *constant):
    """``x`` written into a tensor filled with 0 (or the constant) at the paddings' corner."""
    paddings = np.asarray(ctx.device.to_host(paddings))
    if paddings.shape != (len(x.shape), 2) or (paddings < 0).any():
        _raise_cpu_error(ctx, _ShapeOnly(x), paddings, *constant)
    shape = [int(b + d + a) for (b, a), d in zip(paddings, x.shape)]
    if constant:
        out = fill(ctx, np.array(shape, np.int32), constant[0])
    else:
        out = zeros(ctx, shape, x.dtype)
    _scatter(ctx, out, x, [int(b) for b, _ in paddings])
    return out


@kernel("Pad", dtypes=ALL)
def pad(ctx, x, paddings):
    return _pad(ctx, x, paddings)


@kernel("PadV2", dtypes=ALL)
def pad_v2(ctx, x, paddings, constant_values):
    return _pad(ctx, x, paddings, constant_values)


def _mirror_axes(ctx, x, paddings, mode, padded):
    """The checked paddings; TF's (the CPU kernel's) error when one is too wide.

    ``padded`` is True for ``MirrorPadGrad``, whose input is the padded shape.
    """
    paddings = np.asarray(ctx.device.to_host(paddings))
    widest = 0 if mode == "REFLECT" else 1   # REFLECT: pad < n; SYMMETRIC: pad <= n
    ok = paddings.shape == (len(x.shape), 2) and (paddings >= 0).all()
    if ok:
        sizes = [d - b - a if padded else d for (b, a), d in zip(paddings, x.shape)]
        ok = all(max(b, a) < n + widest for (b, a), n in zip(paddings, sizes))
    if not ok:
        _raise_cpu_error(ctx, _ShapeOnly(x), paddings, mode=mode)
    return [(int(b), int(a)) for b, a in paddings]


def _mirror_pass(ctx, name, x, axis, n, before, after, sym, out_size):
    """One axis of ``MirrorPad`` (``out_size`` = n + pads) or of its gradient (= n)."""
    shape = list(x.shape)
    shape[axis] = out_size
    out = empty(ctx, shape, x.dtype)
    inner = int(np.prod(x.shape[axis + 1:]))
    run(ctx, "array", name, x.dtype, out.size, out, x, i32(out.size), i32(n), i32(inner),
        i32(before), i32(after), i32(sym))
    return out


@kernel("MirrorPad", dtypes=ALL)
def mirror_pad(ctx, x, paddings, mode):
    """One gather per padded axis: each output row copies its mirrored source row."""
    sym = int(mode == "SYMMETRIC")
    for axis, (before, after) in enumerate(_mirror_axes(ctx, x, paddings, mode, False)):
        if before or after:
            n = x.shape[axis]
            x = _mirror_pass(ctx, "mirror_pad_axis", x, axis, n, before, after, sym,
                             before + n + after)
    return x


@kernel("MirrorPadGrad", dtypes=("float", "int"))
def mirror_pad_grad(ctx, grad, paddings, mode):
    """Per padded axis, each source row sums the (at most three) rows that copied it."""
    sym = int(mode == "SYMMETRIC")
    for axis, (before, after) in enumerate(_mirror_axes(ctx, grad, paddings, mode, True)):
        if before or after:
            n = grad.shape[axis] - before - after
            grad = _mirror_pass(ctx, "mirror_pad_grad_axis", grad, axis, n, before, after,
                                sym, n)
    return grad


@kernel("ReverseV2", dtypes=ALL)
def reverse_v2(ctx, tensor, axis):
    return _through_view(ctx, tensor, ctx.device.to_host(axis))


@kernel("UnsortedSegmentSum", dtypes=("float", "int"))
def unsorted_segment_sum(ctx, data, segment_ids, num_segments):
    """The scatter-add behind ``tf.gather``'s gradient: atomic adds into zeros.

    Ids out of range are dropped (TF's GPU kernel); the CPU kernel raises.
    """
    num_segments = int(ctx.device.to_host(num_segments))
    id_shape = tuple(segment_ids.shape)
    if tuple(data.shape[:len(id_shape)]) != id_shape:
        raise ctx.invalid_argument("data.shape = [%s] does not start with segment_ids.shape = "
                                   "[%s]" % (",".join(map(str, data.shape)),
                                             ",".join(map(str, id_shape))))
    if data.dtype.kind != "f":
        return on_host(ctx, data, segment_ids, num_segments)
    inner_shape = tuple(data.shape[len(id_shape):])
    out = zeros(ctx, (num_segments,) + inner_shape, data.dtype)
    ids = int32_indices(ctx, segment_ids, refuse_below=False, describe=lambda ids, at: (
        "segment_ids%s = %d is out of range [0, %d)" % (position_text(at), ids[at], num_segments)))
    count, inner = int(np.prod(id_shape)), int(np.prod(inner_shape))
    run(ctx, "array", "segment_sum", data.dtype, count * inner, out, data, ids, i32(count),
        i32(inner), i32(num_segments), SEGMENT_SUM="1",
        **({"IS_DOUBLE": "1"} if data.dtype == np.float64 else {}))
    return out


def _nd_args(ctx, indices, shape):
    """``(indices as int32 on the device, count, K, dims, strides)`` for *_nd kernels.

    Raises TF's error when the index depth ``K`` exceeds the rank, or an
    index does not fit in int32 (the CPU kernel's words).
    """
    depth = indices.shape[-1]
    if depth > len(shape):
        raise ctx.invalid_argument("indices.shape[-1] = %d > rank %d" % (depth, len(shape)))
    count = int(np.prod(indices.shape[:-1]))
    indices = int32_indices(ctx, indices, describe=lambda values, at: (
        "indices%s = %s does not index into shape %s"
        % (position_text(at[:-1]), values[at[:-1]].tolist(), list(shape))))
    strides = contiguous_strides(shape)[:depth]
    pad = [0] * (8 - depth)
    return (indices, count, depth, int8(list(shape[:depth]) + pad), int8(strides + pad))


@kernel("GatherNd", dtypes=ALL)
def gather_nd(ctx, params, indices):
    """Coordinates out of range give zeros (TF's GPU kernel); the CPU kernel raises."""
    params = on_device(ctx, params)
    indices, count, depth, dims, strides = _nd_args(ctx, indices, params.shape)
    inner_shape = tuple(params.shape[depth:])
    out = empty(ctx, tuple(indices.shape[:-1]) + inner_shape, params.dtype)
    run(ctx, "array", "gather_nd", params.dtype, out.size, out, params, indices, i32(count),
        i32(np.prod(inner_shape)), i32(depth), dims, strides)
    return out


@kernel("ScatterNd", dtypes=("float", "int"))
def scatter_nd(ctx, indices, updates, shape):
    """Atomic adds into zeros; coordinates out of range are dropped (TF's GPU kernel)."""
    shape = [int(d) for d in ctx.device.to_host(shape)]
    if updates.dtype.kind != "f":
        return on_host(ctx, indices, updates, np.array(shape, np.int64))
    indices, count, depth, dims, strides = _nd_args(ctx, indices, shape)
    inner = int(np.prod(shape[depth:]))
    if tuple(updates.shape) != tuple(indices.shape[:-1]) + tuple(shape[depth:]):
        raise ctx.invalid_argument("updates.shape %s must be indices.shape[:-1] + shape[K:] = %s"
                                   % (list(updates.shape),
                                      list(indices.shape[:-1]) + shape[depth:]))
    out = zeros(ctx, shape, updates.dtype)
    run(ctx, "array", "scatter_nd", updates.dtype, count * inner, out, updates, indices,
        i32(count), i32(inner), i32(depth), dims, strides, SEGMENT_SUM="1",
        **({"IS_DOUBLE": "1"} if updates.dtype == np.float64 else {}))
    return out


@kernel("OneHot", dtypes=ALL + ("small_int",))
def one_hot(ctx, indices, depth, on_value, off_value, axis):
    """The new axis is made last by the kernel, then moved where ``axis`` says."""
    depth = int(ctx.device.to_host(depth))
    if depth < 0:
        raise ctx.invalid_argument("depth must be non-negative, got: %d" % depth)
    dtype = np.dtype(ctx.output_dtypes[0])
    index_shape = tuple(indices.shape)
    indices = int32_indices(ctx, indices)  # beyond int32: out of range, an all-off row
    out = empty(ctx, index_shape + (depth,), dtype)
    count = int(np.prod(index_shape))
    run(ctx, "array", "one_hot", dtype, out.size, out, indices, on_device(ctx, on_value, dtype),
        on_device(ctx, off_value, dtype), i32(count), i32(depth))
    if axis in (-1, len(index_shape)):
        return out
    view, base = _virtual(out)
    return _gather_view(ctx, out, np.moveaxis(view, -1, axis), base)


@kernel("GatherV2", dtypes=ALL)
def gather_v2(ctx, params, indices, axis):
    axis = int(ctx.device.to_host(axis)) % len(params.shape)
    if not isinstance(params, DeviceArray):
        params = on_device(ctx, params)
    index_shape = tuple(indices.shape)
    indices = int32_indices(ctx, indices, describe=lambda values, at: (
        "indices%s = %d is not in [0, %d)" % (position_text(at), values[at], params.shape[axis])))
    outer = int(np.prod(params.shape[:axis]))
    inner = int(np.prod(params.shape[axis + 1:]))
    count = int(np.prod(index_shape))
    out = empty(ctx, params.shape[:axis] + index_shape + params.shape[axis + 1:], params.dtype)
    run(ctx, "array", "gather", params.dtype, out.size, out, params, indices, i32(outer),
        i32(params.shape[axis]), i32(count), i32(inner))
    return out


