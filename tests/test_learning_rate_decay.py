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


def _sgdr_by_walking_the_periods(rate, step, first_period, t_mul, m_mul, alpha):
    """SGDR's rate found by stepping through the restart periods one by one."""
    start, length, restart = 0.0, float(first_period), 0
    while step >= start + length:
        start, length, restart = start + length, length * t_mul, restart + 1
    fraction = (step - start) / length
    return rate * ((1 - alpha) * 0.5 * m_mul ** restart * (1 + math.cos(math.pi * fraction))
                   + alpha)


@pytest.mark.parametrize("t_mul, m_mul, alpha", [(2.0, 1.0, 0.0), (1.0, 0.5, 0.1), (3.0, 0.7, 0.0)])
def test_cosine_decay_restarts(sess, t_mul, m_mul, alpha):
    step = tf.placeholder(tf.int64, [])
    rate = tf.train.cosine_decay_restarts(0.1, step, 4, t_mul=t_mul, m_mul=m_mul, alpha=alpha)
    for t in (0, 1, 3, 5, 11, 12, 13, 30, 51):
        expected = _sgdr_by_walking_the_periods(0.1, t, 4, t_mul, m_mul, alpha)
        assert sess.run(rate, {step: t}) == pytest.approx(expected, rel=1e-4, abs=1e-7), t


def test_linear_cosine_decay(sess):
    actual = _run_schedule(sess, lambda s: tf.train.linear_cosine_decay(
        0.1, s, 8, num_periods=2, alpha=0.1, beta=0.01))
    expected = []
    for t in STEPS:
        t = min(t, 8)
        cosine = 0.5 * (1 + math.cos(math.pi * 2 * 2 * t / 8))
        expected.append(0.1 * ((0.1 + (8 - t) / 8) * cosine + 0.01))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-8)


def test_noisy_linear_cosine_decay(sess):
    step = tf.placeholder(tf.int64, [])
    quiet = tf.train.noisy_linear_cosine_decay(0.1, step, 8, initial_variance=0.0,
                                               num_periods=2, alpha=0.1, beta=0.01)
    noisy = tf.train.noisy_linear_cosine_decay(0.1, step, 8)
    for t in (0, 3, 8, 12):
        s = min(t, 8)
        cosine = 0.5 * (1 + math.cos(math.pi * 2 * 2 * s / 8))
        expected = 0.1 * ((0.1 + (8 - s) / 8) * cosine + 0.01)
        assert sess.run(quiet, {step: t}) == pytest.approx(expected, rel=1e-5, abs=1e-8)
    # With noise: rate = 0.1 * ((linear + noise) * cosine + 0.001), noise ~ N(0, 1/(1+s)^0.55).
    # At step 2 (num_periods=0.5) the cosine is 0.5 * (1 + cos(pi/4)): recover the noise.
    cosine = 0.5 * (1 + math.cos(math.pi * 2 / 8))
    noise = [(sess.run(noisy, {step: 2}) / 0.1 - 0.001) / cosine - 6 / 8 for _ in range(400)]
    assert np.std(noise) == pytest.approx(math.sqrt(1 / 3 ** 0.55), rel=0.15)
    assert abs(np.mean(noise)) < 0.15


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
