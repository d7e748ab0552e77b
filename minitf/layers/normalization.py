"""Batch normalisation as a layer: learned scale and offset, moving statistics.

Ioffe & Szegedy (2015).  In **training** the layer normalises each channel
with the mean and variance of the current batch, and keeps exponential moving
averages of them::

    moving_mean     -= (1 - momentum) * (moving_mean - batch_mean)
    moving_variance -= (1 - momentum) * (moving_variance - batch_variance)

In **inference** it normalises with those moving averages, so a single
example gives the same answer whatever batch it comes in.

The moving averages are updated by ``AssignSub`` ops that nothing in the
forward pass depends on: the layer puts them in ``GraphKeys.UPDATE_OPS`` and
the training step must run them::

    update_ops = tf.get_default_graph().get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss)

Mirrors ``tensorflow/python/layers/normalization.py`` and Keras's
``BatchNormalization`` (TF 1.x, graph mode).
"""

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.layers import base, utils
from minitf.ops import array_ops, init_ops, math_ops, nn_impl, select_ops, state_ops, unary_ops

_FUSED_MIN_EPSILON = 1.001e-5  # cuDNN's lower bound, which TF's fused kernel applies


class BatchNormalization(base.Layer):
    """Normalises each channel, then scales by ``gamma`` and shifts by ``beta``
    (``tf.layers.BatchNormalization``).

    Variables (in the layer's scope): ``gamma`` (ones; if ``scale``), ``beta``
    (zeros; if ``center``) -- trainable -- and ``moving_mean`` (zeros) and
    ``moving_variance`` (ones) -- in ``GLOBAL_VARIABLES`` only, never trained.
    One value per channel: their shape is ``[inputs.shape[axis]]``.

    ``fused``: TF1 runs 4-D float16/float32 inputs normalised over axis 1 or 3
    through one ``FusedBatchNorm`` op (``fused=None`` means "when possible").
    minitf has no such op and always builds the formula from ``tf.nn.moments``
    and ``tf.nn.batch_normalization`` (the op names of TF's ``fused=False``),
    but it keeps the fused path's numbers: its moving variance is updated with
    the *unbiased* batch variance (times ``n / (n - 1)``, ``n`` the values
    per channel) and ``epsilon`` is at least 1.001e-5.

    Args:
        axis: the channel axis (or a list of axes) kept; -1 for channels-last
            inputs, 1 for NCHW.  All other axes are reduced over.
        momentum: the decay of the moving averages.
        epsilon: added to the variance before the square root.
        center: learn ``beta``.
        scale: learn ``gamma``.
        beta_initializer, gamma_initializer: initializers of those variables.
        moving_mean_initializer, moving_variance_initializer: of the statistics.
        beta_regularizer, gamma_regularizer: ``fn(variable) -> loss``.
        beta_constraint, gamma_constraint: projections applied by optimizers.
        renorm, renorm_clipping, renorm_momentum, virtual_batch_size, adjustment: TF1
            extensions minitf does not implement (must be left at their defaults).
        fused: see above; True raises ValueError if TF could not fuse.
        trainable: put ``gamma`` and ``beta`` in ``TRAINABLE_VARIABLES``.
        name: the layer's name.

    Raises:
        NotImplementedError: for renorm, virtual batches or adjustment.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(),
                 gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(),
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        del renorm_momentum
        if renorm or renorm_clipping is not None or virtual_batch_size is not None \
                or adjustment is not None:
            raise NotImplementedError("minitf's BatchNormalization does not implement renorm, "
                                      "virtual_batch_size or adjustment.")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.fused = fused

    # ---- variables ----------------------------------------------------------------------------
    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        ndims = input_shape.ndims
        if not ndims:
            raise ValueError("Input has undefined rank: %s" % input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        axes = [a + ndims if a < 0 else a for a in axes]
        for a in axes:
            if not 0 <= a < ndims:
                raise ValueError("Invalid axis: %d" % a)
        if len(set(axes)) != len(axes):
            raise ValueError("Duplicate axis: %s" % axes)
        self.axis = axes
        axis_to_dim = {a: input_shape[a].value for a in axes}
        if None in axis_to_dim.values():
            raise ValueError("Input has undefined `axis` dimension. Input shape: %s"
                             % input_shape)
        self.input_spec = base.InputSpec(ndim=ndims, axes=axis_to_dim)
        self._fused = self._use_fused_numbers(ndims)
        if len(axes) == 1:
            param_shape = [axis_to_dim[axes[0]]]
        else:  # several kept axes: parameters shaped to broadcast against the input
            param_shape = [axis_to_dim.get(i, 1) for i in range(ndims)]
        # float16 inputs keep float32 statistics (their sums of squares overflow).
        self._param_dtype = dtypes.float32 if self._dtype == dtypes.float16 else self._dtype

        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                "gamma", shape=param_shape, dtype=self._param_dtype,
                initializer=self.gamma_initializer, regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint, trainable=True)
        if self.center:
            self.beta = self.add_weight(
                "beta", shape=param_shape, dtype=self._param_dtype,
                initializer=self.beta_initializer, regularizer=self.beta_regularizer,
                constraint=self.beta_constraint, trainable=True)
        self.moving_mean = self.add_weight(
            "moving_mean", shape=param_shape, dtype=self._param_dtype,
            initializer=self.moving_mean_initializer, trainable=False)
        self.moving_variance = self.add_weight(
            "moving_variance", shape=param_shape, dtype=self._param_dtype,
            initializer=self.moving_variance_initializer, trainable=False)
        self.built = True

    def _use_fused_numbers(self, ndims):
        """Would TF1 use its fused kernel here?  (See the class docstring.)"""
        fusable = (ndims == 4 and self.axis in ([1], [3])
                   and self._dtype in (dtypes.float16, dtypes.float32))
        if self.fused and not fusable:
            raise ValueError("fused=True needs a 4-D float16/float32 input normalised over "
                             "axis 1 or 3; got axis %s of a rank-%d %s input."
                             % (self.axis, ndims, self._dtype.name))
        return fusable and self.fused is not False

    # ---- the computation -------------------------------------------------------------------
    def call(self, inputs, training=False):
        """Normalises ``inputs``; ``training`` picks batch or moving statistics.

        ``training`` is a Python bool, or a scalar bool tensor.  TF1 builds a
        ``tf.cond`` for a tensor; minitf instead computes both statistics and
        selects with ``tf.where``.  The update ops are then always built, and
        move the averages by ``(moving - selected_statistic) * (1 - momentum)``,
        which is exactly zero when ``training`` is False.
        """
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        epsilon = max(self.epsilon, _FUSED_MIN_EPSILON) if self._fused else self.epsilon
        training_value = utils.static_bool(training)
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            mean, variance = nn_impl.moments(unary_ops.cast(inputs, self._param_dtype),
                                             reduction_axes, keep_dims=len(self.axis) > 1)
            update_variance = variance
            if self._fused:
                update_variance = variance * _bessel_correction(inputs, variance)
            if training_value is None:
                mean = select_ops.where(training, mean, self.moving_mean)
                variance = select_ops.where(training, variance, self.moving_variance)
                update_variance = select_ops.where(training, update_variance, self.moving_variance)
            self.add_update(self._assign_moving_average(self.moving_mean, mean))
            self.add_update(self._assign_moving_average(self.moving_variance, update_variance))
        outputs = nn_impl.batch_normalization(
            inputs, self._broadcast(unary_ops.cast(mean, inputs.dtype), ndims, reduction_axes),
            self._broadcast(unary_ops.cast(variance, inputs.dtype), ndims, reduction_axes),
            self._broadcast(_cast_or_none(self.beta, inputs.dtype), ndims, reduction_axes),
            self._broadcast(_cast_or_none(self.gamma, inputs.dtype), ndims, reduction_axes),
            epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def _broadcast(self, value, ndims, reduction_axes):
        """A ``[C]`` statistic reshaped to broadcast against the input, when the
        kept axis is not the last one (``[1, C, 1, 1]`` for NCHW)."""
        if value is None or value.shape.ndims == ndims or \
                reduction_axes == list(range(ndims - 1)):
            return value
        shape = [1] * ndims
        shape[self.axis[0]] = value.shape[0].value
        return array_ops.reshape(value, shape)

    def _assign_moving_average(self, variable, value):
        """``variable -= (variable - value) * (1 - momentum)``, in scope ``AssignMovingAvg``."""
        with get_default_graph().name_scope("AssignMovingAvg") as scope:
            decay = convert_to_tensor(1.0 - self.momentum, name="decay",
                                      dtype=variable.dtype.base_dtype)
            update_delta = (variable - unary_ops.cast(value, variable.dtype.base_dtype)) * decay
            return state_ops.assign_sub(variable, update_delta, name=scope)


def _bessel_correction(inputs, variance):
    """``n / max(n - 1, 1)`` with ``n`` the number of values behind each variance."""
    dtype = variance.dtype.base_dtype
    n = (unary_ops.cast(array_ops.size(inputs), dtype)
         / unary_ops.cast(array_ops.size(variance), dtype))
    return n / math_ops.maximum(n - 1.0, 1.0)


def _cast_or_none(value, dtype):
    return None if value is None else unary_ops.cast(value, dtype)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(),
                        gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(),
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """Batch normalisation of ``inputs`` (``tf.layers.batch_normalization``).

    Variables ``batch_normalization/gamma``, ``beta``, ``moving_mean`` and
    ``moving_variance`` (then ``batch_normalization_1/...``; ``name`` and
    ``reuse`` work as for :func:`~minitf.layers.core.dense`).  With
    ``training=True`` the moving-average updates land in
    ``GraphKeys.UPDATE_OPS``: run them with each training step.

    Args:
        inputs: the tensor to normalise.
        training: a Python bool (the default False uses the moving
            statistics) or a scalar bool tensor.
        ...: as for :class:`BatchNormalization`.

    Example:
        >>> h = tf.layers.batch_normalization(h, training=is_training)
        >>> update_ops = tf.get_default_graph().get_collection(tf.GraphKeys.UPDATE_OPS)
        >>> with tf.control_dependencies(update_ops):
        ...     train_op = optimizer.minimize(loss)
    """
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)

