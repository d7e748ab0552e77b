"""``tf.metrics``: streaming metrics, accumulated over many batches.

An evaluation rarely fits in one batch, so a TF1 metric is not a number but
a pair of tensors over *local* variables (``total``, ``count`` ...):

* ``update_op`` adds one batch's contribution to the variables (and
  returns the metric so far);
* ``value`` computes the metric from the variables, without changing them.

Run ``tf.local_variables_initializer()`` to start, ``update_op`` once per
batch, then read ``value``::

    acc, acc_update = tf.metrics.accuracy(labels, predictions)
    sess.run(tf.local_variables_initializer())
    for _ in range(num_batches):
        sess.run(acc_update)
    print(sess.run(acc))

The variables are in ``GraphKeys.LOCAL_VARIABLES`` (so a Saver does not
save them) and ``GraphKeys.METRIC_VARIABLES``, under the metric's variable
scope (``accuracy/total``, ``accuracy/count``).  This is what
``Estimator.evaluate`` runs: the ``eval_metric_ops`` of a model are such pairs.

Mirrors ``tensorflow/python/ops/metrics_impl.py`` (TF 1.x).
"""

from minitf.api_scopes import control_dependencies
from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, constant_op, math_ops, reduction_ops, select_ops, state_ops,
    unary_ops, variables)
from minitf.ops.variable_scope import variable_scope

_EPSILON = 1e-7  # TF's kepsilon: keeps the AUC thresholds just outside [0, 1]


# ---- the building blocks ------------------------------------------------------------------------
def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialised local variable for a metric's running state
    (``tf.metrics.metric_variable``)."""
    return variables.Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                              collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                              validate_shape=validate_shape, name=name)


def _safe_div(numerator, denominator, name):
    """``numerator / denominator``, or 0 where the denominator is 0 (no metric yet)."""
    positive = comparison_ops.greater(denominator, 0.0)
    safe_denominator = select_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return select_ops.where(positive, math_ops.truediv(numerator, safe_denominator),
                            array_ops.zeros_like(numerator), name=name)


def _add_to_collections(collections, value):
    for key in collections or ():
        get_default_graph().add_to_collection(key, value)


def _weighted(values, weights):
    """``(values * weights, weights broadcast to values)``, both float32."""
    values = unary_ops.cast(values, dtypes.float32)
    if weights is None:
        return values, array_ops.ones_like(values)
    weights = unary_ops.cast(weights, dtypes.float32) * array_ops.ones_like(values)
    return values * weights, weights


def _count(values, weights, name):
    """``(variable, update_op)``: the running sum of ``values * weights``
    (TF's ``_count_condition``; values are booleans cast to 0/1)."""
    weighted, _ = _weighted(values, weights)
    total = metric_variable([], dtypes.float32, name=name)
    return total, state_ops.assign_add(total, reduction_ops.reduce_sum(weighted))


def _remove_squeezable_dimensions(labels, predictions):
    """Drops a trailing size-1 axis from whichever of the two has rank one more."""
    labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
    labels_rank, predictions_rank = labels.shape.ndims, predictions.shape.ndims
    if labels_rank is not None and predictions_rank is not None:
        if labels_rank == predictions_rank + 1 and labels.shape[-1].value in (1, None):
            labels = array_ops.squeeze(labels, [-1])
        elif predictions_rank == labels_rank + 1 and predictions.shape[-1].value in (1, None):
            predictions = array_ops.squeeze(predictions, [-1])
    return labels, predictions


# ---- the metrics --------------------------------------------------------------------------------
def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of all ``values`` seen (``tf.metrics.mean``).

    Keeps ``total = sum(values * weights)`` and ``count = sum(weights)``.

    Args:
        values: a numeric tensor, any shape.
        weights: None, or a tensor broadcastable to ``values``.
        metrics_collections, updates_collections: collections to add
            ``value`` and ``update_op`` to.
        name: the variable scope (default ``mean``).

    Returns:
        ``(mean, update_op)``: float32 scalars; 0 before any update.
    """
    with variable_scope(name, default_name="mean"):
        values, weights = _weighted(values, weights)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        update_total_op = state_ops.assign_add(total, reduction_ops.reduce_sum(values))
        with control_dependencies([values]):
            update_count_op = state_ops.assign_add(count, reduction_ops.reduce_sum(weights))
        mean_t = _safe_div(total, count, "value")
        update_op = _safe_div(update_total_op, update_count_op, "update_op")
    _add_to_collections(metrics_collections, mean_t)
    _add_to_collections(updates_collections, update_op)
    return mean_t, update_op


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """How often ``predictions`` equals ``labels`` (``tf.metrics.accuracy``).

    Example:
        >>> acc, update = tf.metrics.accuracy(labels=[1, 2, 2], predictions=[1, 2, 0])
        >>> # after sess.run(update): acc == 2 / 3

    Returns:
        ``(accuracy, update_op)``, float32 scalars.

    Raises:
        ValueError: if the shapes of ``labels`` and ``predictions`` do not match.
    """
    labels, predictions = _remove_squeezable_dimensions(labels, predictions)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = unary_ops.cast(predictions, labels.dtype)
    is_correct = unary_ops.cast(comparison_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name=name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """The mean of ``(labels - predictions)^2`` (``tf.metrics.mean_squared_error``)."""
    labels, predictions = _remove_squeezable_dimensions(labels, predictions)
    squared_error = math_ops.squared_difference(unary_ops.cast(labels, dtypes.float32),
                                                unary_ops.cast(predictions, dtypes.float32))
    return mean(squared_error, weights, metrics_collections, updates_collections,
                name=name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The mean of ``|labels - predictions|`` (``tf.metrics.mean_absolute_error``)."""
    labels, predictions = _remove_squeezable_dimensions(labels, predictions)
    absolute_error = unary_ops.abs(unary_ops.cast(labels, dtypes.float32)
                                   - unary_ops.cast(predictions, dtypes.float32))
    return mean(absolute_error, weights, metrics_collections, updates_collections,
                name=name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The square root of :func:`mean_squared_error` (``tf.metrics.root_mean_squared_error``)."""
    with variable_scope(name, default_name="root_mean_squared_error"):
        mse, update_mse_op = mean_squared_error(labels, predictions, weights)
        rmse = unary_ops.sqrt(mse, name="value")
        update_op = unary_ops.sqrt(update_mse_op, name="update_op")
    _add_to_collections(metrics_collections, rmse)
    _add_to_collections(updates_collections, update_op)
    return rmse, update_op


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """``true_positives / (true_positives + false_positives)`` of boolean
    predictions (``tf.metrics.precision``); 0 when nothing was predicted positive."""
    return _ratio_of_counts(labels, predictions, weights, "false_positives", metrics_collections,
                            updates_collections, name or "precision")


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """``true_positives / (true_positives + false_negatives)`` of boolean
    predictions (``tf.metrics.recall``); 0 when no label was positive."""
    return _ratio_of_counts(labels, predictions, weights, "false_negatives", metrics_collections,
                            updates_collections, name or "recall")


def _ratio_of_counts(labels, predictions, weights, other, metrics_collections,
                     updates_collections, name):
    """``tp / (tp + other)`` for precision (``other``: false positives) and recall."""
    with variable_scope(name):
        labels, predictions = _remove_squeezable_dimensions(labels, predictions)
        labels = unary_ops.cast(labels, dtypes.bool)
        predictions = unary_ops.cast(predictions, dtypes.bool)
        with variable_scope("true_positives"):
            tp, update_tp = _count(comparison_ops.logical_and(labels, predictions), weights,
                                   "count")
        if other == "false_positives":
            is_other = comparison_ops.logical_and(comparison_ops.logical_not(labels), predictions)
        else:
            is_other = comparison_ops.logical_and(labels, comparison_ops.logical_not(predictions))
        with variable_scope(other):
            fp_or_fn, update_other = _count(is_other, weights, "count")
        value = _safe_div(tp, tp + fp_or_fn, "value")
        update_op = _safe_div(update_tp, update_tp + update_other, "update_op")
    _add_to_collections(metrics_collections, value)
    _add_to_collections(updates_collections, update_op)
    return value, update_op


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal"):
    """The area under the ROC or precision-recall curve (``tf.metrics.auc``).

    ``num_thresholds`` evenly spaced thresholds in [0, 1] (the first just
    below 0, the last just above 1) each turn the probabilities
    ``predictions`` into a yes/no; four ``[num_thresholds]`` variables count
    the true/false positives/negatives at each, and the value is the
    trapezoidal Riemann sum over the resulting curve.

    Args:
        labels: booleans (or 0/1), the true classes.
        predictions: floats in [0, 1], the predicted probability of True.
        curve: ``"ROC"`` (true positive rate against false positive rate) or
            ``"PR"`` (precision against recall).
        summation_method: ``"trapezoidal"``; TF's ``"careful_interpolation"``
            for PR curves is not implemented and falls back to it.

    Returns:
        ``(auc, update_op)``.

    Raises:
        ValueError: for an unknown ``curve`` or ``num_thresholds`` < 2.
    """
    del summation_method
    if curve not in ("ROC", "PR"):
        raise ValueError("curve must be either ROC or PR, %s unknown" % (curve,))
    if num_thresholds < 2:
        raise ValueError("num_thresholds must be > 1.")
    with variable_scope(name, default_name="auc"):
        labels, predictions = _remove_squeezable_dimensions(labels, predictions)
        thresholds = ([0.0 - _EPSILON]
                      + [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
                      + [1.0 + _EPSILON])
        # [num_thresholds, batch]: is each example predicted positive at each threshold?
        flat_predictions = array_ops.reshape(unary_ops.cast(predictions, dtypes.float32), [1, -1])
        flat_labels = array_ops.reshape(unary_ops.cast(labels, dtypes.bool), [1, -1])
        above = comparison_ops.greater(
            flat_predictions, array_ops.reshape(constant_op.constant(thresholds), [-1, 1]))
        below = comparison_ops.logical_not(above)
        negative = comparison_ops.logical_not(flat_labels)
        flat_weights = (1.0 if weights is None
                        else array_ops.reshape(unary_ops.cast(weights, dtypes.float32), [1, -1]))
        counts, updates = {}, {}
        for key, condition in (("true_positives", comparison_ops.logical_and(flat_labels, above)),
                               ("false_negatives", comparison_ops.logical_and(flat_labels, below)),
                               ("true_negatives", comparison_ops.logical_and(negative, below)),
                               ("false_positives", comparison_ops.logical_and(negative, above))):
            counts[key] = metric_variable([num_thresholds], dtypes.float32, name=key)
            batch_counts = reduction_ops.reduce_sum(
                unary_ops.cast(condition, dtypes.float32) * flat_weights, 1)
            updates[key] = state_ops.assign_add(counts[key], batch_counts)
        value = _area_under_curve(counts, curve, "value")
        update_op = _area_under_curve(updates, curve, "update_op")
    _add_to_collections(metrics_collections, value)
    _add_to_collections(updates_collections, update_op)
    return value, update_op


def _area_under_curve(counts, curve, name):
    """The trapezoidal sum over the curve the per-threshold ``counts`` trace."""
    tp, fn = counts["true_positives"], counts["false_negatives"]
    tn, fp = counts["true_negatives"], counts["false_positives"]
    recall_t = math_ops.truediv(tp + _EPSILON, tp + fn + _EPSILON)
    if curve == "ROC":
        x = math_ops.truediv(fp, fp + tn + _EPSILON)
        y = recall_t
    else:
        x = recall_t
        y = math_ops.truediv(tp + _EPSILON, tp + fp + _EPSILON)
    return reduction_ops.reduce_sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2.0, name=name)
