"""Sparse tensors in the graph: ``tf.sparse_placeholder``, ``tf.sparse_tensor_to_dense``
and the variant form ``tf.data`` carries them in.

A :class:`~minitf.framework.sparse_tensor.SparseTensor` is three ordinary
tensors; the ops here build one from placeholders and turn one into a
dense tensor with a ``SparseToDense`` op::

    sp = tf.sparse_placeholder(tf.float32)
    dense = tf.sparse_tensor_to_dense(sp, default_value=-1.0)
    sess.run(dense, {sp: tf.SparseTensorValue([[0, 1]], [5.0], [2, 2])})
    # [[-1.,  5.], [-1., -1.]]

Mirrors ``tensorflow/python/ops/sparse_ops.py`` and TF's ``SparseToDense``
kernel (``tensorflow/core/kernels/sparse_to_dense_op.cc``); the kernel is
``plugins/numpy_cpu/kernels/sparse.py``.
"""

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.framework.tensor_util import constant_value_as_shape
from minitf.ops import array_ops
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


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


__all__ = ["deserialize_sparse", "serialize_sparse", "sparse_placeholder",
           "sparse_tensor_to_dense", "sparse_to_dense"]
