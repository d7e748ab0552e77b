"""Selecting by a tensor of indices: ``tf.gather``, its scatter-add inverse
``tf.unsorted_segment_sum``, and ``tf.one_hot``.

``gather(params, indices)`` reads slices of ``params`` at ``indices``; an index
may appear several times.  Its gradient therefore *adds* each gathered
slice's gradient onto the slice it was read from.  Along axis 0 that sum is
left undone: the gradient is an :class:`~minitf.framework.indexed_slices.IndexedSlices`
(the incoming gradient's rows, tagged with ``indices``), as in TF, so that an
optimizer updates only the rows that were read.  Where a dense tensor is
needed, ``tf.convert_to_tensor`` does the sum,
``unsorted_segment_sum(values, indices, len(params))`` (registered at the end
of this module); and the other way round, the gradient of
``UnsortedSegmentSum`` is a (dense) gather.  ``one_hot`` writes the same
selection as a dense matrix:
``matmul(one_hot(i, n), params)`` equals ``gather(params, i)`` for a matrix
``params`` with n rows.  ``gather_nd``/``scatter_nd`` are the same pair
for coordinates: ``indices[..., :K]`` names a slice of the first K dimensions.

Mirrors ``tensorflow/python/ops/array_ops.py``, ``math_ops.py``
(``unsorted_segment_sum``) and ``array_grad.py``.
"""

import warnings

import numpy as np

from minitf.framework import dtypes
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import comparison_ops, math_ops, unary_ops
from minitf.ops.array_ops import expand_dims, ones_like, reshape, shape, size
from minitf.ops.array_util import check_dtype, like_input, op_scope, scalar_value, with_rank
from minitf.ops.constant_op import constant
from minitf.ops.joining_ops import concat
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable
from minitf.ops.transpose_ops import transpose


# ---- GatherV2 ---------------------------------------------------------------------------------
def _gather_shape(op):
    """``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``."""
    params, indices, axis_tensor = op.inputs
    rank = params.shape.ndims
    axis = scalar_value(axis_tensor)
    if rank is None or indices.shape.ndims is None:
        return [unknown_shape()]
    if axis is None:
        return [unknown_shape(rank + indices.shape.ndims - 1)]
    if not -rank <= axis < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d"
                         % (axis + 1 if axis >= 0 else -axis, rank))
    axis %= rank
    dims = params.shape.as_list()
    return [TensorShape(dims[:axis] + indices.shape.as_list() + dims[axis + 1:])]


_gather_v2 = define_op(
    "GatherV2", inputs=("params", "indices", "axis"), shape_fn=_gather_shape,
    dtype_fn=like_input(0, {1: "indices", 2: "axis"}),
    doc="Slices of params along axis, at the positions indices.")


def gather(params, indices, validate_indices=None, name=None, axis=None):
    """Gathers slices of ``params`` along ``axis`` at ``indices`` (``tf.gather``).

    Like ``np.take(params, indices, axis)``: the result has shape
    ``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``.  An index
    outside ``[0, params.shape[axis])`` is an error at run time (no wrapping
    of negative indices).

    Args:
        params: the tensor to gather from.
        indices: int32/int64 tensor of positions.
        validate_indices: ignored (deprecated in TF1 too).
        name: op name (default ``GatherV2``).
        axis: the dimension to gather along (default 0).

    Example:
        >>> sess.run(tf.gather([[1, 2], [3, 4], [5, 6]], [2, 0]))
        array([[5, 6],
               [1, 2]], dtype=int32)

    Raises:
        InvalidArgumentError: when running, for an out-of-range index
            (``indices[1] = 7 is not in [0, 3)``).
    """
    del validate_indices
    return apply_op(_gather_v2, [params, indices, 0 if axis is None else axis],
                    name=name or "GatherV2")


@gradient("GatherV2")
def _gather_grad(op, grad):
    """Each gathered slice's gradient goes back to the slice of ``params`` it
    was read from; an index gathered twice receives both.

    Along axis 0 (TF's ``_GatherV2Grad``) this is an IndexedSlices: the
    values are ``grad`` reshaped to one row per index, the indices are
    ``indices`` flattened, the dense shape is ``shape(params)`` (int32,
    computed next to ``params``).  Nothing is summed: duplicates stay, and
    whoever needs a dense tensor converts it.

    Along another axis the gradient is dense: moving the indices' dimensions
    to the front and flattening them gives one row per gathered slice, row r
    to be added at ``params`` position ``indices.flat[r]``
    (``UnsortedSegmentSum``), and a transpose moves the summed dimension
    back to ``axis``.  ``indices`` and ``axis`` get None.

    Raises:
        ValueError: for an axis not known while building, or, for a nonzero
            axis, inputs of unknown rank.
    """
    params, indices, axis_tensor = op.inputs
    axis = scalar_value(axis_tensor)
    if axis is None or (axis != 0 and (params.shape.ndims is None
                                       or indices.shape.ndims is None)):
        raise ValueError("The gradient of %s needs a constant axis, and for a nonzero axis "
                         "params and indices of known rank." % op.name)
    with op.graph.colocate_with(params.op):
        params_shape = shape(params)
    if axis == 0:
        indices_size = expand_dims(size(indices), 0)
        values = reshape(grad, concat([indices_size, params_shape[1:]], 0))
        return [IndexedSlices(values, reshape(indices, indices_size), params_shape), None, None]
    rank = params.shape.ndims
    axis = axis % rank if axis < 0 else axis
    k = indices.shape.ndims
    index_dims_first = (list(range(axis, axis + k)) + list(range(axis))
                        + list(range(axis + k, rank + k - 1)))
    rows = reshape(transpose(grad, index_dims_first),
                   concat([[-1], params_shape[:axis], params_shape[axis + 1:]], 0))
    summed = unsorted_segment_sum(rows, reshape(indices, [-1]), params_shape[axis])
    return [transpose(summed, list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))),
            None, None]


# ---- UnsortedSegmentSum -----------------------------------------------------------------
def _unsorted_segment_sum_dtypes(op):
    check_dtype(op, 1, "segment_ids", (dtypes.int16, dtypes.int32, dtypes.int64))
    check_dtype(op, 2, "num_segments")
    return [op.inputs[0].dtype.base_dtype]


def _unsorted_segment_sum_shape(op):
    """``[num_segments] + data.shape[segment_ids.rank:]``; data's leading
    dimensions must be segment_ids' shape."""
    data, segment_ids, num_segments = op.inputs
    with_rank(num_segments.shape, 0)
    ids, dims = segment_ids.shape, data.shape
    if ids.ndims is None or dims.ndims is None:
        return [unknown_shape()]
    for i, d in enumerate(ids.as_list()):
        if i >= dims.ndims:
            raise ValueError("Shape must be at least rank %d but is rank %d"
                             % (ids.ndims, dims.ndims))
        e = dims[i].value
        if d is not None and e is not None and d != e:
            raise ValueError("Dimensions must be equal, but are %d and %d" % (e, d))
    return [TensorShape([scalar_value(num_segments)] + dims.as_list()[ids.ndims:])]


_unsorted_segment_sum = define_op(
    "UnsortedSegmentSum", inputs=("data", "segment_ids", "num_segments"),
    shape_fn=_unsorted_segment_sum_shape, dtype_fn=_unsorted_segment_sum_dtypes,
    type_constraint=dtypes.NUMERIC,
    doc="output[j] = the sum of the data slices whose segment id is j (negative ids dropped).")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the slices of ``data`` by segment (``tf.unsorted_segment_sum``).

    ``output[j] = sum of data[i...]`` over the positions ``i`` with
    ``segment_ids[i] == j``; the ids need not be sorted, a segment no id names
    is zero, and a negative id drops its slice.  This is ``np.add.at`` into
    zeros: the scatter-add that undoes :func:`gather`.

    Args:
        data: a numeric tensor whose leading dimensions have the shape of
            ``segment_ids``.
        segment_ids: int16/int32/int64 ids, each below ``num_segments``.
        num_segments: a scalar: the length of the output's first dimension.
        name: op name (default ``UnsortedSegmentSum``).

    Returns:
        A tensor of shape ``[num_segments] + data.shape[segment_ids.rank:]``.

    Example:
        >>> sess.run(tf.unsorted_segment_sum([[1, 2], [3, 4], [5, 6]], [1, 0, 1], 3))
        array([[3, 4],
               [6, 8],
               [0, 0]], dtype=int32)

    Raises:
        InvalidArgumentError: when running, for an id ``>= num_segments``.
    """
    return apply_op(_unsorted_segment_sum, [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentSum")


@gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    """Every slice of ``data`` went into segment ``segment_ids[i]``, so its
    gradient is that segment's gradient: a gather, zero for the dropped
    (negative) ids.  ``segment_ids`` and ``num_segments`` get None.

    The gradient is dense, as TF's ``_UnsortedSegmentSumGrad`` (a gather of
    ``grad``, not of a variable): every slice of ``data`` gets one."""
    segment_ids = op.inputs[1]
    gathered = gather(grad, math_ops.maximum(segment_ids, 0))
    kept = unary_ops.cast(comparison_ops.greater_equal(segment_ids, 0), grad.dtype)
    trailing_ones = ones_like(shape(grad)[1:])  # broadcasts kept over each slice
    kept = reshape(kept, concat([shape(segment_ids), trailing_ones], 0))
    return [gathered * kept, None, None]


# ---- OneHot ---------------------------------------------------------------------------------
def _one_hot_dtypes(op):
    check_dtype(op, 0, "indices", (dtypes.uint8, dtypes.int32, dtypes.int64))
    check_dtype(op, 1, "depth", (dtypes.int32,))
    return [op.inputs[2].dtype.base_dtype]


def _one_hot_shape(op):
    indices = op.inputs[0]
    axis = op.get_attr("axis")
    if indices.shape.ndims is None:
        return [unknown_shape()]
    rank = indices.shape.ndims
    if not -1 <= axis <= rank:
        raise ValueError("Expected axis to be -1 or between [0, %d).  But received: %d"
                         % (rank + 1, axis))
    dims = indices.shape.as_list()
    dims.insert(rank if axis == -1 else axis, scalar_value(op.inputs[1]))
    return [TensorShape(dims)]


_one_hot = define_op("OneHot", inputs=("indices", "depth", "on_value", "off_value"),
                     attrs={"axis": -1}, shape_fn=_one_hot_shape, dtype_fn=_one_hot_dtypes,
                     same_dtype_inputs=("on_value", "off_value"),
                     doc="on_value where the new axis equals the index, off_value elsewhere.")
not_differentiable("OneHot", reason="not differentiable in TF either (its inputs are indices)")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes ``indices`` along a new dimension of size ``depth`` (``tf.one_hot``).

    ``output[..., j] = on_value if indices[...] == j else off_value``; an index
    outside ``[0, depth)`` (such as -1) gives a row of ``off_value``.

    Args:
        indices: uint8/int32/int64 tensor.
        depth: the size of the new dimension.
        on_value, off_value: scalars (default 1 and 0).
        axis: where the new dimension goes (default -1: last).
        dtype: the output dtype; default: that of ``on_value``/``off_value``,
            else float32.
        name: op name (default ``one_hot``).

    Example:
        >>> sess.run(tf.one_hot([0, 2, -1], 3))
        array([[1., 0., 0.],
               [0., 0., 1.],
               [0., 0., 0.]], dtype=float32)

    Raises:
        TypeError: if ``on_value``, ``off_value`` and ``dtype`` disagree.
    """
    with op_scope(name or "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        on = None if on_value is None else convert_to_tensor(on_value, preferred_dtype=dtype)
        off = None if off_value is None else convert_to_tensor(off_value, preferred_dtype=dtype)
        given = on if on is not None else off
        dtype = dtype or (given.dtype.base_dtype if given is not None else dtypes.float32)
        on = constant(1, dtype, name="on_value") if on is None else on
        off = constant(0, dtype, name="off_value") if off is None else off
        for param, value in (("on_value", on), ("off_value", off)):
            if value.dtype.base_dtype != dtype:
                raise TypeError("dtype %s of %s does not match dtype %s"
                                % (value.dtype.name, param, dtype.name))
        return apply_op(_one_hot, [indices, depth, on, off],
                        attrs={"axis": -1 if axis is None else axis}, name=scope)


# ---- GatherNd, ScatterNd: the gather and the scatter by coordinates ---------------------------
def _gather_nd_shape(op):
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    if params.ndims is None or indices.ndims is None or indices[-1].value is None:
        return [unknown_shape()]
    depth = indices[-1].value
    if depth > params.ndims:
        raise ValueError("indices.shape[-1] must be <= params.rank, but saw indices shape: %s "
                         " and params shape: %s for '%s' (op: 'GatherNd')"
                         % (indices, params, op.name))
    return [TensorShape(indices.as_list()[:-1] + params.as_list()[depth:])]


_gather_nd = define_op(
    "GatherNd", inputs=("params", "indices"), shape_fn=_gather_nd_shape,
    dtype_fn=like_input(0, {1: "indices"}),
    doc="Slices of params at the coordinates in the last axis of indices.")


def gather_nd(params, indices, name=None, batch_dims=0):
    """Gathers the slices of ``params`` whose coordinates are the rows of ``indices``.

    ``indices[..., :]`` is a coordinate of its first ``K = indices.shape[-1]``
    dimensions: the result has shape ``indices.shape[:-1] + params.shape[K:]``
    (``tf.gather_nd``; ``params[tuple(np.moveaxis(indices, -1, 0))]`` in NumPy).

    Example:
        >>> sess.run(tf.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]))
        array([3, 2], dtype=int32)

    Raises:
        NotImplementedError: for ``batch_dims`` other than 0.
        InvalidArgumentError: when running, for a coordinate out of range.
    """
    if batch_dims:
        raise NotImplementedError("minitf's gather_nd has no batch_dims")
    return apply_op(_gather_nd, [params, indices], name=name or "GatherNd")


@gradient("GatherNd")
def _gather_nd_grad(op, grad):
    """Each gathered slice's gradient is added back at its coordinates (``ScatterNd``)."""
    params, indices = op.inputs
    return [scatter_nd(indices, grad, shape(params, out_type=indices.dtype.base_dtype)), None]


def _scatter_nd_shape(op):
    known = constant_value(op.inputs[2])
    return [unknown_shape() if known is None else TensorShape(known.tolist())]


_scatter_nd = define_op(
    "ScatterNd", inputs=("indices", "updates", "shape"), shape_fn=_scatter_nd_shape,
    dtype_fn=like_input(1, {0: "indices", 2: "shape"}),
    doc="Zeros of shape with updates added at the coordinates in indices.")


def scatter_nd(indices, updates, shape, name=None):
    """A tensor of zeros of ``shape`` with ``updates`` added at ``indices`` (``tf.scatter_nd``).

    The inverse layout of :func:`gather_nd`: ``updates`` has shape
    ``indices.shape[:-1] + shape[K:]``; updates at the same coordinate add up.

    Example:
        >>> sess.run(tf.scatter_nd([[1], [3], [1]], [9, 10, 1], [5]))
        array([ 0, 10,  0, 10,  0], dtype=int32)
    """
    return apply_op(_scatter_nd, [indices, updates, shape], name=name or "ScatterNd")


@gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None]


# ---- IndexedSlices to Tensor ------------------------------------------------------------------
# TF warns when it densifies slices this large, or of a shape it cannot see.
_LARGE_SPARSE_NUM_ELEMENTS = 100000000


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    """``tf.convert_to_tensor`` of an IndexedSlices: its values summed into
    zeros of ``dense_shape`` by row (TF's ``_IndexedSlicesToTensor``).

    Densifying may allocate a huge tensor (a whole embedding matrix), so TF1
    warns with a ``UserWarning`` when ``dense_shape`` is not known while
    building, or names at least 100M elements.

    Raises:
        ValueError: for a ``dtype`` other than the values', or slices
            without a ``dense_shape``.
    """
    del as_ref
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError("Tensor conversion requested dtype %s for IndexedSlices with dtype %s"
                         % (dtype.name, value.dtype.name))
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices without dense_shape: %s"
                         % value)
    dense_shape = constant_value(value.dense_shape)
    if dense_shape is None:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.")
    elif np.prod(dense_shape) >= _LARGE_SPARSE_NUM_ELEMENTS:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor with %d elements. "
                      "This may consume a large amount of memory." % np.prod(dense_shape))
    dense = unsorted_segment_sum(value.values, value.indices, value.dense_shape[0], name=name)
    dense.set_shape(value.shape)  # what dense_shape tells, as TF's shape inference sees it
    return dense


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
