"""Neural-network functions composed from other ops: no op of their own.

``moments``, ``batch_normalization``, ``l2_normalize`` and ``xw_plus_b`` are
short formulas over math and array ops, exactly as TF1 writes them in
Python; their gradients come for free from the ops they build.

Mirrors ``tensorflow/python/ops/nn_impl.py`` (and ``xw_plus_b`` from
``nn_ops.py``).
"""

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, clip_ops, conv_ops, gather_ops, linalg_ops, math_ops, nn_ops, reduction_ops,
    unary_ops)
from minitf.ops.nn_ops import bias_add
from minitf.ops.op_def_library import graph_of


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """The mean and (population) variance of ``x`` over ``axes`` (``tf.nn.moments``).

    ``variance = mean((x - mean) ** 2)``, the biased estimate that batch
    normalisation uses.  float16 inputs are reduced in float32 (their range
    is too small for a sum of squares) and the results cast back, as in TF.

    Args:
        x: a tensor.
        axes: the axes to reduce: ``[0]`` for a batch of vectors, ``[0, 1, 2]``
            for the per-channel statistics of an NHWC batch.
        shift: unused (TF1 compatibility).
        name: the name scope (default ``moments``).
        keep_dims: deprecated alias of ``keepdims``.
        keepdims: keep the reduced axes with size 1.

    Returns:
        ``(mean, variance)``.

    Example:
        >>> mean, variance = tf.nn.moments(images, axes=[0, 1, 2])  # per channel
    """
    del shift
    keepdims = keepdims if keepdims is not None else bool(keep_dims)
    graph = graph_of([x])
    with graph.as_default(), graph.name_scope(name or "moments"):
        x = convert_to_tensor(x, name="x")
        y = unary_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        mean = reduction_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The variance's gradient with respect to the mean is zero: stop it.
        variance = reduction_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keepdims:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return unary_ops.cast(mean, dtypes.float16), unary_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``scale * (x - mean) / sqrt(variance + epsilon) + offset`` (``tf.nn.batch_normalization``).

    Ioffe & Szegedy (2015).  Computed as TF does, as one multiply-add on
    ``x``: ``x * inv + (offset - mean * inv)`` with
    ``inv = scale * rsqrt(variance + epsilon)``.  Every argument broadcasts
    against ``x``.

    Args:
        x: the input.
        mean, variance: statistics, e.g. from :func:`moments`.
        offset: beta, added after normalising; None: 0.
        scale: gamma, multiplied after normalising; None: 1.
        variance_epsilon: a small float that avoids dividing by zero.
        name: the name scope (default ``batchnorm``).
    """
    graph = graph_of([x, mean, variance, offset, scale])
    with graph.as_default(), graph.name_scope(name or "batchnorm"):
        inv = unary_ops.rsqrt(math_ops.add(variance, variance_epsilon))
        if scale is not None:
            inv = math_ops.multiply(inv, scale, name="mul")
        mean_inv = math_ops.multiply(mean, inv, name="mul_1")
        if offset is None:
            shift = unary_ops.negative(mean_inv)
        else:
            shift = math_ops.subtract(offset, mean_inv, name="sub")
        x = convert_to_tensor(x, name="x")
        scaled = math_ops.multiply(x, unary_ops.cast(inv, x.dtype), name="mul_2")
        return math_ops.add(scaled, unary_ops.cast(shift, x.dtype), name="add_1")


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))`` (``tf.nn.l2_normalize``).

    Each slice along ``axis`` is scaled to unit Euclidean length; ``epsilon``
    keeps an all-zero slice at zero instead of dividing by zero.

    Args:
        x: a tensor.
        axis: the axis (or axes) to normalise along.
        epsilon: the lower bound on the squared norm.
        name: the name scope (default ``l2_normalize``).
        dim: deprecated alias of ``axis``.
    """
    axis = axis if axis is not None else dim
    graph = graph_of([x])
    with graph.as_default(), graph.name_scope(name or "l2_normalize") as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduction_ops.reduce_sum(unary_ops.square(x), axis, keepdims=True)
        x_inv_norm = unary_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, x_inv_norm, name=scope)


def xw_plus_b(x, weights, biases, name=None):
    """``matmul(x, weights) + biases``: a dense layer (``tf.nn.xw_plus_b``).

    Args:
        x: ``[batch, in]``.
        weights: ``[in, out]``.
        biases: ``[out]``.
        name: the name of the result (default ``xw_plus_b``).
    """
    graph = graph_of([x, weights, biases])
    with graph.as_default(), graph.name_scope(name or "xw_plus_b") as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return bias_add(linalg_ops.matmul(x, weights), biases, name=scope)


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows of ``params`` at ``ids`` (``tf.nn.embedding_lookup``): ``gather(params, ids)``.

    Args:
        params: the embedding matrix (a tensor or variable), or a list holding
            exactly one (minitf does not shard embeddings).
        ids: int32/int64 ids of any shape.
        partition_strategy, validate_indices: accepted for TF compatibility.
        max_norm: if given, rows whose L2 norm exceeds it are scaled down to it.
        name: the name scope (default ``embedding_lookup``).

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``.

    Raises:
        NotImplementedError: for a list of several (sharded) params.
    """
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup over %d sharded params is not supported "
                                      "by minitf; concatenate them first" % len(params))
        params = params[0]
    graph = graph_of([params, ids])
    with graph.as_default(), graph.name_scope(name or "embedding_lookup") as scope:
        rows = gather_ops.gather(params, ids, name=scope if max_norm is None else None)
        if max_norm is None:
            return rows
        return clip_ops.clip_by_norm(rows, max_norm, axes=[-1], name=scope)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """The transpose of :func:`conv2d` (``tf.nn.conv2d_transpose``, "deconvolution").

    It is the gradient of ``conv2d`` with respect to its input, run forward:
    each input pixel spreads, through the filter, over a window of the larger
    output — how decoders and GAN generators upsample.

    Args:
        value: ``[batch, height, width, in_channels]`` (``input`` is its TF2 name).
        filter: ``[filter_height, filter_width, out_channels, in_channels]`` —
            note the order: that of the ``conv2d`` this is the transpose of.
        output_shape: the output's shape ``[batch, out_height, out_width,
            out_channels]`` (a list or an int32 tensor).
        strides, padding, data_format, dilations: those of that ``conv2d``.
        name: the name scope (default ``conv2d_transpose``).

    Raises:
        ValueError: if the filter's channels do not match ``value`` or ``output_shape``.
    """
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    graph = graph_of([value, filter, output_shape])
    with graph.as_default(), graph.name_scope(name or "conv2d_transpose") as scope:
        value = convert_to_tensor(value, name="value")
        filter = convert_to_tensor(filter, name="filter")  # noqa: A001
        output_shape = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        in_channels, kernel_in = value.shape[3].value, filter.shape[3].value
        if None not in (in_channels, kernel_in) and in_channels != kernel_in:
            raise ValueError("input channels does not match filter's input channels, "
                             "{} != {}".format(in_channels, kernel_in))
        return conv_ops.conv2d_backprop_input(output_shape, filter, value, strides, padding,
                                            data_format=data_format,
                                            dilations=dilations or (1, 1, 1, 1), name=scope)


def weighted_cross_entropy_with_logits(targets=None, logits=None, pos_weight=None, name=None,
                                       labels=None):
    """Sigmoid cross-entropy with the positive term weighted by ``pos_weight``.

    ``labels * -log(sigmoid(logits)) * pos_weight + (1 - labels) *
    -log(1 - sigmoid(logits))``, computed stably as TF does::

        (1 - labels) * logits + (1 + (pos_weight - 1) * labels)
            * (log1p(exp(-|logits|)) + relu(-logits))

    ``pos_weight > 1`` trades precision for recall on imbalanced data
    (``tf.nn.weighted_cross_entropy_with_logits``; ``labels`` is the TF2 name
    of ``targets``).
    """
    labels = targets if labels is None else labels
    graph = graph_of([labels, logits, pos_weight])
    with graph.as_default(), graph.name_scope(name or "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="targets")
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = (unary_ops.log1p(unary_ops.exp(-unary_ops.abs(logits)))
                        + nn_ops.relu(-logits))
        return math_ops.add((1 - labels) * logits, log_weight * softplus_neg, name=scope)
