"""What a model function returns: ``tf.estimator.EstimatorSpec`` and ``ModeKeys``.

An Estimator is written as one function, ``model_fn(features, labels, mode,
params, config)``, that builds the model's graph for one of three *modes*
and says what to run in it:

=====================  ===========================================================
``ModeKeys.TRAIN``     ``loss`` and the ``train_op`` that minimises it
``ModeKeys.EVAL``      ``loss`` and ``eval_metric_ops`` (``tf.metrics`` pairs)
``ModeKeys.PREDICT``   ``predictions``: a tensor or a dict of tensors
=====================  ===========================================================

Example:
    >>> def model_fn(features, labels, mode):
    ...     y = tf.layers.dense(features["x"], 1)
    ...     if mode == tf.estimator.ModeKeys.PREDICT:
    ...         return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    ...     loss = tf.reduce_mean(tf.square(y - labels))
    ...     train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
    ...         loss, global_step=tf.train.get_global_step())
    ...     return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

The Estimator (:mod:`minitf.estimator.estimator`) calls the function in a
fresh graph for each ``train``, ``evaluate`` and ``predict``.

Mirrors ``tensorflow_estimator/python/estimator/model_fn.py`` (TF 1.x).
"""

import collections

from minitf.framework.graph import get_default_graph
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.ops import array_ops
from minitf.ops.variables import Variable
from minitf.train.monitored_session import Scaffold
from minitf.train.session_run_hook import SessionRunHook


class ModeKeys:
    """The three modes a ``model_fn`` is called in (``tf.estimator.ModeKeys``)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


LOSS_METRIC_KEY = "loss"  # evaluate() adds the mean of the loss under this key
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class EstimatorSpec(collections.namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
        "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
        "prediction_hooks"])):
    """The ops a ``model_fn`` built, checked for its mode (``tf.estimator.EstimatorSpec``).

    Args:
        mode: a :class:`ModeKeys` value.
        predictions: a tensor or dict of tensors; required in PREDICT.
        loss: a scalar tensor (a ``[1]`` tensor is reshaped); required in
            TRAIN and EVAL.
        train_op: the op (or tensor) one training step runs; required in TRAIN.
        eval_metric_ops: ``{name: (value, update_op)}``, e.g. from ``tf.metrics``.
        export_outputs: kept for TF's signature (minitf exports no SavedModel).
        scaffold: a ``tf.train.Scaffold`` for the monitored session (default:
            a new one, which makes the init ops and the Saver).
        training_chief_hooks: ``tf.train.SessionRunHook`` objects ``train`` runs on the chief.
        training_hooks: hooks ``train`` runs (on every worker).
        evaluation_hooks: hooks ``evaluate`` runs.
        prediction_hooks: hooks ``predict`` runs.

    Raises:
        ValueError: if a field the mode needs is missing, the loss is not a
            scalar, or a tensor is from another graph.
        TypeError: if a field has the wrong type, e.g. a hook is not a
            ``SessionRunHook``.
    """

    __slots__ = ()

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError("mode must be one of %s, given: %r"
                             % ((ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT), mode))
        train_op = _validate_train_op(train_op, mode)
        loss = _validate_loss(loss, mode)
        predictions = _validate_predictions(predictions, mode)
        eval_metric_ops = _validate_eval_metric_ops(eval_metric_ops)
        hooks = [_validate_hooks(h) for h in (training_chief_hooks, training_hooks,
                                               evaluation_hooks, prediction_hooks)]
        scaffold = scaffold or Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError("scaffold must be tf.train.Scaffold. Given: %s" % (scaffold,))
        _check_same_graph(loss, train_op, predictions, eval_metric_ops)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs or {}, hooks[0], hooks[1], scaffold, hooks[2],
                               hooks[3])


def _validate_hooks(hooks):
    """``hooks`` as a tuple, each checked to be a ``SessionRunHook``."""
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError("All hooks must be SessionRunHook instances, given: %s" % (hook,))
    return hooks


def _validate_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if not isinstance(train_op, (Operation, Tensor)):
        raise TypeError("train_op must be Operation or Tensor, given: %s" % (train_op,))
    return train_op


def _validate_loss(loss, mode):
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    if isinstance(loss, Variable) or not isinstance(loss, Tensor):
        raise TypeError("loss must be Tensor, given: %s" % (loss,))
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError("Loss must be scalar, given: %s" % (loss,))
    if loss.shape.ndims != 0:
        loss = array_ops.reshape(loss, [])
    return loss


def _validate_predictions(predictions, mode):
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        for key, value in predictions.items():
            if not isinstance(value, Tensor):
                raise TypeError("predictions[%s] must be Tensor, given: %s" % (key, value))
    elif not isinstance(predictions, Tensor):
        raise TypeError("predictions must be Tensor or dict of Tensor, given: %s"
                        % (predictions,))
    return predictions


def _validate_eval_metric_ops(eval_metric_ops):
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError("eval_metric_ops must be a dict, given: %s" % (eval_metric_ops,))
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) "
                            "tuples, given: %s for key: %s" % (value, key))
    return dict(eval_metric_ops)


def _check_same_graph(loss, train_op, predictions, eval_metric_ops):
    """Every tensor of the spec must be in the default graph, the one the
    Estimator built for this call."""
    graph = get_default_graph()
    named = [("loss", loss), ("train_op", train_op)]
    if isinstance(predictions, dict):
        named += [("predictions[%s]" % k, v) for k, v in predictions.items()]
    else:
        named.append(("predictions", predictions))
    for key, (value, update) in eval_metric_ops.items():
        named += [("eval_metric_ops[%s]" % key, value), ("eval_metric_ops[%s]" % key, update)]
    for field, value in named:
        if value is not None and getattr(value, "graph", graph) is not graph:
            raise ValueError("%s with %s must be from the default graph. Possible causes of this "
                             "error include: a tensor built outside model_fn (model_fn is "
                             "called in a new graph for every train/evaluate/predict)."
                             % (field, value))
