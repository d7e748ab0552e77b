"""Heads: the part of a canned estimator after the logits.

A DNN and a linear model differ only in how they compute *logits*; what
follows is the same and depends only on the task.  That shared part is the
*head*: it turns logits into predictions, labels and logits into a loss,
builds the train op and the evaluation metrics, and wraps them all in an
:class:`~minitf.estimator.model_fn.EstimatorSpec`.

=====================================  ===================  ======================================
head                                   logits               loss per example
=====================================  ===================  ======================================
multi-class (``n_classes`` > 2)        ``[batch, n]``       softmax cross-entropy
binary (``n_classes`` = 2)             ``[batch, 1]``       sigmoid cross-entropy
regression (``label_dimension`` = d)   ``[batch, d]``       squared error, summed over ``d``
=====================================  ===================  ======================================

The per-example losses are reduced to the training loss by
``loss_reduction``: TF1's canned estimators default to ``"weighted_sum"``, the
*sum* over the batch, so the step size grows with the batch size.
``evaluate`` reports ``average_loss`` (the mean per example) and ``loss``
(the mean over batches of the training loss).

Mirrors ``tensorflow_estimator/python/estimator/canned/head.py`` (TF 1.x).
"""

from minitf import metrics
from minitf.api_scopes import name_scope
from minitf.estimator.model_fn import EstimatorSpec, ModeKeys
from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, constant_op, gather_ops, joining_ops, math_ops, padding_ops,
    reduction_ops, select_ops, softmax_ops, unary_ops)
from minitf.train import training_util

# tf.losses.Reduction's values, the ones a canned head accepts.
SUM = "weighted_sum"
SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
MEAN = "weighted_mean"
SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
_REDUCTIONS = (SUM, SUM_OVER_BATCH_SIZE, MEAN, SUM_BY_NONZERO_WEIGHTS)


# ---- what every head does -----------------------------------------------------------------------
class _Head:
    """Builds the EstimatorSpec from logits; subclasses say how for their task.

    Args:
        weight_column: None, a feature key, or a ``numeric_column``: the
            per-example weight of the loss and metrics.
        loss_reduction: how per-example losses become the training loss.
    """

    logits_dimension = None

    def __init__(self, weight_column=None, loss_reduction=SUM):
        if loss_reduction not in _REDUCTIONS:
            raise ValueError("Invalid loss_reduction: %s" % (loss_reduction,))
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None):
        """The EstimatorSpec of ``mode``; ``optimizer`` minimises the loss in TRAIN.

        Raises:
            ValueError: if labels are missing in TRAIN or EVAL, or do not fit the logits.
        """
        with name_scope("head"):
            logits = self._check_logits(logits)
            predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions)
            if labels is None:
                raise ValueError("You must provide a labels Tensor. Given: None. Suggested Fix: "
                                 "check that your call to train/evaluate returns labels.")
            labels = self._processed_labels(labels, logits)
            weights = self._weights(features, logits)
            unreduced_loss = self._unreduced_loss(labels, logits)
            training_loss = self._reduce(unreduced_loss, weights)
            if mode == ModeKeys.EVAL:
                with name_scope("metrics"):
                    eval_metric_ops = self._eval_metric_ops(labels, predictions, unreduced_loss,
                                                            weights)
                return EstimatorSpec(mode, predictions=predictions, loss=training_loss,
                                     eval_metric_ops=eval_metric_ops)
        train_op = optimizer.minimize(training_loss, global_step=training_util.get_global_step())
        return EstimatorSpec(mode, predictions=predictions, loss=training_loss, train_op=train_op)

    def _check_logits(self, logits):
        logits = convert_to_tensor(logits)
        last = logits.shape[-1].value if logits.shape.ndims else None
        if logits.shape.ndims != 2 or last not in (None, self.logits_dimension):
            raise ValueError("logits shape must be [D0, %d], got %s."
                             % (self.logits_dimension, logits.shape))
        return logits

    def _dense_labels(self, labels, logits, expected_dimension):
        """Labels as ``[batch, expected_dimension]``: a ``[batch]`` vector gains an axis."""
        labels = convert_to_tensor(labels)
        if labels.shape.ndims == 1:
            labels = array_ops.expand_dims(labels, -1)
        last = labels.shape[-1].value if labels.shape.ndims else None
        if labels.shape.ndims != 2 or last not in (None, expected_dimension):
            raise ValueError("Mismatched label shape. Expected labels dimension=%d.  Received "
                             "%s. Suggested Fix: check your n_classes or label_dimension argument "
                             "to the estimator and/or the shape of your label."
                             % (expected_dimension, labels.shape))
        labels.shape.merge_with(logits.shape[:1].concatenate([expected_dimension]))
        return labels

    def _weights(self, features, logits):
        """The per-example weights ``[batch, 1]``, or the scalar 1.0."""
        if self._weight_column is None:
            return 1.0
        key = getattr(self._weight_column, "key", self._weight_column)
        if key not in features:
            raise ValueError("Weight column %s is not in features dictionary." % (key,))
        weights = unary_ops.cast(features[key], dtypes.float32)
        if weights.shape.ndims == 1:
            weights = array_ops.expand_dims(weights, -1)
        return weights

    def _reduce(self, unreduced_loss, weights):
        """The training loss: the per-example losses reduced by ``loss_reduction``
        (``tf.losses.compute_weighted_loss``)."""
        weighted = unreduced_loss * weights
        total = reduction_ops.reduce_sum(weighted)
        if self._loss_reduction == SUM:
            return total
        broadcast_weights = array_ops.ones_like(unreduced_loss) * weights
        if self._loss_reduction == SUM_OVER_BATCH_SIZE:
            count = unary_ops.cast(array_ops.size(unreduced_loss), dtypes.float32)
        elif self._loss_reduction == MEAN:
            count = reduction_ops.reduce_sum(broadcast_weights)
        else:
            count = reduction_ops.reduce_sum(unary_ops.cast(
                comparison_ops.not_equal(broadcast_weights, 0.0), dtypes.float32))
        return select_ops.where(comparison_ops.greater(count, 0.0),
                                total / math_ops.maximum(count, 1e-12), 0.0 * total)

    def _metric_weights(self, weights):
        return None if self._weight_column is None else weights


def _class_strings(class_ids, n_classes, name):
    """The class ids as strings, ``b"0"``, ``b"1"`` ... (TF's ``tf.as_string``)."""
    names = constant_op.constant([str(i).encode() for i in range(n_classes)])
    return gather_ops.gather(names, class_ids, name=name)


def _all_class_ids(logits, n_classes):
    """``[batch, n_classes]``: each row ``0 .. n_classes - 1``."""
    row = math_ops.range(n_classes, dtype=dtypes.int32)
    return padding_ops.tile(array_ops.expand_dims(row, 0),
                            joining_ops.stack([array_ops.shape(logits)[0], 1]))


# ---- classification -----------------------------------------------------------------------------
class MultiClassHead(_Head):
    """Softmax over ``n_classes`` logits (TF's ``_MultiClassHeadWithSoftmaxCrossEntropyLoss``).

    Predictions: ``logits``, ``probabilities`` (softmax), ``class_ids``
    (``[batch, 1]`` int64, the argmax), ``classes`` (the ids as strings),
    ``all_class_ids`` and ``all_classes``.  Metrics: ``accuracy``, ``average_loss``.

    Raises:
        ValueError: if ``n_classes`` <= 2 (use :class:`BinaryClassHead`).
    """

    def __init__(self, n_classes, weight_column=None, loss_reduction=SUM):
        if n_classes is None or n_classes <= 2:
            raise ValueError("n_classes must be > 2: %s." % (n_classes,))
        super().__init__(weight_column, loss_reduction)
        self.n_classes = n_classes
        self.logits_dimension = n_classes

    def _predictions(self, logits):
        with name_scope("predictions"):
            class_ids = array_ops.expand_dims(reduction_ops.argmax(logits, axis=1), -1,
                                              name="class_ids")
            all_class_ids = _all_class_ids(logits, self.n_classes)
            return {
                "logits": logits,
                "probabilities": softmax_ops.softmax(logits, name="probabilities"),
                "class_ids": class_ids,
                "classes": _class_strings(class_ids, self.n_classes, "str_classes"),
                "all_class_ids": all_class_ids,
                "all_classes": _class_strings(all_class_ids, self.n_classes, "all_classes"),
            }

    def _processed_labels(self, labels, logits):
        labels = self._dense_labels(labels, logits, 1)
        if not labels.dtype.is_integer:
            raise ValueError("Labels dtype should be integer. Instead got %s." % labels.dtype)
        return labels

    def _unreduced_loss(self, labels, logits):
        loss = softmax_ops.sparse_softmax_cross_entropy_with_logits(
            labels=array_ops.squeeze(labels, axis=[1]), logits=logits)
        return array_ops.expand_dims(loss, -1)

    def _eval_metric_ops(self, labels, predictions, unreduced_loss, weights):
        weights = self._metric_weights(weights)
        return {
            "accuracy": metrics.accuracy(labels=labels, predictions=predictions["class_ids"],
                                         weights=weights, name="accuracy"),
            "average_loss": metrics.mean(unreduced_loss, weights=weights, name="average_loss"),
        }


class BinaryClassHead(_Head):
    """One logit, the log-odds of class 1 (TF's ``_BinaryLogisticHeadWithSigmoidCrossEntropyLoss``).

    Predictions: ``logits`` ``[batch, 1]``, ``logistic`` (the sigmoid),
    ``probabilities`` ``[batch, 2]``, ``class_ids``, ``classes``,
    ``all_class_ids``, ``all_classes``.  Metrics: ``accuracy``,
    ``accuracy_baseline``, ``auc``, ``auc_precision_recall``,
    ``average_loss``, ``label/mean``, ``prediction/mean``, ``precision``, ``recall``.
    """

    logits_dimension = 1

    def _predictions(self, logits):
        with name_scope("predictions"):
            two_class_logits = joining_ops.concat([array_ops.zeros_like(logits), logits], 1,
                                                  name="two_class_logits")
            class_ids = array_ops.expand_dims(reduction_ops.argmax(two_class_logits, axis=1), -1,
                                              name="class_ids")
            all_class_ids = _all_class_ids(logits, 2)
            return {
                "logits": logits,
                "logistic": unary_ops.sigmoid(logits, name="logistic"),
                "probabilities": softmax_ops.softmax(two_class_logits, name="probabilities"),
                "class_ids": class_ids,
                "classes": _class_strings(class_ids, 2, "str_classes"),
                "all_class_ids": all_class_ids,
                "all_classes": _class_strings(all_class_ids, 2, "all_classes"),
            }

    def _processed_labels(self, labels, logits):
        labels = self._dense_labels(labels, logits, 1)
        if not labels.dtype.is_integer:
            raise ValueError("Labels dtype should be integer. Instead got %s." % labels.dtype)
        return labels

    def _unreduced_loss(self, labels, logits):
        return softmax_ops.sigmoid_cross_entropy_with_logits(
            labels=unary_ops.cast(labels, dtypes.float32), logits=logits)

    def _eval_metric_ops(self, labels, predictions, unreduced_loss, weights):
        weights = self._metric_weights(weights)
        logistic = predictions["logistic"]
        label_mean = metrics.mean(labels, weights=weights, name="label/mean")
        # Always guessing the more common class scores max(p, 1 - p).
        baseline = tuple(math_ops.maximum(mean_t, 1.0 - mean_t, name="accuracy_baseline")
                         for mean_t in label_mean)
        return {
            "accuracy": metrics.accuracy(labels=labels, predictions=predictions["class_ids"],
                                         weights=weights, name="accuracy"),
            "average_loss": metrics.mean(unreduced_loss, weights=weights, name="average_loss"),
            "prediction/mean": metrics.mean(logistic, weights=weights, name="prediction/mean"),
            "label/mean": label_mean,
            "accuracy_baseline": baseline,
            "auc": metrics.auc(labels, logistic, weights=weights, name="auc"),
            "auc_precision_recall": metrics.auc(labels, logistic, weights=weights, curve="PR",
                                                name="auc_precision_recall"),
            "precision": metrics.precision(labels, predictions["class_ids"], weights=weights,
                                           name="precision"),
            "recall": metrics.recall(labels, predictions["class_ids"], weights=weights,
                                     name="recall"),
        }


# ---- regression ---------------------------------------------------------------------------------
class RegressionHead(_Head):
    """Real-valued outputs, squared-error loss (TF's ``_RegressionHeadWithMeanSquaredErrorLoss``).

    Predictions: ``predictions`` ``[batch, label_dimension]`` (the logits
    themselves).  Metrics: ``average_loss``, ``label/mean``, ``prediction/mean``.

    Raises:
        ValueError: if ``label_dimension`` < 1.
    """

    def __init__(self, label_dimension=1, weight_column=None, loss_reduction=SUM):
        if label_dimension < 1:
            raise ValueError("Invalid label_dimension %s." % (label_dimension,))
        super().__init__(weight_column, loss_reduction)
        self.logits_dimension = label_dimension

    def _predictions(self, logits):
        with name_scope("predictions"):
            return {"predictions": array_ops.identity(logits, name="predictions")}

    def _processed_labels(self, labels, logits):
        return unary_ops.cast(self._dense_labels(labels, logits, self.logits_dimension),
                              dtypes.float32)

    def _unreduced_loss(self, labels, logits):
        return math_ops.squared_difference(labels, logits)

    def _eval_metric_ops(self, labels, predictions, unreduced_loss, weights):
        weights = self._metric_weights(weights)
        return {
            "average_loss": metrics.mean(unreduced_loss, weights=weights, name="average_loss"),
            "label/mean": metrics.mean(labels, weights=weights, name="label/mean"),
            "prediction/mean": metrics.mean(predictions["predictions"], weights=weights,
                                            name="prediction/mean"),
        }


def binary_or_multi_class_head(n_classes, weight_column=None, loss_reduction=SUM):
    """The head of a classifier with ``n_classes``
    (TF's ``_binary_logistic_or_multi_class_head``)."""
    if n_classes == 2:
        return BinaryClassHead(weight_column, loss_reduction)
    return MultiClassHead(n_classes, weight_column, loss_reduction)
