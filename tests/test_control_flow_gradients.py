"""Gradients through tf.cond and tf.while_loop, checked against finite differences
(minitf.test.check_gradients) and against hand-derived NumPy values."""

import numpy as np
import pytest

import minitf as tf
from minitf.test import check_gradients, compute_gradient_error

RNG = np.random.RandomState(7)


def _numeric(fn, value, eps=1e-6):
    """Central differences of a NumPy function ``fn`` at ``value``."""
    grad = np.zeros_like(value)
    for index in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[index] = eps
        grad[index] = (fn(value + step) - fn(value - step)) / (2 * eps)
    return grad


# ---- cond ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [2.0, -2.0])
def test_cond_gradient_flows_into_the_taken_branch_only(sess, value):
    x = tf.placeholder(tf.float64, [])
    y = tf.cond(x > 0, lambda: x * x, lambda: -3.0 * x)
    [grad] = tf.gradients(y, [x])
    assert sess.run(grad, {x: value}) == (2 * value if value > 0 else -3.0)


def test_cond_gradient_numerically_with_a_shared_input(sess):
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [3])
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * w, lambda: x * x) + x * w
    with sess.as_default():
        for value in (np.array([0.5, 0.2, 0.1]), np.array([-0.5, -0.2, 0.1])):
            check_gradients(y, [x, w], [value, np.array([1.5, -0.5, 2.0])])


def test_cond_gradient_of_a_value_used_by_one_branch_is_zero_in_the_other(sess):
    x = tf.placeholder(tf.float64, [2])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.reduce_sum(x * x), lambda: tf.constant(1.0, tf.float64))
    [grad] = tf.gradients(y, [x])
    np.testing.assert_allclose(sess.run(grad, {x: [1.0, 2.0], p: True}), [2.0, 4.0])
    np.testing.assert_allclose(sess.run(grad, {x: [1.0, 2.0], p: False}), [0.0, 0.0])


def test_case_gradient(sess):
    x = tf.placeholder(tf.float64, [])
    y = tf.case([(x > 1, lambda: x * x * x), (x > 0, lambda: x * x)], default=lambda: -x)
    [grad] = tf.gradients(y, [x])
    assert [sess.run(grad, {x: v}) for v in (2.0, 0.5, -1.0)] == [12.0, 1.0, -1.0]


# ---- while_loop ----------------------------------------------------------------------------
def test_while_loop_gradient_of_repeated_squaring(sess):
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), (0, x))
    [grad] = tf.gradients(y, [x])
    np.testing.assert_allclose(sess.run(grad, {x: 1.5}), 8 * 1.5 ** 7)


def test_while_loop_gradient_for_a_loop_invariant(sess):
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [3])
    _, y = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, tf.tanh(v * w + 0.1)), (0, x))
    with sess.as_default():
        check_gradients(y, [x, w], [RNG.randn(3), RNG.randn(3)])


def test_while_loop_gradient_with_a_data_dependent_trip_count(sess):
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [3])
    _, r = tf.while_loop(lambda i, v: tf.logical_and(tf.reduce_sum(v) < 50.0, i < 20),
                         lambda i, v: (i + 1, v * w + tf.sin(v)), (0, x))
    loss = tf.reduce_sum(r * r)
    grad_x, grad_w = tf.gradients(loss, [x, w])

    def forward(xv, wv):
        v, i = xv.copy(), 0
        while v.sum() < 50 and i < 20:
            v, i = v * wv + np.sin(v), i + 1
        return (v * v).sum()
    xv, wv = np.array([0.5, 0.3, 0.2]), np.array([1.5, 1.2, 1.1])
    gx, gw = sess.run([grad_x, grad_w], {x: xv, w: wv})
    np.testing.assert_allclose(gx, _numeric(lambda a: forward(a, wv), xv), rtol=1e-5)
    np.testing.assert_allclose(gw, _numeric(lambda b: forward(xv, b), wv), rtol=1e-5)


def test_nested_while_loop_gradient(sess):
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [3])

    def outer(i, v):
        _, u = tf.while_loop(lambda j, u: j < i + 1, lambda j, u: (j + 1, u * w + 1.0), (0, v))
        return i + 1, tf.sin(u)
    _, y = tf.while_loop(lambda i, v: i < 3, outer, (0, x))
    with sess.as_default():
        check_gradients(y, [x, w], [RNG.rand(3), RNG.rand(3) + 0.5])


def test_cond_inside_while_loop_gradient(sess):
    x = tf.placeholder(tf.float64, [3])
    w = tf.placeholder(tf.float64, [3])

    def body(i, v):
        return i + 1, tf.cond(tf.reduce_sum(v) > 2.0, lambda: v * 0.5, lambda: v * w)
    _, y = tf.while_loop(lambda i, v: i < 6, body, (0, x))
    with sess.as_default():
        check_gradients(y, [x, w], [np.array([0.5, 0.3, 0.2]), np.array([1.5, 1.2, 1.1])])


def test_gradient_through_maximum_iterations(sess):
    x = tf.placeholder(tf.float64, [])
    y = tf.while_loop(lambda v: v < 1e9, lambda v: v * 3.0, [x], maximum_iterations=4)
    [grad] = tf.gradients(y, [x])
    assert sess.run(grad, {x: 2.0}) == 81.0


def test_gradient_of_one_loop_variable_when_another_is_unused(sess):
    x = tf.placeholder(tf.float64, [])
    z = tf.placeholder(tf.float64, [])
    _, a, _ = tf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x, b + a),
                            (0, tf.constant(1.0, tf.float64), z))
    grad_x, grad_z = tf.gradients(a, [x, z])
    assert grad_z is None
    np.testing.assert_allclose(sess.run(grad_x, {x: 2.0, z: 0.0}), 3 * 2.0 ** 2)


def test_back_prop_false_gives_no_gradient():
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), (0, x),
                         back_prop=False)
    assert tf.gradients(y, [x]) == [None]


def test_gradient_error_through_tensor_array_rnn(sess):
    x = tf.placeholder(tf.float64, [5, 2])
    w = tf.placeholder(tf.float64, [2, 2])
    inputs = tf.TensorArray(tf.float64, size=5).unstack(x)

    def step(t, h, outputs):
        h = tf.tanh(tf.matmul(h, w) + tf.expand_dims(inputs.read(t), 0))
        return t + 1, h, outputs.write(t, h)
    _, _, outputs = tf.while_loop(lambda t, h, o: t < 5, step,
                                  (0, tf.zeros([1, 2], tf.float64),
                                   tf.TensorArray(tf.float64, size=5)))
    y = tf.reduce_sum(outputs.stack() ** 2)
    with sess.as_default():
        error = compute_gradient_error(w, [2, 2], y, [], x_init_value=RNG.randn(2, 2) * 0.5,
                                       delta=1e-6, extra_feed_dict={x: RNG.randn(5, 2)})
    assert error < 1e-6


def test_map_fn_scan_foldl_gradients(sess):
    x = tf.placeholder(tf.float64, [4])
    y = (tf.reduce_sum(tf.map_fn(lambda v: tf.sin(v) * v, x))
         + tf.reduce_sum(tf.scan(lambda a, v: a * v, x))
         + tf.foldl(lambda a, v: a * 0.5 + v * v, x))
    with sess.as_default():
        check_gradients(y, [x], RNG.randn(4))


def test_gradient_of_a_variable_used_inside_the_loop(sess):
    w = tf.Variable(np.array([0.5, -1.0]), dtype=tf.float64)
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w),
                         (0, tf.constant([1.0, 2.0], tf.float64)))
    [grad] = tf.gradients(tf.reduce_sum(y), [w])
    sess.run(w.initializer)
    np.testing.assert_allclose(sess.run(grad), 3 * np.array([0.5, -1.0]) ** 2 * [1.0, 2.0])
