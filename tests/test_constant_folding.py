"""Constant folding, the first rewrite pass (minitf/runtime/passes/constant_folding.py).

Small pure ops whose inputs are all constants run once, when the step is
compiled, as grappler folds them in TF: they must give the same values, never
run again, never be overwritten, and leave errors, control dependencies and
large results to the step.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.runtime.passes import constant_folding

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def traced_names(sess, fetches, feed_dict=None):
    """Runs ``fetches`` once with a full trace; returns (values, names of the ops that ran)."""
    metadata = tf.RunMetadata()
    values = sess.run(fetches, feed_dict, options=FULL, run_metadata=metadata)
    names = {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}
    return values, names


def test_pure_ops_of_constants_are_computed_once_with_the_same_values(sess):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    ones = tf.reshape(tf.fill([3, 2], 2.0, name="fill"), [2, 3], name="reshape")
    y = tf.add(x, ones, name="y")
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    value, names = traced_names(sess, y, {x: feed})
    np.testing.assert_array_equal(value, feed + 2.0)
    assert "y" in names
    assert "fill" not in names and "reshape" not in names


def test_the_initial_gradient_of_a_scalar_loss_is_folded(sess):
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.Variable(np.ones((4, 1), np.float32))
    loss = tf.reduce_sum(tf.matmul(x, w))
    (grad,) = tf.gradients(loss, [w])
    sess.run(tf.global_variables_initializer())
    feed = np.arange(12, dtype=np.float32).reshape(3, 4)
    value, names = traced_names(sess, grad, {x: feed})
    np.testing.assert_allclose(value, feed.sum(axis=0)[:, None])
    assert not any(name.endswith("/Fill") for name in names)


def test_a_fetched_folded_value_is_the_callers_own(sess):
    shape = tf.shape(tf.fill([2, 5], 1.0))
    first = sess.run(shape)
    first[0] = 99
    np.testing.assert_array_equal(sess.run(shape), [2, 5])


def test_ops_with_control_dependencies_run_in_the_step(sess):
    v = tf.Variable(0.0)
    increment = tf.assign_add(v, 1.0)
    dims, value = tf.constant([2]), tf.constant(3.0)
    with tf.control_dependencies([increment]):
        filled = tf.fill(dims, value, name="after_increment")
    sess.run(tf.global_variables_initializer())
    value, names = traced_names(sess, filled)
    np.testing.assert_array_equal(value, [3.0, 3.0])
    assert "after_increment" in names
    assert sess.run(v) == 1.0


def test_large_results_are_left_to_the_step(sess):
    side = int(np.sqrt(constant_folding.FOLDING_MAX_ELEMENTS)) + 1
    big = tf.fill([side, side], 1.0, name="big")
    value, names = traced_names(sess, tf.reduce_sum(big))
    assert value == side * side
    assert "big" in names


def test_an_op_that_fails_is_left_to_raise_in_the_step(sess, monkeypatch):
    monkeypatch.setattr(constant_folding, "FOLDABLE_OPS", constant_folding.FOLDABLE_OPS | {"GatherV2"})
    picked = tf.gather(tf.constant([1, 2]), tf.constant(5), name="picked")
    with pytest.raises(tf.errors.InvalidArgumentError, match="node picked"):
        sess.run(picked)
