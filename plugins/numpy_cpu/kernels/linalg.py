"""CPU kernels of the matrix ops: ``MatMul``, ``BatchMatMulV2``, ``MatrixInverse``,
``MatrixDeterminant``."""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


@kernel("MatMul")
def mat_mul(ctx, a, b, transpose_a, transpose_b):
    a = a.T if transpose_a else a
    b = b.T if transpose_b else b
    if a.shape[-1] != b.shape[-2]:
        raise _size_incompatible(ctx, a, b)
    return np.matmul(a, b)


@kernel("BatchMatMulV2")
def batch_mat_mul(ctx, x, y, adj_x, adj_y):
    x = np.swapaxes(x, -1, -2) if adj_x else x
    y = np.swapaxes(y, -1, -2) if adj_y else y
    if x.shape[-1] != y.shape[-2]:
        raise _size_incompatible(ctx, x, y)
    return np.matmul(x, y)


def _size_incompatible(ctx, a, b):
    """TF's error for factors whose inner dimensions differ (NumPy's would not say so)."""
    return ctx.invalid_argument("Matrix size-incompatible: In[0]: %s, In[1]: %s"
                                % (list(a.shape), list(b.shape)))


@kernel("MatrixInverse")
def matrix_inverse(ctx, x, adjoint):
    try:
        inverse = np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise ctx.invalid_argument("Input is not invertible.") from None
    return np.swapaxes(inverse, -1, -2) if adjoint else inverse


@kernel("MatrixDeterminant")
def matrix_determinant(ctx, x):
    return np.linalg.det(x).astype(x.dtype)
