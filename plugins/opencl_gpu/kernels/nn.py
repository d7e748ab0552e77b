"""GPU kernels of the neural-network ops: softmax, log-softmax, the
cross-entropies, ``BiasAdd``/``BiasAddGrad``, ``L2Loss`` (source:
``opencl_kernels/nn.cl``; the activations are in ``elementwise.cl``), and
``TopKV2`` (its ranking kernel is in ``reduction.cl``, built for integers too).
"""

import numpy as np

from minitf_opencl_gpu.kernels.elementwise import binary, unary
from minitf_opencl_gpu.kernels.reduction import reduce
from minitf_opencl_gpu.kernels.table import empty, i32, int32_indices, kernel, on_device, run


def _rows(x):
    cols = x.shape[-1] if x.shape else 1
    return (int(np.prod(x.shape[:-1])) if x.shape else 1), cols


@kernel("Softmax")
def softmax(ctx, logits):
    out = empty(ctx, logits.shape, logits.dtype)
    rows, cols = _rows(logits)
    if cols:
        run(ctx, "nn", "softmax", logits.dtype, rows, out, logits, i32(rows), i32(cols))
    return out


@kernel("LogSoftmax")
def log_softmax(ctx, logits):
    out = empty(ctx, logits.shape, logits.dtype)
    rows, cols = _rows(logits)
    if cols:
        run(ctx, "nn", "log_softmax", logits.dtype, rows, out, logits, i32(rows), i32(cols))
    return out


@kernel("SoftmaxCrossEntropyWithLogits")
def softmax_cross_entropy_with_logits(ctx, features, labels):
    labels = on_device(ctx, labels, features.dtype)
    if tuple(labels.shape) != tuple(features.shape):
        raise ctx.invalid_argument("logits and labels must be same size: logits_size=%s "
                                   "labels_size=%s" % (list(features.shape), list(labels.shape)))
    rows, cols = _rows(features)
    loss = empty(ctx, features.shape[:-1], features.dtype)
    backprop = empty(ctx, features.shape, features.dtype)
    run(ctx, "nn", "softmax_xent", features.dtype, rows, loss, backprop, features, labels,
        i32(rows), i32(cols))
    return loss, backprop


@kernel("SparseSoftmaxCrossEntropyWithLogits", dtypes=("float", "int"))
def sparse_softmax_cross_entropy_with_logits(ctx, features, labels):
    rows, cols = _rows(features)
    labels = int32_indices(ctx, labels, describe=lambda values, at: (
        "Received a label value of %d which is outside the valid range of [0, %d)."
        % (values[at], cols)))
    loss = empty(ctx, features.shape[:-1], features.dtype)
    backprop = empty(ctx, features.shape, features.dtype)
    run(ctx, "nn", "sparse_softmax_xent", features.dtype, rows, loss, backprop, features,
        labels, i32(rows), i32(cols))
    return loss, backprop


@kernel("BiasAdd", dtypes=("float", "int"))
def bias_add(ctx, value, bias, data_format):
    if data_format == "NCHW":
        bias = bias.reshape((-1,) + (1,) * (len(value.shape) - 2))
    return binary(ctx, "add", value, bias)


@kernel("BiasAddGrad")
def bias_add_grad(ctx, out_backprop, data_format):
    channel = 1 if data_format == "NCHW" else len(out_backprop.shape) - 1
    others = [axis for axis in range(len(out_backprop.shape)) if axis != channel]
    return reduce(ctx, "sum", out_backprop, others, keep_dims=False)


@kernel("L2Loss")
def l2_loss(ctx, t):
    squares = unary(ctx, "square", t)
    return reduce(ctx, "sum", squares, list(range(len(t.shape))), keep_dims=False, scale=0.5)


@kernel("TopKV2", dtypes=("float", "int"))
def top_k(ctx, input, k, sorted):  # noqa: A002 - TF's names
    """Always sorted (a valid order for ``sorted=False`` too); kernel in ``reduction.cl``."""
    k = int(ctx.device.to_host(k))
    n = input.shape[-1] if input.shape else 0
    if not input.shape or k < 0 or k > n:
        raise ctx.invalid_argument("input must have at least k=%d columns, has %d" % (k, n))
    rows = int(np.prod(input.shape[:-1]))
    values = empty(ctx, tuple(input.shape[:-1]) + (k,), input.dtype)
    indices = empty(ctx, values.shape, np.int32)
    if k:
        run(ctx, "reduction", "top_k", input.dtype, rows * n, values, indices, input,
            i32(rows), i32(n), i32(k))
    return values, indices
