"""GPU kernels of ``MatMul`` and ``BatchMatMulV2`` (source: ``opencl_kernels/matmul.cl``).

Every product — these two ops and the ones inside ``Conv2D`` and its
gradients — goes through :func:`matmul`, which describes the operands by
strides and hands them to the device's GEMM: the local-memory ``tiled``
kernel or the ``packed`` kernel, with sizes chosen per device and shape class
(:mod:`minitf_opencl_gpu.gemm_tuning`).  A transposed operand is the same
buffer read with swapped strides, never a copy.  An operand holding one
matrix broadcasts over the batch with a batch stride of 0 (a partial
broadcast, ``[2, 1]`` batches against ``[2, 3]``, is expanded first).
"""

import math

import numpy as np

from minitf_opencl_gpu import gemm_tuning, programs
from minitf_opencl_gpu.kernels.table import contiguous_strides, empty, i32, kernel, run, strided_args


class Operands:
    """The geometry of one (batched) product ``C = op(A) op(B)``, strides in elements.

    Element ``(m, k)`` of batch ``i`` of ``op(A)`` is
    ``A[i * bsa + m * sam + k * sak]``; element ``(k, n)`` of ``op(B)`` is
    ``B[i * bsb + k * sbk + n * sbn]``; C is contiguous ``[batches, M, N]``.
    """

    __slots__ = ("m", "n", "k", "batches", "sam", "sak", "sbk", "sbn", "bsa", "bsb")

    def __init__(self, a_shape, b_shape, transpose_a, transpose_b, batches=1, bsa=0, bsb=0):
        rows_a, cols_a = a_shape[-2], a_shape[-1]
        rows_b, cols_b = b_shape[-2], b_shape[-1]
        self.m, self.k = (cols_a, rows_a) if transpose_a else (rows_a, cols_a)
        self.n = rows_b if transpose_b else cols_b
        self.sam, self.sak = (1, cols_a) if transpose_a else (cols_a, 1)
        self.sbk, self.sbn = (1, cols_b) if transpose_b else (cols_b, 1)
        self.batches, self.bsa, self.bsb = batches, bsa, bsb


def gemm(device, config, out, a, b, ops):
    """Enqueues ``out = op(a) op(b)`` with GEMM ``config``; ``ops``: :class:`Operands`."""
    if config.kind == "tiled":
        _gemm_tiled(device, config, out, a, b, ops)
    else:
        _gemm_packed(device, config, out, a, b, ops)


def _gemm_tiled(device, config, out, a, b, ops):
    """One launch: a work group per ``TSM x TSN`` tile of C, covering every size."""
    kernel_ = programs.get_kernel(device.target, "matmul", "gemm_tiled", out.dtype,
                                  **{k: str(v) for k, v in config.sizes.items()})
    rtsm, rtsn = config.TSM // config.WPTM, config.TSN // config.WPTN
    global_size = (-(-ops.n // config.TSN) * rtsn, -(-ops.m // config.TSM) * rtsm, ops.batches)
    programs.launch(device.queue, kernel_, global_size, [
        out.data, a.data, b.data, i32(ops.m), i32(ops.n), i32(ops.k), i32(ops.sam), i32(ops.sak),
        i32(ops.sbk), i32(ops.sbn), i32(ops.n), i32(ops.bsa), i32(ops.bsb), i32(ops.m * ops.n)],
        (rtsn, rtsm, 1))


def _gemm_packed(device, config, out, a, b, ops):
    """One block of C per work item, from operands read in place or from panels.

    An operand is read in place when its blocks need no padding: A when
    ``TM`` divides M, B when its rows are contiguous and the block width
    divides N.  Otherwise it is first copied into zero-padded panels (a
    packing work item writes one row of a panel); a broadcast operand (batch
    stride 0) is packed once and read with a panel batch stride of 0.
    """
    tm, tn, nv = config.TM, config.vector_width(out.dtype.itemsize), config.NV
    width = tn * nv
    defines = {"TM": str(tm), "TN": str(tn), "NV": str(nv)}
    if config.KB:
        defines["KB"] = str(config.KB)
    if gemm_tuning.has_fma(device.target.cl_device, np.dtype(out.dtype)):
        defines["USE_FMA"] = "1"
    m_pad, n_pad = -(-ops.m // tm) * tm, -(-ops.n // width) * width
    queue, target = device.queue, device.target

    def pack(name, operand, blocks, extent, s_x, s_k, batch_stride, block):
        batches = ops.batches if batch_stride else 1
        panels = device.allocate((batches, blocks * block, ops.k), out.dtype)
        if s_k == 1:     # adjacent along k: read a vector of k per row
            name, size = name + "_along_k", (-(-ops.k // tn), blocks, batches)
            args = [i32(extent), i32(ops.k), i32(s_x), i32(batch_stride)]
        else:
            size = (ops.k, blocks, batches)
            args = [i32(extent), i32(ops.k), i32(s_x), i32(s_k), i32(batch_stride)]
        programs.launch(queue, programs.get_kernel(target, "matmul", name, out.dtype, **defines),
                        size, [panels.data, operand.data] + args)
        return panels, blocks * block * ops.k if batch_stride else 0

    if m_pad == ops.m:
        a_data, bpa, a_block, sai, sak = a, ops.bsa, tm * ops.sam, ops.sam, ops.sak
    else:
        a_data, bpa = pack("pack_a", a, m_pad // tm, ops.m, ops.sam, ops.sak, ops.bsa, tm)
        a_block, sai, sak = tm * ops.k, 1, tm
    if n_pad == ops.n and ops.sbn == 1:
        b_data, bpb, b_block, sbk = b, ops.bsb, width, ops.sbk
    else:
        b_data, bpb = pack("pack_b", b, n_pad // width, ops.n, ops.sbn, ops.sbk, ops.bsb, width)
        b_block, sbk = width * ops.k, width
    blocks_n, blocks_m = n_pad // width, m_pad // tm
    programs.launch(
        queue, programs.get_kernel(target, "matmul", "gemm_packed", out.dtype, **defines),
        (blocks_n, blocks_m, ops.batches),
        [out.data, a_data.data, b_data.data, i32(ops.m), i32(ops.n), i32(ops.k), i32(ops.n),
         np.int64(bpa), np.int64(bpb), i32(ops.m * ops.n), np.int64(a_block), i32(sai),
         i32(sak), np.int64(b_block), i32(sbk)],
        (_divisor_up_to(blocks_n, config.GX), _divisor_up_to(blocks_m, config.GY), 1))


def _divisor_up_to(size, limit):
    """The largest divisor of ``size`` not above ``limit``: a work-group side.

    A work group must divide the range; left to choose (``local_size=None``)
    for a range such as 98 rows, PoCL takes groups so thin that the weight
    gradient of a 784-wide layer ran 30 % slower than with 7-row groups.
    """
    return next(d for d in range(min(size, limit), 0, -1) if size % d == 0)


def device_config(device, ops):
    """The device's GEMM configuration for the product ``ops`` (tuned on first use of
    its shape class, see :mod:`gemm_tuning`)."""
    product = (ops.m, ops.n, ops.k, ops.sak != 1, ops.sbn != 1)
    return gemm_tuning.config_for(device.target, lambda shape: _product_runner(device, shape),
                                  product)


def _product_runner(device, product):
    """``run(config)``: one float32 product of shape ``product`` with ``config``,
    waited for; the operands are made once (outside any step being recorded:
    tuning is no part of the step)."""
    m, n, k, a_transposed, b_transposed = product
    with programs.not_recording():
        a = device.from_host(np.ones((k, m) if a_transposed else (m, k), np.float32))
        b = device.from_host(np.ones((n, k) if b_transposed else (k, n), np.float32))
        out = device.allocate((m, n), np.float32)
    ops = Operands(a.shape, b.shape, a_transposed, b_transposed)

    def run(config):
        with programs.not_recording():
            gemm(device, config, out, a, b, ops)
            device.sync()
    return run


def matmul(ctx, a, b, transpose_a=False, transpose_b=False, batch_shape=(), a_batch=0,
           b_batch=0):
    """``C = op(A) op(B)`` for matrices or batches of them (``*_batch``: batch strides)."""
    batches = math.prod(batch_shape)
    ops = Operands(a.shape, b.shape, transpose_a, transpose_b, batches, a_batch, b_batch)
    kb = b.shape[-1] if transpose_b else b.shape[-2]
    if ops.k != kb:
        raise ctx.invalid_argument("Matrix size-incompatible: In[0]: %s, In[1]: %s"
                                   % (list(a.shape), list(b.shape)))
    out = empty(ctx, tuple(batch_shape) + (ops.m, ops.n), a.dtype)
    if not out.size:
        return out
    if ops.k == 0:
        from minitf_opencl_gpu.kernels.elementwise import zeros
        return zeros(ctx, out.shape, out.dtype)
    gemm(ctx.device, device_config(ctx.device, ops), out, a, b, ops)
    return out


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
    return matmul(ctx, x, y, adj_x, adj_y, batch_shape, x_stride, y_stride)


def _flat_batch(ctx, x, batch_shape):
    """``x`` as ``[batches or 1, rows, cols]``, broadcasting a partial batch by copying."""
    batch = x.shape[:-2]
    if math.prod(batch) == 1 or tuple(batch) == tuple(batch_shape):
        return x.reshape((math.prod(batch),) + tuple(x.shape[-2:]))
    full = tuple(batch_shape) + tuple(x.shape[-2:])
    padded = (1,) * (len(full) - len(x.shape)) + tuple(x.shape)
    strides = [0 if s == 1 else st for s, st in zip(padded, contiguous_strides(padded))]
    out = empty(ctx, full, x.dtype)
    run(ctx, "array", "strided_gather", x.dtype, out.size, out, x, i32(out.size), i32(0),
        *strided_args(full, strides))
    return out.reshape((math.prod(batch_shape),) + tuple(x.shape[-2:]))
