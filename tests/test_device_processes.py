"""Devices simulated in separate processes: correctness, faults and clean-up."""

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import minitf as tf

pytestmark = pytest.mark.timeout(120)

THREE_CPUS = tf.ConfigProto(device_count={"CPU": 3, "GPU": 0})


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _chain():
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        v = tf.Variable([1.0, 2.0, 3.0], name="v")
        a = tf.add(x, v, name="a")
    with tf.device("/cpu:2"):
        b = tf.add(a, a, name="b")
    with tf.device("/cpu:0"):
        c = tf.add(b, 1.0, name="c")
    return x, v, c


def test_each_extra_device_is_its_own_process():
    with tf.Session(config=THREE_CPUS) as sess:
        pids = sess._device_processes.pids()
        assert len(set(pids)) == 2 and os.getpid() not in pids
        assert all(_alive(p) for p in pids)
        assert [d.name[-5:] for d in sess.list_devices()] == ["CPU:0", "CPU:1", "CPU:2"]
    assert not any(_alive(p) for p in pids)


def test_results_and_variables_across_processes():
    x, v, c = _chain()
    feed = {x: np.array([1.0, 1.0, 1.0], np.float32)}
    with tf.Session(config=THREE_CPUS) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(c, feed), [5.0, 7.0, 9.0])
        sess.run(tf.assign_add(v, [1.0, 1.0, 1.0]))  # runs in cpu:1's process
        np.testing.assert_array_equal(sess.run(v), [2.0, 3.0, 4.0])
        np.testing.assert_array_equal(sess.run(c, feed), [7.0, 9.0, 11.0])
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, device_processes=False)) as s:
        s.run(v.initializer)
        np.testing.assert_array_equal(s.run(c, feed), [5.0, 7.0, 9.0])


def test_large_tensors_cross_through_shared_memory():
    x = tf.placeholder(tf.float32, [1 << 20], name="x")
    with tf.device("/cpu:1"):
        y = tf.add(x, 1.0)
    with tf.device("/cpu:2"):
        z = tf.add(y, 1.0)
    data = np.arange(1 << 20, dtype=np.float32)
    before = _segments()  # other programs' segments are not this test's business
    with tf.Session(config=THREE_CPUS) as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(z, {x: data}), data + 2.0)
    assert _segments() - before == set()


def _segments():
    return {n for n in os.listdir("/dev/shm") if n.startswith("minitf-")}


def test_errors_inside_a_device_process_are_typed_and_located():
    with tf.device("/cpu:1"):
        unfed = tf.placeholder(tf.float32, name="remote_unfed")
        y = tf.add(unfed, 1.0)
    with tf.Session(config=THREE_CPUS) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="remote_unfed"):
            sess.run(y)
        assert sess.run(y, {unfed: 1.0}) == 2.0


def test_dead_device_process_is_unavailable_not_a_hang():
    x, v, c = _chain()
    sess = tf.Session(config=THREE_CPUS)
    sess.run(v.initializer)
    pid = sess._device_processes.pids()[0]  # serves /cpu:1
    os.kill(pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises((tf.errors.UnavailableError, tf.errors.AbortedError)) as info:
        sess.run(c, {x: [1.0, 1.0, 1.0]})
    assert time.monotonic() - start < 10
    assert "CPU:1" in str(info.value)
    sess.close()
    with tf.Session(config=THREE_CPUS) as fresh:
        fresh.run(v.initializer)
        np.testing.assert_array_equal(fresh.run(c, {x: [1.0, 1.0, 1.0]}), [5.0, 7.0, 9.0])


def test_many_sessions_leave_no_process_behind():
    pids = []
    for _ in range(4):
        sess = tf.Session(config=THREE_CPUS)
        pids += sess._device_processes.pids()
        sess.close()
    sess = tf.Session(config=THREE_CPUS)
    pids += sess._device_processes.pids()
    del sess  # garbage collection also stops them
    gc.collect()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def test_interpreter_exit_stops_device_processes(tmp_path):
    script = textwrap.dedent("""
        import minitf as tf
        sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}))
        print(" ".join(map(str, sess._device_processes.pids())), flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)
