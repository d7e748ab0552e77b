"""1-D layers over sequences: ``Conv1D``, ``MaxPooling1D``, ``AveragePooling1D``.

A batch of sequences is ``[batch, width, channels]``.  Each 1-D layer is its
2-D counterpart run on a batch of height 1: the input gets a height axis
(``[batch, 1, width, channels]``), the window is ``(1, k)``, and the height
axis is squeezed away from the result — exactly how TF's ``tf.nn.conv1d``
and ``pooling1d`` are built.  The kernel variable keeps TF's 1-D shape
``[k, in_channels, filters]`` (``conv1d/kernel``), so checkpoints match.

Example:
    >>> words = tf.placeholder(tf.float32, [None, 20, 50])   # 20 words, 50-d embeddings
    >>> h = tf.layers.conv1d(words, filters=64, kernel_size=3, activation=tf.nn.relu)
    >>> h.shape                                               # "valid": 20 - 3 + 1
    TensorShape([Dimension(None), Dimension(18), Dimension(64)])
    >>> tf.layers.max_pooling1d(h, pool_size=2, strides=2).shape
    TensorShape([Dimension(None), Dimension(9), Dimension(64)])

Mirrors ``tensorflow/python/layers/convolutional.py`` and ``pooling.py`` (TF 1.x).
"""

from minitf.api_scopes import name_scope
from minitf.framework.tensor_shape import TensorShape
from minitf.layers import base, utils
from minitf.layers.convolutional import Conv2D
from minitf.layers.pooling import AveragePooling2D, MaxPooling2D
from minitf.ops import array_ops, conv_ops, init_ops, transpose_ops


def _to_nwc(inputs, data_format):
    """``[batch, channels, width]`` to ``[batch, width, channels]`` for ``channels_first``."""
    if data_format == "channels_first":
        return transpose_ops.transpose(inputs, [0, 2, 1])
    return inputs


def _from_nwc(outputs, data_format):
    if data_format == "channels_first":
        return transpose_ops.transpose(outputs, [0, 2, 1])
    return outputs


class Conv1D(Conv2D):
    """``activation(conv1d(inputs, kernel) + bias)`` (``tf.layers.Conv1D``).

    Variables: ``kernel`` ``[k, in_channels, filters]`` and ``bias``
    ``[filters]``; the other arguments are as for
    :class:`~minitf.layers.convolutional.Conv2D`, with ints (or 1-tuples) for
    ``kernel_size``, ``strides`` and ``dilation_rate``.

    Raises:
        ValueError: as :class:`Conv2D`; on the first call for inputs not of rank 3.
    """

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None,
                 use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(
            filters, (1, *utils.normalize_tuple(kernel_size, 1, "kernel_size")),
            strides=(1, *utils.normalize_tuple(strides, 1, "strides")), padding=padding,
            data_format=data_format,
            dilation_rate=(1, *utils.normalize_tuple(dilation_rate, 1, "dilation_rate")),
            activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
            trainable=trainable, name=name, **kwargs)
        self.input_spec = base.InputSpec(ndim=3)

    def build(self, input_shape):
        super().build(input_shape)
        channel_axis = 1 if self.data_format == "channels_first" else -1
        self.input_spec = base.InputSpec(
            ndim=3, axes={channel_axis: TensorShape(input_shape)[channel_axis].value})

    def _kernel_shape(self, in_channels):
        return [self.kernel_size[1], in_channels, self.filters]

    def call(self, inputs):
        with name_scope("conv1d"):
            rows = array_ops.expand_dims(_to_nwc(inputs, self.data_format), 1)  # [batch, 1, w, c]
            kernel = array_ops.expand_dims(self.kernel, 0)  # [1, k, in, filters]
            outputs = conv_ops.conv2d(rows, kernel, strides=[1, *self.strides, 1],
                                      padding=self.padding.upper(),
                                      dilations=[1, *self.dilation_rate, 1])
            outputs = array_ops.squeeze(outputs, [1])
        return self._bias_and_activation(_from_nwc(outputs, self.data_format))


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """A 1-D convolution layer applied to ``inputs`` (``tf.layers.conv1d``).

    Variables ``conv1d/kernel`` ``[k, in, filters]`` and ``conv1d/bias``;
    ``name`` and ``reuse`` work as for :func:`~minitf.layers.core.dense`.

    Returns:
        ``[batch, out_width, filters]``: ``ceil(width / stride)`` with
        ``"same"``, ``ceil((width - dilated_k + 1) / stride)`` with ``"valid"``.
    """
    layer = Conv1D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                   trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)


class _Pooling1D:
    """Runs a 2-D pooling layer's ``call`` on a batch of height 1 (a mixin)."""

    def _init_1d(self, data_format):
        self.data_format_1d = utils.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(ndim=3)

    def call(self, inputs):
        rows = array_ops.expand_dims(_to_nwc(inputs, self.data_format_1d), 1)
        outputs = super().call(rows)
        return _from_nwc(array_ops.squeeze(outputs, [1]), self.data_format_1d)


class MaxPooling1D(_Pooling1D, MaxPooling2D):
    """The maximum of each window of a sequence (``tf.layers.MaxPooling1D``).

    Args:
        pool_size, strides: ints (or 1-tuples).
        padding: ``"valid"`` or ``"same"``.
        data_format: ``"channels_last"`` (``[batch, width, channels]``) or
            ``"channels_first"``.
    """

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__((1, *utils.normalize_tuple(pool_size, 1, "pool_size")),
                         (1, *utils.normalize_tuple(strides, 1, "strides")), padding=padding,
                         name=name, **kwargs)
        self._init_1d(data_format)


class AveragePooling1D(_Pooling1D, AveragePooling2D):
    """The mean of each window of a sequence, padding not counted
    (``tf.layers.AveragePooling1D``).  Arguments as for :class:`MaxPooling1D`."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__((1, *utils.normalize_tuple(pool_size, 1, "pool_size")),
                         (1, *utils.normalize_tuple(strides, 1, "strides")), padding=padding,
                         name=name, **kwargs)
        self._init_1d(data_format)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max pooling over 1-D windows (``tf.layers.max_pooling1d``)."""
    layer = MaxPooling1D(pool_size=pool_size, strides=strides, padding=padding,
                         data_format=data_format, name=name)
    return layer.apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Average pooling over 1-D windows (``tf.layers.average_pooling1d``)."""
    layer = AveragePooling1D(pool_size=pool_size, strides=strides, padding=padding,
                             data_format=data_format, name=name)
    return layer.apply(inputs)
