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


@kernel("SerializeManySparse")
def serialize_many_sparse(ctx, sparse_indices, sparse_values, sparse_shape, out_type):
    """Row ``i``: the entries whose first index is ``i``, without that index, and the
    dense shape without its first dimension (serialize_sparse_op.cc)."""
    indices = np.asarray(sparse_indices, np.int64)
    shape = np.asarray(sparse_shape, np.int64)
    if shape.size < 2:
        raise ctx.invalid_argument("Rank of input SparseTensor should be > 1, but saw rank: %d"
                                   % shape.size)
    if indices.size and (np.any(indices[:, 0] < 0) or np.any(indices[:, 0] >= shape[0])):
        raise ctx.invalid_argument("Input SparseTensor has an index outside its first "
                                   "dimension, of size %d" % shape[0])
    values = np.asarray(sparse_values)
    serialized = np.empty((int(shape[0]), 3), dtype=object)
    for i in range(int(shape[0])):
        rows = indices[:, 0] == i
        serialized[i] = [indices[rows, 1:], values[rows], shape[1:]]
    return serialized


# ---- computing with SparseTensors ---------------------------------------------------------------
@kernel("SparseTensorDenseMatMul")
def sparse_tensor_dense_matmul(ctx, a_indices, a_values, a_shape, b, adjoint_a, adjoint_b):
    """``A @ B`` visiting only A's entries: row ``i`` of the product collects
    ``value * B[k, :]`` for each entry ``(i, k)`` (sparse_tensor_dense_matmul_op.cc)."""
    indices = np.asarray(a_indices, np.int64)
    shape = np.asarray(a_shape, np.int64)
    if b.ndim != 2:
        raise ctx.invalid_argument("Tensor 'b' is not a matrix")
    if shape.size != 2:
        raise ctx.invalid_argument("Tensor 'a_shape' is not a vector of 2")
    if indices.ndim != 2 or indices.shape[1] != 2 or indices.shape[0] != a_values.shape[0]:
        raise ctx.invalid_argument("Number of rows of a_indices does not match number of "
                                   "entries in a_values")
    rows, cols = (indices[:, 1], indices[:, 0]) if adjoint_a else (indices[:, 0], indices[:, 1])
    out_rows, inner_a = (shape[1], shape[0]) if adjoint_a else (shape[0], shape[1])
    dense_b = b.T if adjoint_b else b
    if inner_a != dense_b.shape[0]:
        raise ctx.invalid_argument(
            "Cannot multiply A and B because inner dimension does not match: %d vs. %d.  Did "
            "you forget a transpose?  Dimensions of A: [%d, %d).  Dimensions of B: %s"
            % (inner_a, dense_b.shape[0], shape[0], shape[1], list(b.shape)))
    for i, (row, col) in enumerate(zip(rows, cols)):
        if not 0 <= row < out_rows:
            raise ctx.invalid_argument("Index out of bounds: a_indices[%d] = %s is not inside "
                                       "the shape %s" % (i, list(indices[i]), list(shape)))
        if not 0 <= col < inner_a:
            raise ctx.invalid_argument("k (%d) from index[%d,%d] out of bounds (>=%d)"
                                       % (col, i, 0 if adjoint_a else 1, inner_a))
    product = np.zeros((int(out_rows), dense_b.shape[1]), dtype=ctx.output_dtypes[0])
    np.add.at(product, rows, a_values[:, None] * dense_b[cols])
    return product


@kernel("SparseReduceSum")
def sparse_reduce_sum(ctx, input_indices, input_values, input_shape, reduction_axes, keep_dims):
    """The values added into a dense tensor of the dense shape with the reduced
    dimensions of size 1 (sparse_reduce_op.cc)."""
    indices = np.asarray(input_indices, np.int64).reshape(-1, np.size(input_shape))
    shape = np.asarray(input_shape, np.int64)
    rank = shape.size
    axes = set()
    for axis in np.asarray(reduction_axes).reshape(-1):
        if not -rank <= axis < rank:
            raise ctx.invalid_argument("Invalid reduction dimension %d, for input with %d "
                                       "dimensions." % (axis, rank))
        axes.add(int(axis) % rank)
    kept = np.array([1 if i in axes else d for i, d in enumerate(shape)], np.int64)
    total = np.zeros(tuple(kept), dtype=ctx.output_dtypes[0])
    reduced_indices = np.where([i in axes for i in range(rank)], 0, indices)
    np.add.at(total, tuple(reduced_indices.T), input_values)
    if keep_dims:
        return total
    return total.reshape([d for i, d in enumerate(kept) if i not in axes])
