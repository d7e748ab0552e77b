"""Initializers: objects that build a variable's initial value for a given shape.

An initializer is configured once (``tf.random_normal_initializer(stddev=0.1)``)
and called later, by :func:`tf.get_variable`, with the variable's shape::

    init = tf.glorot_uniform_initializer()
    value = init([784, 256], dtype=tf.float32)   # a Tensor: random_uniform ops

The call adds ordinary ops (constants, random ops) to the graph and returns
their output; :func:`tf.get_variable` makes the call inside the variable's
``Initializer`` name scope, so they are named ``w/Initializer/random_uniform``.

The *variance scaling* family keeps the variance of activations roughly
constant from layer to layer by scaling with the layer's fan-in/fan-out
(:func:`_compute_fans`): Glorot & Bengio (2010) average both, He et al. (2015)
use ``scale=2`` on the fan-in for ReLU networks, LeCun the plain fan-in.

Mirrors the TF1 classes of ``tensorflow/python/ops/init_ops.py``; the
lower-case aliases (``tf.zeros_initializer`` ...) are the same classes.
"""

import math

import numpy as np

from minitf.framework import dtypes
from minitf.ops import array_ops, constant_op, random_ops


class Initializer:
    """Base class: ``initializer(shape, dtype=None, partition_info=None) -> Tensor``.

    ``partition_info`` is TF1's calling convention for partitioned variables
    (:mod:`minitf.ops.partitioned_variables`): each part's initializer is
    called with the *part's* shape, and ``partition_info`` gives the full
    shape and the part's offset.  Most initializers ignore it (each part is
    filled independently); the variance scaling ones take their fans from
    the full shape, and :class:`Identity` slices the full identity matrix.
    """

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError("%s must implement __call__" % type(self).__name__)

    def get_config(self):
        """The constructor arguments, as a dict (``cls.from_config`` rebuilds it)."""
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _assert_float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError("Expected floating point type, got %s." % dtype)
    return dtype


# ---- constants ------------------------------------------------------------------------
class Zeros(Initializer):
    """All zeros (``tf.zeros_initializer``): ``tf.zeros(shape, dtype)``."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.zeros(shape, dtype or self.dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """All ones (``tf.ones_initializer``): ``tf.ones(shape, dtype)``."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return array_ops.ones(shape, dtype or self.dtype)

    def get_config(self):
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """A given value (``tf.constant_initializer``).

    Args:
        value: a Python scalar (filling the whole shape), or a list, tuple or
            ndarray.  A list with fewer elements than the shape is padded with
            its last element, as ``tf.constant`` does in TF1.
        dtype: the default dtype.
        verify_shape: require ``value`` to have exactly the requested shape.

    Example:
        >>> w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer([1, 2, 3, 4]))
        >>> sess.run(w.initializer); sess.run(w)
        array([[1., 2.], [3., 4.]], dtype=float32)

    Raises:
        TypeError: if ``value`` is of another type.
    """

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError("Invalid type for initial value: %s (expected Python scalar, list or "
                            "tuple of values, or numpy.ndarray)." % type(value))
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        if verify_shape is None:
            verify_shape = self._verify_shape
        return constant_op.constant(self.value, dtype=dtype or self.dtype, shape=shape,
                                    verify_shape=verify_shape)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class Identity(Initializer):
    """``gain`` times the identity matrix; 2-D shapes only (``tf.initializers.identity``).

    Built as one constant (TF multiplies an ``eye`` op by ``gain``).  For a
    part of a partitioned variable, the part's slice of the full matrix.
    """

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        full_shape = list(shape) if partition_info is None else partition_info.full_shape
        if len(full_shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        matrix = np.eye(*full_shape)
        if partition_info is not None:
            rows, cols = (slice(o, o + n) for o, n in zip(partition_info.var_offset, shape))
            matrix = matrix[rows, cols]
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return constant_op.constant(self.gain * matrix, dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


# ---- random -------------------------------------------------------------------------------
class RandomUniform(Initializer):
    """Uniform on ``[minval, maxval)`` (``tf.random_uniform_initializer``).

    ``maxval`` defaults to 1 for floats and is required for integer dtypes.
    """

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype or self.dtype,
                                         seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Normal with ``mean`` and ``stddev`` (``tf.random_normal_initializer``)."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype or self.dtype,
                                        seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal, redrawn beyond two ``stddev`` (``tf.truncated_normal_initializer``).

    The recommended initializer for weights in TF1 tutorials: no value is
    far from the mean, so no unit starts saturated.
    """

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype or self.dtype,
                                           seed=self.seed)


def _compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight of ``shape``.

    A matrix ``[fan_in, fan_out]`` maps ``fan_in`` inputs to ``fan_out``
    outputs.  A convolution kernel ``[..., in_channels, out_channels]`` sees
    each input through its receptive field (the product of the leading
    dimensions), which multiplies both fans.  Scalars count as 1, vectors as
    ``[n] -> [n]``.
    """
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    receptive_field_size = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return int(shape[-2]) * receptive_field_size, int(shape[-1]) * receptive_field_size


class VarianceScaling(Initializer):
    """Random values with variance ``scale / n`` (``tf.variance_scaling_initializer``).

    ``n`` is ``fan_in``, ``fan_out`` or their average (``mode``); the
    ``distribution`` is

    * ``"truncated_normal"`` (the default): a truncated normal whose stddev is
      ``sqrt(scale / n) / 0.87962566103423978``; the divisor is the stddev of a
      standard normal truncated at ±2, so the *actual* variance is ``scale / n``;
    * ``"normal"``: the same as ``"truncated_normal"`` (TF >= 1.12 semantics;
      older TF1 releases omitted the 0.8796 correction);
    * ``"untruncated_normal"``: a normal with stddev ``sqrt(scale / n)``;
    * ``"uniform"``: uniform on ``[-limit, limit)`` with ``limit = sqrt(3 scale / n)``.

    Raises:
        ValueError: for a non-positive ``scale``, an unknown ``mode`` or
            ``distribution``, or a non-float ``dtype``.
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")
    _TRUNCATED_STDDEV = 0.87962566103423978  # scipy.stats.truncnorm.std(a=-2, b=2)

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("Argument `scale` must be a positive float. Received: %s" % scale)
        if mode not in self._MODES:
            raise ValueError("Argument `mode` should be one of %s. Received: %s"
                             % (self._MODES, mode))
        distribution = distribution.lower()
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError("Argument `distribution` should be one of %s. Received: %s"
                             % (self._DISTRIBUTIONS, distribution))
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype or self.dtype
        # A part of a partitioned variable scales by the full variable's fans.
        fan_in, fan_out = _compute_fans(shape if partition_info is None
                                        else partition_info.full_shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(variance) / self._TRUNCATED_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(variance), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * variance)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Glorot/Xavier uniform: ``U[-limit, limit)``, ``limit = sqrt(6 / (fan_in + fan_out))``.

    ``tf.glorot_uniform_initializer``; the default initializer of
    :func:`tf.get_variable` for floats.  ``tf.contrib.layers.xavier_initializer()``
    (whose default is ``uniform=True``) is the same initializer.
    """

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution="uniform", seed=seed,
                         dtype=dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Glorot/Xavier normal: truncated normal with variance ``2 / (fan_in + fan_out)``.

    ``tf.glorot_normal_initializer``.
    """

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution="truncated_normal", seed=seed,
                         dtype=dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    """He et al. (2015) for ReLU layers: truncated normal, variance ``2 / fan_in``."""
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def he_uniform(seed=None):
    """He et al. (2015), uniform: ``limit = sqrt(6 / fan_in)``."""
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="uniform", seed=seed)


def lecun_normal(seed=None):
    """LeCun (1998): truncated normal, variance ``1 / fan_in`` (used with SELU)."""
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def lecun_uniform(seed=None):
    """LeCun (1998), uniform: ``limit = sqrt(3 / fan_in)``."""
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="uniform", seed=seed)


# TF1's lower-case names are the classes themselves.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
identity_initializer = Identity
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
