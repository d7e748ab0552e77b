"""Learning-rate schedules against their formulas, evaluated step by step in NumPy."""

import math

import numpy as np
import pytest

import minitf as tf

STEPS = range(0, 12)


def _run_schedule(sess, build):
    """The schedule's value at each step of ``STEPS``, with the step fed."""
    step = tf.placeholder(tf.int64, [], name="step")
    rate = build(step)
    return [sess.run(rate, {step: t}) for t in STEPS]


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay(sess, staircase):
    actual = _run_schedule(sess, lambda s: tf.train.exponential_decay(
        0.1, s, decay_steps=3, decay_rate=0.5, staircase=staircase))
    expected = [0.1 * 0.5 ** ((t // 3) if staircase else t / 3) for t in STEPS]
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("staircase", [False, True])
def test_natural_exp_decay(sess, staircase):
    actual = _run_schedule(sess, lambda s: tf.train.natural_exp_decay(
        0.1, s, decay_steps=4, decay_rate=0.7, staircase=staircase))
    expected = [0.1 * math.exp(-0.7 * ((t // 4) if staircase else t / 4)) for t in STEPS]
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("staircase", [False, True])
def test_inverse_time_decay(sess, staircase):
    actual = _run_schedule(sess, lambda s: tf.train.inverse_time_decay(
        0.1, s, decay_steps=2, decay_rate=0.5, staircase=staircase))
    expected = [0.1 / (1 + 0.5 * ((t // 2) if staircase else t / 2)) for t in STEPS]
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_polynomial_decay(sess):
    actual = _run_schedule(sess, lambda s: tf.train.polynomial_decay(
        0.1, s, decay_steps=5, end_learning_rate=0.01, power=2.0))
    expected = [(0.1 - 0.01) * (1 - min(t, 5) / 5) ** 2 + 0.01 for t in STEPS]
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_polynomial_decay_cycle(sess):
    actual = _run_schedule(sess, lambda s: tf.train.polynomial_decay(
        0.1, s, decay_steps=5, end_learning_rate=0.01, cycle=True))
    expected = []
    for t in STEPS:
        horizon = 5 * (1 if t == 0 else math.ceil(t / 5))
        expected.append((0.1 - 0.01) * (1 - t / horizon) + 0.01)
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def test_cosine_decay(sess):
    actual = _run_schedule(sess, lambda s: tf.train.cosine_decay(0.1, s, 8, alpha=0.2))
    expected = [0.1 * (0.8 * 0.5 * (1 + math.cos(math.pi * min(t, 8) / 8)) + 0.2)
                for t in STEPS]
    np.testing.assert_allclose(actual, expected, rtol=1e-5)


def test_piecewise_constant(sess):
    actual = _run_schedule(sess, lambda s: tf.train.piecewise_constant(
        s, [3, 7], [1.0, 0.5, 0.1]))
    expected = [1.0 if t <= 3 else 0.5 if t <= 7 else 0.1 for t in STEPS]
    np.testing.assert_allclose(actual, expected)


def test_piecewise_constant_on_float_steps_and_one_boundary(sess):
    x = tf.placeholder(tf.float32, [])
    rate = tf.train.piecewise_constant(x, [0.5], [10, 20])
    assert rate.dtype == tf.int32
    assert [sess.run(rate, {x: v}) for v in (0.0, 0.5, 0.6)] == [10, 10, 20]


def test_piecewise_constant_errors():
    step = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="1 less than"):
        tf.train.piecewise_constant(step, [1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match="same dtype as x"):
        tf.train.piecewise_constant(step, [1.5], [1.0, 0.5])
    with pytest.raises(ValueError, match="same dtype"):
        tf.train.piecewise_constant(step, [1], [1.0, 2])


def test_schedules_need_a_global_step():
    with pytest.raises(ValueError, match="global_step is required for exponential_decay"):
        tf.train.exponential_decay(0.1, None, 10, 0.9)


def test_schedule_follows_the_global_step_variable(sess):
    step = tf.train.get_or_create_global_step()
    rate = tf.train.exponential_decay(0.2, step, 2, 0.1, staircase=True)
    assert rate.name == "ExponentialDecay:0"
    increment = tf.assign_add(step, 1)
    sess.run(tf.global_variables_initializer())
    seen = []
    for _ in range(5):
        seen.append(sess.run(rate))
        sess.run(increment)
    np.testing.assert_allclose(seen, [0.2, 0.2, 0.02, 0.02, 0.002], rtol=1e-6)


def test_float64_learning_rate_keeps_its_dtype(sess):
    step = tf.constant(3, tf.int64)
    rate = tf.train.exponential_decay(tf.constant(0.1, tf.float64), step, 2, 0.5)
    assert rate.dtype == tf.float64
    assert sess.run(rate) == pytest.approx(0.1 * 0.5 ** 1.5, rel=1e-6)
