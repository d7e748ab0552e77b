"""Tests of the TOY device itself; minitf's conformance suite runs beside them."""

import numpy as np
import pytest

import minitf as tf
import minitf_toy_device


def test_the_session_lists_the_device():
    with tf.Session() as sess:
        names = [d.name for d in sess.list_devices() if d.device_type == "TOY"]
    assert names == ["/job:localhost/replica:0/task:0/device:TOY:0"]


def test_a_pinned_matmul_runs_the_toy_kernel():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.device("/device:TOY:0"):
        x = tf.placeholder(tf.float32, [2, 3])
        y = tf.matmul(x, x, transpose_b=True)
    before = minitf_toy_device.MATMUL_CALLS[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: a}), a @ a.T)
    assert minitf_toy_device.MATMUL_CALLS[0] == before + 1


def test_unpinned_ops_stay_on_the_cpu():
    """The TOY factory's priority is below the CPU's: nothing moves there unasked."""
    before = minitf_toy_device.MATMUL_CALLS[0]
    with tf.Session() as sess:
        sess.run(tf.matmul(tf.ones([2, 2]), tf.ones([2, 2])))
    assert minitf_toy_device.MATMUL_CALLS[0] == before


def test_buffers_are_read_only():
    buffer = minitf_toy_device.ToyDevice().from_host(np.zeros(3))
    with pytest.raises(ValueError):
        buffer[0] = 1.0
