"""GPU kernels of convolution and pooling, forward and backward, on NHWC
tensors (source: ``opencl_kernels/conv.cl``; the products use ``matmul.cl``).

``Conv2D`` is im2col + matmul, as cuDNN's GEMM algorithm and the CPU kernel
are; its gradients are a matmul each, the input's followed by col2im.  The
geometry (output size and padding) is TF's, computed by the core's
:func:`~minitf.ops.conv_ops.get_windowed_output_size`.
"""

import numpy as np

from minitf.plugin import get_windowed_output_size

from minitf_opencl_gpu.kernels.linalg import matmul
from minitf_opencl_gpu.kernels.table import empty, i32, kernel, run


def geometry(ctx, input_shape, window, strides, dilations, padding):
    """``(out_h, out_w, top, left)`` of a window op, or TF's error."""
    (kh, kw), (sh, sw), (dh, dw) = window, strides[1:3], dilations[1:3]
    try:
        out_h, top = get_windowed_output_size(input_shape[1], kh, sh, dh, padding)
        out_w, left = get_windowed_output_size(input_shape[2], kw, sw, dw, padding)
    except ValueError as error:
        raise ctx.invalid_argument(str(error)) from None
    return out_h, out_w, top, left


def _conv_args(input_shape, out_h, out_w, window, strides, dilations, top, left):
    b, h, w, c = input_shape
    return [i32(v) for v in (b, h, w, c, out_h, out_w, window[0], window[1], strides[1],
                             strides[2], dilations[1], dilations[2], top, left)]


def _im2col(ctx, x, window, strides, dilations, padding):
    out_h, out_w, top, left = geometry(ctx, x.shape, window, strides, dilations, padding)
    b, _, _, c = x.shape
    cols = empty(ctx, (b * out_h * out_w, window[0] * window[1] * c), x.dtype)
    run(ctx, "conv", "im2col", x.dtype, cols.size, cols, x,
        *_conv_args(x.shape, out_h, out_w, window, strides, dilations, top, left))
    return cols, out_h, out_w


def _check_size(ctx, out_backprop, expected):
    if tuple(out_backprop.shape) != tuple(expected):
        raise ctx.invalid_argument(
            "%s: Size of out_backprop doesn't match computed: actual = %s, computed = %s"
            % (ctx.op.type, list(out_backprop.shape), list(expected)))


@kernel("Conv2D", dtypes=("float", "int"))
def conv2d(ctx, input, filter, strides, padding, dilations):  # noqa: A002 - TF's names
    kh, kw, c, o = filter.shape
    if input.shape[3] != c:
        raise ctx.invalid_argument("input and filter must have the same depth: %d vs %d"
                                   % (input.shape[3], c))
    cols, out_h, out_w = _im2col(ctx, input, (kh, kw), strides, dilations, padding)
    out = matmul(ctx, cols, filter.reshape((kh * kw * c, o)))
    return out.reshape((input.shape[0], out_h, out_w, o))


@kernel("Conv2DBackpropInput", dtypes=("float", "int"))
def conv2d_backprop_input(ctx, input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                          dilations):
    input_shape = tuple(int(d) for d in ctx.device.to_host(input_sizes))
    kh, kw, c, o = filter.shape
    out_h, out_w, top, left = geometry(ctx, input_shape, (kh, kw), strides, dilations, padding)
    _check_size(ctx, out_backprop, (input_shape[0], out_h, out_w, o))
    window_grads = matmul(ctx, out_backprop.reshape((-1, o)) if out_backprop.size else
                          out_backprop.reshape((0, o)), filter.reshape((kh * kw * c, o)),
                          transpose_b=True)
    dx = empty(ctx, input_shape, filter.dtype)
    run(ctx, "conv", "col2im", filter.dtype, dx.size, dx, window_grads,
        *_conv_args(input_shape, out_h, out_w, (kh, kw), strides, dilations, top, left))
    return dx


@kernel("Conv2DBackpropFilter", dtypes=("float", "int"))
def conv2d_backprop_filter(ctx, input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           dilations):
    kh, kw, c, o = (int(d) for d in ctx.device.to_host(filter_sizes))
    cols, out_h, out_w = _im2col(ctx, input, (kh, kw), strides, dilations, padding)
    _check_size(ctx, out_backprop, (input.shape[0], out_h, out_w, o))
    grad = matmul(ctx, cols, out_backprop.reshape((cols.shape[0], o)), transpose_a=True)
    return grad.reshape((kh, kw, c, o))


NO_DILATION = (1, 1, 1, 1)


def _pool_args(input_shape, out_h, out_w, ksize, strides, top, left):
    b, h, w, c = input_shape
    return [i32(v) for v in (b, h, w, c, out_h, out_w, ksize[1], ksize[2], strides[1],
                             strides[2], top, left)]


def _pool(ctx, name, x, ksize, strides, padding):
    out_h, out_w, top, left = geometry(ctx, x.shape, ksize[1:3], strides, NO_DILATION, padding)
    out = empty(ctx, (x.shape[0], out_h, out_w, x.shape[3]), x.dtype)
    run(ctx, "conv", name, x.dtype, out.size, out, x,
        *_pool_args(x.shape, out_h, out_w, ksize, strides, top, left))
    return out


@kernel("MaxPool", dtypes=("float", "int", "small_int"))
def max_pool(ctx, input, ksize, strides, padding):  # noqa: A002
    return _pool(ctx, "max_pool", input, ksize, strides, padding)


@kernel("AvgPool")
def avg_pool(ctx, value, ksize, strides, padding):
    return _pool(ctx, "avg_pool", value, ksize, strides, padding)


@kernel("MaxPoolGrad")
def max_pool_grad(ctx, orig_input, orig_output, grad, ksize, strides, padding):
    """The winners of the forward windows first, then one gather per input pixel."""
    shape = orig_input.shape
    out_h, out_w, top, left = geometry(ctx, shape, ksize[1:3], strides, NO_DILATION, padding)
    args = _pool_args(shape, out_h, out_w, ksize, strides, top, left)
    winners = empty(ctx, (shape[0], out_h, out_w, shape[3]), np.int32)
    run(ctx, "conv", "max_pool_argmax", orig_input.dtype, winners.size, winners, orig_input,
        *args)
    dx = empty(ctx, shape, grad.dtype)
    run(ctx, "conv", "max_pool_grad", grad.dtype, dx.size, dx, winners, grad, *args)
    return dx


@kernel("AvgPoolGrad", dtypes=("float", "int"))
def avg_pool_grad(ctx, orig_input_shape, grad, ksize, strides, padding):
    shape = tuple(int(d) for d in ctx.device.to_host(orig_input_shape))
    out_h, out_w, top, left = geometry(ctx, shape, ksize[1:3], strides, NO_DILATION, padding)
    dx = empty(ctx, shape, grad.dtype)
    run(ctx, "conv", "avg_pool_grad", grad.dtype, dx.size, dx, grad,
        *_pool_args(shape, out_h, out_w, ksize, strides, top, left))
    return dx
