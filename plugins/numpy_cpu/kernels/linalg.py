"""CPU kernels of the matrix ops: ``MatMul``, ``BatchMatMulV2``, ``MatrixInverse``,
``MatrixDeterminant``."""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _matrix_product(ctx, a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ctx.invalid_argument("Matrix size-incompatible: In[0]: %s, In[1]: %s"
                                   % (list(a.shape), list(b.shape)))
    return np.matmul(a, b)


@kernel("MatMul")
def mat_mul(ctx, a, b, transpose_a, transpose_b):
    return _matrix_product(ctx, a.T if transpose_a else a, b.T if transpose_b else b)


@kernel("BatchMatMulV2")
def batch_mat_mul(ctx, x, y, adj_x, adj_y):
    return _matrix_product(ctx, np.swapaxes(x, -1, -2) if adj_x else x,
                           np.swapaxes(y, -1, -2) if adj_y else y)


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
