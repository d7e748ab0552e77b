"""Sampled losses: ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss``.

Training a classifier over a large vocabulary (word2vec, language models)
with a full softmax computes every class's logit for every example.  The
sampled losses compute the logits of each example's ``num_true`` true
classes and of ``num_sampled`` classes drawn for the whole batch by a
candidate sampler (:mod:`minitf.ops.candidate_sampling_ops`, the
log-uniform one by default), and train on those alone.

Both are built by :func:`_compute_sampled_logits`, as TF writes it:

1. sample (or take ``sampled_values``): candidates ``S`` and the expected
   counts ``Q`` of the true and sampled classes;
2. look up the weight rows and biases of the true classes and of ``S`` in
   one ``embedding_lookup`` (``weights`` may be sharded, ``partition_strategy``);
3. ``true_logits[i, j] = inputs[i] . w[label[i, j]] + b[label[i, j]]`` and
   ``sampled_logits = inputs @ w[S]^T + b[S]``;
4. optionally push the *accidental hits* (a sampled class that is one of the
   row's true classes) to ``-FLT_MAX``;
5. subtract ``log Q`` (``subtract_log_q``): the logits then estimate those of
   the full model, whatever the sampling distribution;
6. concatenate: ``logits = [true_logits, sampled_logits]`` with labels
   ``[1 / num_true, ..., 0, ...]``.

:func:`nce_loss` (noise-contrastive estimation, Gutmann & Hyvarinen 2010)
then scores each logit as an independent logistic regression, true vs
noise; :func:`sampled_softmax_loss` (Jean et al. 2014) takes the softmax
cross-entropy over the ``num_true + num_sampled`` columns.  Gradients reach
``weights``, ``biases`` and ``inputs`` through the lookup and the products;
the sampler and the labels are constants for them.

Mirrors ``nce_loss``, ``sampled_softmax_loss`` and ``_compute_sampled_logits``
of ``tensorflow/python/ops/nn_impl.py``.  Use them for training only: to
evaluate, compute the full softmax.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, candidate_sampling_ops, joining_ops, linalg_ops, math_ops, slicing_ops,
    softmax_ops, sparse_ops, unary_ops)
from minitf.ops.nn_impl import embedding_lookup
from minitf.ops.op_def_library import graph_of
from minitf.ops.partitioned_variables import PartitionedVariable


def _sum_rows(x):
    """The sum of each row of the matrix ``x``, as ``x @ ones([cols, 1])``.

    TF's ``_sum_rows``: the gradient of a matmul is cheaper than that of
    ``reduce_sum(x, 1)`` (one matmul instead of a broadcast).
    """
    cols = array_ops.shape(x)[1]
    ones = array_ops.ones(joining_ops.stack([cols, 1]), x.dtype)
    return array_ops.reshape(linalg_ops.matmul(x, ones), [-1])


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, subtract_log_q=True,
                            remove_accidental_hits=False, partition_strategy="mod", name=None,
                            seed=None):
    """The logits and labels of the true and sampled classes (steps 1-6 of the module).

    Args:
        weights: ``[num_classes, dim]`` (a tensor or variable), or its shards:
            a list of them or a ``PartitionedVariable``.
        biases: ``[num_classes]``.
        labels: ``[batch_size, num_true]`` class ids (cast to int64).
        inputs: ``[batch_size, dim]`` activations.
        num_sampled: the number of classes to sample.
        num_classes: the number of classes.
        num_true: the number of true classes per example.
        sampled_values: a ``(sampled_candidates, true_expected_count,
            sampled_expected_count)`` triple from a sampler; None: a
            ``log_uniform_candidate_sampler`` with ``unique=True``.
        subtract_log_q: subtract the log of the expected counts.
        remove_accidental_hits: mask sampled classes that are true classes.
        partition_strategy: ``"mod"`` or ``"div"`` for sharded ``weights``.
        name: the name scope (default ``compute_sampled_logits``).
        seed: the sampler's seed.

    Returns:
        ``(out_logits, out_labels)``, both ``[batch_size, num_true + num_sampled]``.
    """
    if isinstance(weights, PartitionedVariable):
        weights = list(weights)
    if not isinstance(weights, list):
        weights = [weights]
    graph = graph_of(weights + [biases, inputs, labels])
    with graph.as_default(), graph.name_scope(name or "compute_sampled_logits"):
        inputs = convert_to_tensor(inputs, name="inputs")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype != dtypes.int64:
            labels = unary_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])

        # 1. The sampled classes and the expected counts: constants for the gradient.
        if sampled_values is None:
            sampled_values = candidate_sampling_ops.log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            array_ops.stop_gradient(s) for s in sampled_values)
        sampled = unary_ops.cast(sampled, dtypes.int64)

        # 2. One lookup for the rows of the true classes, then of the sampled ones.
        all_ids = joining_ops.concat([labels_flat, sampled], 0)
        num_labels = array_ops.shape(labels_flat)[0]
        all_w = _lookup(weights, all_ids, partition_strategy, inputs.dtype)
        true_w = slicing_ops.slice(all_w, [0, 0], joining_ops.stack([num_labels, -1]))
        sampled_w = slicing_ops.slice(all_w, joining_ops.stack([num_labels, 0]), [-1, -1])
        all_b = _lookup(biases, all_ids, partition_strategy, inputs.dtype)
        true_b = slicing_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = slicing_ops.slice(all_b, array_ops.shape(labels_flat), [-1])

        # 3. The logits: row-wise dot products for the true classes
        #    ([batch, num_true]), one matmul for the sampled ones ([batch, num_sampled]).
        sampled_logits = linalg_ops.matmul(inputs, sampled_w, transpose_b=True)
        dim = array_ops.shape(true_w)[1:2]
        new_true_w_shape = joining_ops.concat([[-1, num_true], dim], 0)
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1),
                                          array_ops.reshape(true_w, new_true_w_shape))
        dots_as_matrix = array_ops.reshape(row_wise_dots, joining_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = array_ops.reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b

        # 4. A sampled class that is a true class of its row is not a negative.
        if remove_accidental_hits:
            sampled_logits += _accidental_hits_mask(labels, sampled, num_true, num_sampled,
                                                    sampled_logits.dtype)

        # 5. Correct for the sampling distribution.
        if subtract_log_q:
            true_logits -= unary_ops.log(true_expected_count)
            sampled_logits -= unary_ops.log(sampled_expected_count)

        # 6. True columns first; the true labels share a probability mass of 1.
        out_logits = joining_ops.concat([true_logits, sampled_logits], 1)
        out_labels = joining_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                         array_ops.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def _lookup(params, ids, partition_strategy, dtype):
    """The rows of ``params`` at ``ids``, in ``dtype`` (the inputs' dtype)."""
    rows = embedding_lookup(params, ids, partition_strategy=partition_strategy)
    return rows if rows.dtype == dtype else unary_ops.cast(rows, dtype)


def _accidental_hits_mask(labels, sampled, num_true, num_sampled, dtype):
    """A ``[batch_size, num_sampled]`` tensor: ``-FLT_MAX`` at each accidental hit,
    0 elsewhere (TF's ``SparseToDense`` of :func:`compute_accidental_hits`)."""
    acc_indices, acc_ids, acc_weights = candidate_sampling_ops.compute_accidental_hits(
        labels, sampled, num_true=num_true)
    acc_indices_2d = array_ops.reshape(acc_indices, [-1, 1])
    acc_ids_2d_int32 = array_ops.reshape(unary_ops.cast(acc_ids, dtypes.int32), [-1, 1])
    sparse_indices = joining_ops.concat([acc_indices_2d, acc_ids_2d_int32], 1, "sparse_indices")
    sampled_logits_shape = joining_ops.concat(
        [array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0)
    if acc_weights.dtype != dtype:
        acc_weights = unary_ops.cast(acc_weights, dtype)
    return sparse_ops.sparse_to_dense(sparse_indices, sampled_logits_shape, acc_weights,
                                      default_value=0.0, validate_indices=False)


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """The noise-contrastive estimation loss of each example (``tf.nn.nce_loss``).

    Each of the ``num_true + num_sampled`` logits of
    :func:`_compute_sampled_logits` is a logistic regression — "is this class
    a true one or noise?" — with target ``1 / num_true`` for the true classes
    and 0 for the sampled ones; an example's loss is the sum of those
    sigmoid cross-entropies.  The loss word2vec trains with::

        loss = tf.reduce_mean(tf.nn.nce_loss(
            weights=nce_weights, biases=nce_biases, labels=train_labels,
            inputs=embed, num_sampled=64, num_classes=vocabulary_size))

    Args:
        weights: ``[num_classes, dim]`` output embeddings (or their shards, a
            list or a ``PartitionedVariable``).
        biases: ``[num_classes]``.
        labels: ``[batch_size, num_true]`` int64 (or int32) target classes.
        inputs: ``[batch_size, dim]`` the forward activations.
        num_sampled: the number of negative classes to sample per batch.
        num_classes: the number of classes.
        num_true: the number of target classes per example.
        sampled_values: a sampler's triple; None: ``log_uniform_candidate_sampler``
            with ``unique=True``, whose Zipf distribution suits vocabularies
            sorted by decreasing frequency.
        remove_accidental_hits: mask sampled classes equal to a true class
            (TF's default here is False).
        partition_strategy: ``"mod"`` or ``"div"``, for sharded ``weights``.
        name: the name scope.

    Returns:
        ``[batch_size]``: each example's NCE loss.
    """
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    sampled_losses = softmax_ops.sigmoid_cross_entropy_with_logits(
        labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """The softmax cross-entropy over the true and sampled classes (``tf.nn.sampled_softmax_loss``).

    A fast estimate of the full softmax loss for training (Jean et al. 2014):
    the softmax runs over the ``num_true + num_sampled`` logits of
    :func:`_compute_sampled_logits`, with the true classes sharing the target
    probability.  Arguments as for :func:`nce_loss`, except that accidental
    hits are removed by default, and ``seed`` seeds the default sampler.

    Returns:
        ``[batch_size]``: each example's sampled softmax loss.
    """
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
