"""Neural-network ops: activations, ``bias_add``, ``lrn`` and ``dropout``.

Each op is declared with :func:`define_op` next to its Python wrapper and its
gradient; the public ``tf.nn`` names are re-exported by :mod:`minitf.nn`.
The other ``tf.nn`` families have modules of their own:
:mod:`~minitf.ops.softmax_ops` (softmax and the cross-entropy losses),
:mod:`~minitf.ops.conv_ops` (convolution) and :mod:`~minitf.ops.pooling_ops`
(max and average pooling).  Functions that are only formulas over other ops
(``moments``, ``batch_normalization``) live in :mod:`minitf.ops.nn_impl`.

Mirrors ``tensorflow/python/ops/nn_ops.py`` and ``nn_grad.py``.
"""

import numbers

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import array_ops, math_ops, random_ops, select_ops, unary_ops
from minitf.ops.common_shapes import merge_dims, unchanged_shape
from minitf.ops.op_def_library import (
    apply_op, define_op, gradient, graph_of, not_differentiable)



# ---- Activations ------------------------------------------------------------------
# Each activation has a backprop op, as in TF: ``ReluGrad(gradients, features)``
# and so on, fed with the forward op's input or output, whichever gives the
# derivative most cheaply (``relu(x) > 0`` exactly where ``x > 0``, and below
# zero ``d elu / dx = elu(x) + 1``).  The backprop ops have gradients too, so
# second derivatives (Hessian-vector products) work.
def _activation(name, doc, types="{float16, float32, float64}", attrs=()):
    return define_op(name, stacklevel=2, inputs=("features",), outputs=("activations",),
                     attrs=("T: " + types,) + attrs, shape_fn=unchanged_shape, doc=doc)


def _activation_grad(name, doc, second_input="features", attrs=()):
    return define_op(name, stacklevel=2, inputs=("gradients", second_input),
                     outputs=("backprops",), attrs=("T: {float16, float32, float64}",) + attrs,
                     shape_fn=_same_shapes, same_dtype_inputs=("gradients", second_input),
                     doc=doc)


def _same_shapes(op):
    """The merged shape of all inputs, which must be compatible."""
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError("Shapes %s and %s are not compatible" % (shape, t.shape))
        shape = shape.merge_with(t.shape)
    return [shape]


_NUMERIC = "{float16, float32, float64, int8, int16, int32, int64, uint8, uint16}"
_relu = _activation("Relu", "max(features, 0).", types=_NUMERIC)
_relu_grad = _activation_grad("ReluGrad", "gradients where features > 0, else 0.")


def relu(features, name=None):
    """Rectified linear unit: ``max(features, 0)`` (``tf.nn.relu``).

    Example:
        >>> sess.run(tf.nn.relu([-1.0, 0.5]))
        array([0. , 0.5], dtype=float32)
    """
    return apply_op(_relu, [features], name=name or "Relu")


def relu_grad(gradients, features, name=None):
    """``gradients * (features > 0)``: Relu's backprop (TF's ``gen_nn_ops.relu_grad``)."""
    return apply_op(_relu_grad, [gradients, features], name=name or "ReluGrad")


@gradient("Relu")
def _relu_gradient(op, grad):
    # The output is positive exactly where the input is; at 0 the slope is taken as 0.
    return [relu_grad(grad, op.outputs[0])]


@gradient("ReluGrad")
def _relu_grad_gradient(op, grad):
    # Linear in `gradients` with the same mask; piecewise constant in `features`.
    features = op.inputs[1]
    return [relu_grad(grad, features), array_ops.zeros_like(features)]


_relu6 = _activation("Relu6", "min(max(features, 0), 6).", types=_NUMERIC)
_relu6_grad = _activation_grad("Relu6Grad", "gradients where 0 < features < 6, else 0.")


def relu6(features, name=None):
    """``min(max(features, 0), 6)`` (``tf.nn.relu6``), a ReLU with a bounded range."""
    return apply_op(_relu6, [features], name=name or "Relu6")


def relu6_grad(gradients, features, name=None):
    """``gradients * (0 < features < 6)``: Relu6's backprop (``gen_nn_ops.relu6_grad``)."""
    return apply_op(_relu6_grad, [gradients, features], name=name or "Relu6Grad")


@gradient("Relu6")
def _relu6_gradient(op, grad):
    return [relu6_grad(grad, op.outputs[0])]


@gradient("Relu6Grad")
def _relu6_grad_gradient(op, grad):
    features = op.inputs[1]
    return [relu6_grad(grad, features), array_ops.zeros_like(features)]


_elu = _activation("Elu", "features if > 0 else exp(features) - 1.")
_elu_grad = _activation_grad("EluGrad", "gradients * (outputs + 1) where outputs < 0, "
                             "else gradients.", second_input="outputs")


def elu(features, name=None):
    """Exponential linear unit (Clevert et al. 2015): ``exp(x) - 1`` below zero (``tf.nn.elu``)."""
    return apply_op(_elu, [features], name=name or "Elu")


def elu_grad(gradients, outputs, name=None):
    """Elu's backprop from its *output*: below zero ``d elu / dx = exp(x) = outputs + 1``."""
    return apply_op(_elu_grad, [gradients, outputs], name=name or "EluGrad")


@gradient("Elu")
def _elu_gradient(op, grad):
    return [elu_grad(grad, op.outputs[0])]


@gradient("EluGrad")
def _elu_grad_gradient(op, grad):
    # EluGrad(g, y) is g * (y + 1) below zero, g above: d/dg is EluGrad again,
    # d/dy is g below zero (and the chain rule continues into Elu's gradient).
    gradients, outputs = op.inputs
    d_outputs = select_ops.where(outputs < 0, grad * gradients, array_ops.zeros_like(outputs))
    return [elu_grad(grad, outputs), d_outputs]


_selu = _activation("Selu", "scale * (features if > 0 else alpha * (exp(features) - 1)).")
_selu_grad = _activation_grad("SeluGrad", "gradients * (outputs + scale * alpha) where "
                              "outputs < 0, else gradients * scale.", second_input="outputs")


def selu(features, name=None):
    """Scaled ELU (Klambauer et al. 2017), self-normalising (``tf.nn.selu``).

    ``scale * elu(x)`` above zero is ``scale * x``; below, ``scale * alpha *
    (exp(x) - 1)``, with ``alpha ≈ 1.6733`` and ``scale ≈ 1.0507``.
    """
    return apply_op(_selu, [features], name=name or "Selu")


def selu_grad(gradients, outputs, name=None):
    """Selu's backprop from its output: below zero the slope is ``outputs + scale * alpha``."""
    return apply_op(_selu_grad, [gradients, outputs], name=name or "SeluGrad")


@gradient("Selu")
def _selu_gradient(op, grad):
    return [selu_grad(grad, op.outputs[0])]


@gradient("SeluGrad")
def _selu_grad_gradient(op, grad):
    gradients, outputs = op.inputs
    d_outputs = select_ops.where(outputs < 0, grad * gradients, array_ops.zeros_like(outputs))
    return [selu_grad(grad, outputs), d_outputs]


_leaky_relu = _activation("LeakyRelu", "features if > 0 else alpha * features.",
                          attrs=("alpha: float = 0.2",))
_leaky_relu_grad = _activation_grad("LeakyReluGrad", "gradients where features > 0, else "
                                    "alpha * gradients.", attrs=("alpha: float = 0.2",))


def leaky_relu(features, alpha=0.2, name=None):
    """``features`` where positive, else ``alpha * features`` (``tf.nn.leaky_relu``).

    Args:
        features: a floating-point tensor.
        alpha: the slope below zero (a Python number; an attr of the op).
        name: op name (default ``LeakyRelu``).
    """
    return apply_op(_leaky_relu, [features], attrs={"alpha": alpha},
                    name=name or "LeakyRelu")


def leaky_relu_grad(gradients, features, alpha=0.2, name=None):
    """LeakyRelu's backprop: ``gradients`` where ``features > 0``, else ``alpha * gradients``."""
    return apply_op(_leaky_relu_grad, [gradients, features], attrs={"alpha": alpha},
                    name=name or "LeakyReluGrad")


@gradient("LeakyRelu")
def _leaky_relu_gradient(op, grad):
    return [leaky_relu_grad(grad, op.inputs[0], alpha=op.get_attr("alpha"))]


@gradient("LeakyReluGrad")
def _leaky_relu_grad_gradient(op, grad):
    features = op.inputs[1]
    return [leaky_relu_grad(grad, features, alpha=op.get_attr("alpha")),
            array_ops.zeros_like(features)]


_softplus = _activation("Softplus", "log(exp(features) + 1), computed stably.")
_softplus_grad = _activation_grad("SoftplusGrad", "gradients * sigmoid(features).")


def softplus(features, name=None):
    """``log(exp(features) + 1)``, a smooth ReLU (``tf.nn.softplus``).

    The kernel never overflows: ``softplus(1000.0)`` is ``1000.0``.
    """
    return apply_op(_softplus, [features], name=name or "Softplus")


def softplus_grad(gradients, features, name=None):
    """``gradients / (1 + exp(-features))``: Softplus's backprop (its slope is the sigmoid)."""
    return apply_op(_softplus_grad, [gradients, features], name=name or "SoftplusGrad")


@gradient("Softplus")
def _softplus_gradient(op, grad):
    return [softplus_grad(grad, op.inputs[0])]


@gradient("SoftplusGrad")
def _softplus_grad_gradient(op, grad):
    # SoftplusGrad(g, x) = g * sigmoid(x); sigmoid'(x) = 1 / (exp(-x) + 2 + exp(x)).
    gradients, features = op.inputs
    curvature = unary_ops.exp(-features) + 2.0 + unary_ops.exp(features)
    return [softplus_grad(grad, features), grad * gradients / curvature]


_softsign = _activation("Softsign", "features / (abs(features) + 1).")
_softsign_grad = _activation_grad("SoftsignGrad", "gradients / (1 + abs(features)) ** 2.")


def softsign(features, name=None):
    """``features / (abs(features) + 1)`` (``tf.nn.softsign``)."""
    return apply_op(_softsign, [features], name=name or "Softsign")


def softsign_grad(gradients, features, name=None):
    """``gradients / (1 + |features|) ** 2``: Softsign's backprop."""
    return apply_op(_softsign_grad, [gradients, features], name=name or "SoftsignGrad")


@gradient("Softsign")
def _softsign_gradient(op, grad):
    return [softsign_grad(grad, op.inputs[0])]


@gradient("SoftsignGrad")
def _softsign_grad_gradient(op, grad):
    # TF registers none; d/dx of g / (1 + |x|)^2 is -2 g sign(x) / (1 + |x|)^3.
    gradients, features = op.inputs
    denominator = 1.0 + unary_ops.abs(features)
    d_features = softsign_grad(grad * gradients, features) * -2.0 * unary_ops.sign(features)
    return [softsign_grad(grad, features), d_features / denominator]


# ---- BiasAdd ----------------------------------------------------------------------
def _bias_add_shape(op):
    value, bias = op.inputs[0].shape, op.inputs[1].shape
    data_format = op.get_attr("data_format")
    min_rank = 3 if data_format == "NCHW" else 2
    if value.ndims is not None and value.ndims < min_rank:
        raise ValueError("Shape must be at least rank %d but is rank %d" % (min_rank, value.ndims))
    if bias.ndims is not None and bias.ndims != 1:
        raise ValueError("Shape must be rank 1 but is rank %d" % bias.ndims)
    if value.ndims is None or bias.ndims is None:
        return [value]
    channel = 1 if data_format == "NCHW" else value.ndims - 1
    dims = value.dims
    dims[channel] = merge_dims(dims[channel], bias[0])
    return [TensorShape(dims)]


_bias_add = define_op("BiasAdd", inputs=("value", "bias"),
                      attrs=("data_format: {'NHWC', 'NCHW'} = 'NHWC'",),
                      shape_fn=_bias_add_shape, type_constraint=dtypes.NUMERIC,
                      same_dtype_inputs=("value", "bias"),
                      doc="Adds a 1-D bias along the channel dimension of value.")


def bias_add(value, bias, data_format=None, name=None):
    """Adds ``bias`` to each channel of ``value`` (``tf.nn.bias_add``).

    Unlike ``tf.add`` it never broadcasts ``bias`` in surprising ways: the
    bias must be 1-D with one entry per channel.

    Args:
        value: a tensor of rank >= 2 (>= 3 for ``NCHW``).
        bias: a 1-D tensor whose size is ``value``'s channel dimension.
        data_format: ``"NHWC"`` (default; channels last) or ``"NCHW"``
            (channels in dimension 1).
        name: op name (default ``BiasAdd``).

    Raises:
        ValueError: if ``bias`` is not 1-D or does not match the channels.
    """
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be 'NHWC' or 'NCHW', got %r" % data_format)
    return apply_op(_bias_add, [value, bias], attrs={"data_format": data_format},
                    name=name or "BiasAdd")


def _bias_add_grad_shape(op):
    value = op.inputs[0].shape
    if value.ndims is None:
        return [unknown_shape(1)]
    channel = 1 if op.get_attr("data_format") == "NCHW" else value.ndims - 1
    if value.ndims < 2:
        raise ValueError("Shape must be at least rank 2 but is rank %d" % value.ndims)
    return [TensorShape([value[channel]])]


_bias_add_grad = define_op("BiasAddGrad", inputs=("out_backprop",),
                           attrs=("data_format: {'NHWC', 'NCHW'} = 'NHWC'",),
                           shape_fn=_bias_add_grad_shape, type_constraint=dtypes.NUMERIC,
                           doc="Sums out_backprop over every dimension but the channels.")


def bias_add_grad(out_backprop, data_format="NHWC", name=None):
    """BiasAdd's backprop for the bias: ``out_backprop`` summed over all but the channel axis."""
    return apply_op(_bias_add_grad, [out_backprop], attrs={"data_format": data_format},
                    name=name or "BiasAddGrad")


@gradient("BiasAdd")
def _bias_add_gradient(op, grad):
    return [grad, bias_add_grad(grad, data_format=op.get_attr("data_format"))]


@gradient("BiasAddGrad")
def _bias_add_grad_gradient(op, grad):
    # The adjoint of summing over the non-channel axes is broadcasting along
    # them, which is what BiasAdd does (to zeros here).
    out_backprop = op.inputs[0]
    return [bias_add(array_ops.zeros_like(out_backprop), grad,
                     data_format=op.get_attr("data_format"))]


# ---- Local response normalization ------------------------------------------------
# AlexNet's LRN, as TF computes it along the last (depth) axis of a 4-D input:
#
#     sqr_sum[b, y, x, d] = sum(input[b, y, x, d - r : d + r + 1] ** 2)
#     output = input / (bias + alpha * sqr_sum) ** beta
#
# The window is clipped at the ends of the depth axis.  LRNGrad is its
# backprop op, given the input and the output; TF registers no gradient for
# LRNGrad, so LRN has first derivatives only.
LRN_TYPES = (dtypes.float16, dtypes.float32)


def _lrn_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d" % shape.ndims)
    return [shape.with_rank(4) if shape.ndims is not None else unknown_shape(4)]


_LRN_ATTRS = ("depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
              "beta: float = 0.5")
_lrn = define_op("LRN", inputs=("input",), attrs=_LRN_ATTRS, shape_fn=_lrn_shape,
                 type_constraint=LRN_TYPES,
                 doc="Local response normalization over a window of the depth axis.")
_lrn_grad = define_op("LRNGrad", inputs=("input_grads", "input_image", "output_image"),
                      attrs=_LRN_ATTRS, shape_fn=_same_shapes, type_constraint=LRN_TYPES,
                      same_dtype_inputs=("input_grads", "input_image", "output_image"),
                      doc="LRN's backprop: the gradient with respect to its input.")


def _lrn_attrs(depth_radius, bias, alpha, beta):
    """The attrs as given: the declaration makes ``bias=1`` the float ``1.0``."""
    return {"depth_radius": depth_radius, "bias": bias, "alpha": alpha, "beta": beta}


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """Local response normalization (``tf.nn.lrn``, ``tf.nn.local_response_normalization``).

    Each value is divided by a power of the sum of squares of its
    neighbours along the depth (channel) axis::

        sqr_sum[b, y, x, d] = sum(input[b, y, x, d - depth_radius : d + depth_radius + 1] ** 2)
        output = input / (bias + alpha * sqr_sum) ** beta

    TF's CIFAR-10 tutorial uses it after each pooling layer
    (``tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)``).

    Args:
        input: a 4-D float16/float32 tensor, ``[batch, height, width, depth]``.
        depth_radius: half-width of the window (TF's default 5: 11 channels).
        bias: the offset (usually positive, so nothing divides by zero).
        alpha: the scale of the sum of squares.
        beta: the exponent.
        name: op name (default ``LRN``).

    Raises:
        ValueError: for an input that is not 4-D.
        TypeError: for a dtype other than float16/float32 (as TF).
    """
    return apply_op(_lrn, [input], attrs=_lrn_attrs(depth_radius, bias, alpha, beta),
                    name=name or "LRN")


lrn = local_response_normalization


def lrn_grad(input_grads, input_image, output_image, depth_radius=5, bias=1, alpha=1, beta=0.5,
             name=None):
    """LRN's backprop op (TF's ``gen_nn_ops.lrn_grad``)::

        d input[k] = grads[k] * norm[k] ** -beta
                     - 2 alpha beta input[k] * sum over j near k of grads[j] * output[j] / norm[j]

    where ``norm = bias + alpha * sqr_sum`` and ``j`` runs over the depth
    window around ``k``.
    """
    return apply_op(_lrn_grad, [input_grads, input_image, output_image],
                    attrs=_lrn_attrs(depth_radius, bias, alpha, beta), name=name or "LRNGrad")


@gradient("LRN")
def _lrn_gradient(op, grad):
    attrs = {name: op.get_attr(name) for name in _lrn.attrs}
    return [lrn_grad(grad, op.inputs[0], op.outputs[0], **attrs)]


not_differentiable("LRNGrad", reason="TF registers no gradient for it")


# ---- Dropout ----------------------------------------------------------------------
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes entries of ``x`` at random, scaling the rest by ``1 / keep_prob`` (``tf.nn.dropout``).

    "Inverted" dropout (Srivastava et al. 2014), built from elementwise ops
    as in TF1::

        binary = floor(keep_prob + uniform[0, 1))    # 1 with probability keep_prob
        output = x / keep_prob * binary

    Scaling at training time keeps ``E[output] == x``, so nothing changes at
    test time: feed ``keep_prob = 1.0``.

    Args:
        x: a floating-point tensor.
        keep_prob: the probability of keeping an entry: a float in ``(0, 1]``
            or a scalar tensor (a placeholder, typically).
        noise_shape: the shape of the random keep/drop mask, broadcast against
            ``x``: ``[batch, 1]`` drops whole rows.  Default: ``x``'s shape.
        seed: the op-level random seed (see ``tf.set_random_seed``).
        name: the name scope (default ``dropout``).
        rate: ``1 - keep_prob``, TF 1.13's replacement argument.

    Raises:
        ValueError: if ``x`` is not floating point, if both or neither of
            ``keep_prob`` and ``rate`` are given, or if a Python
            ``keep_prob`` is outside ``(0, 1]`` (``rate`` outside ``[0, 1)``).

    Example:
        >>> keep_prob = tf.placeholder_with_default(1.0, [])
        >>> hidden = tf.nn.dropout(tf.nn.relu(logits), keep_prob)
    """
    if (keep_prob is None) == (rate is None):
        raise ValueError("Exactly one of 'keep_prob' and 'rate' must be given.")
    graph = graph_of([x, keep_prob, rate])
    with graph.as_default(), graph.name_scope(name or "dropout"):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError("x has to be a floating point tensor since it's going to be "
                             "scaled. Got a %s tensor instead." % x.dtype.name)
        keep_prob = _keep_probability(keep_prob, rate, x.dtype.base_dtype)
        if keep_prob is None:
            return x
        if noise_shape is None:
            noise_shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype.base_dtype)
        binary = unary_ops.floor(math_ops.add(keep_prob, uniform, name="add"))
        output = math_ops.multiply(math_ops.div(x, keep_prob), binary, name="mul")
        output.set_shape(x.shape)
        return output


def _keep_probability(keep_prob, rate, dtype):
    """``keep_prob`` (or ``1 - rate``) as a scalar tensor; None when it is 1.

    A Python number is checked here, while the graph is built; a tensor can
    only be trusted to be in range.
    """
    if rate is not None:
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError("rate must be a scalar tensor or a float in the range [0, 1), "
                                 "got %g" % rate)
            keep_prob = 1.0 - rate
        else:
            keep_prob = math_ops.subtract(1.0, convert_to_tensor(rate, dtype=dtype), name="sub")
    if isinstance(keep_prob, numbers.Real):
        if not 0 < keep_prob <= 1:
            raise ValueError("keep_prob must be a scalar tensor or a float in the range (0, 1], "
                             "got %g" % keep_prob)
        if keep_prob == 1:
            return None
    keep_prob = convert_to_tensor(keep_prob, dtype=dtype, name="keep_prob")
    if not keep_prob.shape.is_compatible_with([]):
        raise ValueError("keep_prob must be a scalar, got shape %s" % keep_prob.shape)
    return keep_prob
