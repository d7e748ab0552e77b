"""The device processes of a local multi-device session, faced with bad peers and faults.

A session with ``ConfigProto(device_count={"CPU": 2})`` serves ``/cpu:1`` from
a process of its own, and its own devices from a server in its process.
These tests act as a hostile or unlucky peer would — the wrong key, garbage
bytes, a connection that never says anything, a crafted shared-memory name,
a process killed or stopped — and check that the servers survive it, that
the next legitimate step works, that ``close()`` stops a running step and
that nothing (process, thread, socket, segment) is left behind.

Each test kills what it started, in a ``finally`` where a failure could
leave it running.
"""

import logging
import os
import signal
import socket
import tempfile
import threading
import time
from multiprocessing.connection import Client

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.worker import client as client_module
from minitf.runtime.worker import server as server_module
from minitf.runtime.worker import wire as wire_module
from minitf.runtime.worker.client import WorkerClient
from minitf.runtime.worker.server import WorkerServer
from minitf.runtime.worker.service import WorkerService
from minitf.runtime.worker.wire import SegmentMapper, SegmentPool, Wire

pytestmark = pytest.mark.timeout(180)

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0})
BOUND_S = 3.0  # a generous bound for what should take a fraction of a second
LOOP_ITERATIONS = 200000  # tens of seconds on the control-flow executor


# ---- helpers ----------------------------------------------------------------------
def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _wait_until(condition, seconds=10.0):
    """Polls ``condition`` (bounded); returns its last value."""
    give_up = time.monotonic() + seconds
    while not condition() and time.monotonic() < give_up:
        time.sleep(0.05)
    return condition()


def _kill(pid):
    for sig in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return


def _segments_of(pid):
    return [n for n in os.listdir("/dev/shm")
            if n.startswith("minitf-") and n.rsplit("-", 2)[1:2] == [str(pid)]]


def _small_step():
    """``z = x * 2 + 1`` with the product on ``/cpu:1`` (in its process)."""
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/cpu:1"):
        y = tf.multiply(x, 2.0, name="y")
    with tf.device("/cpu:0"):
        z = tf.add(y, 1.0, name="z")
    return x, z


def _check_step(sess, x, z):
    np.testing.assert_array_equal(sess.run(z, {x: np.ones(3, np.float32)}), [3.0] * 3)


class _Fixture:
    """One session with a device process, its addresses and its key."""

    def __init__(self):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.x, self.z = _small_step()
        self.sess = tf.Session(graph=self.graph, config=TWO_CPUS)
        processes = self.sess._device_processes
        self.authkey = processes._authkey
        self.pid = processes.pids()[0]
        self.device_address = processes._processes[0].address
        self.session_address = processes._server.address

    def check_step(self):
        _check_step(self.sess, self.x, self.z)


@pytest.fixture(scope="module")
def served():
    fixture = _Fixture()
    try:
        fixture.check_step()
        yield fixture
    finally:
        fixture.sess.close()
        _kill(fixture.pid)


def _raw_connection(address):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(BOUND_S * 3)
    sock.connect(address)
    return sock


def _ping(address, authkey):
    """A fresh connection (a full handshake) and one request: the server still serves."""
    client = WorkerClient(address, authkey, Wire("minitf-test"), "the server under test")
    try:
        header, _ = client.call("Ping", reply_by=time.monotonic() + BOUND_S)
        return header["pid"]
    finally:
        client.close()


ADDRESSES = ["device_address", "session_address"]


# ---- bad peers -----------------------------------------------------------------------
@pytest.mark.parametrize("which", ADDRESSES)
def test_a_peer_with_the_wrong_key_does_not_stop_the_server(served, which):
    address = getattr(served, which)
    for _ in range(3):
        with pytest.raises(Exception) as info:  # multiprocessing's AuthenticationError
            Client(address, family="AF_UNIX", authkey=b"not the key").close()
        assert "digest" in str(info.value)
    assert _alive(served.pid)
    assert _ping(address, served.authkey) > 0
    served.check_step()


@pytest.mark.parametrize("which", ADDRESSES)
@pytest.mark.parametrize("garbage", [
    b"\xff" * 64,                        # a length field of -1
    b"\x7f\xff\xff\xff" + b"x" * 16,     # a length of 2 GiB, then nothing
    b"\x00\x00\x00\x05hello",             # a short frame that is no digest
    b"",                                 # connect and hang up at once
], ids=["negative-length", "huge-length", "wrong-frame", "hang-up"])
def test_garbage_bytes_do_not_stop_the_server(served, which, garbage):
    address = getattr(served, which)
    with _raw_connection(address) as sock:
        sock.recv(64)  # the server's challenge
        sock.sendall(garbage)
    assert _alive(served.pid)
    assert _ping(address, served.authkey) > 0
    served.check_step()


@pytest.mark.parametrize("which", ADDRESSES)
def test_silent_peers_do_not_block_the_server(served, which):
    address = getattr(served, which)
    silent = [_raw_connection(address) for _ in range(4)]
    try:
        start = time.monotonic()
        assert _ping(address, served.authkey) > 0  # handshakes go on beside the silent ones
        served.check_step()
        assert time.monotonic() - start < BOUND_S
    finally:
        for sock in silent:
            sock.close()


def test_a_silent_peer_is_dropped_after_the_handshake_timeout(monkeypatch):
    monkeypatch.setattr(server_module, "HANDSHAKE_TIMEOUT", 0.3)
    directory = tempfile.mkdtemp(prefix="minitf-")
    server = _local_server(directory)
    try:
        with _raw_connection(server.address) as sock:
            start = time.monotonic()
            received = b""
            while True:  # the challenge, then the end of the connection
                chunk = sock.recv(256)
                if not chunk:
                    break
                received += chunk
            assert b"#CHALLENGE#" in received
            assert 0.2 < time.monotonic() - start < BOUND_S
        assert _ping(server.address, b"k" * 32) == os.getpid()
    finally:
        server.stop()
        os.rmdir(directory)


@pytest.mark.parametrize("which", ADDRESSES)
@pytest.mark.parametrize("frames", [
    [b"not json"],
    [b'[1, 2]'],
    [b'{"method": "Ping", "tensors": [{"shm": "../../etc/passwd", "owner": "..", '
     b'"dtype": "<f4", "shape": [1]}]}'],
    [b'{"method": "Ping", "tensors": [{"inline": 0, "dtype": "|O", "shape": [1]}]}',
     b"\x00" * 8],
], ids=["not-json", "not-a-header", "shm-path", "object-dtype"])
def test_an_authenticated_peer_sending_garbage_only_loses_its_connection(
        served, which, frames, caplog):
    address = getattr(served, which)
    connection = Client(address, family="AF_UNIX", authkey=served.authkey)
    try:
        with caplog.at_level(logging.WARNING, logger="minitf.runtime.worker.server"):
            for frame in frames:
                connection.send_bytes(frame)
            assert connection.poll(BOUND_S)
            with pytest.raises((EOFError, OSError)):
                connection.recv_bytes()  # hung up, without an answer
            if which == "session_address":  # this process's server: its log is here
                assert _wait_until(lambda: "dropped a connection" in caplog.text, BOUND_S)
    finally:
        connection.close()
    assert _alive(served.pid)
    assert _ping(address, served.authkey) > 0
    served.check_step()


@pytest.mark.parametrize("which", ADDRESSES)
def test_an_unknown_method_is_an_error_reply(served, which):
    connection = Client(getattr(served, which), family="AF_UNIX", authkey=served.authkey)
    try:
        connection.send_bytes(b'{"method": "Explode", "tensors": []}')
        header, _ = Wire("minitf-test").receive(connection)
        assert header["error"]["code"] == tf.errors.UNIMPLEMENTED
        assert "Explode" in header["error"]["message"]
    finally:
        connection.close()
    served.check_step()


# ---- threads ------------------------------------------------------------------------
def _local_server(directory):
    registry = get_registry()
    device = registry.device_factory("CPU").create(0)
    service = WorkerService([device], registry)
    server = WorkerServer(service, os.path.join(str(directory), "s.sock"), b"k" * 32,
                          Wire("minitf-test"))
    server.start()
    return server


def test_stopping_200_servers_leaves_no_thread():
    before = threading.active_count()
    with tempfile.TemporaryDirectory(prefix="minitf-") as directory:
        for i in range(200):
            server = _local_server(directory)
            if i % 20 == 0:  # some with a connection open, which stop() hangs up on
                connection = Client(server.address, family="AF_UNIX", authkey=b"k" * 32)
                server.stop()
                connection.close()
            else:
                server.stop()
        assert os.listdir(directory) == []  # and no socket file
    assert _wait_until(lambda: threading.active_count() <= before, BOUND_S)


def test_sessions_with_device_processes_leave_no_thread_or_process():
    tf.reset_default_graph()
    x, z = _small_step()
    before = threading.active_count()
    pids = []
    for _ in range(3):
        with tf.Session(config=TWO_CPUS) as sess:
            pids += sess._device_processes.pids()
            _check_step(sess, x, z)
    assert _wait_until(lambda: threading.active_count() <= before, BOUND_S)
    assert not any(_alive(pid) for pid in pids)


# ---- shared memory ----------------------------------------------------------------
def test_segment_names_are_unpredictable_and_a_taken_name_is_skipped(monkeypatch):
    suffixes = iter(["taken0000000000", "free00000000000"])
    monkeypatch.setattr(wire_module.secrets, "token_hex", lambda n: next(suffixes))
    pool = SegmentPool("minitf-test")
    planted = "/dev/shm/%s-taken0000000000" % pool.prefix
    with open(planted, "wb") as f:
        f.write(b"someone else's")
    try:
        descriptor = pool.lend(np.ones(10, np.float32))
        assert descriptor["shm"] == "%s-free00000000000" % pool.prefix
        with open(planted, "rb") as f:
            assert f.read() == b"someone else's"  # never opened, never truncated
    finally:
        pool.close()
        os.unlink(planted)
    monkeypatch.undo()
    pool = SegmentPool("minitf-test")
    try:
        names = {pool.lend(np.ones(n, np.float32))["shm"] for n in (10, 10000, 100000)}
        suffixes = {name.rsplit("-", 1)[1] for name in names}
        assert len(suffixes) == 3 and all(len(s) == 16 for s in suffixes)
    finally:
        pool.close()


@pytest.mark.parametrize("name, owner", [
    ("../../etc/passwd", ".."),
    ("minitf-test-1-ab/../../x", "minitf-test-1"),
    ("minitf-test-1-..", "minitf-test-1"),
    ("someone-else-1-ab", "someone-else-1"),
    ("minitf-other-1-ab", "minitf-test-1"),
    (7, "minitf-test-1"),
])
def test_a_received_segment_name_must_be_a_plain_minitf_name(name, owner):
    descriptor = {"shm": name, "owner": owner, "dtype": "<f4", "shape": [1]}
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment name"):
        SegmentMapper().array(descriptor)


def test_received_segments_are_mapped_read_only():
    pool = SegmentPool("minitf-test")
    try:
        data = np.arange(1000, dtype=np.float32)
        array = SegmentMapper().array(pool.lend(data))
        np.testing.assert_array_equal(array, data)
        assert not array.flags.writeable
        with pytest.raises(ValueError):
            array[0] = 5.0
        with pytest.raises(ValueError):
            array.flags.writeable = True
    finally:
        pool.close()


def test_kernels_that_write_copy_a_tensor_received_in_shared_memory():
    n = 1 << 19  # 2 MiB of float32: crosses in shared memory
    x = tf.placeholder(tf.float32, [n], name="x")
    with tf.device("/cpu:1"):
        v = tf.Variable(tf.zeros([n]), name="v")
        assign = tf.assign(v, x)
        grow = tf.assign_add(v, x)
        doubled = tf.add(x, x)
    data = np.arange(n, dtype=np.float32)
    with tf.Session(config=TWO_CPUS) as sess:
        pid = sess._device_processes.pids()[0]
        try:
            sess.run(assign, {x: data})
            np.testing.assert_array_equal(sess.run(grow, {x: data}), data * 2)
            np.testing.assert_array_equal(sess.run(doubled, {x: data}), data * 2)
            np.testing.assert_array_equal(sess.run(v), data * 2)
        finally:
            sess.close()
            _kill(pid)


def test_segments_of_a_killed_device_process_are_unlinked_at_close():
    n = 1 << 19
    x = tf.placeholder(tf.float32, [n], name="x")
    with tf.device("/cpu:1"):
        y = tf.add(x, 1.0)
    data = np.zeros(n, np.float32)
    sess = tf.Session(config=TWO_CPUS)
    pid = sess._device_processes.pids()[0]
    try:
        np.testing.assert_array_equal(sess.run(y, {x: data}), data + 1.0)
        assert _segments_of(pid)  # it lent its reply
        os.kill(pid, signal.SIGKILL)
        assert _wait_until(lambda: not _alive(pid))
        assert _segments_of(pid)  # a killed process unlinks nothing
    finally:
        sess.close()
        _kill(pid)
    assert _segments_of(pid) == []
    assert _segments_of(os.getpid()) == []  # the session's own segments too


# ---- close() and SIGSTOP ----------------------------------------------------------
def _long_loop():
    n = tf.placeholder(tf.int32, [], name="n")
    _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 1.0),
                             [tf.constant(0), tf.constant(0.0)])
    return n, total


@pytest.mark.parametrize("processes", [True, False], ids=["device-processes", "in-process"])
def test_close_cancels_a_step_computing_on_another_device(processes):
    with tf.device("/cpu:1"):
        n, total = _long_loop()
    with tf.device("/cpu:0"):
        result = total * 2.0
    config = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0}, device_processes=processes)
    sess = tf.Session(config=config)
    pids = sess._device_processes.pids() if processes else []
    assert sess.run(result, {n: 5}) == 10.0
    closer = threading.Timer(0.5, sess.close)
    closer.start()
    try:
        start = time.monotonic()
        with pytest.raises(tf.errors.CancelledError, match="Session::Close"):
            sess.run(result, {n: LOOP_ITERATIONS})
        assert time.monotonic() - start < 0.5 + BOUND_S
    finally:
        closer.join()
        sess.close()
        for pid in pids:
            _kill(pid)
    assert _wait_until(lambda: not any(_alive(pid) for pid in pids), BOUND_S)


@pytest.mark.parametrize("deadline", [True, False], ids=["deadline", "no-deadline"])
def test_registering_a_step_with_a_stopped_device_process_is_bounded(deadline, monkeypatch):
    monkeypatch.setattr(client_module, "REGISTER_TIMEOUT", 1.0)
    x, z = _small_step()
    with tf.device("/cpu:1"):
        other = tf.subtract(x, 1.0)  # a partition of a new signature
    options = tf.RunOptions(timeout_in_ms=500) if deadline else None
    error = tf.errors.DeadlineExceededError if deadline else tf.errors.UnavailableError
    feed = {x: np.ones(3, np.float32)}
    sess = tf.Session(config=TWO_CPUS)
    pid = sess._device_processes.pids()[0]
    try:
        _check_step(sess, x, z)
        os.kill(pid, signal.SIGSTOP)
        try:
            start = time.monotonic()
            with pytest.raises(error, match="CPU:1"):
                sess.run(other, feed, options=options)
            assert time.monotonic() - start < BOUND_S
        finally:
            os.kill(pid, signal.SIGCONT)
        np.testing.assert_array_equal(sess.run(other, feed, options=options), [0.0] * 3)
        _check_step(sess, x, z)
    finally:
        sess.close()
        _kill(pid)
