"""The parallel executor: independent branches overlap; results and errors match."""

import time

import numpy as np
import pytest

import minitf as tf
from minitf.registry import register_plugin, unregister_plugin
from tests.plugin_fixtures import TestPlugin, sleep_identity

PARALLEL = tf.ConfigProto(inter_op_parallelism_threads=4)


@pytest.fixture(autouse=True)
def sleep_plugin():
    plugin = TestPlugin()
    register_plugin(plugin, name="sleep_plugin")
    yield
    unregister_plugin(plugin)


def _two_branches(seconds):
    x = tf.placeholder(tf.float32, [], name="x")
    left = sleep_identity(tf.add(x, 1.0), seconds)
    right = sleep_identity(tf.add(x, 2.0), seconds)
    return x, tf.add(left, right)


def _timed(config, seconds=0.3):
    x, out = _two_branches(seconds)
    with tf.Session(config=config) as sess:
        assert sess.run(out, {x: 1.0}) == 5.0  # warm: the plan is built
        start = time.perf_counter()
        assert sess.run(out, {x: 1.0}) == 5.0
        return time.perf_counter() - start


def test_independent_branches_overlap():
    sequential = _timed(tf.ConfigProto())
    tf.reset_default_graph()
    parallel = _timed(PARALLEL)
    assert sequential >= 0.6
    assert parallel < 0.5, "two 0.3 s branches took %.2f s with 4 threads" % parallel


def test_parallel_results_match_straight_line():
    x = tf.placeholder(tf.float32, [3], name="x")
    v = tf.Variable([1.0, 2.0, 3.0])
    terms = [tf.add(x, float(i)) for i in range(6)]
    total = terms[0]
    for t in terms[1:]:
        total = tf.add(total, t)
    out = {"total": total, "both": (tf.add(total, v), x), "op": tf.no_op()}
    feed = {x: np.arange(3, dtype=np.float32)}
    results = []
    for config in (tf.ConfigProto(), PARALLEL):
        with tf.Session(config=config) as sess:
            sess.run(v.initializer)
            results.append(sess.run(out, feed))
    np.testing.assert_array_equal(results[0]["total"], results[1]["total"])
    np.testing.assert_array_equal(results[0]["both"][0], results[1]["both"][0])
    assert results[1]["op"] is None


def test_parallel_errors_reach_the_caller():
    x = tf.placeholder(tf.float32, name="x")
    unfed = tf.placeholder(tf.float32, name="never_fed")
    out = tf.add(sleep_identity(x, 0.05), unfed)
    with tf.Session(config=PARALLEL) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="never_fed"):
            sess.run(out, {x: 1.0})
        assert sess.run(out, {x: 1.0, unfed: 2.0}) == 3.0
