"""Neural-network ops: activations, softmax, losses, convolution and pooling.

Each op is declared with :func:`define_op` next to its Python wrapper; the
public ``tf.nn`` names are re-exported by :mod:`minitf.nn`.  Image ops use
TF's default layout, NHWC (batch, height, width, channels), and filters are
HWIO (height, width, in_channels, out_channels).

Where TF1 builds a function from smaller ops in Python
(``sigmoid_cross_entropy_with_logits``) the docstring says what minitf does
instead.  Functions that are only formulas over other ops (``moments``,
``batch_normalization``) live in :mod:`minitf.ops.nn_impl`.

Mirrors ``tensorflow/python/ops/nn_ops.py``.
"""

import numbers

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import (
    array_ops, math_ops, random_ops, reduction_ops, select_ops, transpose_ops, unary_ops)
from minitf.ops.common_shapes import scalar_shape, unchanged_shape
from minitf.ops.op_def_library import apply_op, define_op, gradient, graph_of


# ---- Activations ------------------------------------------------------------------
# Each activation has a backprop op, as in TF: ``ReluGrad(gradients, features)``
# and so on, fed with the forward op's input or output, whichever gives the
# derivative most cheaply (``relu(x) > 0`` exactly where ``x > 0``, and below
# zero ``d elu / dx = elu(x) + 1``).  The backprop ops have gradients too, so
# second derivatives (Hessian-vector products) work.
def _activation(name, doc, types=dtypes.FLOATING, attrs=None):
    return define_op(name, stacklevel=2, inputs=("features",), outputs=("activations",),
                     attrs=attrs or {}, shape_fn=unchanged_shape, type_constraint=types, doc=doc)


def _activation_grad(name, doc, second_input="features", attrs=None):
    return define_op(name, stacklevel=2, inputs=("gradients", second_input),
                     outputs=("backprops",), attrs=attrs or {}, shape_fn=_same_shapes,
                     type_constraint=dtypes.FLOATING,
                     same_dtype_inputs=("gradients", second_input), doc=doc)


def _same_shapes(op):
    """The merged shape of all inputs, which must be compatible."""
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError("Shapes %s and %s are not compatible" % (shape, t.shape))
        shape = shape.merge_with(t.shape)
    return [shape]


_relu = _activation("Relu", "max(features, 0).", types=dtypes.NUMERIC)
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


_relu6 = _activation("Relu6", "min(max(features, 0), 6).", types=dtypes.NUMERIC)
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
                          attrs={"alpha": 0.2})
_leaky_relu_grad = _activation_grad("LeakyReluGrad", "gradients where features > 0, else "
                                    "alpha * gradients.", attrs={"alpha": 0.2})


def leaky_relu(features, alpha=0.2, name=None):
    """``features`` where positive, else ``alpha * features`` (``tf.nn.leaky_relu``).

    Args:
        features: a floating-point tensor.
        alpha: the slope below zero (a Python number; an attr of the op).
        name: op name (default ``LeakyRelu``).
    """
    return apply_op(_leaky_relu, [features], attrs={"alpha": float(alpha)},
                    name=name or "LeakyRelu")


def leaky_relu_grad(gradients, features, alpha=0.2, name=None):
    """LeakyRelu's backprop: ``gradients`` where ``features > 0``, else ``alpha * gradients``."""
    return apply_op(_leaky_relu_grad, [gradients, features], attrs={"alpha": float(alpha)},
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


# ---- Softmax ----------------------------------------------------------------------
def _rank_at_least_1(op):
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return [shape]


_softmax = define_op("Softmax", inputs=("logits",), outputs=("softmax",),
                     shape_fn=_rank_at_least_1, type_constraint=dtypes.FLOATING,
                     doc="exp(logits) / sum(exp(logits)) along the last axis.")
_log_softmax = define_op("LogSoftmax", inputs=("logits",), outputs=("logsoftmax",),
                         shape_fn=_rank_at_least_1, type_constraint=dtypes.FLOATING,
                         doc="logits - log(sum(exp(logits))) along the last axis.")


def softmax(logits, axis=None, name=None, dim=None):
    """``exp(logits) / reduce_sum(exp(logits), axis)`` (``tf.nn.softmax``).

    The kernel subtracts the maximum first, so large logits do not overflow.

    Args:
        logits: a floating-point tensor of rank >= 1.
        axis: the class axis (default -1, the last).  Another axis is moved
            to the end and back with ``tf.transpose``, as TF does.
        name: op name (default ``Softmax``).
        dim: deprecated alias of ``axis``.

    Example:
        >>> sess.run(tf.nn.softmax([1.0, 1.0]))
        array([0.5, 0.5], dtype=float32)
    """
    axis = _deprecated_alias("axis", axis, "dim", dim)
    return _along_axis(_softmax, logits, axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """``logits - log(reduce_sum(exp(logits), axis))`` (``tf.nn.log_softmax``).

    More accurate than ``log(softmax(x))``: it never takes the log of an
    underflowed zero.  Arguments as for :func:`softmax`.
    """
    axis = _deprecated_alias("axis", axis, "dim", dim)
    return _along_axis(_log_softmax, logits, axis, name)


def _softmax_backward(grad, softmax):
    """The softmax Jacobian ``diag(y) - y y^T`` applied to ``grad`` along the last axis.

    ``(grad - sum(grad * y, -1)) * y`` (``nn_grad._SoftmaxGrad``).
    """
    return (grad - reduction_ops.reduce_sum(grad * softmax, -1, keepdims=True)) * softmax


@gradient("Softmax")
def _softmax_gradient(op, grad):
    # The ops work on the last axis; for another axis the wrapper's transposes
    # carry the gradient there and back.
    return [_softmax_backward(grad, op.outputs[0])]


@gradient("LogSoftmax")
def _log_softmax_gradient(op, grad):
    # d log_softmax / dx = I - softmax: grad - sum(grad) * exp(log_softmax).
    softmax = unary_ops.exp(op.outputs[0])
    return [grad - reduction_ops.reduce_sum(grad, -1, keepdims=True) * softmax]


def _deprecated_alias(new_name, new_value, old_name, old_value):
    if new_value is not None and old_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'" % (new_name, old_name))
    return new_value if new_value is not None else old_value


def _along_axis(op_def, x, axis, name):
    """Applies ``op_def``, an op over the last axis, along ``axis`` of ``x``.

    TF's softmax kernels work on the last axis only; for another axis the
    wrapper swaps it with the last one, applies the op and swaps back, the
    result taking ``name`` (``nn_ops._softmax``).  minitf needs the rank to be
    known to build the permutation.
    """
    if axis is None or axis == -1:
        return apply_op(op_def, [x], name=name or op_def.name)
    graph = graph_of([x])
    with graph.as_default():
        x = convert_to_tensor(x, name="logits")
    perm = _swap_with_last(x, axis)
    if perm is None:
        return apply_op(op_def, [x], name=name or op_def.name)
    result = apply_op(op_def, [transpose_ops.transpose(x, perm)])
    return transpose_ops.transpose(result, perm, name=name or "transpose")


def _swap_with_last(x, axis):
    """The permutation swapping ``axis`` and the last axis of ``x`` (None: it is last).

    Raises:
        ValueError: if the rank of ``x`` is unknown or ``axis`` is out of range.
    """
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("minitf needs the rank of %s to work along axis %d" % (x.name, axis))
    if not -rank <= axis < rank:
        raise ValueError("axis %d is out of range for a tensor of rank %d" % (axis, rank))
    axis %= rank
    if axis == rank - 1:
        return None
    perm = list(range(rank))
    perm[axis], perm[-1] = rank - 1, axis
    return perm


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
    dims[channel] = _merge_dims(dims[channel], bias[0])
    return [TensorShape(dims)]


def _merge_dims(a, b):
    """The merge of two dimensions, or TF's "Dimensions must be equal" ValueError."""
    if not a.is_compatible_with(b):
        raise ValueError("Dimensions must be equal, but are %d and %d" % (a.value, b.value))
    return a.merge_with(b)


_bias_add = define_op("BiasAdd", inputs=("value", "bias"), attrs={"data_format": "NHWC"},
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


_bias_add_grad = define_op("BiasAddGrad", inputs=("out_backprop",), attrs={"data_format": "NHWC"},
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


# ---- Losses -----------------------------------------------------------------------
_l2_loss = define_op("L2Loss", inputs=("t",), shape_fn=scalar_shape,
                     type_constraint=dtypes.FLOATING, doc="sum(t ** 2) / 2.")


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``, the usual weight-decay penalty (``tf.nn.l2_loss``).

    Returns:
        A scalar of ``t``'s dtype.
    """
    return apply_op(_l2_loss, [t], name=name or "L2Loss")


@gradient("L2Loss")
def _l2_loss_gradient(op, grad):
    return [op.inputs[0] * grad]


def _xent_shape(op):
    features, labels = op.inputs[0].shape, op.inputs[1].shape
    if features.ndims is None or labels.ndims is None:
        return [unknown_shape(), unknown_shape()]
    if features.ndims != labels.ndims:
        raise ValueError("Shapes must be equal rank, but are %d and %d"
                         % (features.ndims, labels.ndims))
    if features.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    shape = TensorShape([_merge_dims(a, b) for a, b in zip(features, labels)])
    return [shape[:-1], shape]


_softmax_xent = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
    outputs=("loss", "backprop"), shape_fn=_xent_shape, type_constraint=dtypes.FLOATING,
    same_dtype_inputs=("features", "labels"),
    doc="-sum(labels * log_softmax(features)) along the last axis, and softmax - labels.")


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Cross-entropy between ``labels`` (a distribution per row) and ``softmax(logits)``.

    ``loss = -reduce_sum(labels * log_softmax(logits), axis)``
    (``tf.nn.softmax_cross_entropy_with_logits_v2``).  The op has a second
    output, ``softmax(logits) - labels``, which is the gradient with respect
    to ``logits``; the wrapper returns only the loss.

    TF's kernel takes matrices and its wrapper reshapes other ranks; minitf's
    kernel works along the last axis of any rank >= 1 directly.

    Args:
        labels: probabilities, the shape and dtype of ``logits``.
        logits: unscaled log-probabilities.
        axis: the class axis (default -1).
        name: op name (default ``softmax_cross_entropy_with_logits``).
        dim: deprecated alias of ``axis``.

    Returns:
        The loss, of ``logits``'s shape without the class axis.

    Raises:
        ValueError: if the shapes of ``labels`` and ``logits`` differ.
    """
    axis = _deprecated_alias("axis", axis, "dim", dim)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        if axis not in (None, -1):
            logits = convert_to_tensor(logits, name="logits")
            perm = _swap_with_last(logits, axis)
            if perm is not None:
                logits = transpose_ops.transpose(logits, perm)
                labels = transpose_ops.transpose(labels, perm)
        return apply_op(_softmax_xent, [logits, labels], name=scope)[0]


def _is_zeros(grad):
    """Whether ``grad`` is known to be zero when the graph is built.

    ``tf.gradients`` stands in zeros (a constant, or ``ZerosLike`` when the
    shape is unknown) for an output no y depends on: the usual case for
    ``backprop`` when only the loss is differentiated.
    """
    if grad.op.type == "ZerosLike":
        return True
    value = constant_value(grad)
    return value is not None and not np.any(value)


def _xent_logits_gradient(op, grad_loss, grad_backprop):
    """The gradient of a softmax cross-entropy op with respect to its logits.

    The loss's gradient is the op's second output, ``backprop = softmax -
    labels``, scaled per row.  When ``backprop`` itself is differentiated (a
    second derivative of the loss), its gradient goes through the softmax too.
    """
    grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zeros(grad_backprop):
        grad += _softmax_backward(grad_backprop, softmax(op.inputs[0]))
    return grad


@gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_gradient(op, grad_loss, grad_backprop):
    # d loss / d labels = -log_softmax(logits); and backprop = softmax - labels
    # gives -grad_backprop (TF leaves that second term out).
    grad_labels = array_ops.expand_dims(grad_loss, -1) * -log_softmax(op.inputs[0])
    if not _is_zeros(grad_backprop):
        grad_labels -= grad_backprop
    return [_xent_logits_gradient(op, grad_loss, grad_backprop), grad_labels]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None):
    """TF1's deprecated form of :func:`softmax_cross_entropy_with_logits_v2`.

    Same math, but it must be called with named arguments, and ``labels``
    go through ``tf.stop_gradient``: no gradient reaches them.

    Raises:
        ValueError: if called with positional arguments, or if the shapes differ.
    """
    _ensure_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(
            name or "softmax_cross_entropy_with_logits_sg") as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim,
                                                name=scope)


def _ensure_xent_args(name, sentinel, labels, logits):
    """TF1 requires the cross-entropy losses to be called with keyword arguments."""
    if sentinel is not None:
        raise ValueError("Only call `%s` with named arguments (labels=..., logits=..., ...)"
                         % name)
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _sparse_xent_shape(op):
    features, labels = op.inputs[0].shape, op.inputs[1].shape
    if features.ndims is None:
        return [labels, unknown_shape()]
    if features.ndims == 0:
        raise ValueError("Logits cannot be scalars")
    if labels.ndims is not None and labels.ndims != features.ndims - 1:
        raise ValueError("Rank mismatch: Rank of labels (received %d) should equal rank of "
                         "logits minus 1 (received %d)." % (labels.ndims, features.ndims))
    if labels.ndims is None:
        labels = unknown_shape(features.ndims - 1)
    try:
        batch = features[:-1].merge_with(labels)
    except ValueError:
        raise ValueError("Shape mismatch: The shape of labels (received %s) should equal the "
                         "shape of logits except for the last dimension (received %s)."
                         % (labels, features)) from None
    return [batch, batch.concatenate([features[-1]])]


_sparse_softmax_xent = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
    outputs=("loss", "backprop"), shape_fn=_sparse_xent_shape, type_constraint=dtypes.FLOATING,
    doc="-log_softmax(features)[labels]; labels are class indices.")


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Cross-entropy of integer class ``labels`` against ``softmax(logits)``.

    ``loss[i] = -log_softmax(logits)[i, labels[i]]``
    (``tf.nn.sparse_softmax_cross_entropy_with_logits``): the dense version
    with one-hot labels, without building them.

    Args:
        _sentinel: catches positional use; pass arguments by name.
        labels: int32 or int64 class indices in ``[0, num_classes)``, of
            ``logits``'s shape without the last axis.
        logits: unscaled log-probabilities, ``[..., num_classes]``.
        name: op name (default ``SparseSoftmaxCrossEntropyWithLogits``).

    Returns:
        The loss, of ``labels``'s shape and ``logits``'s dtype.

    Raises:
        ValueError: if called positionally, or if the ranks or shapes do not fit.
        TypeError: if ``labels`` is not int32 or int64.
        InvalidArgumentError: when run with a label outside ``[0, num_classes)``.
    """
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(
            name or "SparseSoftmaxCrossEntropyWithLogits") as scope:
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'labels' has DataType %s not in list of "
                            "allowed values: int32, int64" % labels.dtype.base_dtype.name)
        return apply_op(_sparse_softmax_xent, [logits, labels], name=scope)[0]


@gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_gradient(op, grad_loss, grad_backprop):
    return [_xent_logits_gradient(op, grad_loss, grad_backprop), None]  # integer labels


def _sigmoid_xent_shape(op):
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    try:
        return [logits.merge_with(labels)]
    except ValueError:
        raise ValueError("logits and labels must have the same shape (%s vs %s)"
                         % (logits, labels)) from None


_sigmoid_xent = define_op(
    "SigmoidCrossEntropyWithLogits", inputs=("logits", "labels"), shape_fn=_sigmoid_xent_shape,
    type_constraint=dtypes.FLOATING, same_dtype_inputs=("logits", "labels"),
    doc="max(x, 0) - x * z + log(1 + exp(-abs(x))), elementwise.")


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise logistic loss ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``.

    With ``x = logits`` and ``z = labels`` (each entry an independent
    yes/no probability), the loss is computed in the stable form
    ``max(x, 0) - x * z + log(1 + exp(-abs(x)))``, which never overflows
    (``tf.nn.sigmoid_cross_entropy_with_logits``).

    TF1 builds this formula from nine elementwise ops; minitf declares it as
    one op, ``SigmoidCrossEntropyWithLogits``, so the graph stays readable.

    Raises:
        ValueError: if called positionally, or if the shapes differ.
    """
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    return apply_op(_sigmoid_xent, [logits, labels], name=name or "logistic_loss")


@gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_gradient(op, grad):
    # d/dx = sigmoid(x) - z and d/dz = -x: the derivatives of TF1's formula.
    logits, labels = op.inputs
    return [grad * (unary_ops.sigmoid(logits) - labels), grad * -logits]


# ---- Convolution and pooling ------------------------------------------------------
def get_windowed_output_size(input_size, filter_size, stride, dilation, padding):
    """The output size and leading padding of one spatial dimension of a window op.

    TF's rule (``GetWindowedOutputSizeVerbose``): with the dilated filter size
    ``k = (filter_size - 1) * dilation + 1``,

    * ``VALID`` keeps only windows that fit: ``ceil((input_size - k + 1) / stride)``;
    * ``SAME`` keeps one output per stride, ``ceil(input_size / stride)``, and
      pads ``max((out - 1) * stride + k - input_size, 0)`` in total, the
      smaller half before (top/left) and the rest after.

    Example:
        >>> get_windowed_output_size(5, 3, 2, 1, "SAME")
        (3, 1)

    Returns:
        ``(output_size, pad_before)``; output_size is None for an unknown input.

    Raises:
        ValueError: if a ``VALID`` window is larger than the input.
    """
    if input_size is None or filter_size is None:
        return None, None
    effective = (filter_size - 1) * dilation + 1
    if padding == "VALID":
        if effective > input_size:
            raise ValueError("Negative dimension size caused by subtracting %d from %d"
                             % (effective, input_size))
        return (input_size - effective + stride) // stride, 0
    output_size = (input_size + stride - 1) // stride
    pad_total = max((output_size - 1) * stride + effective - input_size, 0)
    return output_size, pad_total // 2


def _get_sequence(value, name):
    """``2``, ``[2, 3]`` or ``[1, 2, 3, 1]`` as TF's NHWC 4-list (``nn_ops._get_sequence``)."""
    if isinstance(value, numbers.Integral):
        value = [value]
    value = [int(v) for v in value]
    if len(value) == 1:
        return [1, value[0], value[0], 1]
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError("%s should be of length 1, 2 or 4 but was %d" % (name, len(value)))


def _check_window_args(op_type, padding, data_format):
    if padding not in ("SAME", "VALID"):
        raise ValueError("Attr 'padding' of '%s' Op passed string '%s' not in: \"SAME\", "
                         "\"VALID\"." % (op_type, padding))
    if data_format not in (None, "NHWC"):
        raise ValueError("minitf's %s supports only data_format='NHWC' (as TF's CPU kernels); "
                         "got %r. Move channels last with tf.transpose(x, [0, 2, 3, 1])."
                         % (op_type, data_format))


def _spatial_output_shape(op, input_shape, window, dilations, channels):
    """``[batch, out_height, out_width, channels]`` of a window op on an NHWC input.

    ``window`` is ``(height, width)`` of the (undilated) window, None if unknown.
    """
    strides = op.get_attr("strides")
    if strides[0] != 1 or strides[3] != 1:
        raise ValueError("Current implementation does not yet support strides in the batch "
                         "and depth dimensions.")
    padding = op.get_attr("padding")
    height, _ = get_windowed_output_size(input_shape[1].value, window[0], strides[1],
                                         dilations[1], padding)
    width, _ = get_windowed_output_size(input_shape[2].value, window[1], strides[2],
                                        dilations[2], padding)
    return TensorShape([input_shape[0], height, width, channels])


def _rank_4(shape):
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d" % shape.ndims)
    return shape.with_rank(4)


def _conv2d_shape(op):
    value, filters = _rank_4(op.inputs[0].shape), _rank_4(op.inputs[1].shape)
    _merge_dims(value[3], filters[2])
    dilations = op.get_attr("dilations")
    if dilations[0] != 1 or dilations[3] != 1:
        raise ValueError("Current implementation does not yet support dilations in the batch "
                         "and depth dimensions.")
    window = (filters[0].value, filters[1].value)
    return [_spatial_output_shape(op, value, window, dilations, filters[3])]


_conv2d = define_op(
    "Conv2D", inputs=("input", "filter"),
    attrs={"strides": None, "padding": None, "dilations": [1, 1, 1, 1]},
    shape_fn=_conv2d_shape, type_constraint=(dtypes.float16, dtypes.float32, dtypes.float64,
                                             dtypes.int32),
    same_dtype_inputs=("input", "filter"),
    doc="2-D convolution of an NHWC input with an HWIO filter.")


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """Convolves an NHWC batch with an HWIO filter (``tf.nn.conv2d``).

    Like every deep-learning framework, TF computes a cross-correlation (the
    filter is not flipped)::

        output[b, i, j, o] = sum over di, dj, c of
            input[b, i*sh + di*dh - pad_top, j*sw + dj*dw - pad_left, c] * filter[di, dj, c, o]

    where entries outside the input (the padding) are zero.

    Args:
        input: ``[batch, height, width, in_channels]``.
        filter: ``[filter_height, filter_width, in_channels, out_channels]``.
        strides: the step of the window: an int, ``[sh, sw]`` or ``[1, sh, sw, 1]``.
        padding: ``"VALID"`` (windows that fit) or ``"SAME"`` (output size
            ``ceil(in / stride)``, zero padding split as TF does; see
            :func:`get_windowed_output_size`).
        use_cudnn_on_gpu: ignored (TF1 compatibility).
        data_format: only ``"NHWC"``.
        dilations: gaps between filter taps (atrous convolution), same forms
            as ``strides``.
        name: op name (default ``Conv2D``).
        filters: alias of ``filter``.

    Returns:
        ``[batch, out_height, out_width, out_channels]``.

    Raises:
        ValueError: for ranks other than 4, in_channels that differ, a filter
            larger than a ``VALID`` input, or an unsupported padding/data_format.

    Example:
        >>> x = tf.ones([1, 5, 5, 1]); w = tf.ones([3, 3, 1, 2])
        >>> tf.nn.conv2d(x, w, strides=2, padding="SAME").shape
        TensorShape([Dimension(1), Dimension(3), Dimension(3), Dimension(2)])
    """
    del use_cudnn_on_gpu
    filter = _deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
    _check_window_args("Conv2D", padding, data_format)
    attrs = {"strides": _get_sequence(strides, "strides"), "padding": padding,
             "dilations": _get_sequence(dilations, "dilations")}
    return apply_op(_conv2d, [input, filter], attrs=attrs, name=name or "Conv2D")


# Conv2D's backprop ops.  A convolution is linear in its input and in its
# filter, so each gradient is the adjoint of one of those linear maps:
#
# * Conv2DBackpropInput (the "transposed convolution") sends each output
#   gradient back through the filter to the input pixels of its window;
# * Conv2DBackpropFilter correlates the input windows with the output gradient.
#
# Both are linear in their float inputs too, and the adjoints close up: the
# gradients of each are the other two ops of the trio, so second derivatives
# of convolutions cost nothing new.
def _expect_int32(op, index):
    dtype = op.inputs[index].dtype.base_dtype
    if dtype != dtypes.int32:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: int32" % (op.op_def.inputs[index], dtype.name))


def _check_out_backprop(op, input_shape, filter_shape):
    """``out_backprop`` must have the shape Conv2D gives ``input_shape`` and the filter."""
    out_backprop = _rank_4(op.inputs[2].shape)
    window = (filter_shape[0].value, filter_shape[1].value)
    expected = _spatial_output_shape(op, input_shape, window, op.get_attr("dilations"),
                                     filter_shape[3])
    if not expected.is_compatible_with(out_backprop):
        raise ValueError("out_backprop has shape %s but the convolution's output has shape %s"
                         % (out_backprop, expected))
    _merge_dims(input_shape[3], filter_shape[2])


def _conv2d_backprop_input_shape(op):
    _expect_int32(op, 0)
    input_shape = _rank_4(constant_value_as_shape(op.inputs[0]))
    filter_shape = _rank_4(op.inputs[1].shape)
    _check_out_backprop(op, input_shape, filter_shape)
    dims = input_shape.dims
    dims[3] = _merge_dims(dims[3], filter_shape[2])
    return [TensorShape(dims)]


def _conv2d_backprop_filter_shape(op):
    _expect_int32(op, 1)
    input_shape = _rank_4(op.inputs[0].shape)
    filter_shape = _rank_4(constant_value_as_shape(op.inputs[1]))
    _check_out_backprop(op, input_shape, filter_shape)
    dims = filter_shape.dims
    dims[2] = _merge_dims(dims[2], input_shape[3])
    dims[3] = _merge_dims(dims[3], op.inputs[2].shape[3])
    return [TensorShape(dims)]


_CONV_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32)
_CONV_ATTRS = {"strides": None, "padding": None, "dilations": [1, 1, 1, 1]}
_conv2d_backprop_input = define_op(
    "Conv2DBackpropInput", inputs=("input_sizes", "filter", "out_backprop"), attrs=_CONV_ATTRS,
    shape_fn=_conv2d_backprop_input_shape, dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype],
    type_constraint=_CONV_TYPES, same_dtype_inputs=("filter", "out_backprop"),
    doc="The gradient of Conv2D with respect to its input (a transposed convolution).")
_conv2d_backprop_filter = define_op(
    "Conv2DBackpropFilter", inputs=("input", "filter_sizes", "out_backprop"), attrs=_CONV_ATTRS,
    shape_fn=_conv2d_backprop_filter_shape, type_constraint=_CONV_TYPES,
    same_dtype_inputs=("input", "out_backprop"),
    doc="The gradient of Conv2D with respect to its filter.")


def _conv_attrs(op_type, strides, padding, data_format, dilations):
    _check_window_args(op_type, padding, data_format)
    return {"strides": _get_sequence(strides, "strides"), "padding": padding,
            "dilations": _get_sequence(dilations, "dilations")}


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None,  # noqa: A002
                          padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None):
    """The gradient of :func:`conv2d` with respect to its input.

    (``tf.nn.conv2d_backprop_input``.)

    Each ``out_backprop[b, i, j, :]`` is multiplied into the filter and added
    to the input pixels of window ``(i, j)``: the adjoint of the convolution's
    map from input to output.

    Args:
        input_sizes: the input's shape, an int32 ``[4]`` (a list or a tensor,
            typically ``tf.shape(input)``).
        filter: ``[filter_height, filter_width, in_channels, out_channels]``.
        out_backprop: the gradient of the convolution's output,
            ``[batch, out_height, out_width, out_channels]``.
        strides, padding, dilations, data_format: those of the convolution.
        use_cudnn_on_gpu: ignored.
        name: op name (default ``Conv2DBackpropInput``).
        filters: alias of ``filter``.

    Returns:
        A tensor of shape ``input_sizes``.

    Raises:
        ValueError: if ``out_backprop`` does not have the convolution's output shape.
    """
    del use_cudnn_on_gpu
    filter = _deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
    attrs = _conv_attrs("Conv2DBackpropInput", strides, padding, data_format, dilations)
    return apply_op(_conv2d_backprop_input, [input_sizes, filter, out_backprop], attrs=attrs,
                    name=name or "Conv2DBackpropInput")


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                           name=None):
    """The gradient of :func:`conv2d` with respect to its filter.

    (``tf.nn.conv2d_backprop_filter``.)

    ``d_filter[di, dj, c, o] = sum over b, i, j of window(b, i, j)[di, dj, c] *
    out_backprop[b, i, j, o]``, where ``window(b, i, j)`` is the input patch
    the convolution read for output pixel ``(i, j)``.

    Args:
        input: ``[batch, height, width, in_channels]``.
        filter_sizes: the filter's shape, an int32 ``[4]``.
        out_backprop: the gradient of the convolution's output.
        strides, padding, dilations, data_format: those of the convolution.
        use_cudnn_on_gpu: ignored.
        name: op name (default ``Conv2DBackpropFilter``).

    Returns:
        A tensor of shape ``filter_sizes``.
    """
    del use_cudnn_on_gpu
    attrs = _conv_attrs("Conv2DBackpropFilter", strides, padding, data_format, dilations)
    return apply_op(_conv2d_backprop_filter, [input, filter_sizes, out_backprop], attrs=attrs,
                    name=name or "Conv2DBackpropFilter")


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """The transposed convolution (``tf.nn.conv2d_transpose``), "deconvolution".

    It is :func:`conv2d_backprop_input` under another name: it maps a
    convolution's output shape back to ``output_shape``, upsampling by the
    stride.  The filter is ``[height, width, output_channels, in_channels]``.

    Example:
        >>> x = tf.ones([1, 2, 2, 3]); w = tf.ones([3, 3, 1, 3])
        >>> tf.nn.conv2d_transpose(x, w, [1, 4, 4, 1], strides=2).shape
        TensorShape([Dimension(1), Dimension(4), Dimension(4), Dimension(1)])
    """
    value = _deprecated_alias("input", input, "value", value)
    filter = _deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
    graph = graph_of([value, filter, output_shape])
    with graph.as_default(), graph.name_scope(name or "conv2d_transpose") as scope:
        output_shape = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        return conv2d_backprop_input(output_shape, filter, value, strides, padding,
                                     data_format=data_format,
                                     dilations=dilations or (1, 1, 1, 1), name=scope)


def _conv_attrs_of(op):
    return {name: op.get_attr(name) for name in ("strides", "padding", "dilations")}


@gradient("Conv2D")
def _conv2d_gradient(op, grad):
    input, filter = op.inputs  # noqa: A001
    attrs = _conv_attrs_of(op)
    return [conv2d_backprop_input(array_ops.shape(input), filter, grad, **attrs),
            conv2d_backprop_filter(input, array_ops.shape(filter), grad, **attrs)]


@gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_gradient(op, grad):
    _, filter, out_backprop = op.inputs  # noqa: A001
    attrs = _conv_attrs_of(op)
    return [None,  # input_sizes: integers
            conv2d_backprop_filter(grad, array_ops.shape(filter), out_backprop, **attrs),
            conv2d(grad, filter, **attrs)]


@gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_gradient(op, grad):
    input, _, out_backprop = op.inputs  # noqa: A001
    attrs = _conv_attrs_of(op)
    return [conv2d_backprop_input(array_ops.shape(input), grad, out_backprop, **attrs),
            None,  # filter_sizes: integers
            conv2d(input, grad, **attrs)]


def _pool_shape(op):
    value = _rank_4(op.inputs[0].shape)
    ksize = op.get_attr("ksize")
    if ksize[0] != 1 or ksize[3] != 1:
        raise ValueError("minitf pools only over height and width: ksize must be "
                         "[1, kh, kw, 1], got %s" % (ksize,))
    return [_spatial_output_shape(op, value, ksize[1:3], [1, 1, 1, 1], value[3])]


_max_pool = define_op(
    "MaxPool", inputs=("input",), attrs={"ksize": None, "strides": None, "padding": None},
    shape_fn=_pool_shape, type_constraint=dtypes.NUMERIC,
    doc="The maximum of each ksize window of an NHWC input.")
_avg_pool = define_op(
    "AvgPool", inputs=("value",), attrs={"ksize": None, "strides": None, "padding": None},
    shape_fn=_pool_shape, type_constraint=dtypes.FLOATING,
    doc="The mean of each ksize window of an NHWC input (padding not counted).")


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002 - TF's argument name
    """The maximum over each ``ksize`` window (``tf.nn.max_pool``).

    Args:
        value: ``[batch, height, width, channels]``.
        ksize: the window: an int, ``[kh, kw]`` or ``[1, kh, kw, 1]``.
        strides: the window's step, same forms.
        padding: ``"VALID"`` or ``"SAME"``; padded positions never win.
        data_format: only ``"NHWC"``.
        name: op name (default ``MaxPool``).
        input: alias of ``value``.

    Raises:
        ValueError: for a rank other than 4, a window over batch or channels,
            or a window larger than a ``VALID`` input.
    """
    value = _deprecated_alias("input", input, "value", value)
    return _pool(_max_pool, value, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002 - TF's argument name
    """The mean over each ``ksize`` window (``tf.nn.avg_pool``).

    With ``SAME`` padding a border window averages only the input entries it
    covers: padding is neither a zero in the sum nor counted in the divisor.
    Arguments as for :func:`max_pool`.
    """
    value = _deprecated_alias("input", input, "value", value)
    return _pool(_avg_pool, value, ksize, strides, padding, data_format, name)


def _pool(op_def, value, ksize, strides, padding, data_format, name):
    _check_window_args(op_def.name, padding, data_format)
    return apply_op(op_def, [value], attrs=_pool_attrs(op_def.name, ksize, strides, padding,
                                                       data_format), name=name or op_def.name)


def _pool_attrs(op_type, ksize, strides, padding, data_format="NHWC"):
    _check_window_args(op_type, padding, data_format)
    return {"ksize": _get_sequence(ksize, "ksize"), "strides": _get_sequence(strides, "strides"),
            "padding": padding}


def _pool_attrs_of(op):
    return {name: op.get_attr(name) for name in ("ksize", "strides", "padding")}


# Pooling's backprop ops.  MaxPool routes each window's gradient to the
# window's maximum (the first one, on ties, as TF's kernel does); MaxPoolGrad
# is linear in that gradient, with the routing fixed by orig_input, so its own
# gradient is the adjoint routing, MaxPoolGradGrad: each window *reads* the
# gradient at its maximum.  AvgPoolGrad spreads each window's gradient evenly
# over the input entries it covered; its adjoint is AvgPool itself.
def _max_pool_grad_shape(op):
    orig_input, orig_output, grad = (_rank_4(t.shape) for t in op.inputs)
    _merge_dims(orig_output[3], grad[3])
    return [orig_input]


def _max_pool_grad_grad_shape(op):
    orig_input, orig_output, grad = (_rank_4(t.shape) for t in op.inputs)
    if not orig_input.is_compatible_with(grad):
        raise ValueError("grad must have orig_input's shape %s, got %s" % (orig_input, grad))
    return [orig_output]


def _avg_pool_grad_shape(op):
    _expect_int32(op, 0)
    return [_rank_4(constant_value_as_shape(op.inputs[0]))]


_POOL_ATTRS = {"ksize": None, "strides": None, "padding": None}
_max_pool_grad = define_op(
    "MaxPoolGrad", inputs=("orig_input", "orig_output", "grad"), attrs=_POOL_ATTRS,
    shape_fn=_max_pool_grad_shape, type_constraint=dtypes.FLOATING,
    same_dtype_inputs=("orig_input", "orig_output", "grad"),
    doc="Routes each window's gradient to the window's (first) maximum.")
_max_pool_grad_grad = define_op(
    "MaxPoolGradGrad", inputs=("orig_input", "orig_output", "grad"), attrs=_POOL_ATTRS,
    shape_fn=_max_pool_grad_grad_shape, type_constraint=dtypes.FLOATING,
    same_dtype_inputs=("orig_input", "orig_output", "grad"),
    doc="Reads grad (shaped like orig_input) at each window's maximum.")
_avg_pool_grad = define_op(
    "AvgPoolGrad", inputs=("orig_input_shape", "grad"), attrs=_POOL_ATTRS,
    shape_fn=_avg_pool_grad_shape, dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype],
    type_constraint=dtypes.FLOATING, same_dtype_inputs=("grad",),
    doc="Spreads each window's gradient evenly over the input entries it covers.")


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, name=None):
    """MaxPool's backprop: ``grad`` of each window goes to the window's maximum in ``orig_input``.

    Where windows overlap, an input entry collects the gradients of every
    window it is the maximum of (``gen_nn_ops.max_pool_grad``).
    """
    return apply_op(_max_pool_grad, [orig_input, orig_output, grad],
                    attrs=_pool_attrs("MaxPoolGrad", ksize, strides, padding),
                    name=name or "MaxPoolGrad")


def max_pool_grad_grad(orig_input, orig_output, grad, ksize, strides, padding, name=None):
    """The gradient of :func:`max_pool_grad`: ``grad`` read at each window's maximum.

    ``grad`` has ``orig_input``'s shape, the result ``orig_output``'s.
    """
    return apply_op(_max_pool_grad_grad, [orig_input, orig_output, grad],
                    attrs=_pool_attrs("MaxPoolGradGrad", ksize, strides, padding),
                    name=name or "MaxPoolGradGrad")


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, name=None):
    """AvgPool's backprop: each window's ``grad``, divided by the entries it averaged,
    added to each of them (``gen_nn_ops.avg_pool_grad``)."""
    return apply_op(_avg_pool_grad, [orig_input_shape, grad],
                    attrs=_pool_attrs("AvgPoolGrad", ksize, strides, padding),
                    name=name or "AvgPoolGrad")


@gradient("MaxPool")
def _max_pool_gradient(op, grad):
    return [max_pool_grad(op.inputs[0], op.outputs[0], grad, **_pool_attrs_of(op))]


@gradient("MaxPoolGrad")
def _max_pool_grad_gradient(op, grad):
    # The routing is piecewise constant in orig_input (and orig_output): zero.
    orig_input, orig_output, _ = op.inputs
    return [array_ops.zeros_like(orig_input), array_ops.zeros_like(orig_output),
            max_pool_grad_grad(orig_input, orig_output, grad, **_pool_attrs_of(op))]


@gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_gradient(op, grad):
    orig_input, orig_output, _ = op.inputs
    return [array_ops.zeros_like(orig_input), array_ops.zeros_like(orig_output),
            max_pool_grad(orig_input, orig_output, grad, **_pool_attrs_of(op))]


@gradient("AvgPool")
def _avg_pool_gradient(op, grad):
    return [avg_pool_grad(array_ops.shape(op.inputs[0]), grad, **_pool_attrs_of(op))]


@gradient("AvgPoolGrad")
def _avg_pool_grad_gradient(op, grad):
    return [None, avg_pool(grad, **_pool_attrs_of(op))]  # orig_input_shape: integers


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
