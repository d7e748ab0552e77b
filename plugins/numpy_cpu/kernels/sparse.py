"""CPU kernel of ``SparseToDense``: scatter values into a tensor of defaults.

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
