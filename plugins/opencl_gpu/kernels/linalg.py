"""GPU kernels of ``MatMul`` and ``BatchMatMulV2`` (source: ``opencl_kernels/matmul.cl``).

The work is split between the register-blocked kernel, over the largest
block of the output that is a multiple of its ``TM x 8`` tile, and a simple
one-element-per-item kernel for the leftover strips, so any size works and
the common sizes run at the fast kernel's speed.
"""

import numpy as np

from minitf_opencl_gpu.kernels.table import (
    contiguous_strides, empty, i32, kernel, run, run2d, strided_args)

TM = 8      # rows of C per work item
TN = 8      # columns of C per work item (one float8)
GROUP = (16, 8, 1)  # work items per group (columns, rows, batch): measured best on PoCL


def transposed(ctx, x):
    """A new buffer holding ``x`` with its last two axes swapped."""
    shape = list(x.shape[:-2]) + [x.shape[-1], x.shape[-2]]
    strides = contiguous_strides(x.shape)
    strides = strides[:-2] + [strides[-1], strides[-2]]
    out = empty(ctx, shape, x.dtype)
    run(ctx, "array", "strided_gather", x.dtype, out.size, out, x, i32(out.size), i32(0),
        *strided_args(shape, strides))
    return out


def matmul(ctx, a, b, transpose_a=False, transpose_b=False, batch_shape=(), a_batch=0,
           b_batch=0):
    """``C = op(A) op(B)`` for matrices or batches of them (``*_batch``: batch strides)."""
    m, k = (a.shape[-1], a.shape[-2]) if transpose_a else (a.shape[-2], a.shape[-1])
    kb, n = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if k != kb:
        raise ctx.invalid_argument("Matrix size-incompatible: In[0]: %s, In[1]: %s"
                                   % (list(a.shape), list(b.shape)))
    if transpose_b:
        b = transposed(ctx, b)
    batches = int(np.prod(batch_shape))
    out = empty(ctx, tuple(batch_shape) + (m, n), a.dtype)
    if not out.size:
        return out
    if k == 0:
        from minitf_opencl_gpu.kernels.elementwise import zeros
        return zeros(ctx, out.shape, out.dtype)
    lda = a.shape[-1]
    sam, sak = (1, lda) if transpose_a else (lda, 1)
    strides = (i32(sam), i32(sak), i32(n), i32(n), i32(a_batch), i32(b_batch), i32(m * n))
    rows, cols = m // TM, n // TN
    if rows and cols:
        local = (_divisor_up_to(cols, GROUP[0]), _divisor_up_to(rows, GROUP[1]), 1)
        run2d(ctx, "matmul", "matmul_blocked", a.dtype, (cols, rows, batches), local, out, a, b,
              i32(k), *strides, TM=str(TM))
    row0, col0 = rows * TM, cols * TN
    leftover = (m - row0) * n + row0 * (n - col0)
    if leftover:
        run2d(ctx, "matmul", "matmul_edge", a.dtype, (leftover, batches), None, out, a, b,
              i32(m), i32(n), i32(k), i32(row0), i32(col0), *strides, TM=str(TM))
    return out


def _divisor_up_to(size, limit):
    """The largest divisor of ``size`` not above ``limit``: a work-group side.

    A work group must divide the range; left to choose (``local_size=None``)
    for a range such as 98 rows, PoCL takes groups so thin that the weight
    gradient of a 784-wide layer ran 30 % slower than with 7-row groups.
    """
    return next(d for d in range(min(size, limit), 0, -1) if size % d == 0)


@kernel("MatMul", dtypes=("float", "int"))
def mat_mul(ctx, a, b, transpose_a, transpose_b):
    return matmul(ctx, a, b, transpose_a, transpose_b)


@kernel("BatchMatMulV2", dtypes=("float", "int"))
def batch_mat_mul(ctx, x, y, adj_x, adj_y):
    """Batch dimensions broadcast as NumPy's; a broadcast batch has stride 0."""
    if len(x.shape) < 2 or len(y.shape) < 2:
        raise ctx.invalid_argument("In[0] and In[1] must have rank >= 2: %s, %s"
                                   % (list(x.shape), list(y.shape)))
    try:
        batch_shape = tuple(np.broadcast_shapes(x.shape[:-2], y.shape[:-2]))
    except ValueError:
        raise ctx.invalid_argument("In[0] and In[1] must have compatible batch dimensions: "
                                   "%s vs. %s" % (list(x.shape), list(y.shape))) from None
    x, y = _flat_batch(ctx, x, batch_shape), _flat_batch(ctx, y, batch_shape)
    x_stride = 0 if x.shape[0] == 1 else x.shape[-1] * x.shape[-2]
    y_stride = 0 if y.shape[0] == 1 else y.shape[-1] * y.shape[-2]
    if adj_y:
        y = transposed(ctx, y)
        adj_y = False
    return matmul(ctx, x, y, adj_x, adj_y, batch_shape, x_stride, y_stride)


def _flat_batch(ctx, x, batch_shape):
    """``x`` as ``[batches or 1, rows, cols]``, broadcasting a partial batch by copying."""
    batch = x.shape[:-2]
    if int(np.prod(batch)) in (1, int(np.prod(batch_shape))) and (
            int(np.prod(batch)) == 1 or tuple(batch) == tuple(batch_shape)):
        return x.reshape((int(np.prod(batch)),) + tuple(x.shape[-2:]))
    full = tuple(batch_shape) + tuple(x.shape[-2:])
    padded = (1,) * (len(full) - len(x.shape)) + tuple(x.shape)
    strides = [0 if s == 1 else st for s, st in zip(padded, contiguous_strides(padded))]
    out = empty(ctx, full, x.dtype)
    run(ctx, "array", "strided_gather", x.dtype, out.size, out, x, i32(out.size), i32(0),
        *strided_args(full, strides))
    return out.reshape((int(np.prod(batch_shape)),) + tuple(x.shape[-2:]))
