"""GPU kernels of the reductions: ``Sum``, ``Mean``, ``Max``, ``Min``, ``Prod``,
``Any``, ``All``, ``ArgMax``, ``ArgMin``, and of the scans ``Cumsum`` and
``Cumprod`` (source: ``opencl_kernels/reduction.cl``).

Every reduction is brought to one shape of problem, ``[outer, R, inner]``
reducing ``R``: the reduced axes are merged when adjacent, or moved last by a
transpose when not.  Integer reductions are shape arithmetic and run on the
host (see :mod:`~minitf_opencl_gpu.kernels.table`).
"""

import numpy as np

from minitf_opencl_gpu.kernels.table import (
    contiguous_strides, empty, i32, kernel, on_host, run, run2d, strided_args)

WG = 64  # the work-group size of the *_rows kernels


def reduction_axes(ctx, shape, reduction_indices):
    """The axes to reduce of a tensor of ``shape``, non-negative and sorted, checked
    as TF checks them."""
    ndim = len(shape)
    axes = []
    for axis in np.reshape(ctx.device.to_host(reduction_indices), -1).tolist():
        if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
            raise ctx.invalid_argument("Invalid reduction dimension (%d for input with %d "
                                       "dimension(s)" % (axis, ndim))
        if ndim and axis % ndim in axes:
            raise ctx.invalid_argument("Invalid reduction arguments: Axes contains duplicate "
                                       "dimension: %d" % (axis % ndim))
        if ndim:
            axes.append(axis % ndim)
    return sorted(axes)


def _as_outer_r_inner(ctx, x, axes):
    """``(x', outer, R, inner)`` with ``x'`` laid out so the axes reduce as ``R``."""
    shape = x.shape
    if not axes:
        return x, int(np.prod(shape)), 1, 1
    if axes == list(range(axes[0], axes[-1] + 1)):
        outer = int(np.prod(shape[:axes[0]]))
        reduced = int(np.prod(shape[axes[0]:axes[-1] + 1]))
        return x, outer, reduced, int(np.prod(shape[axes[-1] + 1:]))
    kept = [d for d in range(len(shape)) if d not in axes]
    perm = kept + axes
    strides = contiguous_strides(shape)
    moved = empty(ctx, [shape[d] for d in perm], x.dtype)
    run(ctx, "array", "strided_gather", x.dtype, moved.size, moved, x, i32(moved.size), i32(0),
        *strided_args(moved.shape, [strides[d] for d in perm]))
    return (moved, int(np.prod([shape[d] for d in kept])),
            int(np.prod([shape[d] for d in axes])), 1)


def reduce(ctx, name, x, axes, keep_dims, scale=1.0):
    """Reduces ``x`` over ``axes`` with kernel ``name`` (``sum``, ``max``, ...)."""
    out_shape = [1 if d in axes else size for d, size in enumerate(x.shape)]
    if not keep_dims:
        out_shape = [size for d, size in enumerate(x.shape) if d not in axes]
    out = empty(ctx, out_shape, x.dtype)
    if not out.size:
        return out
    if x.dtype == np.bool_:
        scalar = np.uint8(1)
    else:
        scalar = x.dtype.type(scale)
    source, outer, reduced, inner = _as_outer_r_inner(ctx, x, axes)
    if inner == 1:
        run2d(ctx, "reduction", name + "_rows", x.dtype, (outer * WG,), (WG,), out, source,
              i32(reduced), scalar)
    else:
        run(ctx, "reduction", name + "_cols", x.dtype, outer * inner, out, source, i32(outer),
            i32(reduced), i32(inner), scalar)
    return out


def _make(name, mean=False):
    def reduction(ctx, x, reduction_indices, keep_dims):
        if x.dtype.kind in "iu":
            return on_host(ctx, x, reduction_indices, keep_dims=keep_dims)
        axes = reduction_axes(ctx, x.shape, reduction_indices)
        count = int(np.prod([x.shape[a] for a in axes]))
        scale = (1.0 / count if count else float("nan")) if mean else 1.0
        return reduce(ctx, name, x, axes, keep_dims, scale)
    reduction.__name__ = name
    return reduction


# op type -> its kernel function (also run by a fused cluster that cannot fuse it).
REDUCTIONS = {"Sum": _make("sum"), "Mean": _make("sum", mean=True), "Max": _make("max"),
              "Min": _make("min"), "Prod": _make("prod")}

# The axes are int32: every reduction accepts the "int" group too.
for _op, _reduction in REDUCTIONS.items():
    kernel(_op, dtypes=("float", "int"))(_reduction)
kernel("Any", dtypes=("bool", "int"))(_make("any"))
kernel("All", dtypes=("bool", "int"))(_make("all"))


def _arg(name):
    def arg_reduction(ctx, x, dimension, output_type):
        if x.dtype.kind in "iu":
            return on_host(ctx, x, dimension, output_type=output_type)
        axis = int(ctx.device.to_host(dimension))
        ndim = len(x.shape)
        if not -ndim <= axis < ndim:
            raise ctx.invalid_argument("Expected dimension in the range [%d, %d), but got %d"
                                       % (-ndim, ndim, axis))
        axis %= ndim
        if x.shape[axis] == 0:
            raise ctx.invalid_argument("Reduction axis %d is empty in shape %s"
                                       % (axis, list(x.shape)))
        dst = np.dtype(output_type.as_numpy_dtype)
        out = empty(ctx, x.shape[:axis] + x.shape[axis + 1:], dst)
        outer, inner = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis + 1:]))
        run(ctx, "reduction", name, x.dtype, out.size, out, x, i32(outer), i32(x.shape[axis]),
            i32(inner), DST="long" if dst == np.int64 else "int")
        return out
    arg_reduction.__name__ = name
    return arg_reduction


kernel("ArgMax", dtypes=("float", "int"))(_arg("arg_max"))
kernel("ArgMin", dtypes=("float", "int"))(_arg("arg_min"))


def _scan(ctx, name, x, axis, exclusive, reverse):
    """``Cumsum``/``Cumprod``: ``x`` seen as ``[outer, R, inner]`` scanned along ``R``."""
    axis = int(ctx.device.to_host(axis))
    ndim = len(x.shape)
    if not -ndim <= axis < ndim:
        raise ctx.invalid_argument("axis %d out of range for a %d-D tensor" % (axis, ndim))
    axis %= ndim
    outer, inner = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis + 1:]))
    out = empty(ctx, x.shape, x.dtype)
    run(ctx, "reduction", name, x.dtype, outer * inner if out.size else 0, out, x, i32(outer),
        i32(x.shape[axis]), i32(inner), i32(bool(exclusive)), i32(bool(reverse)))
    return out


@kernel("Cumsum", dtypes=("float", "int"))
def cumsum(ctx, x, axis, exclusive, reverse):
    return _scan(ctx, "cumsum", x, axis, exclusive, reverse)


@kernel("Cumprod", dtypes=("float", "int"))
def cumprod(ctx, x, axis, exclusive, reverse):
    return _scan(ctx, "cumprod", x, axis, exclusive, reverse)
