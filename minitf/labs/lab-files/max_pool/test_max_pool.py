"""Tests of lab_max_pool.py.  Run them with ``pytest`` in this folder.

``gradcheck(y, x, x_value)`` (a fixture of minitf's pytest plugin) builds the
gradient of y with tf.gradients, runs it, and compares it with central
differences.  max is not differentiable where two entries of a window tie,
so the inputs here are all distinct and far apart (a shuffled range).
"""

import numpy as np
import pytest

import minitf as tf
from lab_max_pool import max_pool, upsample

RNG = np.random.default_rng(3)


def _distinct(shape):
    """Distinct values, at least 0.1 apart, in random order."""
    size = int(np.prod(shape))
    return RNG.permutation(size).reshape(shape) * 0.1 - size * 0.05


def test_forward_is_max_pool(tf_session):
    x = tf.placeholder(tf.float64, [1, 4, 4, 1], name="x")
    value = _distinct([1, 4, 4, 1])
    expected = value.reshape(1, 2, 2, 2, 2, 1).max(axis=(2, 4))
    np.testing.assert_allclose(tf_session.run(max_pool(x), {x: value}), expected)


def test_upsample_repeats_each_element_over_a_block(tf_session):
    t = tf.constant(np.arange(1.0, 5.0).reshape(1, 2, 2, 1))
    out = tf_session.run(upsample(t, 2))
    np.testing.assert_array_equal(out[0, :, :, 0], [[1, 1, 2, 2], [1, 1, 2, 2],
                                                    [3, 3, 4, 4], [3, 3, 4, 4]])


def test_upsample_keeps_batch_and_channels_apart(tf_session):
    value = RNG.normal(size=[2, 2, 3, 4])
    out = tf_session.run(upsample(tf.constant(value), 3))
    assert out.shape == (2, 6, 9, 4)
    np.testing.assert_array_equal(out, value.repeat(3, axis=1).repeat(3, axis=2))


@pytest.mark.gradient
def test_gradient_of_one_window(gradcheck):
    x = tf.placeholder(tf.float64, [1, 2, 2, 1], name="x")
    gradcheck(max_pool(x), x, [[[[0.1], [0.7]], [[-0.3], [0.2]]]])


@pytest.mark.gradient
def test_gradient_2x2_windows(gradcheck):
    x = tf.placeholder(tf.float64, [1, 4, 4, 1], name="x")
    gradcheck(max_pool(x), x, _distinct([1, 4, 4, 1]))


@pytest.mark.gradient
def test_gradient_with_batch_and_channels(gradcheck):
    x = tf.placeholder(tf.float64, [2, 4, 6, 3], name="x")
    gradcheck(max_pool(x), x, _distinct([2, 4, 6, 3]))


@pytest.mark.gradient
def test_gradient_3x3_windows(gradcheck):
    x = tf.placeholder(tf.float64, [1, 6, 3, 2], name="x")
    gradcheck(max_pool(x, k=3), x, _distinct([1, 6, 3, 2]))


@pytest.mark.gradient
def test_gradient_in_float32(gradcheck):
    x = tf.placeholder(tf.float32, [1, 4, 4, 2], name="x")
    gradcheck(max_pool(x), x, _distinct([1, 4, 4, 2]))


@pytest.mark.gradient
def test_gradient_reaches_only_the_maxima(tf_session):
    x = tf.placeholder(tf.float64, [1, 4, 4, 1], name="x")
    value = _distinct([1, 4, 4, 1])
    [dx] = tf.gradients(max_pool(x), [x])
    window_max = value.reshape(1, 2, 2, 2, 2, 1).max(axis=(2, 4))       # [1, 2, 2, 1]
    winners = value == window_max.repeat(2, axis=1).repeat(2, axis=2)   # [1, 4, 4, 1]
    np.testing.assert_array_equal(tf_session.run(dx, {x: value}), winners.astype(float))
