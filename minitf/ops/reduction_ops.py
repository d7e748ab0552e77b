"""Reductions: ``reduce_sum``, ``reduce_mean``, ``reduce_max`` ..., ``argmax``, ``argmin``.

A reduction collapses the axes it is given (every axis by default) and keeps
the others; ``keepdims=True`` keeps the collapsed axes with length 1.  The
axes are an input tensor, so the output shape is known while the graph is
built only when they are a constant.

Gradients spread ``grad`` back over the collapsed axes: reshape it to the
output shape *with* kept dims, then tile it to the input shape.  A sum sends
it to every element; a mean divides it by the count; a max or min sends it to
the elements that were the maximum, split evenly among ties; a product sends
each element the product of the others (computed without dividing by zero).
``argmax``, ``argmin`` and the bool reductions are not differentiable.

Mirrors the reductions of ``tensorflow/python/ops/math_ops.py`` and their
gradients in ``math_grad.py``.
"""

import builtins

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import (
    array_ops, comparison_ops, math_ops, padding_ops, select_ops, unary_ops)
from minitf.ops.constant_op import constant
from minitf.ops.math_util import (
    REAL_INDEX, deprecated_argument_lookup, expect_dtype, op_scope, with_rank, with_rank_at_most)
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


# ---- declaring reductions ----------------------------------------------------------------
def _reduced_axes(axes, rank):
    """The set of non-negative axes ``axes`` names in a tensor of ``rank`` dimensions.

    Raises:
        ValueError: for an axis outside ``[-rank, rank)``.
    """
    result = set()
    for axis in np.reshape(axes, -1).tolist():
        if not -rank <= axis < rank:
            raise ValueError("Invalid reduction dimension %d for input with %d dimensions."
                             % (axis, rank))
        result.add(axis % rank)
    return result


def _reduction_shape(op):
    """The input shape with the reduced axes removed (or kept as 1 with keep_dims).

    The axes must be known while the graph is built (a constant); otherwise
    only the rank is known with ``keep_dims``, and nothing without.
    """
    shape = op.inputs[0].shape
    with_rank_at_most(op.inputs[1].shape, 1)
    keep_dims = op.get_attr("keep_dims")
    axes = constant_value(op.inputs[1])
    if axes is None or shape.ndims is None:
        return [unknown_shape(shape.ndims if keep_dims else None)]
    reduced = _reduced_axes(axes, shape.ndims)
    dims = []
    for i, dim in enumerate(shape.as_list()):
        if i not in reduced:
            dims.append(dim)
        elif keep_dims:
            dims.append(1)
    return [TensorShape(dims)]


def _reduction_dtype(op):
    expect_dtype(op, 1, REAL_INDEX)
    return [op.inputs[0].dtype.base_dtype]


def _reduction(name, doc, types=dtypes.NUMERIC):
    return define_op(name, inputs=("input", "reduction_indices"),
                     attrs=("keep_dims: bool = false",),
                     shape_fn=_reduction_shape, type_constraint=types,
                     dtype_fn=_reduction_dtype, doc=doc, stacklevel=2)


def _all_axes(x):
    """Every axis of ``x``: a constant when its rank is known, else ``range(rank(x))``."""
    if x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    return math_ops.range(0, array_ops.rank(x))


def _reduce(op_def, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    """Adds a reduction op, resolving TF1's deprecated argument names.

    With no axis every dimension is reduced, and the result is a scalar even
    when the input's rank is only known at run time.
    """
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = builtins.bool(keepdims)
    x = convert_to_tensor(input_tensor)
    axes = _all_axes(x) if axis is None else axis
    result = apply_op(op_def, [x, axes], attrs={"keep_dims": keepdims}, name=name)
    if axis is None and not keepdims:
        result.set_shape([])
    return result


# ---- spreading a gradient back over the reduced axes -------------------------------------
def _kept_dims_shape(op):
    """The reduction's output shape with the reduced axes kept as 1 (TF's
    ``math_ops.reduced_shape``): summing ``[2, 3, 5]`` over axis 1 gives ``[2, 1, 5]``.

    A Python list when the axes, the input's rank and its kept dimensions are
    known while the graph is built (the reduced ones may be unknown: a loss
    averaged over a batch of any size), else a shape tensor computed by ops.
    """
    x, axes = op.inputs
    static_axes = constant_value(axes)
    if x.shape.ndims is not None and static_axes is not None:
        reduced = _reduced_axes(static_axes, x.shape.ndims)
        kept = [1 if i in reduced else d for i, d in enumerate(x.shape.as_list())]
        if None not in kept:
            return kept
    shape = array_ops.shape(x)
    rank = array_ops.size(shape)
    axes = array_ops.reshape(unary_ops.cast(axes, dtypes.int32), [-1])
    axes = math_ops.floormod(axes, math_ops.maximum(rank, 1))  # -1 means the last axis
    is_reduced = reduce_any(
        comparison_ops.equal(array_ops.expand_dims(math_ops.range(rank), 1), axes), axis=1)
    return select_ops.where(is_reduced, array_ops.ones_like(shape), shape)


def _broadcast_to_input(op, grad):
    """``grad`` (of the reduction's output shape) repeated along the reduced axes,
    to the input's shape: reshape to the kept-dims shape, then tile."""
    x = op.inputs[0]
    kept = _kept_dims_shape(op)
    if isinstance(kept, list) and x.shape.is_fully_defined():
        multiples = [d // builtins.max(k, 1) for d, k in zip(x.shape.as_list(), kept)]
    elif isinstance(kept, list):
        # Unknown dimensions are reduced ones, where the multiple is the input's
        # dimension; with every axis reduced that is the input's shape (TF1's
        # ``_SumGrad`` fast path).
        multiples = array_ops.shape(x)
        if builtins.any(k != 1 for k in kept):
            multiples = math_ops.floor_div(multiples, [builtins.max(k, 1) for k in kept])
    else:
        multiples = math_ops.floor_div(array_ops.shape(x), math_ops.maximum(kept, 1))
    return padding_ops.tile(array_ops.reshape(grad, kept), multiples)


# ---- the reductions, each with its gradient ----------------------------------------------
_sum = _reduction("Sum", "The sum of the elements along the given axes.")


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Sums the elements of ``input_tensor`` along ``axis`` (``tf.reduce_sum``).

    Args:
        input_tensor: the tensor to reduce.
        axis: an int, a list of ints or an int tensor; negative axes count
            from the end.  None (the default) reduces every axis.
        keepdims: keep the reduced axes, with length 1.
        name: op name (default ``Sum``).
        reduction_indices: the deprecated name of ``axis``.
        keep_dims: the deprecated name of ``keepdims``.

    Example:
        >>> x = tf.constant([[1, 1, 1], [1, 1, 1]])
        >>> sess.run([tf.reduce_sum(x), tf.reduce_sum(x, 0), tf.reduce_sum(x, -1, keepdims=True)])
        [6, array([2, 2, 2], dtype=int32), array([[3], [3]], dtype=int32)]

    Raises:
        ValueError: if a constant axis is outside ``[-rank, rank)``.
    """
    return _reduce(_sum, input_tensor, axis, keepdims, name or "Sum", reduction_indices,
                   keep_dims)


@gradient("Sum")
def _sum_grad(op, grad):
    """Each element enters its sum once: it receives the gradient of its sum."""
    return [_broadcast_to_input(op, grad), None]


_mean = _reduction("Mean", "The mean along the given axes (integer means truncate).")


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """The mean of the elements along ``axis`` (``tf.reduce_mean``; see :func:`reduce_sum`).

    An integer tensor has an integer mean, truncated toward zero as in C:
    the mean of ``[-1, -2]`` is -1.  Cast to a float first for the exact mean.
    """
    return _reduce(_mean, input_tensor, axis, keepdims, name or "Mean", reduction_indices,
                   keep_dims)


@gradient("Mean")
def _mean_grad(op, grad):
    """The sum's gradient, divided by how many elements each mean averaged."""
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():
        count = x.shape.num_elements() // builtins.max(y.shape.num_elements(), 1)
    elif y.shape.is_fully_defined():  # e.g. a mean over a batch of unknown size
        count = array_ops.size(x)
        if y.shape.num_elements() > 1:
            count = math_ops.floor_div(count, y.shape.num_elements())
        count = unary_ops.cast(count, grad.dtype.base_dtype)
    else:
        count = math_ops.floor_div(reduce_prod(array_ops.shape(x)),
                                   math_ops.maximum(reduce_prod(array_ops.shape(y)), 1))
        count = unary_ops.cast(count, grad.dtype.base_dtype)
    return [math_ops.truediv(_broadcast_to_input(op, grad), count), None]


_max = _reduction("Max", "The maximum along the given axes.")
_min = _reduction("Min", "The minimum along the given axes.")


def reduce_max(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The maximum along ``axis`` (``tf.reduce_max``); an empty reduction gives the
    dtype's lowest value (``-inf`` for floats)."""
    return _reduce(_max, input_tensor, axis, keepdims, name or "Max", reduction_indices,
                   keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The minimum along ``axis`` (``tf.reduce_min``); an empty reduction gives the
    dtype's highest value (``inf`` for floats)."""
    return _reduce(_min, input_tensor, axis, keepdims, name or "Min", reduction_indices,
                   keep_dims)


@gradient("Max")
@gradient("Min")
def _min_or_max_grad(op, grad):
    """The gradient goes to the elements equal to the result; ties split it evenly."""
    x, axes = op.inputs
    kept = _kept_dims_shape(op)
    y = array_ops.reshape(op.outputs[0], kept)
    selected = unary_ops.cast(comparison_ops.equal(y, x), grad.dtype.base_dtype)
    num_selected = reduce_sum(selected, axes, keepdims=True)
    return [selected / num_selected * array_ops.reshape(grad, kept), None]


_prod = _reduction("Prod", "The product of the elements along the given axes.")


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """The product of the elements along ``axis`` (``tf.reduce_prod``)."""
    return _reduce(_prod, input_tensor, axis, keepdims, name or "Prod", reduction_indices,
                   keep_dims)


@gradient("Prod")
def _prod_grad(op, grad):
    """d prod(x) / d x_i is the product of the *other* elements.

    That is ``prod / x_i`` — unless there are zeros.  With none, divide.  With
    exactly one, the zero element gets the product of the nonzero ones and
    every other element 0; with two or more, everything gets 0.  Dividing
    the product of the nonzero elements by ``x`` with its zeros replaced by 1
    gives all the nonzero cases at once.  (TF computes the same with
    exclusive cumulative products.)
    """
    x, axes = op.inputs
    is_zero = comparison_ops.equal(x, 0)
    nonzero_x = select_ops.where(is_zero, array_ops.ones_like(x), x)
    product_of_nonzeros = reduce_prod(nonzero_x, axes, keepdims=True)
    zero_count = reduce_sum(unary_ops.cast(is_zero, x.dtype.base_dtype), axes, keepdims=True)
    others_nonzero = comparison_ops.logical_or(
        comparison_ops.equal(zero_count, 0),
        comparison_ops.logical_and(comparison_ops.equal(zero_count, 1), is_zero))
    others = select_ops.where_v2(others_nonzero, product_of_nonzeros / nonzero_x,
                                 array_ops.zeros_like(x))
    return [_broadcast_to_input(op, grad) * others, None]


_any = _reduction("Any", "Whether any element along the given axes is true.", (dtypes.bool,))
_all = _reduction("All", "Whether all elements along the given axes are true.", (dtypes.bool,))
not_differentiable("Any", "All", reason="bool inputs and output")


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The logical OR of a bool tensor along ``axis`` (``tf.reduce_any``)."""
    return _reduce(_any, input_tensor, axis, keepdims, name or "Any", reduction_indices,
                   keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The logical AND of a bool tensor along ``axis`` (``tf.reduce_all``)."""
    return _reduce(_all, input_tensor, axis, keepdims, name or "All", reduction_indices,
                   keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """``log(sum(exp(x)))`` along ``axis``, without overflow (``tf.reduce_logsumexp``).

    ``exp(1000.0)`` overflows, but ``log(sum(exp(x))) = m + log(sum(exp(x - m)))``
    for any ``m``; with ``m = max(x)`` every ``exp`` is at most 1.  As in TF1
    the ops live in scope ``ReduceLogSumExp``; an infinite maximum (all
    ``-inf``) is replaced by 0 so that ``x - m`` is not NaN, and ``m`` is a
    ``stop_gradient``: the result's gradient does not depend on the choice of ``m``.

    Example:
        >>> sess.run(tf.reduce_logsumexp([[0.0, 0.0], [1000.0, 1000.0]], axis=1))
        array([   0.6931472, 1000.6931   ], dtype=float32)
    """
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = builtins.bool(keepdims)
    x = convert_to_tensor(input_tensor)
    with op_scope(name, "ReduceLogSumExp", [x]) as scope:
        raw_max = reduce_max(x, axis, keepdims=True)
        finite_max = select_ops.where(comparison_ops.is_finite(raw_max), raw_max,
                                      array_ops.zeros_like(raw_max))
        shift = array_ops.stop_gradient(finite_max)
        exp_sum = reduce_sum(unary_ops.exp(math_ops.subtract(x, shift)), axis, keepdims=keepdims)
        result = unary_ops.log(exp_sum)
        if not keepdims:
            shift = array_ops.reshape(shift, array_ops.shape(result))
        result = math_ops.add(result, shift, name=scope)
        if axis is None and not keepdims:
            result.set_shape([])
        return result


# ---- ArgMax and ArgMin -----------------------------------------------------------------------
def _arg_shape(op):
    """The input shape without the reduced dimension."""
    shape = op.inputs[0].shape
    with_rank(op.inputs[1].shape, 0)
    dimension = constant_value(op.inputs[1])
    if shape.ndims is None:
        return [unknown_shape()]
    if dimension is None:
        return [unknown_shape(builtins.max(shape.ndims - 1, 0))]
    dimension = int(dimension)
    if not -shape.ndims <= dimension < shape.ndims:
        raise ValueError("Dimension (%d) must be in the range [%d, %d), where %d is the number "
                         "of dimensions in the input." % (dimension, -shape.ndims, shape.ndims,
                                                          shape.ndims))
    dims = shape.as_list()
    del dims[dimension]
    return [TensorShape(dims)]


def _arg_dtype(op):
    expect_dtype(op, 1, REAL_INDEX)
    return [op.get_attr("output_type")]


_ARG_ATTRS = ("output_type: {int32, int64} = int64",)
_arg_max = define_op("ArgMax", inputs=("input", "dimension"), attrs=_ARG_ATTRS,
                     shape_fn=_arg_shape, type_constraint=dtypes.NUMERIC, dtype_fn=_arg_dtype,
                     doc="The index of the largest value along a dimension (first on ties).")
_arg_min = define_op("ArgMin", inputs=("input", "dimension"), attrs=_ARG_ATTRS,
                     shape_fn=_arg_shape, type_constraint=dtypes.NUMERIC, dtype_fn=_arg_dtype,
                     doc="The index of the smallest value along a dimension (first on ties).")
not_differentiable("ArgMax", "ArgMin", reason="an integer index: a step function of the input")


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's argument name
           output_type=dtypes.int64):
    """The index of the largest value along ``axis`` (``tf.argmax``).

    Args:
        input: a numeric tensor.
        axis: the dimension to reduce; TF1's default is 0 (not "all").
        name: op name (default ``ArgMax``).
        dimension: the deprecated name of ``axis``.
        output_type: int64 (the default) or int32.

    Example:
        >>> sess.run(tf.argmax([[1, 3, 3], [4, 0, 4]], axis=1))
        array([1, 0])

    Raises:
        ValueError: if a constant axis is out of range.
    """
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op(_arg_max, [input, 0 if axis is None else axis],
                    attrs={"output_type": output_type}, name=name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's argument name
           output_type=dtypes.int64):
    """The index of the smallest value along ``axis`` (``tf.argmin``; see :func:`argmax`)."""
    axis = deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op(_arg_min, [input, 0 if axis is None else axis],
                    attrs={"output_type": output_type}, name=name or "ArgMin")


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF1's deprecated ``tf.arg_max``: :func:`argmax` with ``dimension`` required."""
    return argmax(input, axis=dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF1's deprecated ``tf.arg_min``: :func:`argmin` with ``dimension`` required."""
    return argmin(input, axis=dimension, output_type=output_type, name=name)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """How many elements along ``axis`` are not zero (``tf.count_nonzero``).

    Built as ``cast(reduce_sum(cast(x != 0, int64), axis), dtype)``.

    Example:
        >>> sess.run(tf.count_nonzero([[0, 1], [2, 0]], axis=1))
        array([1, 1])
    """
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    with op_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        zero = constant(np.zeros((), dtype=x.dtype.as_numpy_dtype), name="zero")
        nonzero = unary_ops.cast(comparison_ops.not_equal(x, zero), dtypes.int64)
        return unary_ops.cast(reduce_sum(nonzero, axis=axis, keepdims=keepdims), dtype)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance of the elements along ``axis`` (``tf.math.reduce_variance``).

    ``mean(square(x - mean(x, axis, keepdims=True)), axis)``: the population
    variance, as ``np.var``.
    """
    with op_scope(name, "reduce_variance", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        mean = reduce_mean(x, axis=axis, keepdims=True)
        return reduce_mean(math_ops.squared_difference(x, mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation along ``axis`` (``tf.math.reduce_std``): ``np.std``."""
    with op_scope(name, "reduce_std", [input_tensor]):
        return unary_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))
