"""``tf.estimator.LinearClassifier`` and ``LinearRegressor``: linear models, ready-made.

The logits are ``tf.feature_column.linear_model``: one zero-initialised
weight matrix per feature column, ``linear/linear_model/<column>/weights``,
summed with ``linear/linear_model/bias_weights``.  A linear model is convex,
so any optimizer that converges finds the same weights.  The default is
``Ftrl`` with learning rate 0.2, as in TF1 (FTRL-Proximal, the optimizer of
large sparse linear models).

Example:
    >>> columns = [tf.feature_column.numeric_column("x")]
    >>> regressor = tf.estimator.LinearRegressor(feature_columns=columns)
    >>> regressor.train(input_fn, steps=500)
    >>> regressor.get_variable_value("linear/linear_model/x/weights")

Mirrors ``tensorflow_estimator/python/estimator/canned/linear.py`` (TF 1.x).
"""

from minitf import feature_column as feature_column_lib
from minitf.estimator import head as head_lib
from minitf.estimator.canned import optimizers
from minitf.estimator.estimator import Estimator
from minitf.ops.variable_scope import variable_scope

_LEARNING_RATE = 0.2  # the learning rate of an optimizer given by name


def _linear_model_fn(features, labels, mode, head, feature_columns, optimizer):
    """The model function of the linear estimators: ``linear_model`` logits, then the head."""
    if not isinstance(features, dict):
        raise ValueError("features should be a dictionary of `Tensor`s. Given type: %s"
                         % type(features))
    optimizer = optimizers.get_optimizer_instance(optimizer, learning_rate=_LEARNING_RATE)
    with variable_scope("linear"):
        logits = feature_column_lib.linear_model(features, feature_columns,
                                                 units=head.logits_dimension)
    return head.create_estimator_spec(features, mode, logits, labels=labels, optimizer=optimizer)


class _LinearEstimator(Estimator):
    """An Estimator whose ``model_fn`` is :func:`_linear_model_fn` with ``head``."""

    def __init__(self, head, feature_columns, model_dir, optimizer, config, warm_start_from):
        feature_columns = tuple(feature_column_lib._normalize_feature_columns(feature_columns))

        def model_fn(features, labels, mode):
            return _linear_model_fn(features, labels, mode, head, feature_columns, optimizer)

        super().__init__(model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


class LinearClassifier(_LinearEstimator):
    """Logistic (2 classes) or softmax regression (``tf.estimator.LinearClassifier``).

    Args:
        feature_columns: the model's inputs.
        model_dir: where checkpoints go.
        n_classes: the number of classes (labels ``0 .. n_classes - 1``).
        weight_column: a feature key (or numeric column) weighting each example.
        optimizer: a name (default ``"Ftrl"``, learning rate 0.2), an
            optimizer, or a function making one.
        config: a RunConfig.
        warm_start_from: not supported (must be None).
        loss_reduction: how per-example losses are reduced (default: sum).
        sparse_combiner: kept for TF's signature (no sparse columns in minitf).
    """

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 optimizer="Ftrl", config=None, warm_start_from=None,
                 loss_reduction=head_lib.SUM, sparse_combiner="sum"):
        del sparse_combiner
        head = head_lib.binary_or_multi_class_head(n_classes, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from)


class LinearRegressor(_LinearEstimator):
    """Linear least-squares regression (``tf.estimator.LinearRegressor``).

    The arguments are those of :class:`LinearClassifier`, with ``label_dimension``
    (the number of values predicted per example) instead of ``n_classes``.
    """

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, warm_start_from=None,
                 loss_reduction=head_lib.SUM, sparse_combiner="sum"):
        del sparse_combiner
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from)
