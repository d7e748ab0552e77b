"""The core layers: ``Dense``, ``Dropout`` and ``Flatten``, with their functional forms.

Example:
    >>> x = tf.placeholder(tf.float32, [None, 784])
    >>> hidden = tf.layers.dense(x, 128, activation=tf.nn.relu)     # dense/kernel: [784, 128]
    >>> hidden = tf.layers.dropout(hidden, rate=0.5, training=is_training)
    >>> logits = tf.layers.dense(hidden, 10, name="logits")         # logits/kernel: [128, 10]

Mirrors ``tensorflow/python/layers/core.py`` (TF 1.x).
"""

from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_shape import TensorShape
from minitf.layers import base, utils
from minitf.ops import (
    array_ops, init_ops, joining_ops, linalg_ops, nn_ops, select_ops, slicing_ops, transpose_ops)


# ---- Dense ------------------------------------------------------------------------------------
class Dense(base.Layer):
    """A fully connected layer: ``activation(inputs @ kernel + bias)`` (``tf.layers.Dense``).

    Variables: ``kernel`` ``[in, units]`` (Glorot uniform unless
    ``kernel_initializer``) and ``bias`` ``[units]`` (zeros).  Inputs of rank
    above 2 are multiplied along their last axis, as ``tf.tensordot`` does:
    ``[batch, time, in] -> [batch, time, units]``.

    Args:
        units: the output size.
        activation: a function (``tf.nn.relu``), an activation's name, or None.
        use_bias: add a bias.
        kernel_initializer, bias_initializer: initializers of the variables.
        kernel_regularizer, bias_regularizer: ``fn(variable) -> loss``.
        activity_regularizer: ``fn(output) -> loss``.
        kernel_constraint, bias_constraint: projections applied by optimizers.
        trainable: put the variables in ``TRAINABLE_VARIABLES``.
        name: the layer's name (see :class:`~minitf.layers.base.Layer`).

    Raises:
        ValueError (on the first call): for inputs of rank < 2, or whose last
            dimension is unknown.
    """

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = utils.get_activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = base.InputSpec(min_ndim=2)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        last_dim = input_shape[-1].value if input_shape.ndims else None
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be "
                             "defined. Found None. Full input shape received: %s" % input_shape)
        self.input_spec = base.InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight(
            "kernel", shape=[last_dim, self.units], initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
            dtype=self._dtype, trainable=True)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias", shape=[self.units], initializer=self.bias_initializer,
                regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                dtype=self._dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank is None or rank == 2:
            outputs = linalg_ops.matmul(inputs, self.kernel)
        else:
            outputs = _tensordot_last_axis(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs


def _tensordot_last_axis(inputs, kernel):
    """``tf.tensordot(inputs, kernel, [[rank - 1], [0]])``, in its ``Tensordot`` scope.

    A matrix product applied to every vector along the last axis: flatten the
    leading axes into one, multiply, and restore them.
    """
    in_dim, units = kernel.shape.as_list()
    with get_default_graph().name_scope("Tensordot") as scope:
        flat = array_ops.reshape(inputs, [-1, in_dim])
        product = linalg_ops.matmul(flat, kernel)
        leading = inputs.shape.as_list()[:-1]
        if None in leading:
            leading = slicing_ops.strided_slice(array_ops.shape(inputs), [0], [-1], [1])
            output_shape = joining_ops.concat([leading, [units]], 0)
        else:
            output_shape = leading + [units]
        outputs = array_ops.reshape(product, output_shape, name=scope)
    outputs.set_shape(inputs.shape.as_list()[:-1] + [units])
    return outputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None,
          bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """A fully connected layer applied to ``inputs`` (``tf.layers.dense``).

    Makes a :class:`Dense` layer and calls it.  Its variables are
    ``<name>/kernel`` and ``<name>/bias``; without ``name`` the scope is
    ``dense``, then ``dense_1`` ...  ``reuse=True`` (or ``tf.AUTO_REUSE``)
    with the same ``name`` shares the variables of an earlier call.

    Args:
        inputs: a tensor of rank >= 2 with a known last dimension.
        units, activation, ...: as for :class:`Dense`.
        name: the variable scope (used as given, not made unique).
        reuse: share the variables of a previous layer of the same name.

    Returns:
        ``activation(inputs @ kernel + bias)``, shape ``inputs.shape[:-1] + [units]``.

    Example:
        >>> h = tf.layers.dense(x, 64, activation=tf.nn.relu, name="fc1")
        >>> h2 = tf.layers.dense(x2, 64, activation=tf.nn.relu, name="fc1", reuse=True)
    """
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                  bias_constraint=bias_constraint, trainable=trainable, name=name,
                  _scope=name, _reuse=reuse)
    return layer.apply(inputs)


# ---- Dropout --------------------------------------------------------------------------------
class Dropout(base.Layer):
    """Zeroes a fraction ``rate`` of the inputs while training (``tf.layers.Dropout``).

    In training the kept values are scaled by ``1 / (1 - rate)`` (see
    ``tf.nn.dropout``); at inference the layer is the identity.

    ``training`` may be a Python bool (the branch is chosen while the graph is
    built, as TF's ``smart_cond`` does) or a scalar bool tensor.  For a tensor
    TF1 builds a ``tf.cond``; minitf has no ``cond`` yet, so it builds both the
    dropped and the identity output and picks one with ``tf.where`` (op
    ``Select``): the result is the same, but the random mask is drawn even
    when ``training`` is False.

    Args:
        rate: the fraction of inputs to drop, in ``[0, 1)``.
        noise_shape: the shape of the keep/drop mask (``[batch, 1, features]``
            drops the same features at every time step); None entries take
            the input's dimension.
        seed: the op-level random seed.
        name: the layer's name.
    """

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs):
        """``noise_shape`` with its None entries filled from ``inputs``' shape."""
        if self.noise_shape is None or None not in list(self.noise_shape):
            return self.noise_shape
        dynamic = array_ops.shape(inputs)
        return joining_ops.stack([dynamic[i] if dim is None else dim
                                  for i, dim in enumerate(self.noise_shape)])

    def call(self, inputs, training=False):
        training_value = utils.static_bool(training)
        if training_value is False:
            return array_ops.identity(inputs)
        dropped = nn_ops.dropout(inputs, noise_shape=self._get_noise_shape(inputs),
                                 seed=self.seed, rate=self.rate)
        if training_value is True:
            return dropped
        return select_ops.where(training, dropped, array_ops.identity(inputs))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout while ``training``, the identity otherwise (``tf.layers.dropout``).

    Note ``rate`` is the fraction *dropped* (``tf.nn.dropout``'s TF1 argument
    was ``keep_prob``), and ``training`` defaults to False: pass a bool
    placeholder to switch between training and evaluation in one graph.

    Args:
        inputs: a floating-point tensor.
        rate, noise_shape, seed: as for :class:`Dropout`.
        training: a Python bool or a scalar bool tensor.
        name: the layer's name scope.

    Example:
        >>> is_training = tf.placeholder_with_default(False, [])
        >>> h = tf.layers.dropout(h, rate=0.3, training=is_training)
    """
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


# ---- Flatten ----------------------------------------------------------------------------------
class Flatten(base.Layer):
    """Reshapes ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]`` (``tf.layers.Flatten``).

    The batch dimension may be unknown.  With ``data_format="channels_first"``
    the channels are moved last first, so a flattened NCHW batch lists its
    values in the same order as the NHWC one.

    Args:
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        name: the layer's name.
    """

    def __init__(self, data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(min_ndim=2)

    def call(self, inputs):
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 2:
            inputs = transpose_ops.transpose(inputs, [0] + list(range(2, rank)) + [1])
        dims = inputs.shape.as_list() if rank is not None else [None, None]
        features = None if None in dims[1:] else int(_product(dims[1:]))
        if features is not None:
            outputs = array_ops.reshape(inputs, [-1, features])
        else:
            outputs = array_ops.reshape(inputs, joining_ops.stack([array_ops.shape(inputs)[0], -1]))
        outputs.set_shape([dims[0], features])
        return outputs


def _product(values):
    result = 1
    for value in values:
        result *= value
    return result


def flatten(inputs, name=None, data_format="channels_last"):
    """Flattens all but the batch dimension (``tf.layers.flatten``).

    Example:
        >>> x = tf.placeholder(tf.float32, [None, 4, 4, 8])
        >>> tf.layers.flatten(x).shape
        TensorShape([Dimension(None), Dimension(128)])
    """
    layer = Flatten(name=name, data_format=data_format)
    return layer.apply(inputs)
