"""Tests of Swish and SwishGrad: NumPy values, ``opcheck``, gradient fixtures."""

import numpy as np
import pytest

import minitf as tf
from minitf.test import opcheck
from minitf_swish import swish, swish_grad

X = np.linspace(-4.0, 4.0, 15, dtype=np.float32).reshape(3, 5)


def reference(x, beta=1.0):
    return x / (1.0 + np.exp(-beta * x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta", [1.0, 0.3])
def test_matches_numpy(dtype, beta):
    x = tf.placeholder(dtype, [3, 5])
    with tf.Session() as sess:
        got = sess.run(swish(x, beta=beta), {x: X.astype(dtype)})
    assert got.dtype == dtype
    np.testing.assert_allclose(got, reference(X.astype(np.float64), beta), rtol=1e-6, atol=1e-7)


def test_opcheck_swish():
    report = opcheck(lambda x: swish(x, beta=1.5), [X])
    assert report["gradgrad"].status == "passed"


def test_opcheck_swish_grad():
    """The fused gradient op is an op like any other: its own gradient is checked too."""
    dy = np.linspace(0.5, 1.5, 15, dtype=np.float32).reshape(3, 5)
    opcheck(lambda d, x: swish_grad(d, x, beta=0.7), [dy, X])


@pytest.mark.gradient
def test_gradient(gradcheck):
    x = tf.placeholder(tf.float64, [6])
    gradcheck(swish(x, beta=2.0), x, np.linspace(-3.0, 3.0, 6))


@pytest.mark.gradient
def test_second_derivative(gradgradcheck):
    x = tf.placeholder(tf.float64, [6])
    gradgradcheck(swish(x), x, np.linspace(-3.0, 3.0, 6))


def test_shapes_and_errors_at_construction():
    x = tf.placeholder(tf.float32, [None, 4])
    assert swish(x).shape.as_list() == [None, 4]
    assert swish_grad(tf.placeholder(tf.float32, [2, None]), x).shape.as_list() == [2, 4]
    with pytest.raises(ValueError):
        swish_grad(tf.placeholder(tf.float32, [3, 4]), tf.placeholder(tf.float32, [2, 4]))
    with pytest.raises(TypeError, match="Swish"):
        swish(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="beta"):
        swish(x, beta="steep")
