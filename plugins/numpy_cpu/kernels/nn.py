"""CPU kernels of the neural-network ops: activations, softmax, losses, conv, pooling.

Every kernel is vectorised NumPy.  Convolution and pooling share one helper,
:func:`extract_patches` (im2col): a strided *view* of the padded input with
one ``[kh, kw, channels]`` window per output pixel.  A convolution is then one
``tensordot`` with the filter (im2col + GEMM, as cuDNN and TF's CPU kernels
do), a pooling a ``max`` or ``mean`` over the window axes.  The gradient
kernels can reuse the same windows (a filter gradient is the windows
contracted with the output gradient).
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided

from minitf.ops.nn_ops import get_windowed_output_size

from minitf_numpy_cpu.kernels.table import kernel

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# ---- Activations ------------------------------------------------------------------
@kernel("Relu")
def relu(ctx, features):
    return np.maximum(features, 0)


@kernel("Relu6")
def relu6(ctx, features):
    return np.clip(features, 0, 6)


@kernel("Elu")
def elu(ctx, features):
    # expm1 of min(x, 0): exact near zero and no overflow warning for large x.
    return np.where(features > 0, features, np.expm1(np.minimum(features, 0)))


@kernel("Selu")
def selu(ctx, features):
    negative = SELU_ALPHA * np.expm1(np.minimum(features, 0))
    return (SELU_SCALE * np.where(features > 0, features, negative)).astype(features.dtype)


@kernel("LeakyRelu")
def leaky_relu(ctx, features, alpha):
    return np.where(features > 0, features, features * features.dtype.type(alpha))


@kernel("Softplus")
def softplus(ctx, features):
    # log(exp(0) + exp(x)), computed without overflow.
    return np.logaddexp(features.dtype.type(0), features)


@kernel("Softsign")
def softsign(ctx, features):
    return features / (1 + np.abs(features))


# ---- Softmax ----------------------------------------------------------------------
def log_softmax_last_axis(logits):
    """``logits - log(sum(exp(logits)))`` over the last axis, shifted by the max.

    Subtracting the row maximum first keeps every ``exp`` in ``(0, 1]``: no
    overflow, and the largest term is exactly 1 so the log never sees 0.
    ``initial=-inf`` lets an empty last axis through.
    """
    shifted = logits - np.max(logits, axis=-1, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


@kernel("Softmax")
def softmax(ctx, logits):
    shifted = logits - np.max(logits, axis=-1, keepdims=True, initial=-np.inf)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


@kernel("LogSoftmax")
def log_softmax(ctx, logits):
    return log_softmax_last_axis(logits)


# ---- BiasAdd ----------------------------------------------------------------------
@kernel("BiasAdd")
def bias_add(ctx, value, bias, data_format):
    if data_format == "NCHW":
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


# ---- Losses -----------------------------------------------------------------------
@kernel("L2Loss")
def l2_loss(ctx, t):
    return np.asarray(np.sum(np.square(t)) / 2, dtype=t.dtype)


@kernel("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(ctx, features, labels):
    log_p = log_softmax_last_axis(features)
    loss = -np.sum(labels * log_p, axis=-1)
    return loss, np.exp(log_p) - labels


@kernel("SparseSoftmaxCrossEntropyWithLogits")
def sparse_softmax_cross_entropy_with_logits(ctx, features, labels):
    num_classes = features.shape[-1]
    outside = (labels < 0) | (labels >= num_classes)
    if outside.any():
        raise ctx.invalid_argument(
            "Received a label value of %d which is outside the valid range of [0, %d).  "
            "Label values: %s" % (labels[outside][0], num_classes,
                                  " ".join(str(v) for v in labels.reshape(-1))))
    log_p = log_softmax_last_axis(features)
    picked = labels[..., np.newaxis]
    loss = -np.take_along_axis(log_p, picked, axis=-1)[..., 0]
    one_hot = (np.arange(num_classes) == picked).astype(features.dtype)
    return loss, np.exp(log_p) - one_hot


@kernel("SigmoidCrossEntropyWithLogits")
def sigmoid_cross_entropy_with_logits(ctx, logits, labels):
    # max(x, 0) - x z + log(1 + exp(-|x|)): the exp argument is never positive.
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


# ---- Convolution and pooling ------------------------------------------------------
def extract_patches(x, window, strides, dilations, padding, pad_value=0):
    """im2col: the windows of an NHWC batch, one per output pixel.

    Pads ``x`` as TF does (see :func:`~minitf.ops.nn_ops.get_windowed_output_size`)
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
    batch, height, width, channels = x.shape
    (kh, kw), (sh, sw), (dh, dw) = window, strides[1:3], dilations[1:3]
    out_h, top = get_windowed_output_size(height, kh, sh, dh, padding)
    out_w, left = get_windowed_output_size(width, kw, sw, dw, padding)
    bottom = max((out_h - 1) * sh + (kh - 1) * dh + 1 - height - top, 0)
    right = max((out_w - 1) * sw + (kw - 1) * dw + 1 - width - left, 0)
    padded = np.pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)],
                    constant_values=pad_value)
    s_b, s_h, s_w, s_c = padded.strides
    return as_strided(padded, shape=(batch, out_h, out_w, kh, kw, channels),
                      strides=(s_b, s_h * sh, s_w * sw, s_h * dh, s_w * dw, s_c),
                      writeable=False)


@kernel("Conv2D")
def conv2d(ctx, input, filter, strides, padding, dilations):  # noqa: A002 - TF's input names
    patches = extract_patches(input, filter.shape[:2], strides, dilations, padding)
    # Contract each window [kh, kw, in] with the filter [kh, kw, in, out].
    output = np.tensordot(patches, filter, axes=([3, 4, 5], [0, 1, 2]))
    return output.astype(input.dtype, copy=False)


@kernel("MaxPool")
def max_pool(ctx, input, ksize, strides, padding):  # noqa: A002
    lowest = -np.inf if input.dtype.kind == "f" else np.iinfo(input.dtype).min
    patches = extract_patches(input, ksize[1:3], strides, [1, 1, 1, 1], padding, lowest)
    return patches.max(axis=(3, 4))


@kernel("AvgPool")
def avg_pool(ctx, value, ksize, strides, padding):
    window = ksize[1:3]
    no_dilation = [1, 1, 1, 1]
    sums = extract_patches(value, window, strides, no_dilation, padding).sum(axis=(3, 4))
    # How many real (unpadded) entries each window covers: the same windows
    # over an image of ones padded with zeros.
    ones = np.ones((1,) + value.shape[1:3] + (1,), dtype=value.dtype)
    counts = extract_patches(ones, window, strides, no_dilation, padding).sum(axis=(3, 4))
    return (sums / counts).astype(value.dtype)

