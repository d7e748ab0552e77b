"""CPU kernels of the neural-network ops: activations, softmax, losses, conv, pooling.

Every kernel is vectorised NumPy.  Convolution and pooling share one helper,
:func:`extract_patches` (im2col): a strided *view* of the padded input with
one ``[kh, kw, channels]`` window per output pixel.  A convolution is then one
``tensordot`` with the filter (im2col + GEMM, as cuDNN and TF's CPU kernels
do), a pooling a ``max`` or ``mean`` over the window axes.  The gradient
kernels use the same windows: a filter gradient is the windows contracted with
the output gradient, and :func:`scatter_patches` (col2im), the adjoint of
:func:`extract_patches`, adds per-window gradients back onto the input.

The ``*Grad`` kernels are TF's backprop ops, which the gradient functions in
:mod:`minitf.ops.nn_ops`, :mod:`~minitf.ops.conv_ops` and
:mod:`~minitf.ops.pooling_ops` build; each sits beside its forward kernel.
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from minitf.plugin import get_windowed_output_size

from minitf_numpy_cpu.kernels.forwarding import forwards_input, reusable
from minitf_numpy_cpu.kernels.math import ieee
from minitf_numpy_cpu.kernels.table import kernel

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# ---- Activations ------------------------------------------------------------------
# Each *Grad kernel takes the upstream gradient and the tensor TF's gradient
# function passes (the op's input or output; see the op declarations).
@kernel("Relu")
@forwards_input(0)
def relu(ctx, features):
    return np.maximum(features, 0, out=features if reusable(ctx, features) else None)


@kernel("ReluGrad")
@forwards_input(0)
def relu_grad(ctx, gradients, features):
    # A product with the mask, as TF's kernel computes it: several times faster
    # than np.where, whose data-dependent choice defeats branch prediction.
    out = gradients if reusable(ctx, gradients, features.shape) else None
    return np.multiply(gradients, features > 0, out=out)


@kernel("Relu6")
def relu6(ctx, features):
    return np.clip(features, 0, 6)


@kernel("Relu6Grad")
def relu6_grad(ctx, gradients, features):
    inside = (features > 0) & (features < 6)
    return np.where(inside, gradients, 0).astype(gradients.dtype, copy=False)


@kernel("Elu")
def elu(ctx, features):
    # expm1 of min(x, 0): exact near zero and no overflow warning for large x.
    return np.where(features > 0, features, np.expm1(np.minimum(features, 0)))


@kernel("EluGrad")
def elu_grad(ctx, gradients, outputs):
    # Below zero d elu / dx = exp(x) = elu(x) + 1.
    return np.where(outputs < 0, gradients * (outputs + 1), gradients)


@kernel("Selu")
def selu(ctx, features):
    negative = SELU_ALPHA * np.expm1(np.minimum(features, 0))
    return (SELU_SCALE * np.where(features > 0, features, negative)).astype(features.dtype)


@kernel("SeluGrad")
def selu_grad(ctx, gradients, outputs):
    # Below zero d selu / dx = scale * alpha * exp(x) = selu(x) + scale * alpha.
    slope = np.where(outputs < 0, outputs + SELU_SCALE * SELU_ALPHA, SELU_SCALE)
    return (gradients * slope).astype(gradients.dtype)


@kernel("LeakyRelu")
def leaky_relu(ctx, features, alpha):
    return np.where(features > 0, features, features * features.dtype.type(alpha))


@kernel("LeakyReluGrad")
def leaky_relu_grad(ctx, gradients, features, alpha):
    return np.where(features > 0, gradients, gradients * gradients.dtype.type(alpha))


@kernel("Softplus")
def softplus(ctx, features):
    # log(exp(0) + exp(x)), computed without overflow.
    return np.logaddexp(features.dtype.type(0), features)


def sigmoid(x):
    """``1 / (1 + exp(-x))`` without overflow: exp is only taken of ``-|x|``."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@kernel("SoftplusGrad")
def softplus_grad(ctx, gradients, features):
    return gradients * sigmoid(features)


@kernel("Softsign")
def softsign(ctx, features):
    return features / (1 + np.abs(features))


@kernel("SoftsignGrad")
def softsign_grad(ctx, gradients, features):
    return gradients / np.square(1 + np.abs(features))


# ---- Softmax ----------------------------------------------------------------------
def log_softmax_last_axis(logits):
    """``logits - log(sum(exp(logits)))`` over the last axis, shifted by the max.

    Subtracting the row maximum first keeps every ``exp`` in ``(0, 1]``: no
    overflow, and the largest term is exactly 1 so the log never sees 0.
    ``initial=-inf`` lets an empty last axis through.
    """
    shifted = logits - np.maximum.reduce(logits, axis=-1, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=-1, keepdims=True))


@kernel("Softmax")
@ieee  # a row of -inf logits gives nan silently, as in TF
def softmax(ctx, logits):
    shifted = logits - np.max(logits, axis=-1, keepdims=True, initial=-np.inf)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


@kernel("LogSoftmax")
@ieee
def log_softmax(ctx, logits):
    return log_softmax_last_axis(logits)


# ---- BiasAdd ----------------------------------------------------------------------
@kernel("BiasAdd")
@forwards_input(0)
def bias_add(ctx, value, bias, data_format):
    if data_format == "NCHW":
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return np.add(value, bias, out=value if reusable(ctx, value) else None)


@kernel("BiasAddGrad")
def bias_add_grad(ctx, out_backprop, data_format):
    channel = 1 if data_format == "NCHW" else out_backprop.ndim - 1
    others = tuple(axis for axis in range(out_backprop.ndim) if axis != channel)
    return np.add.reduce(out_backprop, axis=others, dtype=out_backprop.dtype)


# ---- Local response normalization --------------------------------------------------
def _depth_window_sum(values, depth_radius):
    """``sum(values[..., d - r : d + r + 1])`` for every ``d``, clipped at the ends
    (a difference of cumulative sums along the last axis)."""
    depth = values.shape[-1]
    padded = np.concatenate([np.zeros(values.shape[:-1] + (1,), values.dtype),
                             np.cumsum(values, axis=-1)], axis=-1)
    ends = np.minimum(np.arange(depth) + depth_radius + 1, depth)
    starts = np.maximum(np.arange(depth) - depth_radius, 0)
    return padded[..., ends] - padded[..., starts]


def _lrn_norm(x, depth_radius, bias, alpha):
    """``bias + alpha * sqr_sum``, computed in float64."""
    return bias + alpha * _depth_window_sum(np.square(x.astype(np.float64)), depth_radius)


@kernel("LRN")
def lrn(ctx, input, depth_radius, bias, alpha, beta):  # noqa: A002 - TF's name
    norm = _lrn_norm(input, depth_radius, bias, alpha)
    return (input / norm ** beta).astype(input.dtype)


@kernel("LRNGrad")
def lrn_grad(ctx, input_grads, input_image, output_image, depth_radius, bias, alpha, beta):
    # The window is symmetric: k is in j's window exactly when j is in k's.
    norm = _lrn_norm(input_image, depth_radius, bias, alpha)
    grads = input_grads.astype(np.float64)
    spread = _depth_window_sum(grads * output_image / norm, depth_radius)
    result = grads * norm ** -beta - 2.0 * alpha * beta * input_image * spread
    return result.astype(input_grads.dtype)


# ---- Losses -----------------------------------------------------------------------
@kernel("L2Loss")
def l2_loss(ctx, t):
    return np.asarray(np.sum(np.square(t)) / 2, dtype=t.dtype)


@kernel("SoftmaxCrossEntropyWithLogits")
@ieee
def softmax_cross_entropy_with_logits(ctx, features, labels):
    log_p = log_softmax_last_axis(features)
    loss = -np.sum(labels * log_p, axis=-1)
    return loss, np.exp(log_p) - labels


@kernel("SparseSoftmaxCrossEntropyWithLogits")
@ieee
def sparse_softmax_cross_entropy_with_logits(ctx, features, labels):
    num_classes = features.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        outside = (labels < 0) | (labels >= num_classes)
        raise ctx.invalid_argument(
            "Received a label value of %d which is outside the valid range of [0, %d).  "
            "Label values: %s" % (labels[outside][0], num_classes,
                                  " ".join(str(v) for v in labels.reshape(-1))))
    # One row per example: with z = logits - max(logits) and s = sum(exp(z)),
    # loss = log(s) - z[label], and backprop = exp(z) / s (the softmax) with 1
    # subtracted at the label: one exp, and no one-hot matrix.
    shifted = features.reshape(labels.size, num_classes)
    shifted = shifted - np.maximum.reduce(shifted, axis=1, keepdims=True, initial=-np.inf)
    # The label's entry of each row, as an index into the flattened rows.
    at_label = np.arange(labels.size) * num_classes + labels.reshape(-1)
    backprop = np.exp(shifted)
    sums = np.add.reduce(backprop, axis=1, keepdims=True)
    loss = np.log(sums.reshape(-1))
    loss -= shifted.reshape(-1)[at_label]
    backprop /= sums
    backprop.reshape(-1)[at_label] -= 1
    return loss.reshape(labels.shape), backprop.reshape(features.shape)


@kernel("SigmoidCrossEntropyWithLogits")
def sigmoid_cross_entropy_with_logits(ctx, logits, labels):
    # max(x, 0) - x z + log(1 + exp(-|x|)): the exp argument is never positive.
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


# ---- Convolution and pooling ------------------------------------------------------
NO_DILATION = (1, 1, 1, 1)


def window_geometry(input_shape, window, strides, dilations, padding):
    """The output size and padding of a window op on an NHWC input, as TF computes them.

    Returns:
        ``((out_height, out_width), ((top, bottom), (left, right)))``.  The
        padding makes the last window end at the padded input's last row
        (column); with ``VALID`` it is 0 and trailing rows may be left out.
    """
    _, height, width, _ = input_shape
    (kh, kw), (sh, sw), (dh, dw) = window, strides[1:3], dilations[1:3]
    out_h, top = get_windowed_output_size(height, kh, sh, dh, padding)
    out_w, left = get_windowed_output_size(width, kw, sw, dw, padding)
    bottom = max((out_h - 1) * sh + (kh - 1) * dh + 1 - height - top, 0)
    right = max((out_w - 1) * sw + (kw - 1) * dw + 1 - width - left, 0)
    return (out_h, out_w), ((top, bottom), (left, right))


def extract_patches(x, window, strides, dilations, padding, pad_value=0):
    """im2col: the windows of an NHWC batch, one per output pixel.

    Pads ``x`` as TF does (see :func:`~minitf.ops.conv_ops.get_windowed_output_size`)
    with ``pad_value``, then returns a read-only strided view (no copy) where
    ``patches[b, i, j, di, dj, c] = padded[b, i*sh + di*dh, j*sw + dj*dw, c]``.

    Args:
        x: ``[batch, height, width, channels]``.
        window: ``(kh, kw)``; strides, dilations: TF's NHWC 4-lists.
        padding: ``"SAME"`` or ``"VALID"``.
        pad_value: what the padding holds (0 for conv, -inf for max pooling).

    Returns:
        ``[batch, out_height, out_width, kh, kw, channels]``.
    """
    (out_h, out_w), pads = window_geometry(x.shape, window, strides, dilations, padding)
    (kh, kw), (sh, sw), (dh, dw) = window, strides[1:3], dilations[1:3]
    padded = np.pad(x, [(0, 0), pads[0], pads[1], (0, 0)], constant_values=pad_value)
    s_b, s_h, s_w, s_c = padded.strides
    return as_strided(padded, shape=(x.shape[0], out_h, out_w, kh, kw, x.shape[3]),
                      strides=(s_b, s_h * sh, s_w * sw, s_h * dh, s_w * dw, s_c),
                      writeable=False)


def scatter_patches(patches, input_shape, strides, dilations, padding):
    """col2im, the adjoint of :func:`extract_patches`: sums windows back onto the input.

    Every entry ``patches[b, i, j, di, dj, c]`` is added to the input pixel
    :func:`extract_patches` read it from; entries that fell on the padding
    are dropped.  Windows overlap, so the loop runs over the ``kh * kw``
    window offsets (not over pixels): for one offset, distinct output pixels
    touch distinct input pixels, and one strided slice adds them all.

    Args:
        patches: ``[batch, out_height, out_width, kh, kw, channels]``.
        input_shape: the NHWC shape of the input the windows were taken from.
        strides, dilations, padding: as for :func:`extract_patches`.

    Returns:
        An array of ``input_shape`` and ``patches``'s dtype.
    """
    batch, out_h, out_w, kh, kw, channels = patches.shape
    _, ((top, bottom), (left, right)) = window_geometry(input_shape, (kh, kw), strides,
                                                        dilations, padding)
    (sh, sw), (dh, dw) = strides[1:3], dilations[1:3]
    height, width = input_shape[1:3]
    padded = np.zeros((batch, height + top + bottom, width + left + right, channels),
                      dtype=patches.dtype)
    if patches.size == 0:
        return padded[:, top:top + height, left:left + width, :]
    for di in range(kh):
        for dj in range(kw):
            rows = slice(di * dh, di * dh + (out_h - 1) * sh + 1, sh)
            cols = slice(dj * dw, dj * dw + (out_w - 1) * sw + 1, sw)
            padded[:, rows, cols, :] += patches[:, :, :, di, dj, :]
    return padded[:, top:top + height, left:left + width, :]


def _check_output_size(ctx, out_backprop, expected):
    """``Conv2DBackprop*``: ``out_backprop`` must have the forward output's shape."""
    if tuple(out_backprop.shape) != tuple(expected):
        raise ctx.invalid_argument(
            "%s: Size of out_backprop doesn't match computed: actual = %s, computed = %s"
            % (ctx.op.type, list(out_backprop.shape), list(expected)))


@kernel("Conv2D")
def conv2d(ctx, input, filter, strides, padding, dilations):  # noqa: A002 - TF's input names
    patches = extract_patches(input, filter.shape[:2], strides, dilations, padding)
    # Contract each window [kh, kw, in] with the filter [kh, kw, in, out].
    output = np.tensordot(patches, filter, axes=([3, 4, 5], [0, 1, 2]))
    return output.astype(input.dtype, copy=False)


@kernel("Conv2DBackpropInput")
def conv2d_backprop_input(ctx, input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                          dilations):
    input_shape = tuple(int(d) for d in input_sizes)
    (out_h, out_w), _ = window_geometry(input_shape, filter.shape[:2], strides, dilations,
                                        padding)
    _check_output_size(ctx, out_backprop, (input_shape[0], out_h, out_w, filter.shape[3]))
    # What each output pixel sends back to each tap of its window: [b, oh, ow, kh, kw, in].
    window_grads = np.tensordot(out_backprop, filter, axes=([3], [3]))
    grad = scatter_patches(window_grads, input_shape, strides, dilations, padding)
    return grad.astype(filter.dtype, copy=False)


@kernel("Conv2DBackpropFilter")
def conv2d_backprop_filter(ctx, input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           dilations):
    window = tuple(int(d) for d in filter_sizes[:2])
    patches = extract_patches(input, window, strides, dilations, padding)
    _check_output_size(ctx, out_backprop, patches.shape[:3] + (int(filter_sizes[3]),))
    # dW[di, dj, c, o] = sum over b, i, j of window[b, i, j, di, dj, c] * dY[b, i, j, o].
    grad = np.tensordot(patches, out_backprop, axes=([0, 1, 2], [0, 1, 2]))
    return grad.astype(input.dtype, copy=False)


@kernel("MaxPool")
def max_pool(ctx, input, ksize, strides, padding):  # noqa: A002
    lowest = -np.inf if input.dtype.kind == "f" else np.iinfo(input.dtype).min
    patches = extract_patches(input, ksize[1:3], strides, NO_DILATION, padding, lowest)
    return patches.max(axis=(3, 4))


def _max_pool_winners(orig_input, ksize, strides, padding):
    """Which entry of each window holds its maximum: ``[b, oh, ow, channels]`` indices
    into the flattened ``kh * kw`` window.

    On ties the first maximum in row-major window order wins, as in TF's
    kernel (``np.argmax`` returns the first); padding (-inf) never wins.
    """
    patches = extract_patches(orig_input, ksize[1:3], strides, NO_DILATION, padding, -np.inf)
    batch, out_h, out_w, kh, kw, channels = patches.shape
    return patches.reshape(batch, out_h, out_w, kh * kw, channels).argmax(axis=3)


@kernel("MaxPoolGrad")
def max_pool_grad(ctx, orig_input, orig_output, grad, ksize, strides, padding):
    # Each window's gradient goes to its maximum, then the windows are summed back.
    winners = _max_pool_winners(orig_input, ksize, strides, padding)
    kh, kw = ksize[1:3]
    routes = np.arange(kh * kw)[:, np.newaxis] == winners[:, :, :, np.newaxis, :]
    window_grads = np.where(routes, grad[:, :, :, np.newaxis, :], 0).astype(grad.dtype)
    window_grads = window_grads.reshape(winners.shape[:3] + (kh, kw, winners.shape[3]))
    return scatter_patches(window_grads, orig_input.shape, strides, NO_DILATION, padding)


@kernel("MaxPoolGradGrad")
def max_pool_grad_grad(ctx, orig_input, orig_output, grad, ksize, strides, padding):
    # The adjoint of MaxPoolGrad: each window reads grad at its maximum.
    winners = _max_pool_winners(orig_input, ksize, strides, padding)
    patches = extract_patches(grad, ksize[1:3], strides, NO_DILATION, padding)
    batch, out_h, out_w, kh, kw, channels = patches.shape
    flat = patches.reshape(batch, out_h, out_w, kh * kw, channels)
    return np.take_along_axis(flat, winners[:, :, :, np.newaxis, :], axis=3)[:, :, :, 0, :]


def _window_counts(input_shape, window, strides, padding, dtype):
    """How many real (unpadded) entries each window covers: ``[1, oh, ow, 1]``.

    The same windows over an image of ones padded with zeros.
    """
    ones = np.ones((1,) + tuple(input_shape[1:3]) + (1,), dtype=dtype)
    return extract_patches(ones, window, strides, NO_DILATION, padding).sum(axis=(3, 4))


@kernel("AvgPool")
def avg_pool(ctx, value, ksize, strides, padding):
    window = ksize[1:3]
    sums = extract_patches(value, window, strides, NO_DILATION, padding).sum(axis=(3, 4))
    counts = _window_counts(value.shape, window, strides, padding, value.dtype)
    return (sums / counts).astype(value.dtype)


@kernel("AvgPoolGrad")
def avg_pool_grad(ctx, orig_input_shape, grad, ksize, strides, padding):
    # Each window's mean spreads its gradient evenly over the entries it covered.
    input_shape = tuple(int(d) for d in orig_input_shape)
    kh, kw = ksize[1:3]
    counts = _window_counts(input_shape, (kh, kw), strides, padding, grad.dtype)
    share = (grad / counts)[:, :, :, np.newaxis, np.newaxis, :]
    window_grads = np.broadcast_to(share, grad.shape[:3] + (kh, kw, grad.shape[3]))
    result = scatter_patches(window_grads, input_shape, strides, NO_DILATION, padding)
    return result.astype(grad.dtype, copy=False)


@kernel("TopKV2")
def top_k(ctx, x, k, sorted):
    k = int(k)
    if k < 0 or k > x.shape[-1]:
        raise ctx.invalid_argument("input must have at least k=%d columns, has %d"
                                   % (k, x.shape[-1]))
    # A stable sort of -x puts larger values first and, among ties, lower indices first.
    order = np.argsort(-x if x.dtype.kind != "u" else -x.astype(np.int64), axis=-1,
                       kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


@kernel("InTopKV2")
def in_top_k(ctx, predictions, targets, k):
    targets = np.asarray(targets).astype(np.int64)
    rows = np.arange(predictions.shape[0])
    valid = (targets >= 0) & (targets < predictions.shape[1])
    target_values = predictions[rows, np.where(valid, targets, 0)]
    larger = (predictions > target_values[:, None]).sum(axis=1)
    finite = np.isfinite(predictions).all(axis=1)
    return valid & finite & (larger < int(k))
