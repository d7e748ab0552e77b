"""``tf.contrib.seq2seq.sequence_loss``: the weighted cross-entropy of a batch of sequences.

The loss of language models and sequence-to-sequence tutorials: ``logits``
``[batch, time, classes]``, integer ``targets`` ``[batch, time]`` and
``weights`` ``[batch, time]`` (1 for real steps, 0 for padding).  Each step's
sparse softmax cross-entropy is multiplied by its weight, then averaged —
over everything by default, divided by the sum of the weights — or summed
over the axes asked for.

Mirrors ``tensorflow/contrib/seq2seq/python/ops/loss.py`` (TF 1.15).
"""

from minitf.api_scopes import name_scope
from minitf.contrib.framework import missing
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, comparison_ops, reduction_ops, select_ops, unary_ops
from minitf.ops.softmax_ops import sparse_softmax_cross_entropy_with_logits


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """The weighted cross-entropy of sequences (``tf.contrib.seq2seq.sequence_loss``).

    Args:
        logits: ``[batch, time, classes]`` unscaled scores.
        targets: ``[batch, time]`` int class indices.
        weights: ``[batch, time]`` floats.
        average_across_timesteps, average_across_batch: divide the summed loss
            over that axis by the sum of the weights over it.
        sum_over_timesteps, sum_over_batch: divide it by the number of
            non-zero weights over it instead.
        softmax_loss_function: ``fn(labels=, logits=)`` replacing the sparse
            softmax cross-entropy.
        name: the name scope (default ``sequence_loss``).

    Returns:
        A scalar when both axes are reduced, ``[time]`` or ``[batch]`` when
        one is, else ``[batch, time]``.

    Raises:
        ValueError: for arguments of the wrong rank, or averaging and summing
            over the same axis.
    """
    logits, targets, weights = (convert_to_tensor(t) for t in (logits, targets, weights))
    if logits.shape.ndims != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if targets.shape.ndims != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if weights.shape.ndims != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True "
                         "at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same "
                         "time.")
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        logits_flat = array_ops.reshape(logits, [-1, array_ops.shape(logits)[2]])
        flat_targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=flat_targets,
                                                                logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=logits_flat)
        crossent = crossent * array_ops.reshape(weights, [-1])
        if (average_across_timesteps and average_across_batch) or \
                (sum_over_timesteps and sum_over_batch):
            return _reduce(crossent, weights, None, average_across_batch)
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            return _reduce(crossent, weights, [0] if average_across_batch else [1], True)
        if sum_over_timesteps or sum_over_batch:
            return _reduce(crossent, weights, [0] if sum_over_batch else [1], False)
        return crossent


def _reduce(crossent, weights, axis, average):
    """The loss summed over ``axis``, divided by the weights' sum (``average``) or count."""
    total = reduction_ops.reduce_sum(crossent, axis=axis)
    if average:
        size = reduction_ops.reduce_sum(weights, axis=axis)
    else:
        size = unary_ops.cast(reduction_ops.count_nonzero(weights, axis=axis), crossent.dtype)
    return _div_no_nan(total, size)


def _div_no_nan(numerator, denominator):
    """``numerator / denominator``, 0 where the denominator is 0 (TF's ``div_no_nan``)."""
    zero = comparison_ops.equal(denominator, 0.0)
    safe = select_ops.where(zero, array_ops.ones_like(denominator), denominator)
    return select_ops.where(zero, array_ops.zeros_like(numerator), numerator / safe)


def __getattr__(name):
    raise missing("tf.contrib.seq2seq", name)


__all__ = ["sequence_loss"]
