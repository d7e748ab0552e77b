"""``tf.estimator.DNNClassifier`` and ``DNNRegressor``: feed-forward networks, ready-made.

The model function is three steps, each in its own variable scope under ``dnn``:

1. ``dnn/input_from_feature_columns``: the feature columns become one
   ``[batch, n]`` tensor (``tf.feature_column.input_layer``);
2. ``dnn/hiddenlayer_<i>``: one ``tf.layers.dense`` per entry of
   ``hidden_units``, with ``activation_fn`` and, in training, dropout;
3. ``dnn/logits``: a dense layer without activation, as wide as the head
   needs (``n_classes``, 1 for two classes, or ``label_dimension``).

The head (:mod:`minitf.estimator.head`) does the rest: loss, predictions,
metrics, and the optimizer's train op.  Weights start Glorot-uniform,
biases at zero, and the default optimizer is ``Adagrad`` with learning rate
0.05 — all as in TF1, so a checkpoint's variable names
(``dnn/hiddenlayer_0/kernel``, ``dnn/logits/bias``, ...) match TF's.

Example:
    >>> columns = [tf.feature_column.numeric_column("x", shape=[4])]
    >>> classifier = tf.estimator.DNNClassifier(
    ...     hidden_units=[10, 20, 10], feature_columns=columns, n_classes=3)
    >>> classifier.train(train_input_fn, steps=2000)

Mirrors ``tensorflow_estimator/python/estimator/canned/dnn.py`` (TF 1.x).
"""

from minitf import feature_column as feature_column_lib
from minitf.estimator import head as head_lib
from minitf.estimator.canned import optimizers
from minitf.estimator.estimator import Estimator
from minitf.estimator.model_fn import ModeKeys
from minitf.layers import core as core_layers
from minitf.ops import init_ops, nn_ops
from minitf.ops.variable_scope import variable_scope

_LEARNING_RATE = 0.05  # the learning rate of an optimizer given by name


def dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn, dropout):
    """The network's logits, ``[batch, units]`` (TF's ``_dnn_logit_fn_builder``)."""
    with variable_scope("input_from_feature_columns"):
        net = feature_column_lib.input_layer(features, feature_columns)
    for layer_id, num_hidden_units in enumerate(hidden_units):
        with variable_scope("hiddenlayer_%d" % layer_id) as scope:
            net = core_layers.dense(
                net, num_hidden_units, activation=activation_fn,
                kernel_initializer=init_ops.glorot_uniform_initializer(), name=scope)
            if dropout is not None and mode == ModeKeys.TRAIN:
                net = core_layers.dropout(net, rate=dropout, training=True)
    with variable_scope("logits") as scope:
        return core_layers.dense(
            net, units, activation=None,
            kernel_initializer=init_ops.glorot_uniform_initializer(), name=scope)


def _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer,
                  activation_fn, dropout):
    """The model function of the DNN estimators: logits from :func:`dnn_logits`, then the head."""
    if not isinstance(features, dict):
        raise ValueError("features should be a dictionary of `Tensor`s. Given type: %s"
                         % type(features))
    optimizer = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope("dnn"):
        logits = dnn_logits(features, mode, head.logits_dimension, hidden_units,
                            feature_columns, activation_fn, dropout)
    return head.create_estimator_spec(features, mode, logits, labels=labels, optimizer=optimizer)


class _DNNEstimator(Estimator):
    """An Estimator whose ``model_fn`` is :func:`_dnn_model_fn` with ``head``."""

    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer, activation_fn,
                 dropout, config, warm_start_from):
        feature_columns = tuple(feature_column_lib._normalize_feature_columns(feature_columns))
        hidden_units = tuple(hidden_units)

        def model_fn(features, labels, mode):
            return _dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                                 optimizer, activation_fn, dropout)

        super().__init__(model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class DNNClassifier(_DNNEstimator):
    """A feed-forward classifier (``tf.estimator.DNNClassifier``).

    Args:
        hidden_units: the width of each hidden layer, e.g. ``[64, 32]``.
        feature_columns: the model's inputs (``tf.feature_column.numeric_column``).
        model_dir: where checkpoints go (see :class:`~minitf.estimator.estimator.Estimator`).
        n_classes: the number of classes (labels are ``0 .. n_classes - 1``);
            2 gives a logistic head with one logit.
        weight_column: a feature key (or numeric column) weighting each example.
        optimizer: a name (``"Adagrad"``, ``"Adam"``, ``"Ftrl"``, ``"RMSProp"``,
            ``"SGD"``; learning rate 0.05), an optimizer, or a function making one.
        activation_fn: the hidden layers' activation (default ``tf.nn.relu``).
        dropout: the fraction of hidden units dropped in training (None: no dropout).
        config: a RunConfig.
        warm_start_from: not supported (must be None).
        loss_reduction: how the per-example losses are reduced for training
            (default the sum over the batch, as TF1).

    Raises:
        ValueError: if ``n_classes`` < 2 or ``feature_columns`` is empty.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, optimizer="Adagrad", activation_fn=nn_ops.relu,
                 dropout=None, config=None, warm_start_from=None, loss_reduction=head_lib.SUM):
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, config, warm_start_from)


class DNNRegressor(_DNNEstimator):
    """A feed-forward regressor (``tf.estimator.DNNRegressor``).

    The arguments are those of :class:`DNNClassifier`, with ``label_dimension``
    (the number of values predicted per example) instead of ``n_classes``.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=nn_ops.relu,
                 dropout=None, config=None, warm_start_from=None, loss_reduction=head_lib.SUM):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, config, warm_start_from)
