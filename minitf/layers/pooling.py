"""2-D pooling layers: ``MaxPooling2D`` and ``AveragePooling2D``, and their functions.

Pooling layers have no variables: each is a ``tf.nn.max_pool`` /
``tf.nn.avg_pool`` in its own name scope, with Keras-style arguments
(``pool_size=2`` rather than ``ksize=[1, 2, 2, 1]``).

Example:
    >>> h = tf.layers.max_pooling2d(h, pool_size=2, strides=2)   # halves height and width

Mirrors ``tensorflow/python/layers/pooling.py`` (TF 1.x).
"""

from minitf.layers import base, utils
from minitf.ops import pooling_ops


class _Pooling2D(base.Layer):
    """A window function over the spatial dimensions of a rank-4 batch.

    Args:
        pool_fn: ``tf.nn.max_pool`` or ``tf.nn.avg_pool``.
        pool_size: an int or ``(ph, pw)``.
        strides: an int or ``(sh, sw)``.
        padding: ``"valid"`` or ``"same"``, in any case.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``
            (transposed to NHWC around the NHWC-only kernel).
        name: the layer's name.
    """

    def __init__(self, pool_fn, pool_size, strides, padding="valid",
                 data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_function = pool_fn
        self.pool_size = utils.normalize_tuple(pool_size, 2, "pool_size")
        self.strides = utils.normalize_tuple(strides, 2, "strides")
        self.padding = utils.normalize_padding(padding)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(ndim=4)

    def call(self, inputs):
        outputs = self.pool_function(utils.to_nhwc(inputs, self.data_format),
                                     ksize=[1, *self.pool_size, 1],
                                     strides=[1, *self.strides, 1],
                                     padding=self.padding.upper(), data_format="NHWC")
        return utils.from_nhwc(outputs, self.data_format)


class MaxPooling2D(_Pooling2D):
    """The maximum of each window (``tf.layers.MaxPooling2D``)."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(pooling_ops.max_pool, pool_size, strides, padding=padding,
                         data_format=data_format, name=name, **kwargs)


class AveragePooling2D(_Pooling2D):
    """The mean of each window, padding not counted (``tf.layers.AveragePooling2D``)."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(pooling_ops.avg_pool, pool_size, strides, padding=padding,
                         data_format=data_format, name=name, **kwargs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max pooling over 2-D windows (``tf.layers.max_pooling2d``); op ``max_pooling2d/MaxPool``.

    Args:
        inputs: ``[batch, height, width, channels]`` (``channels_first``:
            ``[batch, channels, height, width]``).
        pool_size, strides, padding, data_format, name: as for :class:`MaxPooling2D`.
    """
    layer = MaxPooling2D(pool_size=pool_size, strides=strides, padding=padding,
                         data_format=data_format, name=name)
    return layer.apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Average pooling over 2-D windows (``tf.layers.average_pooling2d``); op
    ``average_pooling2d/AvgPool``.  Arguments as for :func:`max_pooling2d`."""
    layer = AveragePooling2D(pool_size=pool_size, strides=strides, padding=padding,
                             data_format=data_format, name=name)
    return layer.apply(inputs)

