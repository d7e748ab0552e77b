"""Buffer forwarding: a kernel writes its output into an input nobody needs any more.

The compiled step lets ``Add``, ``BiasAdd``, ``Relu``, ``ReluGrad`` and
``ApplyGradientDescent`` reuse an input's buffer only where the op is the
value's last reader and nothing else holds it.  These tests check that it
happens on a training step, and that no value someone can still see — a fetch,
a later op's input, a variable, a fed array — is ever overwritten.  Tensors
are large enough to be worth forwarding (``FORWARDING_MIN_ELEMENTS``).
"""

import numpy as np
import pytest

import minitf as tf
from minitf_numpy_cpu.kernels import math as math_kernels
from minitf_numpy_cpu.kernels import nn as nn_kernels
from minitf_numpy_cpu.kernels import training as training_kernels


@pytest.fixture
def reused(monkeypatch):
    """Records, per kernel call that asked, whether it could reuse its input."""
    answers = []
    for module in (math_kernels, nn_kernels, training_kernels):
        original = module.reusable

        def spy(ctx, array, *args, _original=original, **kwargs):
            answer = _original(ctx, array, *args, **kwargs)
            answers.append((ctx.op.type, answer))
            return answer
        monkeypatch.setattr(module, "reusable", spy)
    return answers


RNG = np.random.RandomState(7)
X = RNG.standard_normal((32, 64)).astype(np.float32)   # 2048 elements: worth reusing


def test_a_training_step_reuses_its_intermediate_buffers(sess, reused):
    x = tf.placeholder(tf.float32, [None, 64])
    w = tf.Variable(RNG.standard_normal((64, 64)).astype(np.float32))
    b = tf.Variable(RNG.standard_normal(64).astype(np.float32))
    out_value = RNG.standard_normal((64, 1)).astype(np.float32)
    out = tf.constant(out_value)
    loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, w) + b), out))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    w0, b0 = sess.run([w, b])
    sess.run(train_op, {x: X})
    forwarded = {op_type for op_type, answer in reused if answer}
    assert forwarded == {"Add", "Relu", "ReluGrad", "ApplyGradientDescent"}
    # The bias's 64-element gradient is too small to be worth it.
    assert ("ApplyGradientDescent", False) in reused
    # And the update is still right: d loss / d pre-activation is outᵀ times the ReLU mask.
    grad = (X @ w0 + b0 > 0) * out_value[:, 0]
    np.testing.assert_allclose(sess.run(w), w0 - 0.5 * X.T @ grad, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sess.run(b), b0 - 0.5 * grad.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_a_fetched_value_is_not_overwritten(sess, reused):
    x = tf.placeholder(tf.float32, [32, 64])
    h = tf.matmul(x, tf.eye(64)) + 1.0
    h_value, y_value = sess.run([h, tf.nn.relu(h)], {x: X})
    np.testing.assert_array_equal(h_value, X + 1)          # negatives kept
    np.testing.assert_array_equal(y_value, np.maximum(X + 1, 0))
    assert ("Relu", True) not in reused


def test_a_value_read_later_is_not_overwritten(sess):
    x = tf.placeholder(tf.float32, [32, 64])
    h = tf.matmul(x, tf.eye(64)) + 1.0
    y = tf.nn.relu(h)
    with tf.control_dependencies([y]):
        z = h * 2.0                                          # reads h after the Relu
    y_value, z_value = sess.run([y, z], {x: X})
    np.testing.assert_array_equal(z_value, (X + 1) * 2)
    np.testing.assert_array_equal(y_value, np.maximum(X + 1, 0))


def test_variables_and_fed_arrays_are_not_overwritten(sess, reused):
    v = tf.Variable(X)
    x = tf.placeholder(tf.float32, [32, 64])
    sess.run(tf.global_variables_initializer())
    fed = X.copy()
    a, c = sess.run([tf.nn.relu(v) * 1.0, tf.nn.relu(tf.identity(x)) * 1.0], {x: fed})
    np.testing.assert_array_equal(a, np.maximum(X, 0))
    np.testing.assert_array_equal(c, np.maximum(X, 0))
    np.testing.assert_array_equal(sess.run(v), X)            # the variable keeps its negatives
    np.testing.assert_array_equal(fed, X)                    # and so does the user's array
    assert reused and not any(answer for _, answer in reused)


def test_a_fetched_gradient_is_not_scaled_by_the_update(sess):
    start = np.arange(2048, dtype=np.float32)
    w = tf.Variable(start)
    loss = tf.reduce_sum(w * w)
    grad, = tf.gradients(loss, [w])
    update = tf.train.GradientDescentOptimizer(0.25).apply_gradients([(grad, w)])
    sess.run(tf.global_variables_initializer())
    grad_value, _ = sess.run([grad, update])
    np.testing.assert_allclose(grad_value, 2 * start)
    np.testing.assert_allclose(sess.run(w), start * 0.5)


def test_small_tensors_of_known_shape_are_not_forwarded(sess, reused):
    # Allocating 16 floats is cheaper than deciding whether a buffer may be reused.
    x = tf.placeholder(tf.float32, [16])
    y = tf.nn.relu(tf.matmul(tf.reshape(x, [4, 4]), tf.eye(4)) + 1.0)
    np.testing.assert_array_equal(sess.run(y, {x: np.arange(16) - 8.0}),
                                  np.maximum(np.arange(16).reshape(4, 4) - 7.0, 0))
    assert not any(answer for _, answer in reused)
