"""Initializers: values checked against their definitions (constants exactly,
random ones by the moments and bounds of large samples)."""

import math

import numpy as np
import pytest

import minitf as tf

TRUNCATED_STD = 0.87962566103423978  # std of N(0, 1) truncated to [-2, 2]


def evaluate(tensor):
    with tf.Session() as session:
        return session.run(tensor)


# ---- constants ----------------------------------------------------------------------------------
def test_zeros_and_ones():
    z = tf.zeros_initializer()([2, 3])
    o = tf.ones_initializer(dtype=tf.int32)([4])
    o64 = tf.ones_initializer()([1], dtype=tf.float64)
    assert (z.op.name, o.op.name) == ("zeros", "ones")
    assert (z.dtype, o.dtype, o64.dtype) == (tf.float32, tf.int32, tf.float64)
    np.testing.assert_array_equal(evaluate(z), np.zeros((2, 3)))
    np.testing.assert_array_equal(evaluate(o), [1, 1, 1, 1])
    big = tf.zeros_initializer()([100, 100])  # large shapes use Fill, not a big constant
    assert big.op.type == "Fill" and big.shape.as_list() == [100, 100]
    np.testing.assert_array_equal(evaluate(big), np.zeros((100, 100)))


def test_constant_initializer():
    np.testing.assert_array_equal(evaluate(tf.constant_initializer(7)([2, 2])), np.full((2, 2), 7))
    np.testing.assert_array_equal(evaluate(tf.constant_initializer([1, 2, 3, 4])([2, 2])),
                                  [[1, 2], [3, 4]])
    np.testing.assert_array_equal(evaluate(tf.constant_initializer([1, 2])([4])), [1, 2, 2, 2])
    value = tf.constant_initializer(np.arange(6.0), dtype=tf.float64)([2, 3])
    assert value.dtype == tf.float64 and value.op.type == "Const"


def test_constant_initializer_errors():
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant_initializer([1, 2], verify_shape=True)([4])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer(object())


def test_identity_initializer():
    np.testing.assert_array_equal(evaluate(tf.initializers.identity(gain=2.0)([2, 3])),
                                  [[2, 0, 0], [0, 2, 0]])
    with pytest.raises(ValueError, match="only be used for 2D matrices"):
        tf.initializers.identity()([2, 3, 4])


# ---- random -------------------------------------------------------------------------------------
def test_random_normal_initializer():
    x = evaluate(tf.random_normal_initializer(mean=1.0, stddev=0.5, seed=3)([100_000]))
    assert abs(x.mean() - 1.0) < 0.01 and abs(x.std() - 0.5) < 0.01


def test_truncated_normal_initializer():
    x = evaluate(tf.truncated_normal_initializer(stddev=0.1)([100_000], dtype=tf.float64))
    assert x.dtype == np.float64
    assert np.abs(x).max() <= 0.2 and abs(x.std() - 0.1 * TRUNCATED_STD) < 0.002


def test_random_uniform_initializer():
    x = evaluate(tf.random_uniform_initializer(-3.0, 1.0)([100_000]))
    assert x.min() >= -3.0 and x.max() < 1.0 and abs(x.mean() + 1.0) < 0.02
    ints = evaluate(tf.random_uniform_initializer(0, 3, dtype=tf.int32)([1000]))
    assert set(np.unique(ints)) == {0, 1, 2}
    with pytest.raises(ValueError, match="Must specify maxval"):
        tf.random_uniform_initializer(dtype=tf.int64)([2])


def test_seeded_initializer_repeats():
    init = tf.random_normal_initializer(seed=11)
    assert np.array_equal(evaluate(init([5])), evaluate(init([5])))


@pytest.mark.parametrize("shape, fan_in, fan_out", [
    ([300, 100], 300, 100),
    ([3, 3, 16, 32], 144, 288),   # conv kernel: receptive field 3*3
    ([50], 50, 50),
])
def test_glorot_uniform_limit(shape, fan_in, fan_out):
    x = evaluate(tf.glorot_uniform_initializer(seed=1)(shape))
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    assert np.abs(x).max() <= limit and np.abs(x).max() > 0.9 * limit
    assert abs(x.var() - limit ** 2 / 3) < 0.15 * limit ** 2


def test_glorot_normal():
    x = evaluate(tf.glorot_normal_initializer()([400, 600]))
    stddev = math.sqrt(2.0 / (400 + 600))
    assert abs(x.std() - stddev) < 0.02 * stddev  # the 0.8796 correction restores the variance
    assert np.abs(x).max() <= 2 * stddev / TRUNCATED_STD * (1 + 1e-6)


@pytest.mark.parametrize("mode, n", [("fan_in", 200), ("fan_out", 500), ("fan_avg", 350)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "untruncated_normal",
                                          "uniform"])
def test_variance_scaling(mode, n, distribution):
    init = tf.variance_scaling_initializer(scale=2.0, mode=mode, distribution=distribution)
    x = evaluate(init([200, 500]))
    assert abs(x.var() - 2.0 / n) < 0.03 * 2.0 / n
    if distribution == "uniform":
        assert np.abs(x).max() <= math.sqrt(3 * 2.0 / n)
    elif distribution != "untruncated_normal":
        assert np.abs(x).max() <= 2 * math.sqrt(2.0 / n) / TRUNCATED_STD * (1 + 1e-6)
    else:
        assert np.abs(x).max() > 2.5 * math.sqrt(2.0 / n)


def test_variance_scaling_builds_the_tf1_ops():
    assert tf.variance_scaling_initializer()([2, 2]).op.name == "truncated_normal"
    assert tf.glorot_uniform_initializer()([2, 2]).op.name == "random_uniform"


def test_variance_scaling_errors():
    with pytest.raises(ValueError, match="`scale` must be a positive float"):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="`mode` should be one of"):
        tf.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match="`distribution` should be one of"):
        tf.variance_scaling_initializer(distribution="cauchy")
    for make in (tf.variance_scaling_initializer, tf.random_normal_initializer,
                 tf.truncated_normal_initializer, tf.glorot_uniform_initializer):
        with pytest.raises(ValueError, match="Expected floating point type"):
            make(dtype=tf.int32)


@pytest.mark.parametrize("factory, scale, mode_fan", [
    (tf.initializers.he_normal, 2.0, 400), (tf.initializers.he_uniform, 2.0, 400),
    (tf.initializers.lecun_normal, 1.0, 400), (tf.initializers.lecun_uniform, 1.0, 400),
])
def test_he_and_lecun(factory, scale, mode_fan):
    x = evaluate(factory(seed=2)([400, 300]))
    assert abs(x.var() - scale / mode_fan) < 0.03 * scale / mode_fan


# ---- configs and names --------------------------------------------------------------------------
def test_get_config_round_trip():
    init = tf.variance_scaling_initializer(scale=3.0, mode="fan_out", distribution="uniform",
                                           seed=5)
    assert init.get_config() == {"scale": 3.0, "mode": "fan_out", "distribution": "uniform",
                                 "seed": 5, "dtype": "float32"}
    again = tf.variance_scaling_initializer.from_config(init.get_config())
    assert again.get_config() == init.get_config()
    assert tf.glorot_uniform_initializer().get_config() == {"seed": None, "dtype": "float32"}
    assert tf.constant_initializer(3).get_config() == {"value": 3, "dtype": "float32"}
    assert tf.random_uniform_initializer().get_config() == {
        "minval": 0.0, "maxval": None, "seed": None, "dtype": "float32"}


def test_tf1_names():
    assert tf.initializers.zeros is tf.zeros_initializer
    assert tf.initializers.ones is tf.ones_initializer
    assert tf.initializers.constant is tf.constant_initializer
    assert tf.initializers.random_normal is tf.random_normal_initializer
    assert tf.initializers.truncated_normal is tf.truncated_normal_initializer
    assert tf.initializers.random_uniform is tf.random_uniform_initializer
    assert tf.initializers.glorot_uniform is tf.glorot_uniform_initializer
    assert tf.initializers.glorot_normal is tf.glorot_normal_initializer
    assert tf.initializers.variance_scaling is tf.variance_scaling_initializer
    assert tf.initializers.global_variables is tf.global_variables_initializer
    assert tf.initializers.variables is tf.variables_initializer
    assert issubclass(tf.glorot_uniform_initializer, tf.variance_scaling_initializer)
