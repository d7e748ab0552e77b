"""2-D convolution: ``conv2d``, its two backprop ops and ``conv2d_transpose``.

Image ops use TF's default layout, NHWC (batch, height, width, channels), and
filters are HWIO (height, width, in_channels, out_channels).  The helpers
that compute a window's output size (SAME/VALID padding, strides,
dilations) are shared with :mod:`~minitf.ops.pooling_ops`.

Mirrors the convolution parts of ``tensorflow/python/ops/nn_ops.py`` and
``nn_grad.py``.
"""

import numbers

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_util import constant_value_as_shape
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops
from minitf.ops.common_shapes import merge_dims
from minitf.ops.op_def_library import (
    apply_op, define_op, deprecated_alias, gradient, graph_of)



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
        ValueError: if a ``VALID`` window is larger than the input, or the
            stride, filter size or dilation is not positive.
    """
    if stride <= 0:
        raise ValueError("Stride must be > 0, but got %d" % stride)
    if dilation < 1:
        raise ValueError("Dilation rate must be >= 1, but got %d" % dilation)
    if filter_size is not None and filter_size <= 0:
        raise ValueError("Window size must be > 0, but got %d" % filter_size)
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


def get_sequence(value, name):
    """``2``, ``[2, 3]`` or ``[1, 2, 3, 1]`` as TF's NHWC 4-list (``nn_ops.get_sequence``)."""
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


def check_window_args(op_type, padding, data_format):
    if padding not in ("SAME", "VALID"):
        raise ValueError("Attr 'padding' of '%s' Op passed string '%s' not in: \"SAME\", "
                         "\"VALID\"." % (op_type, padding))
    if data_format not in (None, "NHWC"):
        raise ValueError("minitf's %s supports only data_format='NHWC' (as TF's CPU kernels); "
                         "got %r. Move channels last with tf.transpose(x, [0, 2, 3, 1])."
                         % (op_type, data_format))


def check_window_attrs(op):
    """Refuses a ``strides`` or ``ksize`` entry below 1, or a ``dilations``
    entry below 1, when the graph is built (TF's shape functions: "Stride
    must be > 0, but got 0"), whatever the input's shape: otherwise the
    kernel would divide by zero when the step runs."""
    checks = (("strides", "Stride must be > 0"), ("ksize", "Sliding window ksize must be > 0"),
              ("dilations", "Dilation rate must be >= 1"))
    for attr, message in checks:
        if attr in op.op_def.attrs:
            for value in op.get_attr(attr):
                if value < 1:
                    raise ValueError("%s, but got %d (%s = %s)"
                                     % (message, value, attr, list(op.get_attr(attr))))


def spatial_output_shape(op, input_shape, window, dilations, channels):
    """``[batch, out_height, out_width, channels]`` of a window op on an NHWC input.

    ``window`` is ``(height, width)`` of the (undilated) window, None if unknown.

    Raises:
        ValueError: for a stride, window or dilation below 1 (:func:`check_window_attrs`).
    """
    check_window_attrs(op)
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


def rank_4(shape):
    if shape.ndims is not None and shape.ndims != 4:
        raise ValueError("Shape must be rank 4 but is rank %d" % shape.ndims)
    return shape.with_rank(4)


def _conv2d_shape(op):
    value, filters = rank_4(op.inputs[0].shape), rank_4(op.inputs[1].shape)
    merge_dims(value[3], filters[2])
    dilations = op.get_attr("dilations")
    if dilations[0] != 1 or dilations[3] != 1:
        raise ValueError("Current implementation does not yet support dilations in the batch "
                         "and depth dimensions.")
    window = (filters[0].value, filters[1].value)
    return [spatial_output_shape(op, value, window, dilations, filters[3])]


_conv2d = define_op(
    "Conv2D", inputs=("input", "filter"),
    attrs=("strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
           "dilations: list(int) = [1, 1, 1, 1]"),
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
    filter = deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
    check_window_args("Conv2D", padding, data_format)
    attrs = {"strides": get_sequence(strides, "strides"), "padding": padding,
             "dilations": get_sequence(dilations, "dilations")}
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
def expect_int32(op, index):
    dtype = op.inputs[index].dtype.base_dtype
    if dtype != dtypes.int32:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: int32" % (op.op_def.inputs[index], dtype.name))


def _check_out_backprop(op, input_shape, filter_shape):
    """``out_backprop`` must have the shape Conv2D gives ``input_shape`` and the filter."""
    out_backprop = rank_4(op.inputs[2].shape)
    window = (filter_shape[0].value, filter_shape[1].value)
    expected = spatial_output_shape(op, input_shape, window, op.get_attr("dilations"),
                                     filter_shape[3])
    if not expected.is_compatible_with(out_backprop):
        raise ValueError("out_backprop has shape %s but the convolution's output has shape %s"
                         % (out_backprop, expected))
    merge_dims(input_shape[3], filter_shape[2])


def _conv2d_backprop_input_shape(op):
    expect_int32(op, 0)
    input_shape = rank_4(constant_value_as_shape(op.inputs[0]))
    filter_shape = rank_4(op.inputs[1].shape)
    _check_out_backprop(op, input_shape, filter_shape)
    dims = input_shape.dims
    dims[3] = merge_dims(dims[3], filter_shape[2])
    return [TensorShape(dims)]


def _conv2d_backprop_filter_shape(op):
    expect_int32(op, 1)
    input_shape = rank_4(op.inputs[0].shape)
    filter_shape = rank_4(constant_value_as_shape(op.inputs[1]))
    _check_out_backprop(op, input_shape, filter_shape)
    dims = filter_shape.dims
    dims[2] = merge_dims(dims[2], input_shape[3])
    dims[3] = merge_dims(dims[3], op.inputs[2].shape[3])
    return [TensorShape(dims)]


_CONV_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32)
_CONV_ATTRS = ("strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
               "dilations: list(int) = [1, 1, 1, 1]")
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
    check_window_args(op_type, padding, data_format)
    return {"strides": get_sequence(strides, "strides"), "padding": padding,
            "dilations": get_sequence(dilations, "dilations")}


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
    filter = deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
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
    value = deprecated_alias("input", input, "value", value)
    filter = deprecated_alias("filters", filters, "filter", filter)  # noqa: A001
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


