"""Sending a request to a stopped device process is bounded.

A request carrying a ~500 KB tensor is more than a Unix socket buffers, so
writing it blocks until the device process reads — forever, if the process
is stopped (``SIGSTOP``).  The client's writes give up at the step's deadline
(``DeadlineExceededError``) or, for a step without one, after
:data:`~minitf.runtime.worker.client.SEND_TIMEOUT` seconds without progress
(``UnavailableError`` naming the device).  The processes are really stopped;
each test resumes and kills them in ``finally``.
"""

import os
import signal
import time

import numpy as np
import pytest

import minitf as tf
from minitf.runtime.worker import client as worker_client

pytestmark = pytest.mark.timeout(120)

ELEMENTS = 125000  # 500 KB of float32: sent inside the request, not in shared memory


def _graph():
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [ELEMENTS], name="x")  # fed in RunGraph's request
        y = tf.reduce_sum(x * 2.0)
    with tf.device("/cpu:0"):
        z = y + 1.0
    return x, z


def _pid_of_cpu1(sess):
    clients = sess._device_processes.clients
    return clients[next(name for name in clients if name.endswith("CPU:1"))].pid


def _run_stopped(sess, fetch, feed, options, error_class):
    """Runs one step with the process of /cpu:1 stopped; returns (error, seconds)."""
    pid = _pid_of_cpu1(sess)
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        with pytest.raises(error_class) as raised:
            sess.run(fetch, feed, options=options)
        return raised.value, time.monotonic() - start
    finally:
        os.kill(pid, signal.SIGCONT)


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)  # a closed session stops it; be sure in any case
    except ProcessLookupError:
        pass


def test_the_request_is_larger_than_the_socket_buffers():
    assert ELEMENTS * 4 < (1 << 20)  # inline (worker.wire.INLINE_LIMIT), not shared memory
    import socket
    pair = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert pair[0].getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) < ELEMENTS * 4
    finally:
        for end in pair:
            end.close()


def test_sending_to_a_stopped_process_fails_at_the_deadline():
    x, z = _graph()
    feed = {x: np.ones(ELEMENTS, np.float32)}
    options = tf.RunOptions(timeout_in_ms=500)
    config = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0})
    with tf.Session(config=config) as sess:
        assert sess.run(z, feed, options=options) == 2.0 * ELEMENTS + 1.0
        pid = _pid_of_cpu1(sess)
        try:
            error, seconds = _run_stopped(sess, z, feed, options, tf.errors.DeadlineExceededError)
            assert seconds < 3.0, seconds
            assert "CPU:1" in error.message
            # Resumed, the process runs the next step.
            assert sess.run(z, feed, options=options) == 2.0 * ELEMENTS + 1.0
        finally:
            os.kill(pid, signal.SIGCONT)
    _kill(pid)


def test_without_a_deadline_sending_is_bounded_by_send_timeout(monkeypatch):
    """The step runs on /cpu:1 alone: this process only sends it its
    ``RunGraph`` (a ``_Recv`` here from a stopped process would wait as long
    as it lives, as documented, when the step has no deadline)."""
    monkeypatch.setattr(worker_client, "SEND_TIMEOUT", 1.0)
    with tf.device("/cpu:1"):
        x = tf.placeholder(tf.float32, [ELEMENTS], name="x")
        y = tf.reduce_sum(x * 2.0)
    feed = {x: np.ones(ELEMENTS, np.float32)}
    config = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0})
    with tf.Session(config=config) as sess:
        assert sess.run(y, feed) == 2.0 * ELEMENTS
        pid = _pid_of_cpu1(sess)
        try:
            error, seconds = _run_stopped(sess, y, feed, None, tf.errors.UnavailableError)
            assert seconds < 10.0, seconds
            assert "CPU:1" in error.message and "did not take a RunGraph request" in error.message
            assert str(pid) in error.message
            # Resumed, the process runs the next step on a new connection.
            os.kill(pid, signal.SIGCONT)
            assert sess.run(y, feed) == 2.0 * ELEMENTS
        finally:
            os.kill(pid, signal.SIGCONT)
    _kill(pid)
