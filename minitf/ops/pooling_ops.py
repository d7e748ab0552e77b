"""Max and average pooling over NHWC windows, with their gradient ops.

Output sizes follow the same SAME/VALID rules as convolution
(:func:`~minitf.ops.conv_ops.get_windowed_output_size`).

Mirrors the pooling parts of ``tensorflow/python/ops/nn_ops.py`` and
``nn_grad.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_util import constant_value_as_shape
from minitf.ops import array_ops
from minitf.ops.common_shapes import merge_dims
from minitf.ops.conv_ops import (
    check_window_args, check_window_attrs, expect_int32, get_sequence, rank_4,
    spatial_output_shape)
from minitf.ops.op_def_library import apply_op, define_op, deprecated_alias, gradient



def _pool_shape(op):
    value = rank_4(op.inputs[0].shape)
    ksize = op.get_attr("ksize")
    if ksize[0] != 1 or ksize[3] != 1:
        raise ValueError("minitf pools only over height and width: ksize must be "
                         "[1, kh, kw, 1], got %s" % (ksize,))
    return [spatial_output_shape(op, value, ksize[1:3], [1, 1, 1, 1], value[3])]


_max_pool = define_op(
    "MaxPool", inputs=("input",),
    attrs=("ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}"),
    shape_fn=_pool_shape, type_constraint=dtypes.NUMERIC,
    doc="The maximum of each ksize window of an NHWC input.")
_avg_pool = define_op(
    "AvgPool", inputs=("value",),
    attrs=("ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}"),
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
    value = deprecated_alias("input", input, "value", value)
    return _pool(_max_pool, value, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None,
             input=None):  # noqa: A002 - TF's argument name
    """The mean over each ``ksize`` window (``tf.nn.avg_pool``).

    With ``SAME`` padding a border window averages only the input entries it
    covers: padding is neither a zero in the sum nor counted in the divisor.
    Arguments as for :func:`max_pool`.
    """
    value = deprecated_alias("input", input, "value", value)
    return _pool(_avg_pool, value, ksize, strides, padding, data_format, name)


def _pool(op_def, value, ksize, strides, padding, data_format, name):
    check_window_args(op_def.name, padding, data_format)
    return apply_op(op_def, [value], attrs=_pool_attrs(op_def.name, ksize, strides, padding,
                                                       data_format), name=name or op_def.name)


def _pool_attrs(op_type, ksize, strides, padding, data_format="NHWC"):
    check_window_args(op_type, padding, data_format)
    return {"ksize": get_sequence(ksize, "ksize"), "strides": get_sequence(strides, "strides"),
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
    check_window_attrs(op)
    orig_input, orig_output, grad = (rank_4(t.shape) for t in op.inputs)
    merge_dims(orig_output[3], grad[3])
    return [orig_input]


def _max_pool_grad_grad_shape(op):
    check_window_attrs(op)
    orig_input, orig_output, grad = (rank_4(t.shape) for t in op.inputs)
    if not orig_input.is_compatible_with(grad):
        raise ValueError("grad must have orig_input's shape %s, got %s" % (orig_input, grad))
    return [orig_output]


def _avg_pool_grad_shape(op):
    check_window_attrs(op)
    expect_int32(op, 0)
    return [rank_4(constant_value_as_shape(op.inputs[0]))]


_POOL_ATTRS = ("ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID'}")
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


