"""``Conv2D`` and ``Conv2DTranspose``: learned 2-D convolutions, with their
functional forms ``conv2d`` and ``conv2d_transpose``.

Example:
    >>> images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    >>> h = tf.layers.conv2d(images, 32, 5, padding="same", activation=tf.nn.relu)
    >>> h.shape                                     # conv2d/kernel: [5, 5, 1, 32]
    TensorShape([Dimension(None), Dimension(28), Dimension(28), Dimension(32)])

Mirrors ``tensorflow/python/layers/convolutional.py`` (TF 1.x).
"""

from minitf.framework.tensor_shape import TensorShape
from minitf.layers import base, utils
from minitf.ops import array_ops, conv_ops, init_ops, joining_ops, nn_ops


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
        input_shape = TensorShape(input_shape)
        channel_axis = 1 if self.data_format == "channels_first" else -1
        in_channels = input_shape[channel_axis].value if input_shape.ndims else None
        if in_channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. "
                             "Found `None`.")
        self.input_spec = base.InputSpec(ndim=4, axes={channel_axis: in_channels})
        self.kernel = self.add_weight(
            "kernel", shape=self._kernel_shape(in_channels),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint, trainable=True, dtype=self._dtype)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=[self.filters], initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                trainable=True, dtype=self._dtype)
        self.built = True

    def _kernel_shape(self, in_channels):
        return list(self.kernel_size) + [in_channels, self.filters]

    def call(self, inputs):
        outputs = conv_ops.conv2d(utils.to_nhwc(inputs, self.data_format), self.kernel,
                                  strides=[1, *self.strides, 1], padding=self.padding.upper(),
                                  dilations=[1, *self.dilation_rate, 1])
        return self._bias_and_activation(utils.from_nhwc(outputs, self.data_format))

    def _bias_and_activation(self, outputs):
        if self.use_bias:
            data_format = "NCHW" if self.data_format == "channels_first" else "NHWC"
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=data_format)
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




class Conv2DTranspose(Conv2D):
    """The transposed convolution as a layer (``tf.layers.Conv2DTranspose``), the
    upsampling step of decoders and GAN generators.

    Each input pixel adds a ``kernel``-weighted patch to the output, patches
    ``stride`` apart (``tf.nn.conv2d_transpose``: the gradient of a
    convolution with respect to its input).  The output is ``in * stride``
    pixels high and wide with ``"same"`` padding, ``in * stride + max(k -
    stride, 0)`` with ``"valid"``.

    Variables: ``kernel`` ``[kh, kw, filters, in_channels]`` — output channels
    before input channels, the other way round from :class:`Conv2D` — and
    ``bias`` ``[filters]``.  Arguments as for :class:`Conv2D`, without
    ``dilation_rate``.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding,
                         data_format=data_format, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)

    def _kernel_shape(self, in_channels):
        return list(self.kernel_size) + [self.filters, in_channels]

    def _output_size(self, size, kernel, stride):
        """TF's ``deconv_output_length`` (no output padding), for ints or tensors."""
        if self.padding == "valid":
            return size * stride + max(kernel - stride, 0)
        return size * stride

    def call(self, inputs):
        nhwc = utils.to_nhwc(inputs, self.data_format)
        dynamic = array_ops.shape(nhwc)
        sizes = [self._output_size(dynamic[axis], k, s)
                 for axis, k, s in zip((1, 2), self.kernel_size, self.strides)]
        output_shape = joining_ops.stack([dynamic[0], sizes[0], sizes[1], self.filters])
        outputs = conv_ops.conv2d_transpose(nhwc, self.kernel, output_shape,
                                          strides=[1, *self.strides, 1],
                                          padding=self.padding.upper())
        static = nhwc.shape.as_list()
        outputs.set_shape([static[0]] + [
            None if n is None else self._output_size(n, k, s)
            for n, k, s in zip(static[1:3], self.kernel_size, self.strides)] + [self.filters])
        return self._bias_and_activation(utils.from_nhwc(outputs, self.data_format))


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """A transposed convolution layer applied to ``inputs``
    (``tf.layers.conv2d_transpose``): variables ``conv2d_transpose/kernel``
    ``[kh, kw, filters, in]`` and ``conv2d_transpose/bias``.

    Example:
        >>> codes = tf.placeholder(tf.float32, [None, 7, 7, 16])
        >>> tf.layers.conv2d_transpose(codes, 8, 3, strides=2, padding="same").shape
        TensorShape([Dimension(None), Dimension(14), Dimension(14), Dimension(8)])
    """
    layer = Conv2DTranspose(filters=filters, kernel_size=kernel_size, strides=strides,
                            padding=padding, data_format=data_format, activation=activation,
                            use_bias=use_bias, kernel_initializer=kernel_initializer,
                            bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer,
                            bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer,
                            kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                            trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)
