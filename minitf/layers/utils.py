"""Argument normalisation shared by the layers: tuples, padding, data formats.

A layer accepts ``kernel_size=3`` or ``(3, 3)``, ``padding="SAME"`` or
``"same"``, an activation as a function or a name.  These helpers turn each
into one canonical form at construction time and raise TF1's ValueErrors for
anything else, so a typo fails where the layer is built.

Mirrors ``tensorflow/python/layers/utils.py`` (and ``keras.activations.get``).
"""

import numbers

from minitf.framework import tensor_util
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import nn_ops, softmax_ops, transpose_ops, unary_ops


def normalize_tuple(value, n, name):
    """``value`` as a tuple of ``n`` ints: ``3 -> (3, 3)``, ``(1, 2) -> (1, 2)``.

    Args:
        value: an int, or an iterable of ``n`` ints.
        n: the length of the result.
        name: the argument's name, for the error message (``"kernel_size"``).

    Raises:
        ValueError: if ``value`` is neither an int nor ``n`` ints.
    """
    if isinstance(value, int):
        return (value,) * n
    message = ("The `%s` argument must be a tuple of %d integers. Received: %s"
               % (name, n, value))
    try:
        value = tuple(value)
    except TypeError:
        raise ValueError(message) from None
    if len(value) != n or not all(isinstance(v, int) for v in value):
        raise ValueError(message)
    return value


def normalize_padding(value):
    """``"valid"`` or ``"same"``, whatever the case it was given in."""
    padding = value.lower() if isinstance(value, str) else value
    if padding not in ("valid", "same"):
        raise ValueError('The `padding` argument must be one of "valid", "same". Received: %s'
                         % (value,))
    return padding


def normalize_data_format(value):
    """``"channels_last"`` (NHWC, the default) or ``"channels_first"`` (NCHW)."""
    data_format = "channels_last" if value is None else value.lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         '"channels_last". Received: %s' % (value,))
    return data_format


# The activations a layer accepts by name: the tf.nn function of that name.
_ACTIVATIONS = {
    "relu": nn_ops.relu, "relu6": nn_ops.relu6, "elu": nn_ops.elu, "selu": nn_ops.selu,
    "softplus": nn_ops.softplus, "softsign": nn_ops.softsign, "softmax": softmax_ops.softmax,
    "sigmoid": unary_ops.sigmoid, "tanh": unary_ops.tanh,
}


def get_activation(activation):
    """A callable activation: ``activation`` itself, ``tf.nn.<name>`` for a
    name (``"relu"``), or None for None and ``"linear"``.

    Raises:
        ValueError: for an unknown name.
    """
    if activation is None or callable(activation):
        return activation
    if activation == "linear":
        return None
    if activation in _ACTIVATIONS:
        return _ACTIVATIONS[activation]
    raise ValueError("Unknown activation function: %s (known: linear, %s)"
                     % (activation, ", ".join(_ACTIVATIONS)))


def to_nhwc(inputs, data_format):
    """Transposes an NCHW batch to NHWC (identity for ``channels_last``).

    minitf's convolution and pooling kernels are NHWC only, so a
    ``channels_first`` layer transposes around them (TF runs NCHW natively
    on GPUs).  :func:`from_nhwc` undoes it.
    """
    if data_format == "channels_first":
        return transpose_ops.transpose(inputs, [0, 2, 3, 1])
    return inputs


def from_nhwc(outputs, data_format):
    """Transposes an NHWC result back to NCHW for a ``channels_first`` layer."""
    if data_format == "channels_first":
        return transpose_ops.transpose(outputs, [0, 3, 1, 2])
    return outputs


def static_bool(training):
    """``training`` as a Python bool when it is known while the graph is built
    (a bool, or a constant tensor), else None: a placeholder, decided per run.

    Layers choose their branch now when they can, as TF's ``smart_cond`` does.
    """
    if isinstance(training, (bool, numbers.Integral)):
        return bool(training)
    value = tensor_util.constant_value(convert_to_tensor(training))
    return None if value is None else bool(value)
