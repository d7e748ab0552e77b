"""Deadlines and cancellation stop a step that computes, on every executor.

``RunOptions(timeout_in_ms=...)`` and ``ConfigProto(operation_timeout_in_ms=...)``
must stop a step that is busy computing (a long chain of ops, a long
``tf.while_loop``) about on time with ``DeadlineExceededError``, as TF does —
not only a step blocked in a queue.  ``sess.close()`` from another thread
stops a running step with ``CancelledError``.  A device process that stops
answering (``SIGSTOP``) fails the step at its deadline instead of hanging.
After each of these the session (when still open) runs the next step.

The bounds are loose (a 0.5 s deadline must fire within 3 s) because this
suite runs on small, loaded machines; the steps would last far longer
without the checks.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

import minitf as tf

pytestmark = pytest.mark.timeout(120)

DEADLINE_MS = 500
BOUND_S = 3.0
LOOP_ITERATIONS = 200000


def _long_loop():
    """A while_loop of 200k iterations: tens of seconds on the control-flow executor."""
    n = tf.placeholder(tf.int32, [], name="n")
    i = tf.constant(0)
    _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 1.0),
                             [i, tf.constant(0.0)])
    return n, total


def _long_chain(x, length=20000):
    """A straight chain of ``length`` small ops (several seconds without checks)."""
    y = x
    for _ in range(length):
        y = y + 1.0
    return y


def _expect_timeout(sess, fetch, feed, options=None, error=tf.errors.DeadlineExceededError):
    start = time.monotonic()
    with pytest.raises(error):
        sess.run(fetch, feed, options=options)
    elapsed = time.monotonic() - start
    assert elapsed < BOUND_S, elapsed
    return elapsed


def _options():
    return tf.RunOptions(timeout_in_ms=DEADLINE_MS)


def test_while_loop_stops_at_its_deadline():
    n, total = _long_loop()
    with tf.Session() as sess:
        elapsed = _expect_timeout(sess, total, {n: LOOP_ITERATIONS}, _options())
        assert elapsed >= DEADLINE_MS / 1000.0
        assert sess.run(total, {n: 10}, options=_options()) == 10.0  # the session still works


def test_operation_timeout_in_config_stops_a_loop():
    n, total = _long_loop()
    config = tf.ConfigProto(operation_timeout_in_ms=DEADLINE_MS)
    with tf.Session(config=config) as sess:
        _expect_timeout(sess, total, {n: LOOP_ITERATIONS})
        assert sess.run(total, {n: 3}) == 3.0


def test_while_loop_on_the_parallel_control_flow_executor():
    n, total = _long_loop()
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        _expect_timeout(sess, total, {n: LOOP_ITERATIONS}, _options())
        assert sess.run(total, {n: 4}) == 4.0


@pytest.mark.parametrize("config", [
    None,  # the generated straight-line step
    tf.ConfigProto(experimental=tf.ConfigProto.Experimental(executor_type="INTERPRETER")),
    tf.ConfigProto(inter_op_parallelism_threads=2),  # the parallel executor
], ids=["generated", "interpreter", "parallel"])
def test_long_chain_stops_at_its_deadline(config):
    _, y, feed, _ = _timed_chain(config)
    with tf.Session(config=config) as sess:
        full = _warm_run(sess, y, feed)
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y, feed, options=tf.RunOptions(timeout_in_ms=int(full * 1000 / 6)))
        assert time.monotonic() - start < full / 2
        np.testing.assert_array_equal(sess.run(y, feed)[:3], [CHAIN] * 3)


CHAIN = 1500
CHAIN_ELEMENTS = 3000000


def _timed_chain(config):
    """A chain of big elementwise ops, lasting a second or more."""
    x = tf.placeholder(tf.float32, [CHAIN_ELEMENTS], name="x")
    y = _long_chain(x, CHAIN)
    return x, y, {x: np.zeros(CHAIN_ELEMENTS, np.float32)}, None


def _warm_run(sess, y, feed):
    """Runs the step once with a (generous) deadline, so that the step for runs
    with options is compiled; returns how long the run itself lasts."""
    options = tf.RunOptions(timeout_in_ms=600000)
    sess.run(y, feed, options=options)
    start = time.monotonic()
    sess.run(y, feed, options=options)
    full = time.monotonic() - start
    assert full > 0.8, "the chain is too short to show a deadline on this machine"
    return full


def test_short_steps_are_not_affected():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = _long_chain(x, 40)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.zeros(3, np.float32)},
                                               options=_options()), [40.0] * 3)


def test_multi_device_loop_stops_at_its_deadline():
    config = tf.ConfigProto(device_count={"CPU": 2}, device_processes=False)
    with tf.device("/cpu:1"):
        n, total = _long_loop()
    with tf.device("/cpu:0"):
        result = total * 2.0
    with tf.Session(config=config) as sess:
        _expect_timeout(sess, result, {n: LOOP_ITERATIONS}, _options())
        assert sess.run(result, {n: 5}) == 10.0


def _close_from_another_thread(sess, after_s):
    def close():
        time.sleep(after_s)
        sess.close()
    thread = threading.Thread(target=close)
    thread.start()
    return thread


@pytest.mark.parametrize("config", [
    None,
    tf.ConfigProto(inter_op_parallelism_threads=2),
], ids=["control-flow", "parallel-control-flow"])
def test_close_cancels_a_running_loop(config):
    n, total = _long_loop()
    sess = tf.Session(config=config)
    thread = _close_from_another_thread(sess, 0.5)
    try:
        _expect_timeout(sess, total, {n: LOOP_ITERATIONS}, error=tf.errors.CancelledError)
    finally:
        thread.join()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(total, {n: 1})


@pytest.mark.parametrize("config", [
    None,
    tf.ConfigProto(inter_op_parallelism_threads=2),
], ids=["generated", "parallel"])
def test_close_cancels_a_running_chain(config):
    x, y, feed, _ = _timed_chain(config)
    sess = tf.Session(config=config)
    sess.run(y, feed)  # compiled once: the timed run below is warm
    start = time.monotonic()
    sess.run(y, feed)
    full = time.monotonic() - start
    assert full > 0.8, "the chain is too short to show a cancellation on this machine"
    thread = _close_from_another_thread(sess, full / 6)
    start = time.monotonic()
    try:
        with pytest.raises(tf.errors.CancelledError, match="Session::Close"):
            sess.run(y, feed)
    finally:
        thread.join()
    assert time.monotonic() - start < full / 2


def _process_of(sess, device_suffix):
    clients = sess._device_processes.clients
    name = next(n for n in clients if n.endswith(device_suffix))
    return clients[name].pid


def test_stopped_device_process_fails_at_the_deadline():
    config = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0})
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        y = x * 2.0
    with tf.device("/cpu:0"):
        z = y + 1.0
    feed = {x: np.ones(3, np.float32)}
    with tf.Session(config=config) as sess:
        # Registered with the device process while it answers (graphs are
        # registered when a step is first made, before its deadline runs).
        np.testing.assert_array_equal(sess.run(z, feed, options=_options()), [3.0] * 3)
        pid = _process_of(sess, "CPU:1")
        os.kill(pid, signal.SIGSTOP)
        try:
            _expect_timeout(sess, z, feed, _options())
        finally:
            os.kill(pid, signal.SIGCONT)
        np.testing.assert_array_equal(sess.run(z, feed, options=_options()), [3.0] * 3)
    try:
        os.kill(pid, signal.SIGKILL)  # closed sessions stop it; be sure in any case
    except ProcessLookupError:
        pass
