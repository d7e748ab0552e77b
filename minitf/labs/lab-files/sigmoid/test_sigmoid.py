"""Tests of lab_sigmoid.py.  Run them with ``pytest`` in this folder.

``gradcheck(y, x, x_value)`` (a fixture of minitf's pytest plugin) builds the
gradient of y with tf.gradients, runs it, and compares it with central
differences ``(y(x + d) - y(x - d)) / 2d``.  On a mismatch it says which
element is wrong and by how much.
"""

import numpy as np
import pytest

import minitf as tf
from lab_sigmoid import sigmoid


def test_forward_is_sigmoid(tf_session):
    x = tf.placeholder(tf.float64, [4], name="x")
    value = np.array([-2.0, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(tf_session.run(sigmoid(x), {x: value}), 1 / (1 + np.exp(-value)))


def test_sigmoid_uses_the_lab_gradient(tf_graph):
    y = sigmoid(tf.placeholder(tf.float64, [2], name="x"))
    assert y.op.get_attr("_gradient_op_type") == "LabSigmoid"


@pytest.mark.gradient
def test_gradient_at_one_point(gradcheck):
    x = tf.placeholder(tf.float64, [], name="x")
    gradcheck(sigmoid(x), x, 0.5)


@pytest.mark.gradient
def test_gradient_of_a_matrix(gradcheck):
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    gradcheck(sigmoid(x), x, np.linspace(-3.0, 3.0, 6).reshape(2, 3))


@pytest.mark.gradient
def test_gradient_where_sigmoid_saturates(gradcheck):
    x = tf.placeholder(tf.float64, [4], name="x")
    gradcheck(sigmoid(x), x, [-20.0, -8.0, 8.0, 20.0])


@pytest.mark.gradient
def test_gradient_in_float32(gradcheck):
    x = tf.placeholder(tf.float32, [5], name="x")
    gradcheck(sigmoid(x), x, np.linspace(-2.0, 2.0, 5))


@pytest.mark.gradient
def test_chain_rule_through_two_sigmoids(gradcheck):
    x = tf.placeholder(tf.float64, [3], name="x")
    gradcheck(sigmoid(sigmoid(x)), x, [-1.0, 0.25, 2.0])


@pytest.mark.gradient
def test_gradient_value_at_zero(tf_session):
    x = tf.placeholder(tf.float64, [], name="x")
    [dx] = tf.gradients(sigmoid(x), [x])
    assert tf_session.run(dx, {x: 0.0}) == pytest.approx(0.25)


@pytest.mark.gradient
def test_second_derivative(gradgradcheck):
    # Your gradient is built of ops, which tf.gradients can differentiate again:
    # gradgradcheck compares that second derivative with differences of your gradient.
    x = tf.placeholder(tf.float64, [3], name="x")
    gradgradcheck(sigmoid(x), x, [-1.0, 0.25, 2.0])
