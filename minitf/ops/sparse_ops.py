"""Sparse tensors in the graph: ``tf.sparse_placeholder``, ``tf.sparse_tensor_to_dense``,
products and sums of SparseTensors, and the variant form ``tf.data`` carries them in.

A :class:`~minitf.framework.sparse_tensor.SparseTensor` is three ordinary
tensors; the ops here build one from placeholders and turn one into a
dense tensor with a ``SparseToDense`` op::

    sp = tf.sparse_placeholder(tf.float32)
    dense = tf.sparse_tensor_to_dense(sp, default_value=-1.0)
    sess.run(dense, {sp: tf.SparseTensorValue([[0, 1]], [5.0], [2, 2])})
    # [[-1.,  5.], [-1., -1.]]

Computing with one without densifying it: ``tf.sparse_tensor_dense_matmul``
(``SparseTensorDenseMatMul``, a sparse matrix times a dense one, the
workhorse of bag-of-words and graph models) and ``tf.sparse_reduce_sum``
(``SparseReduceSum``, a dense result).  Both have TF's gradients with
respect to the sparse *values* and the dense operand; the indices and the
shape are integers and get none.

Mirrors ``tensorflow/python/ops/sparse_ops.py`` and ``sparse_grad.py``, and
TF's kernels ``sparse_to_dense_op.cc``, ``sparse_tensor_dense_matmul_op.cc``,
``sparse_reduce_op.cc`` and ``serialize_sparse_op.cc``; the NumPy kernels are
``plugins/numpy_cpu/kernels/sparse.py``.
"""

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops import (
    array_ops, comparison_ops, gather_ops, math_ops, reduction_ops, select_ops, transpose_ops,
    unary_ops)
from minitf.ops.op_def_library import (
    apply_op, define_op, deprecated_alias, gradient, not_differentiable)


def _sparse_to_dense_shape(op):
    return [constant_value_as_shape(op.inputs[1])]


_sparse_to_dense = define_op(
    "SparseToDense", inputs=("sparse_indices", "output_shape", "sparse_values", "default_value"),
    attrs={"validate_indices": True}, shape_fn=_sparse_to_dense_shape,
    dtype_fn=lambda op: [op.inputs[2].dtype.base_dtype],
    doc="A dense tensor: sparse_values at sparse_indices, default_value elsewhere.")
not_differentiable("SparseToDense", reason="TF has one (to the values); parsing needs none")


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """A dense tensor of ``output_shape`` with ``sparse_values`` at ``sparse_indices``
    (``tf.sparse_to_dense``).

    Args:
        sparse_indices: int ``[N, rank]`` (or ``[N]`` for rank 1, a scalar for one).
        output_shape: int ``[rank]``, the dense shape.
        sparse_values: ``[N]`` values, or a scalar used for all of them.
        default_value: the scalar everywhere else.
        validate_indices: check at run time that the indices are sorted
            (row-major), unique and inside ``output_shape`` (else
            ``InvalidArgumentError``).
        name: the op's name.
    """
    with name_scope(name, "SparseToDense", [sparse_indices, sparse_values]) as scope:
        sparse_values = convert_to_tensor(sparse_values, name="sparse_values")
        default_value = convert_to_tensor(default_value, dtype=sparse_values.dtype.base_dtype,
                                          name="default_value")
        return apply_op(_sparse_to_dense,
                        [sparse_indices, output_shape, sparse_values, default_value],
                        attrs={"validate_indices": bool(validate_indices)}, name=scope)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor a SparseTensor stands for (``tf.sparse_tensor_to_dense``,
    ``tf.sparse.to_dense``).

    Args:
        sp_input: a SparseTensor (or SparseTensorValue).
        default_value: the value of the entries it does not hold (None: zero,
            or ``b""`` for strings).
        validate_indices: check that the indices are sorted and unique.
        name: the op's name.

    Raises:
        TypeError: if ``sp_input`` is not sparse.
    """
    if not isinstance(sp_input, SparseTensor):
        if not (isinstance(sp_input, tuple) and hasattr(sp_input, "dense_shape")):
            raise TypeError("Input must be a SparseTensor.")
        sp_input = SparseTensor.from_value(sp_input)
    dtype = sp_input.dtype.base_dtype
    if default_value is None:
        default_value = b"" if dtype == dtypes.string else 0
    default = convert_to_tensor(default_value, dtype=dtype, name="zeros")
    return apply_op(_sparse_to_dense,
                    [sp_input.indices, sp_input.dense_shape, sp_input.values, default],
                    attrs={"validate_indices": bool(validate_indices)},
                    name=name or "SparseToDense")


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders, fed together (``tf.sparse_placeholder``).

    Feed it a :data:`~minitf.framework.sparse_tensor.SparseTensorValue` or a
    tuple ``(indices, values, dense_shape)``.

    Args:
        dtype: the values' dtype.
        shape: the dense shape; fully known, it is a constant and need not be
            fed, else its length (the rank) shapes the placeholders.
        name: prefix of the placeholders' names (``name/values``,
            ``name/indices``, ``name/shape``).

    Example:
        >>> sp = tf.sparse_placeholder(tf.float32, shape=[3, 4], name="sp")
        >>> sp.values.name, sp.dense_shape.name
        ('sp/values:0', 'sp/shape:0')
    """
    def part(suffix):
        return None if name is None else "%s/%s" % (name, suffix)

    rank = None if shape is None else len(shape)
    if shape is None or any(d is None for d in shape):
        dense_shape = array_ops.placeholder(dtypes.int64, shape=[rank], name=part("shape"))
    else:
        dense_shape = convert_to_tensor(list(shape), dtype=dtypes.int64, name=part("shape"))
    values = array_ops.placeholder(dtype, shape=[None], name=part("values"))
    indices = array_ops.placeholder(dtypes.int64, shape=[None, rank], name=part("indices"))
    return SparseTensor(indices=indices, values=values, dense_shape=dense_shape)


def _as_sparse(sp_input, what="Input"):
    """``sp_input`` as a SparseTensor (a SparseTensorValue becomes constants).

    Raises:
        TypeError: for anything else, as TF.
    """
    if isinstance(sp_input, SparseTensor):
        return sp_input
    if isinstance(sp_input, tuple) and hasattr(sp_input, "dense_shape"):
        return SparseTensor.from_value(sp_input)
    raise TypeError("%s must be a SparseTensor." % what)


# ---- a sparse matrix times a dense one ----------------------------------------------------------
def _sparse_dense_matmul_shape(op):
    a_shape = constant_value_as_shape(op.inputs[2]).with_rank(2)
    b = op.inputs[3].shape.with_rank(2)
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    inner_a = a_shape[0 if adjoint_a else 1]
    inner_b = b[1 if adjoint_b else 0]
    if not inner_a.is_compatible_with(inner_b):
        raise ValueError("Dimensions must be equal, but are %s and %s" % (inner_a, inner_b))
    return [TensorShape([a_shape[1 if adjoint_a else 0], b[0 if adjoint_b else 1]])]


_sparse_tensor_dense_matmul = define_op(
    "SparseTensorDenseMatMul", inputs=("a_indices", "a_values", "a_shape", "b"),
    outputs=("product",), attrs={"adjoint_a": False, "adjoint_b": False},
    shape_fn=_sparse_dense_matmul_shape, same_dtype_inputs=("a_values", "b"),
    dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype],
    type_constraint=(dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32,
                     dtypes.int64),
    doc="The product of a sparse matrix (indices, values, shape) and a dense matrix.")


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """``sp_a @ b`` for a sparse matrix ``sp_a`` (``tf.sparse_tensor_dense_matmul``,
    ``tf.sparse.sparse_dense_matmul``, ``tf.sparse.matmul``).

    Only the stored entries of ``sp_a`` are visited: row ``i`` of the
    product is ``sum over (i, k) in sp_a of value * b[k, :]``.  The indices
    need not be sorted; repeated ones add up.

    Args:
        sp_a: a rank-2 SparseTensor (or SparseTensorValue).
        b: a dense matrix of the values' dtype.
        adjoint_a: use the transpose of ``sp_a`` (minitf has no complex
            dtypes, so the adjoint is the transpose).
        adjoint_b: use the transpose of ``b``.
        name: the name scope (default ``SparseTensorDenseMatMul``).

    Returns:
        A dense ``[rows of sp_a, columns of b]`` matrix (after the adjoints).

    Raises:
        TypeError: if ``sp_a`` is not sparse, or the dtypes differ.
        ValueError: for operands that are not matrices, or inner
            dimensions that differ when both are known.
        InvalidArgumentError: when the step runs, for an index outside
            ``sp_a``'s shape, or inner dimensions that differ.

    Example:
        >>> sp = tf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
        >>> sess.run(tf.sparse_tensor_dense_matmul(sp, [[1.0], [10.0]]))
        array([[20.],
               [ 3.]], dtype=float32)
    """
    sp_a = _as_sparse(sp_a, "sp_a")
    with name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]):
        b = convert_to_tensor(b, name="b")
        return apply_op(_sparse_tensor_dense_matmul,
                        [sp_a.indices, sp_a.values, sp_a.dense_shape, b],
                        attrs={"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                        name="SparseTensorDenseMatMul")


@gradient("SparseTensorDenseMatMul")
def _sparse_tensor_dense_matmul_gradient(op, grad):
    """TF's gradient: with respect to ``b`` the product with ``sp_a``'s adjoint;
    with respect to each value ``(r, c)`` the dot product of row ``r`` of
    ``grad`` with row ``c`` of ``b`` (columns and rows swapped by the adjoints)."""
    a_indices, a_values, a_shape, b = op.inputs
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = apply_op(_sparse_tensor_dense_matmul, [a_indices, a_values, a_shape, grad],
                      attrs={"adjoint_a": not adjoint_a, "adjoint_b": False},
                      name="SparseTensorDenseMatMul")
    if adjoint_b:
        b_grad = transpose_ops.matrix_transpose(b_grad)
    rows, cols = a_indices[:, 0], a_indices[:, 1]
    parts_a = gather_ops.gather(grad, cols if adjoint_a else rows)
    parts_b = gather_ops.gather(transpose_ops.matrix_transpose(b) if adjoint_b else b,
                                rows if adjoint_a else cols)
    return [None, reduction_ops.reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


# ---- the sum of a SparseTensor ------------------------------------------------------------------
def _sparse_reduce_shape(op):
    shape = constant_value_as_shape(op.inputs[2])
    axes = constant_value(op.inputs[3])
    if shape.ndims is None or axes is None:
        return [TensorShape(None)]
    rank = shape.ndims
    axes = {int(a) % rank for a in axes.reshape(-1)} if rank else set()
    keep_dims = op.get_attr("keep_dims")
    dims = [1 if i in axes else d for i, d in enumerate(shape.dims)
            if keep_dims or i not in axes]
    return [TensorShape(dims)]


_sparse_reduce_sum = define_op(
    "SparseReduceSum", inputs=("input_indices", "input_values", "input_shape",
                               "reduction_axes"),
    attrs={"keep_dims": False}, shape_fn=_sparse_reduce_shape,
    dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype], type_constraint=dtypes.NUMERIC,
    doc="The sum of a SparseTensor's values over reduction_axes, as a dense tensor.")


def _reduction_axes(sp_input, axis):
    """``axis`` as an int32 tensor; None: every dimension (TF's ``_ReductionDims``)."""
    if axis is not None:
        return convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_axes")
    rank = sp_input.dense_shape.shape[0].value
    if rank is not None:
        return convert_to_tensor(list(range(rank)), dtype=dtypes.int32, name="Const")
    return math_ops.range(0, unary_ops.cast(array_ops.size(sp_input.dense_shape),
                                            dtypes.int32))


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum of ``sp_input``'s entries over ``axis``, a dense tensor
    (``tf.sparse_reduce_sum``, ``tf.sparse.reduce_sum``).

    Like ``tf.reduce_sum(tf.sparse_tensor_to_dense(sp_input), axis)``, but
    without building the dense tensor; the entries not stored count as 0.

    Args:
        sp_input: a SparseTensor (or SparseTensorValue).
        axis: the dimensions to reduce (negative ones count from the end);
            None: all of them.
        keepdims: keep the reduced dimensions with size 1.
        reduction_axes: deprecated alias of ``axis``.
        keep_dims: deprecated alias of ``keepdims``.

    Raises:
        TypeError: if ``sp_input`` is not sparse.
        InvalidArgumentError: when the step runs, for an axis outside the rank.

    Example:
        >>> sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1, 1, 1], [2, 3])
        >>> sess.run(tf.sparse_reduce_sum(sp, axis=1))
        array([2, 1], dtype=int32)
    """
    sp_input = _as_sparse(sp_input)
    keepdims = deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_alias("axis", axis, "reduction_axes", reduction_axes)
    with name_scope(None, "SparseReduceSum", [sp_input.values]):
        axes = _reduction_axes(sp_input, axis)
    return apply_op(_sparse_reduce_sum,
                    [sp_input.indices, sp_input.values, sp_input.dense_shape, axes],
                    attrs={"keep_dims": bool(keepdims)}, name="SparseReduceSum")


@gradient("SparseReduceSum")
def _sparse_reduce_sum_gradient(op, grad):
    """TF's gradient: each value's gradient is ``grad`` at its index with the
    reduced coordinates set to 0 (``indices // scale``, ``scale`` being the
    dense shape on the reduced axes and 1 elsewhere)."""
    sp_indices, _, sp_shape, axes = op.inputs
    rank = array_ops.size(sp_shape)
    axes = math_ops.floormod(axes, rank)
    reduced = reduction_ops.reduce_any(
        comparison_ops.equal(array_ops.expand_dims(math_ops.range(0, rank), 1),
                             array_ops.expand_dims(axes, 0)), axis=1)
    kept_shape = select_ops.where(reduced, array_ops.ones_like(sp_shape), sp_shape)
    grad_reshaped = array_ops.reshape(grad, kept_shape)
    scale = math_ops.floordiv(sp_shape, kept_shape)
    return [None, gather_ops.gather_nd(grad_reshaped, math_ops.floordiv(sp_indices, scale)),
            None, None]


# ---- a SparseTensor as one value: how tf.data carries sparse components ---------------------------
_serialize_sparse = define_op(
    "SerializeSparse", inputs=("sparse_indices", "sparse_values", "sparse_shape"),
    attrs={"out_type": dtypes.variant}, shape_fn=lambda op: [TensorShape([3])],
    dtype_fn=lambda op: [dtypes.variant],
    doc="A SparseTensor's three parts as one variant vector of 3.")
_deserialize_sparse = define_op(
    "DeserializeSparse", inputs=("serialized_sparse",), outputs=("sparse_indices",
                                                                 "sparse_values", "sparse_shape"),
    attrs={"dtype": None},
    shape_fn=lambda op: [TensorShape([None, None]), TensorShape([None]), TensorShape([None])],
    dtype_fn=lambda op: [dtypes.int64, dtypes.as_dtype(op.get_attr("dtype")), dtypes.int64],
    type_constraint=(dtypes.variant,),
    doc="SparseTensors serialized by SerializeSparse, stacked along the leading dimensions "
        "of the input into one SparseTensor of higher rank.")
not_differentiable("SerializeSparse", "DeserializeSparse")


def serialize_sparse(sp_input, name=None, out_type=dtypes.variant):
    """``sp_input`` as one ``[3]`` variant tensor (TF's ``SerializeSparse`` with
    ``out_type=tf.variant``).

    A dataset element is a flat list of tensors, so ``tf.data`` carries a
    SparseTensor component in this form: ``batch`` stacks such vectors into a
    ``[batch, 3]`` tensor and :func:`deserialize_sparse` turns that back into
    one SparseTensor with a leading batch dimension.

    Raises:
        NotImplementedError: for ``out_type=tf.string`` (TF's wire format).
    """
    if dtypes.as_dtype(out_type) != dtypes.variant:
        raise NotImplementedError("minitf serializes SparseTensors only to tf.variant (as "
                                  "tf.data does), not to strings")
    sp_input = SparseTensor.from_value(sp_input)
    return apply_op(_serialize_sparse, [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    name=name or "SerializeSparse")


def deserialize_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor of variants made by :func:`serialize_sparse`
    (``tf.io.deserialize_many_sparse``'s variant form, TF's ``DeserializeSparse``).

    A ``[3]`` input gives the SparseTensor serialized; a ``[n, 3]`` input
    (``n`` serialized SparseTensors of the same rank R) gives one of rank R+1
    whose first index is the position in the input and whose dense shape is
    ``n`` followed by the largest size of each dimension.

    Args:
        serialized_sparse: a variant tensor whose last dimension is 3.
        dtype: the dtype of the values.
        rank: the rank of the result, when known (sets the static shapes).
        name: the op's name.
    """
    indices, values, dense_shape = apply_op(
        _deserialize_sparse, [serialized_sparse], attrs={"dtype": dtypes.as_dtype(dtype)},
        name=name or "DeserializeSparse")
    if rank is not None:
        indices.set_shape([None, rank])
        dense_shape.set_shape([rank])
    return SparseTensor(indices, values, dense_shape)


_serialize_many_sparse = define_op(
    "SerializeManySparse", inputs=("sparse_indices", "sparse_values", "sparse_shape"),
    attrs={"out_type": dtypes.variant}, shape_fn=lambda op: [TensorShape([None, 3])],
    dtype_fn=lambda op: [dtypes.variant],
    doc="The SparseTensors along the first dimension of the input, each serialized as by "
        "SerializeSparse: an [N, 3] variant matrix.")
not_differentiable("SerializeManySparse")


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.variant):
    """The slices of ``sp_input`` along its first dimension, each serialized
    (TF's ``SerializeManySparse`` with ``out_type=tf.variant``).

    Row ``i`` of the ``[N, 3]`` result is the rank R-1 SparseTensor
    ``sp_input[i]``, as :func:`serialize_sparse` gives it; its dense shape
    is ``sp_input``'s without the first dimension.  This is how
    ``Dataset.from_tensor_slices`` slices a SparseTensor component (TF's
    ``SparseTensorSpec._to_batched_tensor_list``), and
    :func:`deserialize_sparse` is its inverse.

    Raises:
        NotImplementedError: for ``out_type=tf.string`` (TF's wire format).
        InvalidArgumentError: when the step runs, for a rank below 2 (as TF).
    """
    if dtypes.as_dtype(out_type) != dtypes.variant:
        raise NotImplementedError("minitf serializes SparseTensors only to tf.variant (as "
                                  "tf.data does), not to strings")
    sp_input = _as_sparse(sp_input)
    return apply_op(_serialize_many_sparse,
                    [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    name=name or "SerializeManySparse")


__all__ = ["deserialize_sparse", "serialize_many_sparse", "serialize_sparse",
           "sparse_placeholder", "sparse_reduce_sum", "sparse_tensor_dense_matmul",
           "sparse_tensor_to_dense", "sparse_to_dense"]
