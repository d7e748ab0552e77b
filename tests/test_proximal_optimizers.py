"""``tf.train.ProximalGradientDescentOptimizer`` and ``ProximalAdagradOptimizer``.

Each step is a gradient step followed by FOBOS's proximal step::

    prox = var - rate * grad
    var  = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)

with ``rate = lr`` (proximal gradient descent) or ``lr / sqrt(accum)`` after
``accum += grad**2`` (proximal Adagrad).  Expectations are these formulas in
NumPy, dense and for the rows of an ``IndexedSlices``.
"""

import numpy as np
import pytest

import minitf as tf

VAR0 = np.array([[0.5, -0.02, 1.0], [-0.3, 0.01, 0.2], [0.0, 0.8, -0.9]], np.float32)
GRAD = np.array([[0.2, 0.1, -0.5], [0.3, -0.1, 0.4], [1.0, 1.0, 1.0]], np.float32)
STEPS = 3


def _prox(var, grad, rate, l1, l2):
    prox = var - rate * grad
    if l1 > 0:
        prox = np.sign(prox) * np.maximum(np.abs(prox) - rate * l1, 0)
    return prox / (1 + rate * l2)


def _expected_gd(lr, l1, l2, rows=(0, 1, 2), grad=GRAD):
    var = VAR0.astype(np.float64)
    for _ in range(STEPS):
        for row, g in zip(rows, grad.astype(np.float64)):
            var[row] = _prox(var[row], g, lr, l1, l2)
    return var


def _expected_adagrad(lr, l1, l2, initial, rows=(0, 1, 2), grad=GRAD):
    var, accum = VAR0.astype(np.float64), np.full(VAR0.shape, initial)
    for _ in range(STEPS):
        for row, g in zip(rows, grad.astype(np.float64)):
            accum[row] += g * g
            var[row] = _prox(var[row], g, lr / np.sqrt(accum[row]), l1, l2)
    return var, accum


def _train(optimizer, grad_of, dtype=np.float32):
    var = tf.Variable(VAR0.astype(dtype), name="w")
    train = optimizer.apply_gradients([(grad_of(dtype), var)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(STEPS):
            sess.run(train)
        slot = optimizer.get_slot(var, "accumulator")
        return sess.run(var), None if slot is None else sess.run(slot)


def _dense(dtype):
    return tf.constant(GRAD.astype(dtype))


def _sparse(dtype):
    """Rows 2 and 0 of the gradient, as an IndexedSlices; row 1 gets none."""
    return tf.IndexedSlices(tf.constant(GRAD[[2, 0]].astype(dtype)), tf.constant([2, 0]),
                            tf.constant([3, 3]))


REGULARIZATION = [(0.0, 0.0), (0.05, 0.0), (0.0, 0.5), (0.05, 0.5)]


@pytest.mark.parametrize("l1, l2", REGULARIZATION)
def test_proximal_gradient_descent_dense(l1, l2):
    optimizer = tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=l1,
                                                          l2_regularization_strength=l2)
    var, _ = _train(optimizer, _dense)
    np.testing.assert_allclose(var, _expected_gd(0.1, l1, l2), rtol=1e-5, atol=1e-7)
    assert "ApplyProximalGradientDescent" in {
        op.type for op in tf.get_default_graph().get_operations()}


@pytest.mark.parametrize("l1, l2", REGULARIZATION)
def test_proximal_gradient_descent_sparse_updates_only_the_named_rows(l1, l2):
    optimizer = tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=l1,
                                                          l2_regularization_strength=l2)
    var, _ = _train(optimizer, _sparse)
    expected = _expected_gd(0.1, l1, l2, rows=(2, 0), grad=GRAD[[2, 0]])
    np.testing.assert_allclose(var, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(var[1], VAR0[1])  # not shrunk either
    assert "SparseApplyProximalGradientDescent" in {
        op.type for op in tf.get_default_graph().get_operations()}


def test_l1_makes_small_weights_exactly_zero():
    optimizer = tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.5)
    var, _ = _train(optimizer, lambda dtype: tf.zeros([3, 3], dtype))
    # |w| <= 3 * 0.1 * 0.5 = 0.15 reaches 0 and stays; the others shrink by 0.15.
    expected = np.sign(VAR0) * np.maximum(np.abs(VAR0) - 0.15, 0)
    np.testing.assert_allclose(var, expected, atol=1e-6)
    np.testing.assert_array_equal(var[np.abs(VAR0) <= 0.15], 0.0)   # exactly: -0.02, 0.01, 0


@pytest.mark.parametrize("l1, l2", REGULARIZATION)
def test_proximal_adagrad_dense(l1, l2):
    optimizer = tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.2,
                                                  l1_regularization_strength=l1,
                                                  l2_regularization_strength=l2)
    var, accum = _train(optimizer, _dense)
    expected_var, expected_accum = _expected_adagrad(0.1, l1, l2, 0.2)
    np.testing.assert_allclose(var, expected_var, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(accum, expected_accum, rtol=1e-6)


@pytest.mark.parametrize("l1, l2", REGULARIZATION)
def test_proximal_adagrad_sparse_updates_only_the_named_rows(l1, l2):
    optimizer = tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=l1,
                                                  l2_regularization_strength=l2)
    var, accum = _train(optimizer, _sparse)
    expected_var, expected_accum = _expected_adagrad(0.1, l1, l2, 0.1, rows=(2, 0),
                                                     grad=GRAD[[2, 0]])
    np.testing.assert_allclose(var, expected_var, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(accum, expected_accum, rtol=1e-6)
    np.testing.assert_array_equal(var[1], VAR0[1])
    np.testing.assert_array_equal(accum[1], np.full(3, 0.1, np.float32))


def test_proximal_adagrad_sums_repeated_rows_first():
    optimizer = tf.train.ProximalAdagradOptimizer(0.1)
    grad = tf.IndexedSlices(tf.constant(GRAD[[0, 0]]), tf.constant([1, 1]), tf.constant([3, 3]))
    var, accum = _train(optimizer, lambda dtype: grad)
    expected_var, expected_accum = _expected_adagrad(0.1, 0.0, 0.0, 0.1, rows=(1,),
                                                     grad=2 * GRAD[[0]])
    np.testing.assert_allclose(var, expected_var, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(accum, expected_accum, rtol=1e-6)


def test_float64_variables():
    optimizer = tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.05)
    var, _ = _train(optimizer, _dense, dtype=np.float64)
    assert var.dtype == np.float64  # (the rates are float32 tensors cast to float64)
    np.testing.assert_allclose(var, _expected_gd(0.1, 0.05, 0.0), rtol=1e-7)


def test_names_slots_and_errors():
    w = tf.Variable(VAR0, name="w")
    optimizer = tf.train.ProximalAdagradOptimizer(0.1)
    optimizer.minimize(tf.reduce_sum(w * w))
    assert optimizer.get_slot_names() == ["accumulator"]
    assert optimizer.get_slot(w, "accumulator").op.name == "w/ProximalAdagrad"
    assert tf.train.ProximalGradientDescentOptimizer(0.1).get_name() == "ProximalGradientDescent"
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
