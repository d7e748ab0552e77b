"""``Conv2D``: a learned 2-D convolution, with its functional form ``conv2d``.

Example:
    >>> images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    >>> h = tf.layers.conv2d(images, 32, 5, padding="same", activation=tf.nn.relu)
    >>> h.shape                                     # conv2d/kernel: [5, 5, 1, 32]
    TensorShape([Dimension(None), Dimension(28), Dimension(28), Dimension(32)])

Mirrors ``tensorflow/python/layers/convolutional.py`` (TF 1.x).
"""

import minitf as tf
from minitf.layers import base, utils
from minitf.ops import init_ops


class Conv2D(base.Layer):
    """``activation(conv2d(inputs, kernel) + bias)`` (``tf.layers.Conv2D``).

    Variables: ``kernel`` ``[kh, kw, in_channels, filters]`` (Glorot uniform
    unless ``kernel_initializer``; its fans count the receptive field) and
    ``bias`` ``[filters]`` (zeros).  The arguments ``activation``,
    ``use_bias``, the ``*_initializer``, ``*_regularizer`` and ``*_constraint``
    ones, ``trainable`` and ``name`` are as for :class:`~minitf.layers.core.Dense`.

    Args:
        filters: the number of output channels.
        kernel_size: an int or ``(kh, kw)``.
        strides: an int or ``(sh, sw)``.
        padding: ``"valid"`` or ``"same"``, in any case.
        data_format: ``"channels_last"`` (NHWC, default) or ``"channels_first"``
            (NCHW; minitf transposes to NHWC around the NHWC-only kernel).
        dilation_rate: an int or ``(dh, dw)``; > 1 cannot go with strides > 1.

    Raises:
        ValueError: for a malformed tuple, padding or data format, or dilation
            with strides; on the first call for inputs not of rank 4, or with
            an unknown number of channels.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = utils.normalize_tuple(kernel_size, 2, "kernel_size")
        self.strides = utils.normalize_tuple(strides, 2, "strides")
        self.padding = utils.normalize_padding(padding)
        self.data_format = utils.normalize_data_format(data_format)
        self.dilation_rate = utils.normalize_tuple(dilation_rate, 2, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        self.activation = utils.get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = base.InputSpec(ndim=4)

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        channel_axis = 1 if self.data_format == "channels_first" else -1
        in_channels = input_shape[channel_axis].value if input_shape.ndims else None
        if in_channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        self.input_spec = base.InputSpec(ndim=4, axes={channel_axis: in_channels})
        self.kernel = self.add_weight(
            "kernel", shape=list(self.kernel_size) + [in_channels, self.filters],
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint, trainable=True, dtype=self._dtype)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=[self.filters], initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                trainable=True, dtype=self._dtype)
        self.built = True

    def call(self, inputs):
        outputs = tf.nn.conv2d(utils.to_nhwc(inputs, self.data_format), self.kernel,
                               strides=[1, *self.strides, 1], padding=self.padding.upper(),
                               dilations=[1, *self.dilation_rate, 1])
        outputs = utils.from_nhwc(outputs, self.data_format)
        if self.use_bias:
            data_format = "NCHW" if self.data_format == "channels_first" else "NHWC"
            outputs = tf.nn.bias_add(outputs, self.bias, data_format=data_format)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """A 2-D convolution layer applied to ``inputs`` (``tf.layers.conv2d``).

    Makes a :class:`Conv2D` and calls it: variables ``conv2d/kernel``
    ``[kh, kw, in, filters]`` and ``conv2d/bias``, then ``conv2d_1/...``;
    ``name`` and ``reuse`` work as for :func:`~minitf.layers.core.dense`.

    Returns:
        ``[batch, out_h, out_w, filters]`` (``[batch, filters, out_h, out_w]``
        for ``channels_first``): ``ceil(in / stride)`` with ``"same"``
        padding, ``ceil((in - dilated_kernel + 1) / stride)`` with ``"valid"``.
    """
    layer = Conv2D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)

