"""CPU kernels of ``SparseToDense`` (scatter values into a tensor of defaults) and of
``SerializeSparse``/``DeserializeSparse`` (a SparseTensor as one ``[3]`` variant value,
as ``tf.data`` carries it, and those stacked back into one SparseTensor).

With ``validate_indices`` the indices must be in row-major order, unique
and inside the output shape, with TF's messages
(``indices[1] = [0,0] is out of order...``).

Mirrors ``tensorflow/core/kernels/sparse_to_dense_op.cc``.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _as_matrix(ctx, indices):
    """``sparse_indices`` (a scalar, ``[N]`` or ``[N, rank]``) as ``[N, rank]``."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.ndim > 2:
        raise ctx.invalid_argument("sparse_indices should be a scalar, vector, or matrix, got "
                                   "shape %s" % (list(indices.shape),))
    return indices.reshape(-1, 1) if indices.ndim < 2 else indices


def _text(index):
    return "[%s]" % ",".join(str(int(i)) for i in index)


def _validate(ctx, indices, shape):
    for i, index in enumerate(indices):
        if np.any(index < 0) or np.any(index >= shape):
            raise ctx.invalid_argument("indices[%d] = %s is out of bounds: need 0 <= index < %s"
                                       % (i, _text(index), _text(shape)))
        if i and tuple(index) <= tuple(indices[i - 1]):
            what = "repeated" if tuple(index) == tuple(indices[i - 1]) else (
                "out of order. Many sparse ops require sorted indices.\n    Use "
                "`tf.sparse.reorder` to create a correctly ordered copy.\n\n")
            raise ctx.invalid_argument("indices[%d] = %s is %s" % (i, _text(index), what))


@kernel("SparseToDense")
def sparse_to_dense(ctx, sparse_indices, output_shape, sparse_values, default_value,
                    validate_indices):
    indices = _as_matrix(ctx, sparse_indices)
    shape = np.asarray(output_shape, dtype=np.int64).reshape(-1)
    values = np.asarray(sparse_values)
    if indices.shape[1] != shape.size:
        raise ctx.invalid_argument("sparse_indices has rank %d, output_shape has %d elements"
                                   % (indices.shape[1], shape.size))
    if values.ndim and values.shape[0] != indices.shape[0]:
        raise ctx.invalid_argument("sparse_values has incorrect shape %s, should be [] or [%d]"
                                   % (list(values.shape), indices.shape[0]))
    if validate_indices:
        _validate(ctx, indices, shape)
    dense = np.full(tuple(shape), default_value, dtype=ctx.output_dtypes[0])
    if indices.size:
        dense[tuple(indices.T)] = values
    return dense


@kernel("SerializeSparse")
def serialize_sparse(ctx, sparse_indices, sparse_values, sparse_shape, out_type):
    """The three arrays as one object vector of 3 (a ``[3]`` variant tensor)."""
    serialized = np.empty(3, dtype=object)
    serialized[:] = [np.asarray(sparse_indices, np.int64), np.asarray(sparse_values),
                     np.asarray(sparse_shape, np.int64)]
    return serialized


@kernel("DeserializeSparse")
def deserialize_sparse(ctx, serialized_sparse, dtype):
    """Stacks the serialized SparseTensors in the leading dimensions of the input
    into one SparseTensor; its dense shape takes each dimension's largest size."""
    serialized = np.asarray(serialized_sparse, dtype=object)
    if serialized.ndim < 1 or serialized.shape[-1] != 3:
        raise ctx.invalid_argument("Serialized sparse should have 3 as the last dimension %s"
                                   % (list(serialized.shape),))
    if serialized.ndim == 1:
        indices, values, shape = serialized
        return indices, values.astype(ctx.output_dtypes[1], copy=False), shape
    outer = serialized.shape[:-1]
    parts = list(serialized.reshape(-1, 3))
    rank = len(parts[0][2]) if parts else 0
    for i, (_, _, shape) in enumerate(parts):
        if len(shape) != rank:
            raise ctx.invalid_argument("Inconsistent shape across SparseTensors: rank prior to "
                                       "SparseTensor[%d] was: %d but rank of SparseTensor[%d] "
                                       "is: %d" % (i, rank, i, len(shape)))
    positions = np.array(list(np.ndindex(*outer)), dtype=np.int64).reshape(-1, len(outer))
    indices = [np.zeros((0, len(outer) + rank), np.int64)]
    indices += [np.hstack([np.tile(position, (len(i), 1)), np.reshape(i, (-1, rank))])
                for position, (i, _, _) in zip(positions, parts)]
    values = [np.zeros(0, ctx.output_dtypes[1])] + [np.asarray(v) for _, v, _ in parts]
    sizes = np.max([shape for _, _, shape in parts], axis=0) if parts else np.zeros(0)
    return (np.concatenate(indices).astype(np.int64),
            np.concatenate(values).astype(ctx.output_dtypes[1]),
            np.concatenate([outer, sizes]).astype(np.int64))
