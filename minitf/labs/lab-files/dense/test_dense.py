"""Tests of lab_dense.py.  Run them with ``pytest`` in this folder.

``gradcheck(y, xs, x_values)`` (a fixture of minitf's pytest plugin) builds
the gradients of y with tf.gradients, runs them, and compares each with
central differences.  With a list of xs it checks every one of them.
"""

import numpy as np
import pytest

import minitf as tf
from lab_dense import bias_add, dense, matmul

RNG = np.random.default_rng(1)


def test_forward_is_x_times_w_plus_b(tf_session):
    x, W, b = RNG.normal(size=[4, 3]), RNG.normal(size=[3, 2]), RNG.normal(size=[2])
    tx, tW, tb = (tf.placeholder(tf.float64, v.shape, name=name)
                  for v, name in ((x, "x"), (W, "W"), (b, "b")))
    out = tf_session.run(dense(tx, tW, tb), {tx: x, tW: W, tb: b})
    np.testing.assert_allclose(out, x @ W + b)


def test_dense_uses_the_lab_gradients(tf_graph):
    y = dense(tf.placeholder(tf.float64, [4, 3], name="x"),
              tf.placeholder(tf.float64, [3, 2], name="W"),
              tf.placeholder(tf.float64, [2], name="b"))
    assert y.op.get_attr("_gradient_op_type") == "LabBiasAdd"
    assert y.op.inputs[0].op.get_attr("_gradient_op_type") == "LabMatMul"


@pytest.mark.gradient
def test_matmul_gradient_wrt_a(gradcheck):
    a = tf.placeholder(tf.float64, [2, 3], name="a")
    b = tf.placeholder(tf.float64, [3, 4], name="b")
    gradcheck(matmul(a, b), a, RNG.normal(size=[2, 3]),
              extra_feed_dict={b: RNG.normal(size=[3, 4])})


@pytest.mark.gradient
def test_matmul_gradient_wrt_b(gradcheck):
    a = tf.placeholder(tf.float64, [2, 3], name="a")
    b = tf.placeholder(tf.float64, [3, 4], name="b")
    gradcheck(matmul(a, b), b, RNG.normal(size=[3, 4]),
              extra_feed_dict={a: RNG.normal(size=[2, 3])})


@pytest.mark.gradient
def test_matmul_gradient_of_a_vector_times_a_matrix(gradcheck):
    a = tf.placeholder(tf.float64, [1, 3], name="a")
    b = tf.placeholder(tf.float64, [3, 1], name="b")
    gradcheck(matmul(a, b), [a, b], [RNG.normal(size=[1, 3]), RNG.normal(size=[3, 1])])


@pytest.mark.gradient
def test_bias_add_gradient_wrt_bias(gradcheck):
    value = tf.placeholder(tf.float64, [5, 3], name="value")
    bias = tf.placeholder(tf.float64, [3], name="bias")
    gradcheck(bias_add(value, bias), bias, RNG.normal(size=[3]),
              extra_feed_dict={value: RNG.normal(size=[5, 3])})


@pytest.mark.gradient
def test_bias_add_gradient_wrt_value(gradcheck):
    value = tf.placeholder(tf.float64, [5, 3], name="value")
    bias = tf.placeholder(tf.float64, [3], name="bias")
    gradcheck(bias_add(value, bias), value, RNG.normal(size=[5, 3]),
              extra_feed_dict={bias: RNG.normal(size=[3])})


@pytest.mark.gradient
def test_bias_add_gradient_for_an_image_batch(gradcheck):
    # value: [batch, height, width, channels]; bias: one per channel.
    value = tf.placeholder(tf.float64, [2, 2, 3, 4], name="value")
    bias = tf.placeholder(tf.float64, [4], name="bias")
    gradcheck(bias_add(value, bias), [value, bias],
              [RNG.normal(size=[2, 2, 3, 4]), RNG.normal(size=[4])])


@pytest.mark.gradient
def test_dense_gradients_wrt_x_w_and_b(gradcheck):
    x = tf.placeholder(tf.float64, [4, 3], name="x")
    W = tf.placeholder(tf.float64, [3, 2], name="W")
    b = tf.placeholder(tf.float64, [2], name="b")
    gradcheck(dense(x, W, b), [x, W, b],
              [RNG.normal(size=[4, 3]), RNG.normal(size=[3, 2]), RNG.normal(size=[2])])


@pytest.mark.gradient
def test_two_stacked_dense_layers(gradcheck):
    x = tf.placeholder(tf.float64, [3, 2], name="x")
    W1 = tf.placeholder(tf.float64, [2, 4], name="W1")
    b1 = tf.placeholder(tf.float64, [4], name="b1")
    W2 = tf.placeholder(tf.float64, [4, 2], name="W2")
    b2 = tf.placeholder(tf.float64, [2], name="b2")
    y = dense(dense(x, W1, b1), W2, b2)
    gradcheck(y, [x, W1, b1, W2, b2],
              [RNG.normal(size=s) for s in ([3, 2], [2, 4], [4], [4, 2], [2])])


@pytest.mark.gradient
def test_second_derivatives_of_a_dense_layer_with_tanh(gradgradcheck):
    # The gradients of your gradients (they are ops too), against finite differences.
    x = tf.placeholder(tf.float64, [3, 2], name="x")
    W = tf.placeholder(tf.float64, [2, 2], name="W")
    b = tf.placeholder(tf.float64, [2], name="b")
    gradgradcheck(tf.tanh(dense(x, W, b)), [x, W, b],
                  [RNG.normal(size=s) for s in ([3, 2], [2, 2], [2])])
