"""``tf.contrib.layers``: TF1's older layer functions, built on :mod:`minitf.layers`.

They differ from their ``tf.layers`` counterparts in three ways that a TF1
program notices, and which minitf follows exactly:

* **defaults**: ``fully_connected`` and ``conv2d`` apply a ReLU unless
  ``activation_fn=None``; their weights start from ``xavier_initializer()``;
  ``conv2d`` pads ``"SAME"``; ``batch_norm`` has no ``gamma`` (``scale=False``),
  a ``decay`` of 0.999 and trains by default (``is_training=True``);
* **names**: the variable scope is ``fully_connected``, ``Conv`` or
  ``BatchNorm`` (``_1``, ``_2``... when repeated) and the variables are
  ``weights`` and ``biases``, not ``kernel`` and ``bias``; every variable is
  also a *model variable* (``tf.model_variables()``);
* **arguments**: ``num_outputs``, ``weights_initializer``,
  ``weights_regularizer``, ``normalizer_fn``... and ``arg_scope``
  (:mod:`minitf.contrib.framework`), which every layer function here honours.

The layers are TF1's own design: a core layer object (``tf.layers.Dense``...)
built inside a variable scope whose *custom getter* renames ``kernel`` to
``weights`` and ``bias`` to ``biases``.

Mirrors ``tensorflow/contrib/layers/python/layers/`` (TF 1.15).
"""

import math
import numbers

from minitf.api_scopes import add_to_collections, control_dependencies, name_scope
from minitf.contrib.framework import add_arg_scope, arg_scope, missing  # noqa: F401
from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.layers import convolutional, core, normalization, pooling
from minitf.ops import (array_ops, constant_op, init_ops, math_ops, nn_ops, random_ops,
                        reduction_ops, softmax_ops, unary_ops)
from minitf.ops.variable_scope import variable_scope
from minitf.platform import tf_logging as logging

WEIGHTS = "weights"  # TF1's GraphKeys.WEIGHTS: the default of apply_regularization


# ---- initializers ------------------------------------------------------------------------------
def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot & Bengio's initializer (``tf.contrib.layers.xavier_initializer``).

    Uniform on ``±sqrt(6 / (fan_in + fan_out))``, or with ``uniform=False`` a
    truncated normal of variance ``2 / (fan_in + fan_out)``.
    """
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed,
                                        dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=dtypes.float32):
    """He et al.'s initializer by default (``tf.contrib.layers.variance_scaling_initializer``).

    Values of variance ``factor / n``, ``n`` being ``fan_in``, ``fan_out`` or
    their average (``mode`` ``"FAN_IN"``, ``"FAN_OUT"``, ``"FAN_AVG"``): uniform
    on ``±sqrt(3 factor / n)``, or (``uniform=False``) a normal truncated at
    two standard deviations whose stddev is ``sqrt(1.3 factor / n)`` — contrib's
    correction for the truncation, a little larger than the ``1.2925`` (that
    is, ``1 / 0.8796 ** 2``) of the core ``tf.variance_scaling_initializer``.

    Raises:
        TypeError: if ``dtype`` is not a floating type, or for an unknown ``mode``.
    """
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError("Unknown mode %s [FAN_IN, FAN_OUT, FAN_AVG]" % mode)
    return _ContribVarianceScaling(factor, mode, uniform, seed, dtypes.as_dtype(dtype))


def _fans(shape):
    """contrib's ``(fan_in, fan_out)``: a kernel's receptive field multiplies both."""
    shape = [int(d) for d in shape]
    if not shape:
        return 1.0, 1.0
    receptive_field = math.prod(shape[:-2])
    fan_in = shape[-2] if len(shape) > 1 else shape[-1]
    return float(fan_in * receptive_field), float(shape[-1] * receptive_field)


class _ContribVarianceScaling(init_ops.Initializer):
    """The initializer :func:`variance_scaling_initializer` returns."""

    def __init__(self, factor, mode, uniform, seed, dtype):
        self.factor, self.mode, self.uniform, self.seed, self.dtype = (factor, mode, uniform,
                                                                       seed, dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        fan_in, fan_out = _fans(shape if partition_info is None else partition_info.full_shape)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)
        stddev = math.sqrt(1.3 * self.factor / n)
        return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode, "uniform": self.uniform,
                "seed": self.seed, "dtype": self.dtype.name}


# ---- regularizers ------------------------------------------------------------------------------
def _check_scale(scale):
    """TF's checks of a regularizer's scale; True when the scale disables it."""
    if isinstance(scale, numbers.Integral):
        raise ValueError("scale cannot be an integer: %s" % (scale,))
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError("Setting a scale less than 0 on a regularizer: %g." % scale)
        if scale == 0.0:
            logging.info("Scale of 0 disables regularizer.")
            return True
    return False


def l2_regularizer(scale, scope=None):
    """``fn(weights) = scale * sum(weights ** 2) / 2`` (``tf.contrib.layers.l2_regularizer``).

    Raises:
        ValueError: for an integer or negative ``scale``; 0.0 disables it
            (``fn`` returns None).
    """
    if _check_scale(scale):
        return lambda _: None

    def l2(weights):
        with name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, softmax_ops.l2_loss(weights), name=name)
    return l2


def l1_regularizer(scale, scope=None):
    """``fn(weights) = scale * sum(|weights|)`` (``tf.contrib.layers.l1_regularizer``).

    Raises:
        ValueError: as :func:`l2_regularizer`.
    """
    if _check_scale(scale):
        return lambda _: None

    def l1(weights):
        with name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(
                my_scale, reduction_ops.reduce_sum(unary_ops.abs(weights)), name=name)
    return l1


def apply_regularization(regularizer, weights_list=None):
    """The sum of ``regularizer(w)`` over the weights (``tf.contrib.layers.apply_regularization``).

    The sum (op ``get_regularization_penalty``) is also added to
    ``GraphKeys.REGULARIZATION_LOSSES``.

    Args:
        regularizer: ``fn(weights) -> scalar`` (or None).
        weights_list: the weights; default: the ``"weights"`` collection
            (``layers`` given ``variables_collections`` fill it).

    Raises:
        ValueError: with no weights, or a regularizer returning a non-scalar.
    """
    if not weights_list:
        weights_list = graph_lib.get_default_graph().get_collection(WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant_op.constant(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError("regularizer must return a scalar Tensor instead of a Tensor "
                                 "with rank %d." % p.shape.ndims)
        summed = math_ops.add_n(penalties, name=scope)
        graph_lib.get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed


# ---- the layers --------------------------------------------------------------------------------
def _contrib_variable_getter(getter, name, *args, **kwargs):
    """The variable scope's custom getter: contrib's names, and a model variable.

    ``<scope>/kernel`` becomes ``<scope>/weights``, ``<scope>/bias``
    ``<scope>/biases``; the variable also joins ``GraphKeys.MODEL_VARIABLES``.
    """
    head, _, short = name.rpartition("/")
    short = {"kernel": "weights", "bias": "biases"}.get(short, short)
    name = head + "/" + short if head else short
    kwargs["collections"] = list(kwargs.get("collections") or [GraphKeys.GLOBAL_VARIABLES]) + [
        GraphKeys.MODEL_VARIABLES]
    return getter(name, *args, **kwargs)


def _add_to_collections(variable, variables_collections, name):
    """``variables_collections``: a list of collections, or a dict of them per variable name."""
    collections = (variables_collections.get(name) if isinstance(variables_collections, dict)
                   else variables_collections)
    graph = graph_lib.get_default_graph()
    for collection in collections or ():
        if variable not in graph.get_collection(collection):
            graph.add_to_collection(collection, variable)


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections):
    """Normalizer, then activation, then ``outputs_collections``: contrib's order."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    if outputs_collections:
        add_to_collections(outputs_collections, outputs)
    return outputs


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None, biases_initializer=init_ops.zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """A dense layer with contrib's defaults (``tf.contrib.layers.fully_connected``).

    ``activation_fn(normalizer_fn(inputs @ weights + biases))``, the variables
    ``fully_connected/weights`` ``[depth, num_outputs]`` and
    ``fully_connected/biases``.  No biases with a ``normalizer_fn`` (it
    usually brings its own shift) or with ``biases_initializer=None``.
    Inputs of rank above 2 are multiplied along their last axis.

    Raises:
        ValueError: if ``num_outputs`` is not an int, or the inputs' last
            dimension is unknown.
    """
    if not isinstance(num_outputs, numbers.Integral):
        raise ValueError("num_outputs type should be one of %s, got %s."
                         % ((int,), type(num_outputs)))
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse,
                        custom_getter=_contrib_variable_getter) as sc:
        inputs = convert_to_tensor(inputs)
        layer = core.Dense(
            units=num_outputs, activation=None,
            use_bias=not normalizer_fn and biases_initializer is not None,
            kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
            kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
            trainable=trainable, name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc,
            _reuse=reuse)
        outputs = layer.apply(inputs)
        _add_to_collections(layer.kernel, variables_collections, "weights")
        if layer.bias is not None:
            _add_to_collections(layer.bias, variables_collections, "biases")
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections)


def _channels(data_format):
    return "channels_first" if data_format and data_format.startswith("NC") else "channels_last"


@add_arg_scope
def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
           activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=xavier_initializer(), weights_regularizer=None,
           biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
           variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A 2-D convolution with contrib's defaults (``tf.contrib.layers.conv2d``).

    Variables ``Conv/weights`` ``[kh, kw, in_channels, num_outputs]`` and
    ``Conv/biases``; ``"SAME"`` padding and a ReLU unless told otherwise;
    ``rate`` is the dilation; ``data_format`` ``"NHWC"`` (default) or ``"NCHW"``.

    Raises:
        ValueError: for an unknown ``data_format``, or inputs not of rank 4.
    """
    if data_format not in (None, "NHWC", "NCHW"):
        raise ValueError("Invalid data_format: %r" % (data_format,))
    with variable_scope(scope, "Conv", [inputs], reuse=reuse,
                        custom_getter=_contrib_variable_getter) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims != 4:
            raise ValueError("minitf's contrib conv2d takes rank-4 inputs, got rank %s"
                             % inputs.shape.ndims)
        layer = convolutional.Conv2D(
            filters=num_outputs, kernel_size=kernel_size, strides=stride, padding=padding,
            data_format=_channels(data_format), dilation_rate=rate, activation=None,
            use_bias=not normalizer_fn and biases_initializer is not None,
            kernel_initializer=weights_initializer, bias_initializer=biases_initializer,
            kernel_regularizer=weights_regularizer, bias_regularizer=biases_regularizer,
            trainable=trainable, name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc,
            _reuse=reuse)
        outputs = layer.apply(inputs)
        _add_to_collections(layer.kernel, variables_collections, "weights")
        if layer.use_bias:
            _add_to_collections(layer.bias, variables_collections, "biases")
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn,
                       outputs_collections)


convolution2d = conv2d


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]`` (``tf.contrib.layers.flatten``)."""
    with name_scope(scope, "Flatten", [inputs]):
        outputs = core.flatten(convert_to_tensor(inputs))
        return _finish(outputs, None, None, None, outputs_collections)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D max pooling (``tf.contrib.layers.max_pool2d``): stride 2, ``"VALID"`` by default."""
    return _pool(pooling.MaxPooling2D, "MaxPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D average pooling (``tf.contrib.layers.avg_pool2d``)."""
    return _pool(pooling.AveragePooling2D, "AvgPool2D", inputs, kernel_size, stride, padding,
                 data_format, outputs_collections, scope)


def _pool(layer_class, default_name, inputs, kernel_size, stride, padding, data_format,
          outputs_collections, scope):
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with name_scope(scope, default_name, [inputs]) as sc:
        layer = layer_class(pool_size=kernel_size, strides=stride, padding=padding,
                            data_format=_channels(data_format), _scope=sc)
        outputs = layer.apply(convert_to_tensor(inputs))
        return _finish(outputs, None, None, None, outputs_collections)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """Dropout keeping ``keep_prob`` of the values (``tf.contrib.layers.dropout``).

    Unlike ``tf.layers.dropout`` it takes the probability to *keep*, and is
    on by default.
    """
    with variable_scope(scope, "Dropout", [inputs]) as sc:
        layer = core.Dropout(rate=1 - keep_prob, noise_shape=noise_shape, seed=seed,
                             name=sc.name, _scope=sc)
        outputs = layer.apply(convert_to_tensor(inputs), training=is_training)
        return _finish(outputs, None, None, None, outputs_collections)


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC",
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    """Batch normalisation with contrib's defaults (``tf.contrib.layers.batch_norm``).

    Variables ``BatchNorm/beta`` (if ``center``), ``BatchNorm/gamma`` (only if
    ``scale`` — off by default, as a following ReLU makes it redundant),
    ``BatchNorm/moving_mean`` and ``moving_variance``.  While ``is_training``
    (a bool or a bool tensor) the batch's statistics normalise and the moving
    averages are updated by ops in ``updates_collections`` — run them with
    the training op — or, with ``updates_collections=None``, by the layer's
    output itself.

    Raises:
        ValueError: for an unknown ``data_format``.
        NotImplementedError: for batch weights, a zero-debiased moving mean or renorm.
    """
    if batch_weights is not None or zero_debias_moving_mean or renorm or adjustment is not None:
        raise NotImplementedError("minitf's contrib batch_norm has no batch_weights, "
                                  "zero_debias_moving_mean, renorm or adjustment")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    initializers = param_initializers or {}
    regularizers = param_regularizers or {}
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse,
                        custom_getter=_contrib_variable_getter) as sc:
        inputs = convert_to_tensor(inputs)
        defaults = {"beta": init_ops.zeros_initializer(), "gamma": init_ops.ones_initializer(),
                    "moving_mean": init_ops.zeros_initializer(),
                    "moving_variance": init_ops.ones_initializer()}
        defaults.update(initializers)
        layer = normalization.BatchNormalization(
            axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon,
            center=center, scale=scale, beta_initializer=defaults["beta"],
            gamma_initializer=defaults["gamma"], moving_mean_initializer=defaults["moving_mean"],
            moving_variance_initializer=defaults["moving_variance"],
            beta_regularizer=regularizers.get("beta"), gamma_regularizer=regularizers.get("gamma"),
            trainable=trainable, fused=fused, name=sc.name, _scope=sc, _reuse=reuse)
        outputs = layer.apply(inputs, training=is_training)
        for name in ("beta", "gamma", "moving_mean", "moving_variance"):
            variable = getattr(layer, name, None)
            if variable is not None:
                _add_to_collections(variable, variables_collections, name)
        if updates_collections is None:
            outputs = _updated_in_place(outputs, layer.updates)
        elif updates_collections != GraphKeys.UPDATE_OPS:
            for update in layer.updates:
                add_to_collections(updates_collections, update)
        return _finish(outputs, None, None, activation_fn, outputs_collections)


def _updated_in_place(outputs, updates):
    """``outputs`` that run the moving-average ``updates`` first, taken out of UPDATE_OPS."""
    update_ops = graph_lib.get_default_graph().get_collection_ref(GraphKeys.UPDATE_OPS)
    update_ops[:] = [op for op in update_ops if op not in updates]
    with control_dependencies(updates):
        return array_ops.identity(outputs)


def __getattr__(name):
    raise missing("tf.contrib.layers", name)


__all__ = ["apply_regularization", "arg_scope", "avg_pool2d", "batch_norm", "conv2d",
           "convolution2d", "dropout", "flatten", "fully_connected", "l1_regularizer",
           "l2_regularizer", "max_pool2d", "variance_scaling_initializer",
           "xavier_initializer", "xavier_initializer_conv2d"]
