"""Neural-network functions composed from other ops: no op of their own.

``moments``, ``batch_normalization``, ``l2_normalize``, ``xw_plus_b``,
``conv1d``, ``embedding_lookup`` and ``embedding_lookup_sparse`` are short
formulas over math and array ops, exactly as TF1 writes them in Python;
their gradients come for free from the ops they build.

Mirrors ``tensorflow/python/ops/nn_impl.py`` (and ``xw_plus_b`` from
``nn_ops.py``).
"""

import numbers

from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, clip_ops, comparison_ops, constant_op, conv_ops, gather_ops, joining_ops,
    linalg_ops, mask_ops, math_ops, nn_ops, reduction_ops, select_ops, transpose_ops, unary_ops,
    unique_ops)
from minitf.ops.nn_ops import bias_add
from minitf.ops.op_def_library import deprecated_alias, graph_of
from minitf.ops.partitioned_variables import PartitionedVariable


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
    """The rows of ``params`` at ``ids`` (``tf.nn.embedding_lookup``).

    ``params`` is one embedding matrix, or the shards of one split along its
    first axis: a list of tensors/variables, or a ``PartitionedVariable``.
    Id ``i`` of a vocabulary of ``N`` rows in ``n`` shards is row
    ``new_id`` of shard ``p``:

    * ``"mod"``: ``p = i % n``, ``new_id = i // n`` (ids dealt out in turn);
    * ``"div"``: contiguous ranges, the first ``N % n`` shards one id longer
      (how ``tf.fixed_size_partitioner`` splits a variable):
      ``p = max(i // (q + 1), (i - r) // q)`` with ``q, r = divmod(N, n)``, and
      ``new_id = i % (q + 1)`` if ``p < r`` else ``(i - r) % q``.

    Each shard's rows are gathered next to the shard (``tf.colocate_with``),
    so on parameter servers only the looked-up rows travel; the gradient of a
    shard is an ``IndexedSlices`` of its looked-up rows (the gradient of its
    ``tf.gather``), which an optimizer applies to those rows only.

    Args:
        params: a tensor or variable, a list of them (shards with equal
            trailing dimensions), or a ``PartitionedVariable``.
        ids: int32/int64 ids of any shape.
        partition_strategy: ``"mod"`` or ``"div"``; no effect with one shard.
        name: the name of the result (default ``embedding_lookup``).
        validate_indices: ignored (deprecated in TF1 too).
        max_norm: if given, each looked-up embedding whose L2 norm exceeds it
            is scaled down to it.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``, rows in id order.
        Its name is TF's: one matrix gives ``embedding_lookup/Identity:0``
        (a ``GatherV2`` named ``embedding_lookup``, then an ``Identity``),
        shards the final ``Reshape`` (``embedding_lookup/Reshape_1:0``) after
        the stitch named ``embedding_lookup``.

    Example:
        >>> shards = [tf.constant([[0.0], [2.0]]), tf.constant([[1.0]])]   # ids 0, 2 | 1
        >>> sess.run(tf.nn.embedding_lookup(shards, [2, 1, 0]))
        array([[2.],
               [1.],
               [0.]], dtype=float32)

    Raises:
        ValueError: for no params, or an unknown ``partition_strategy``.
    """
    del validate_indices
    params = _embedding_shards(params)
    graph = graph_of(params + [ids])
    with graph.as_default(), graph.name_scope(name or "embedding_lookup") as scope:
        params = [convert_to_tensor(p, name="params") for p in params]
        ids = convert_to_tensor(ids, name="ids")
        if len(params) == 1:
            with graph.colocate_with(params[0]):
                rows = _clip(gather_ops.gather(params[0], ids, name=scope), ids, max_norm)
            # The result carries no colocation with the params (TF 1.15+'s Identity).
            return array_ops.identity(rows)
        return _clip(_sharded_lookup(params, ids, partition_strategy, scope), ids, max_norm)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Combines the embeddings of each row's ids (``tf.nn.embedding_lookup_sparse``).

    Row ``b`` of the ``[batch, ids]`` SparseTensor ``sp_ids`` holds a bag
    of ids (a document's words, a user's items); the result's row ``b`` is
    their embeddings combined, each weighted by the matching value of
    ``sp_weights`` (1 when it is None)::

        "sum":   sum(w_i * e_i)
        "mean":  sum(w_i * e_i) / sum(w_i)
        "sqrtn": sum(w_i * e_i) / sqrt(sum(w_i ** 2))

    Built as TF builds it: the distinct ids are looked up once
    (``tf.unique``, :func:`embedding_lookup`, so ``params`` may be sharded and
    the gradient is an ``IndexedSlices`` of the looked-up rows), gathered back
    per entry and summed per row of ``sp_ids`` (TF's ``segment_sum`` and
    ``sparse_segment_*`` ops, written here as ``unsorted_segment_sum`` over
    ``max(row) + 1`` segments).  As in TF, the result has one row per batch
    row up to the last row that holds an id; an empty row before it is
    zeros.

    Args:
        params: the embedding matrix, a list of shards, or a PartitionedVariable.
        sp_ids: an int ``[batch, n]`` SparseTensor of ids (rows sorted, as
            ``tf.parse_example`` gives them).
        sp_weights: a SparseTensor of float weights with the indices of
            ``sp_ids``, or None (every weight 1).
        partition_strategy: ``"mod"`` or ``"div"``, as for :func:`embedding_lookup`.
        name: the name scope (default ``embedding_lookup_sparse``); the
            result is named after it.
        combiner: ``"sum"``, ``"mean"`` (TF1's default) or ``"sqrtn"``.
        max_norm: clip each embedding to this L2 norm before combining.

    Returns:
        A dense ``[rows, embedding dims...]`` tensor.

    Raises:
        ValueError: for another combiner.
        TypeError: if ``sp_ids`` (or a given ``sp_weights``) is not a SparseTensor.

    Example:
        >>> ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0, 2, 1], [2, 2])
        >>> tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum")   # [p0 + p2, p1]
    """
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    params = _embedding_shards(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError("sp_weights must be either None or SparseTensor")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    graph = graph_of(params + [sp_ids.values])
    with graph.as_default(), graph.name_scope(name or "embedding_lookup_sparse") as scope:
        segment_ids = unary_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = unique_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        if embeddings.dtype == dtypes.float16:
            embeddings = unary_ops.cast(embeddings, dtypes.float32)
        embeddings = gather_ops.gather(embeddings, idx)
        if sp_weights is None:
            weights = array_ops.ones_like(segment_ids, dtype=embeddings.dtype)
        else:
            weights = unary_ops.cast(sp_weights.values, embeddings.dtype)
        # [n] weights as [n, 1, ...] to broadcast along each embedding.
        ones = array_ops.fill(array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0), 1)
        weights = array_ops.reshape(weights, joining_ops.concat(
            [array_ops.shape(weights), ones], 0))
        if embeddings.shape.ndims is not None:
            weights.set_shape([None] + [1] * (embeddings.shape.ndims - 1))
        num_rows = math_ops.maximum(reduction_ops.reduce_max(segment_ids) + 1, 0)
        total = gather_ops.unsorted_segment_sum(embeddings * weights, segment_ids, num_rows,
                                                name=scope if combiner == "sum" else None)
        if combiner == "sum":
            return total
        if combiner == "sqrtn":
            weights = unary_ops.square(weights)
        weight_sum = gather_ops.unsorted_segment_sum(weights, segment_ids, num_rows)
        if combiner == "sqrtn":
            weight_sum = unary_ops.sqrt(weight_sum)
        # TF's div_no_nan: a row whose weights sum to 0 (an empty row) is zeros.
        empty = comparison_ops.equal(weight_sum, 0.0)
        inverse = select_ops.where(
            empty, array_ops.zeros_like(weight_sum),
            math_ops.div(1.0, select_ops.where(empty, array_ops.ones_like(weight_sum),
                                               weight_sum)))
        return math_ops.multiply(total, inverse, name=scope)


def _embedding_shards(params):
    """``params`` as a list of shards (a PartitionedVariable's parts, in order)."""
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Need at least one param")
    if isinstance(params, PartitionedVariable):
        return list(params)
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _sharded_lookup(params, ids, partition_strategy, stitch_name):
    """TF's lookup over shards, as a worklist of five steps:

    1. flatten ``ids`` and number their positions ``0 .. n-1``;
    2. route each id to its shard and its row there (:func:`_route_ids`);
    3. partition the ids and the positions by shard (TF's ``dynamic_partition``);
    4. gather each shard's rows, colocated with the shard;
    5. stitch the rows back into position order (TF's ``dynamic_stitch``)
       and reshape to ``ids.shape + row shape``.
    """
    flat_ids = array_ops.reshape(ids, [-1])
    positions = math_ops.range(array_ops.size(flat_ids))
    shard, shard_ids = _route_ids(flat_ids, params, partition_strategy)
    ids_by_shard = _dynamic_partition(shard_ids, shard, len(params))
    positions_by_shard = _dynamic_partition(positions, shard, len(params))
    rows_by_shard = []
    for param, param_ids in zip(params, ids_by_shard):
        with param.graph.colocate_with(param):
            rows_by_shard.append(gather_ops.gather(param, param_ids))
    rows = _dynamic_stitch(positions_by_shard, rows_by_shard, stitch_name)
    row_shape = params[0].shape[1:]
    for param in params[1:]:
        row_shape = row_shape.merge_with(param.shape[1:])
    dynamic_row_shape = row_shape.as_list() if row_shape.is_fully_defined() else \
        array_ops.shape(params[0])[1:]
    rows = array_ops.reshape(rows, joining_ops.concat([array_ops.shape(ids), dynamic_row_shape],
                                                      0))
    rows.set_shape(ids.shape.concatenate(row_shape))
    return rows


def _route_ids(flat_ids, params, partition_strategy):
    """``(shard, id within the shard)`` of every id, for ``"mod"`` or ``"div"``."""
    num_shards = len(params)
    if partition_strategy == "mod":
        shard = math_ops.floormod(flat_ids, num_shards)
        new_ids = math_ops.floordiv(flat_ids, num_shards)
    elif partition_strategy == "div":
        total = _total_rows(params, flat_ids.dtype)
        ids_per_shard = math_ops.floordiv(total, num_shards)
        extras = math_ops.floormod(total, num_shards)
        shard = math_ops.maximum(math_ops.floordiv(flat_ids, ids_per_shard + 1),
                                 math_ops.floordiv(flat_ids - extras, ids_per_shard))
        new_ids = select_ops.where(comparison_ops.less(shard, extras),
                                   math_ops.floormod(flat_ids, ids_per_shard + 1),
                                   math_ops.floormod(flat_ids - extras, ids_per_shard))
    else:
        raise ValueError("Unrecognized partition strategy: " + partition_strategy)
    return unary_ops.cast(shard, dtypes.int32), new_ids


def _total_rows(params, dtype):
    """The vocabulary size ``N``: the shards' first dimensions added up (a
    constant when they are all known)."""
    dims = [p.shape[0].value for p in params]
    if None not in dims:
        return constant_op.constant(sum(dims), dtype)
    sizes = [array_ops.shape(p, out_type=dtype)[0] for p in params]
    return math_ops.add_n(sizes)


def _dynamic_partition(data, partitions, num_partitions):
    """``[data[partitions == p] for p in range(num_partitions)]`` (TF's
    ``tf.dynamic_partition``, written here with ``boolean_mask``)."""
    return [mask_ops.boolean_mask(data, comparison_ops.equal(partitions, p))
            for p in range(num_partitions)]


def _dynamic_stitch(indices, data, name):
    """The rows of ``data`` (a list) placed at ``indices`` (a list of the same
    lengths, together a permutation of ``0 .. n-1``): TF's
    ``tf.dynamic_stitch``, as a scatter of the rows into their positions.

    Its gradient is dense, a gather of the incoming gradient by ``indices``
    (as TF's ``DynamicStitch`` gradient): the sparse gradients are those of
    the shards' own gathers."""
    positions = joining_ops.concat(indices, 0)
    return gather_ops.unsorted_segment_sum(joining_ops.concat(data, 0), positions,
                                           array_ops.size(positions), name=name)


def _clip(rows, ids, max_norm):
    """``rows`` with each embedding (the dimensions after those of ``ids``)
    scaled down to L2 norm ``max_norm`` when above it."""
    if max_norm is None:
        return rows
    if ids.shape.ndims is not None and rows.shape.ndims is not None:
        axes = list(range(ids.shape.ndims, rows.shape.ndims))
    else:
        axes = math_ops.range(array_ops.rank(ids), array_ops.rank(rows))
    return clip_ops.clip_by_norm(rows, max_norm, axes=axes)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of a batch of sequences (``tf.nn.conv1d``).

    As in TF, a 1-D convolution is a 2-D one over images of height 1: the
    input ``[batch, in_width, in_channels]`` becomes
    ``[batch, 1, in_width, in_channels]`` (``ExpandDims``), the filter
    ``[filter_width, in_channels, out_channels]`` becomes
    ``[1, filter_width, in_channels, out_channels]``, and after the
    ``Conv2D`` (named like the scope, ``conv1d``) a ``Squeeze`` drops the
    height again (``conv1d/Squeeze:0``).

    Args:
        value: ``[batch, in_width, in_channels]`` ("NWC") or
            ``[batch, in_channels, in_width]`` ("NCW").
        filters: ``[filter_width, in_channels, out_channels]``.
        stride: the step along the width: an int, or a list of 1 or 3
            entries (``[1, stride, 1]`` for "NWC").
        padding: ``"SAME"`` or ``"VALID"``.
        use_cudnn_on_gpu: ignored (TF1 compatibility).
        data_format: ``"NWC"`` (default, also ``"NHWC"``) or ``"NCW"`` (also
            ``"NCHW"``).  minitf's ``Conv2D`` is NHWC only, so an "NCW" input
            is transposed to "NWC" and the result back (TF's CPU kernels
            refuse NCHW altogether).
        name: the name scope (default ``conv1d``).
        input: alias of ``value``.
        dilations: gaps between filter taps, same forms as ``stride``.

    Returns:
        ``[batch, out_width, out_channels]`` (or ``[batch, out_channels, out_width]``).

    Raises:
        ValueError: for another ``data_format``, a badly sized ``stride``, or
            what ``conv2d`` refuses.

    Example:
        >>> x = tf.ones([2, 5, 3]); w = tf.ones([3, 3, 4])
        >>> tf.nn.conv1d(x, w, stride=2, padding="SAME").shape
        TensorShape([Dimension(2), Dimension(3), Dimension(4)])
    """
    del use_cudnn_on_gpu
    value = deprecated_alias("input", input, "value", value)
    if data_format in (None, "NHWC", "NWC"):
        channels_first = False
    elif data_format in ("NCHW", "NCW"):
        channels_first = True
    else:
        raise ValueError("data_format must be \"NWC\" or \"NCW\".")
    strides = [1] + _conv1d_sequence(stride, channels_first, "stride")
    dilations = [1] + _conv1d_sequence(1 if dilations is None else dilations, channels_first,
                                       "dilations")
    graph = graph_of([value, filters])
    with graph.as_default(), graph.name_scope(name or "conv1d") as scope:
        value = convert_to_tensor(value, name="value")
        if channels_first:
            value = transpose_ops.transpose(value, [0, 2, 1])
        value = array_ops.expand_dims(value, -3)
        filters = array_ops.expand_dims(filters, 0)
        result = conv_ops.conv2d(value, filters, strides, padding, dilations=dilations,
                                 name=scope)
        result = array_ops.squeeze(result, [-3])
        return transpose_ops.transpose(result, [0, 2, 1]) if channels_first else result


def _conv1d_sequence(value, channels_first, name):
    """A 1-D ``stride`` or ``dilations`` as the last three entries of an NHWC
    4-list (TF's ``_get_sequence(value, 1, channel_index, name)``).

    With channels first the given 3-list is ``[1, 1, w]``; minitf convolves
    channels last, so it is reordered to ``[1, w, 1]``.
    """
    values = [value] if isinstance(value, numbers.Integral) else [int(v) for v in value]
    if len(values) == 1:
        return [1, values[0], 1]
    if len(values) == 3:
        return [values[0], values[2], values[1]] if channels_first else values
    raise ValueError("%s should be of length 1, 1 or 3 but was %d" % (name, len(values)))


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
