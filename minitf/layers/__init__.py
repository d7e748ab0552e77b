"""``tf.layers``: variables and ops packaged as reusable layers (TF1's API).

Each layer is a class (``tf.layers.Dense``) and a function that makes one
and calls it (``tf.layers.dense``).  A layer creates its variables with
``tf.get_variable`` in a variable scope named after it (``dense/kernel``,
``conv2d_1/bias``), so checkpoints and ``tf.trainable_variables()`` read as
in TensorFlow 1.x.  :mod:`minitf.layers.base` explains the life of a layer.

Example:
    >>> images = tf.placeholder(tf.float32, [None, 28, 28, 1])
    >>> h = tf.layers.conv2d(images, 32, 5, padding="same", activation=tf.nn.relu)
    >>> h = tf.layers.max_pooling2d(h, 2, 2)
    >>> logits = tf.layers.dense(tf.layers.flatten(h), 10)
"""

from minitf.layers.base import InputSpec, Layer
from minitf.layers.convolutional import Conv2D, Conv2DTranspose, conv2d, conv2d_transpose
from minitf.layers.convolutional_1d import (
    AveragePooling1D, Conv1D, MaxPooling1D, average_pooling1d, conv1d, max_pooling1d)
from minitf.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from minitf.layers.normalization import BatchNormalization, batch_normalization
from minitf.layers.pooling import (
    AveragePooling2D, MaxPooling2D, average_pooling2d, max_pooling2d)

__all__ = [
    "AveragePooling1D", "AveragePooling2D", "BatchNormalization", "Conv1D", "Conv2D",
    "Conv2DTranspose", "Dense", "Dropout", "Flatten", "InputSpec", "Layer", "MaxPooling1D",
    "MaxPooling2D", "average_pooling1d", "average_pooling2d", "batch_normalization", "conv1d",
    "conv2d", "conv2d_transpose", "dense", "dropout", "flatten", "max_pooling1d",
    "max_pooling2d",
]
