"""CPU kernels of the reductions: ``Sum``, ``Mean``, ``Max``, ``Min``, ``Prod``,
``Any``, ``All``, ``ArgMax``, ``ArgMin`` — one NumPy call each, with TF's checks
of the axes."""

import math

import numpy as np

from minitf_numpy_cpu.kernels.math import ieee
from minitf_numpy_cpu.kernels.table import kernel


def _reduction_axes(ctx, x, reduction_indices):
    """The axes to reduce as a tuple of non-negative ints, checked as TF checks them."""
    axes = []
    for axis in reduction_indices.reshape(-1).tolist():
        if not -x.ndim <= axis < x.ndim:
            raise ctx.invalid_argument("Invalid reduction dimension (%d for input with %d "
                                       "dimension(s)" % (axis, x.ndim))
        if axis % x.ndim in axes:
            raise ctx.invalid_argument("Invalid reduction arguments: Axes contains duplicate "
                                       "dimension: %d" % (axis % x.ndim))
        axes.append(axis % x.ndim)
    return tuple(axes)


# ``np.add.reduce`` is what ``np.sum`` calls, without its Python-level dispatch:
# the gradient of every bias is one of these sums, every step.
@kernel("Sum")
def sum_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    return np.add.reduce(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)


@kernel("Mean")
@ieee
def mean(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    total = np.add.reduce(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)
    count = math.prod(x.shape[a] for a in axes)
    if x.dtype.kind in "iu":
        # Integer mean: C's division, truncating toward zero; an empty mean is 0.
        return np.sign(total) * (np.abs(total) // max(count, 1))
    return np.divide(total, count, dtype=x.dtype)  # an empty mean is nan


@kernel("Max")
def max_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.max(x, axis=axes, keepdims=keep_dims, initial=lowest)


@kernel("Min")
def min_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    highest = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
    return np.min(x, axis=axes, keepdims=keep_dims, initial=highest)


@kernel("Prod")
def prod(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    return np.prod(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)


@kernel("Any")
def any_(ctx, x, reduction_indices, keep_dims):
    return np.any(x, axis=_reduction_axes(ctx, x, reduction_indices), keepdims=keep_dims)


@kernel("All")
def all_(ctx, x, reduction_indices, keep_dims):
    return np.all(x, axis=_reduction_axes(ctx, x, reduction_indices), keepdims=keep_dims)


def _arg_axis(ctx, x, dimension):
    axis = int(dimension)
    if not -x.ndim <= axis < x.ndim:
        raise ctx.invalid_argument("Expected dimension in the range [%d, %d), but got %d"
                                   % (-x.ndim, x.ndim, axis))
    if x.shape[axis] == 0:
        raise ctx.invalid_argument("Reduction axis %d is empty in shape %s"
                                   % (axis, list(x.shape)))
    return axis


@kernel("ArgMax")
def arg_max(ctx, x, dimension, output_type):
    return np.argmax(x, axis=_arg_axis(ctx, x, dimension)).astype(output_type.as_numpy_dtype)


@kernel("ArgMin")
def arg_min(ctx, x, dimension, output_type):
    return np.argmin(x, axis=_arg_axis(ctx, x, dimension)).astype(output_type.as_numpy_dtype)
