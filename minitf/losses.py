"""``tf.losses``: the usual training losses, weighted, reduced and collected.

Every loss here is built the same way, from ordinary ops (as a user would,
against the public ``tf.*`` API):

1. a name scope (``mean_squared_error/``) and the per-element losses
   (``squared_difference(predictions, labels)``);
2. :func:`compute_weighted_loss`: multiply by ``weights`` (a scalar, or a
   tensor that broadcasts to the losses) and reduce — by default
   ``SUM_BY_NONZERO_WEIGHTS``, the weighted sum divided by the number of
   elements whose weight is not zero, so ``weights=1.0`` gives the mean;
3. the result (``mean_squared_error/value``) is added to the
   ``tf.GraphKeys.LOSSES`` collection, so that :func:`get_total_loss` can add
   every loss and every regularization loss of the model::

       tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
       total = tf.losses.get_total_loss()      # + tf.losses.get_regularization_loss()
       train_op = tf.train.AdamOptimizer().minimize(total)

Mirrors ``tensorflow/python/ops/losses/losses_impl.py`` and ``util.py``.
"""

from minitf.api_scopes import add_to_collection, get_collection, name_scope
from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, constant_op, math_ops, nn_ops, reduction_ops, select_ops,
    softmax_ops, unary_ops)


class Reduction:
    """How :func:`compute_weighted_loss` reduces the weighted losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key %s." % key)


# ---- collections ---------------------------------------------------------------------------------
def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds ``loss`` to ``loss_collection`` (nothing when it is None)."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    """The losses in ``loss_collection`` whose names match ``scope``."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The regularization losses (``get_variable(regularizer=...)``, layers' regularizers)."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant_op.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the ``LOSSES`` collection, plus the regularization losses.

    Raises:
        ValueError: if there are no losses at all.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found: add some with tf.losses.* or tf.losses.add_loss.")
    return math_ops.add_n(losses, name=name)


# ---- weighting and reducing --------------------------------------------------------------------
def _safe_div(numerator, denominator, name):
    """``numerator / denominator``, 0 where the denominator is 0 (TF's ``div_no_nan``)."""
    positive = comparison_ops.greater(denominator, 0.0)
    safe = select_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return select_ops.where(positive, numerator / safe, array_ops.zeros_like(numerator), name=name)


def _num_present(losses, weights):
    """How many elements of ``losses`` have a non-zero weight (weights broadcast)."""
    with name_scope("num_present") as scope:
        present = select_ops.where(comparison_ops.equal(weights, 0.0),
                                   array_ops.zeros_like(weights), array_ops.ones_like(weights))
        present = present * array_ops.ones_like(losses)
        return reduction_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Weights ``losses``, reduces them per ``reduction`` and adds the result to a collection.

    Args:
        losses: the per-element losses.
        weights: a scalar or a tensor broadcastable to ``losses``.
        scope: the name scope (the calling loss's).
        loss_collection: where the loss goes (default ``tf.GraphKeys.LOSSES``).
        reduction: a :class:`Reduction`.

    Returns:
        The loss, of ``losses``'s dtype: a scalar unless ``reduction`` is ``NONE``.
    """
    Reduction.validate(reduction)
    with name_scope(scope or "weighted_loss"):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = unary_ops.cast(losses, dtypes.float32)
        weights = unary_ops.cast(weights, dtypes.float32)
        weighted_losses = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted_losses
        else:
            loss = reduction_ops.reduce_sum(weighted_losses)
            if reduction == Reduction.MEAN:
                loss = _safe_div(
                    loss, reduction_ops.reduce_sum(array_ops.ones_like(losses) * weights), "value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, weights), "value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(
                    loss, unary_ops.cast(array_ops.size(losses), dtypes.float32), "value")
        loss = unary_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _as_float(labels, predictions):
    predictions = unary_ops.cast(predictions, dtypes.float32)
    labels = unary_ops.cast(labels, dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


# ---- the losses --------------------------------------------------------------------------------
def mean_squared_error(labels, predictions, weights=1.0, scope=None,
                       loss_collection=GraphKeys.LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The (weighted) mean of ``(predictions - labels) ** 2``.

    Raises:
        ValueError: if the shapes of ``labels`` and ``predictions`` are incompatible.
    """
    with name_scope(scope or "mean_squared_error") as scope:
        labels, predictions = _as_float(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None,
                        loss_collection=GraphKeys.LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The (weighted) mean of ``|predictions - labels|``."""
    with name_scope(scope or "absolute_difference") as scope:
        labels, predictions = _as_float(labels, predictions)
        losses = unary_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Quadratic for errors up to ``delta``, linear beyond: ``0.5 q**2 + delta (|e| - q)``."""
    with name_scope(scope or "huber_loss") as scope:
        labels, predictions = _as_float(labels, predictions)
        abs_error = unary_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = 0.5 * quadratic * quadratic + delta * linear
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Binary cross-entropy of probabilities: ``-y log(p + eps) - (1 - y) log(1 - p + eps)``."""
    with name_scope(scope or "log_loss") as scope:
        labels, predictions = _as_float(labels, predictions)
        losses = (-math_ops.multiply(labels, unary_ops.log(predictions + epsilon))
                  - math_ops.multiply(1.0 - labels, unary_ops.log(1.0 - predictions + epsilon)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``max(0, 1 - (2 labels - 1) * logits)`` for 0/1 ``labels``."""
    with name_scope(scope or "hinge_loss") as scope:
        labels, logits = _as_float(labels, logits)
        signs = 2.0 * labels - 1.0
        losses = nn_ops.relu(1.0 - signs * logits)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
                    dim=None):
    """``1 - sum(labels * predictions, axis)`` for unit-normalized inputs.

    Raises:
        ValueError: if ``axis`` (or its old name ``dim``) is not given.
    """
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope or "cosine_distance_loss") as scope:
        labels, predictions = _as_float(labels, predictions)
        losses = 1.0 - reduction_ops.reduce_sum(predictions * labels, axis=axis, keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Per-class logistic loss of ``logits``; smoothing moves labels toward 1/2."""
    with name_scope(scope or "sigmoid_cross_entropy_loss") as scope:
        logits = convert_to_tensor(logits)
        labels = unary_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = softmax_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                               name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of ``softmax(logits)`` against one-hot labels, one loss per row.

    ``label_smoothing`` mixes the labels with the uniform distribution:
    ``labels * (1 - s) + s / num_classes``.  The labels get no gradient.
    """
    with name_scope(scope or "softmax_cross_entropy_loss") as scope:
        logits = convert_to_tensor(logits)
        labels = unary_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = unary_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            labels = labels * (1 - label_smoothing) + label_smoothing / num_classes
        losses = softmax_ops.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels), logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of ``softmax(logits)`` against integer class ``labels``."""
    with name_scope(scope or "sparse_softmax_cross_entropy_loss") as scope:
        losses = softmax_ops.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


__all__ = ["Reduction", "absolute_difference", "add_loss", "compute_weighted_loss",
           "cosine_distance", "get_losses", "get_regularization_loss",
           "get_regularization_losses", "get_total_loss", "hinge_loss", "huber_loss", "log_loss",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy"]
