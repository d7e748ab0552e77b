"""The distributed runtime under faults: dead, hung and restarted tasks; bad messages; leaks.

What the issue asks (its "Bad input and faults" section), each checked here:

* a task that dies mid-step fails the step with ``UnavailableError``
  promptly; one that hangs fails it with ``DeadlineExceededError`` at the
  step's deadline (``UnavailableError`` within the keepalive time without
  one); nothing hangs, and the other tasks keep serving;
* a task restarted at the same address is a new incarnation: the next step
  fails with ``AbortedError`` (its partitions and variables are gone), the
  one after is planned anew and runs once the variables are initialized
  again — as in TF;
* a malformed, truncated, oversized or garbage message gets a clear error
  reply, and the server goes on serving the next client;
* 100 client sessions leave no threads, file descriptors, master sessions
  or registered partitions behind; ``join()`` returns after ``stop()``.

Tasks run in processes of their own, started with the launcher
(``python -m minitf.distributed.launch``) on 127.0.0.1; each test kills and
reaps what it started (the ``processes`` fixture), also when it fails.
"""

import gc
import json
import os
import struct
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

grpc = pytest.importorskip("grpc", reason="the distributed runtime needs grpcio")
pytest.importorskip("tensorboard.compat.proto.cluster_pb2",
                    reason="the distributed runtime needs TF's protos (minitf[distributed])")

import minitf as tf  # noqa: E402
from minitf.distributed import messages, rpc  # noqa: E402
from minitf.distributed.master import MasterSession  # noqa: E402
from tests.cluster_fixtures import (REPO_ROOT, TaskProcesses, in_process_cluster,  # noqa: E402
                                    launch_command, loopback_cluster)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def processes():
    """Starts task processes (``processes.start_all(cluster)``); kills and reaps them after."""
    tasks = TaskProcesses()
    yield tasks
    tasks.close()


@pytest.fixture
def three_tasks(processes):
    """ps:0, worker:0 and worker:1 in processes of their own; the client talks to worker:0."""
    cluster = loopback_cluster(ps=1, worker=2)
    return processes.start_all(cluster)


def _raises_within(error_classes, seconds, fn, *args, **kwargs):
    """Calls ``fn``; asserts it raises one of ``error_classes`` within ``seconds``."""
    start = time.monotonic()
    with pytest.raises(error_classes) as raised:
        fn(*args, **kwargs)
    elapsed = time.monotonic() - start
    assert elapsed < seconds, "%s came after %.1f s" % (type(raised.value).__name__, elapsed)
    return raised.value, elapsed


# ---- the launcher ---------------------------------------------------------------------------------
def test_the_launcher_serves_until_sigterm(processes):
    ps = processes.start(loopback_cluster(ps=1), "ps", 0)
    with tf.Session(ps.target) as sess:
        assert [d.name for d in sess.list_devices()] == ["/job:ps/replica:0/task:0/device:CPU:0"]
        assert sess.run(tf.constant(2.0) * 4.0) == 8.0
    start = time.monotonic()
    assert ps.terminate() == 0
    assert time.monotonic() - start < 5.0


def test_the_launcher_exits_when_its_parent_goes_away(processes):
    ps = processes.start(loopback_cluster(ps=1), "ps", 0)
    ps.process.stdin.close()  # what a dying parent's pipe does
    assert ps.process.wait(10.0) == 0


def test_the_launcher_reads_tf_config():
    cluster = loopback_cluster(ps=1, worker=1)
    environ = dict(os.environ, TF_CONFIG=json.dumps(
        {"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    process = subprocess.Popen([sys.executable, "-m", "minitf.distributed.launch"],
                               cwd=REPO_ROOT, env=environ, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = process.stdout.readline().decode()
        assert line == "READY grpc://%s\n" % cluster["worker"][0]
    finally:
        process.terminate()
        assert process.wait(10.0) == 0
        process.stdin.close()
        process.stdout.close()


@pytest.mark.parametrize("job, index, message", [("chief", 0, "No such job"),
                                                 ("ps", 5, "No task with index 5")])
def test_the_launcher_reports_a_task_not_in_its_cluster(job, index, message):
    result = subprocess.run(launch_command(loopback_cluster(ps=1), job, index), cwd=REPO_ROOT,
                            stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert result.returncode == 2 and result.stdout == b""
    assert message in result.stderr.decode()


# ---- a task that dies --------------------------------------------------------------------------
def _queue_on(task, name):
    """A FIFO queue of floats on ``task``: (enqueue 3.0, dequeue) ops."""
    with tf.device(task):
        queue = tf.FIFOQueue(10, tf.float32, shared_name=name, name=name)
        return queue.enqueue(3.0), queue.dequeue()


def test_a_worker_killed_mid_step_fails_the_step_promptly(three_tasks):
    _, take = _queue_on("/job:worker/task:1", "on_worker1")
    with tf.device("/job:worker/task:0"):
        used = take + 1.0
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(5.0)
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        sess.run(v.initializer)
        threading.Timer(1.0, three_tasks[("worker", 1)].kill).start()
        # The step waits in a dequeue on worker:1; it dies: nothing hangs.
        error, elapsed = _raises_within(tf.errors.UnavailableError, 10.0, sess.run, used)
        assert elapsed >= 0.9
        assert "task:1" in str(error)
        # The other tasks serve on, this session too.
        assert sess.run(v) == 5.0
        assert sess.run(v * 2.0) == 10.0
    with tf.Session(three_tasks[("ps", 0)].target,
                    config=tf.ConfigProto(device_filters=["/job:ps"])) as sess:
        assert sess.run(v) == 5.0


def test_a_worker_killed_under_a_deadline_fails_the_step_within_it(three_tasks):
    _, take = _queue_on("/job:worker/task:1", "on_worker1")
    with tf.device("/job:worker/task:0"):
        used = take + 1.0
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        threading.Timer(0.5, three_tasks[("worker", 1)].kill).start()
        _raises_within((tf.errors.UnavailableError, tf.errors.DeadlineExceededError), 5.0,
                       sess.run, used, options=tf.RunOptions(timeout_in_ms=5000))


def test_a_killed_consumer_leaves_no_dequeue_waiting_on_the_ps(three_tasks):
    # worker:1 would consume what the ps dequeues; it dies while the dequeue
    # waits.  The aborted step's dequeue must not take the next element.
    put, take = _queue_on("/job:ps/task:0", "on_ps")
    with tf.device("/job:worker/task:1"):
        on_worker1 = take + 1.0
    with tf.device("/job:worker/task:0"):
        on_worker0 = take + 2.0
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        threading.Timer(1.0, three_tasks[("worker", 1)].kill).start()
        _raises_within(tf.errors.UnavailableError, 10.0, sess.run, on_worker1)
        time.sleep(0.5)  # the abort reaches the ps's dequeue
        sess.run(put)
        assert sess.run(on_worker0, options=tf.RunOptions(timeout_in_ms=5000)) == 5.0


def test_closing_a_session_cancels_its_blocked_step():
    # A queue runner's thread blocks in a dequeue on the ps when its session
    # closes: the step fails with CancelledError, and the dequeue is gone
    # from the ps (it must not take the element enqueued next).
    with in_process_cluster(ps=1, worker=1) as servers:
        put, take = _queue_on("/job:ps/task:0", "closing")
        with tf.device("/job:ps/task:0"):
            size = tf.FIFOQueue(10, tf.float32, shared_name="closing", name="closing").size()
        sess = tf.Session(servers[("worker", 0)].target)
        raised = []
        blocked = threading.Thread(target=lambda: raised.append(_error_of(sess.run, take)))
        blocked.start()
        time.sleep(0.5)
        sess.close()
        blocked.join(10.0)
        assert not blocked.is_alive() and raised == [tf.errors.CancelledError]
        with tf.Session(servers[("worker", 0)].target) as other:
            other.run(put)
            time.sleep(0.3)
            assert other.run(size) == 1


def test_a_killed_client_leaves_no_dequeue_waiting_on_the_ps(three_tasks):
    put, _ = _queue_on("/job:ps/task:0", "client_dies")
    with tf.device("/job:ps/task:0"):
        size = tf.FIFOQueue(10, tf.float32, shared_name="client_dies", name="client_dies").size()
    client = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, minitf as tf
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(10, tf.float32, shared_name="client_dies", name="client_dies")
        with tf.Session(sys.argv[1]) as sess:
            print("RUNNING", flush=True)
            sess.run(queue.dequeue())
        """), three_tasks[("worker", 0)].target], cwd=REPO_ROOT, stdout=subprocess.PIPE)
    try:
        assert client.stdout.readline() == b"RUNNING\n"
        time.sleep(1.0)  # its dequeue now waits on the ps
    finally:
        client.kill()
        client.wait(10.0)
        client.stdout.close()
    time.sleep(0.5)  # the master sees the call abandoned and aborts the step
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        sess.run(put)
        time.sleep(0.3)
        assert sess.run(size) == 1


def _error_of(fn, *args):
    """The class of the error ``fn(*args)`` raises (None if it returns)."""
    try:
        fn(*args)
    except Exception as error:  # pylint: disable=broad-except
        return type(error)
    return None


def test_a_killed_master_is_unavailable_to_its_client(three_tasks):
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        assert sess.run(tf.constant(1.0)) == 1.0
        three_tasks[("worker", 0)].kill()
        _raises_within(tf.errors.UnavailableError, 10.0, sess.run, tf.constant(1.0))


# ---- a task that hangs -------------------------------------------------------------------------
def test_a_hung_task_fails_a_step_with_a_deadline_on_time(three_tasks):
    put, take = _queue_on("/job:ps/task:0", "on_ps")
    with tf.device("/job:worker/task:1"):
        used = take + 1.0
    with tf.device("/job:worker/task:0"):
        w = tf.Variable(1.0)
    ps = three_tasks[("ps", 0)]
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        sess.run([w.initializer, put])
        assert sess.run(used) == 4.0  # planned and registered while the ps answers
        threading.Timer(0.3, ps.pause).start()
        try:
            _, elapsed = _raises_within(tf.errors.DeadlineExceededError, 4.0, sess.run, used,
                                        options=tf.RunOptions(timeout_in_ms=2000))
            assert elapsed >= 1.9
            assert sess.run(w) == 1.0  # a step without the ps runs meanwhile
        finally:
            ps.resume()
        # Back: the aborted step's dequeue took nothing; the ps serves the next step.
        sess.run(put)
        assert sess.run(used, options=tf.RunOptions(timeout_in_ms=10000)) == 4.0
    ps.kill()


@pytest.mark.slow
def test_a_hung_task_fails_a_step_without_a_deadline_within_the_keepalive(three_tasks):
    _, take = _queue_on("/job:ps/task:0", "on_ps")
    with tf.device("/job:worker/task:0"):
        used = take + 1.0
    ps = three_tasks[("ps", 0)]
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        threading.Timer(0.5, ps.pause).start()
        # Unanswered keepalive pings close the connection (twice the keepalive
        # time, plus slack for a busy machine).
        try:
            _, elapsed = _raises_within(tf.errors.UnavailableError,
                                        4 * rpc.KEEPALIVE_MS / 1000.0 + 10.0, sess.run, used)
        finally:
            ps.resume()
        assert elapsed >= rpc.KEEPALIVE_MS / 1000.0
    ps.kill()


# ---- a task that restarts ------------------------------------------------------------------------
def _counter_graph():
    """A variable on the ps, bumped by an op on worker:1's side, and one on worker:0."""
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(5.0, name="v")
    with tf.device("/job:worker/task:1"):
        one = tf.constant(1.0)
    bump = tf.assign_add(v, one)
    with tf.device("/job:worker/task:0"):
        w = tf.Variable(7.0, name="w")
    return v, bump, w


def test_a_restarted_ps_aborts_the_next_step_then_serves_again(three_tasks):
    v, bump, w = _counter_graph()
    ps = three_tasks[("ps", 0)]
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        sess.run([v.initializer, w.initializer])
        assert sess.run(bump) == 6.0
        ps.restart()  # same address, new process: a new incarnation
        error, _ = _raises_within(tf.errors.AbortedError, 10.0, sess.run, bump)
        assert "/job:ps/replica:0/task:0" in str(error)
        # Planned and registered anew; the variable is gone with the old process.
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(bump)
        sess.run(v.initializer)
        assert sess.run(bump) == 6.0
        assert sess.run(w) == 7.0  # the other tasks kept their state


def test_a_step_while_the_ps_is_down_then_after_it_restarts(three_tasks):
    v, bump, w = _counter_graph()
    ps = three_tasks[("ps", 0)]
    with tf.Session(three_tasks[("worker", 0)].target) as sess:
        sess.run([v.initializer, w.initializer])
        ps.kill()
        _raises_within(tf.errors.UnavailableError, 10.0, sess.run, bump)
        assert sess.run(w) == 7.0
        ps.start()
        # The session planned for the old incarnation: aborted once (gRPC may
        # still be waiting to reconnect for up to a second: unavailable then).
        deadline = time.monotonic() + 15.0
        while True:
            with pytest.raises((tf.errors.AbortedError, tf.errors.UnavailableError)) as raised:
                sess.run(bump)
            if isinstance(raised.value, tf.errors.AbortedError) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert isinstance(raised.value, tf.errors.AbortedError)
        assert "restarted" in str(raised.value)
        sess.run(v.initializer)
        assert sess.run(bump) == 6.0


# ---- bad input ------------------------------------------------------------------------------------
@pytest.fixture
def one_server():
    with in_process_cluster(solo=1) as servers:
        yield servers[("solo", 0)]


def _raw_call(server, method, payload):
    """Sends ``payload`` (bytes) to ``method`` ("Service/Method") over a raw gRPC channel."""
    channel = grpc.insecure_channel(server.target[len("grpc://"):])
    try:
        return channel.unary_unary("/minitf." + method)(payload, timeout=10.0)
    finally:
        channel.close()


def _error_of_reply(reply):
    header, _ = messages.decode(reply)
    code = header["error"]["code"]
    return tf.errors.exception_type_from_error_code(code), header["error"]["message"]


def _still_serves(server):
    with tf.Graph().as_default():
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(20.0) + 1.0) == 21.0


def _message(header, payload=b""):
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + payload


_VALID = messages.encode({"handle": "graph-1", "step_id": 1, "feed_names": ["x:0"],
                          "fetch_names": []}, [np.ones(4, np.float32)])

BAD_MESSAGES = {
    "garbage": os.urandom(64),
    "empty": b"",
    "truncated": _VALID[:-5],
    "header-length-beyond-the-message": struct.pack("<Q", 2 ** 62) + b"{}",
    "100-GiB-tensor-announced": _message({"tensors": [{"dtype": "<f4", "shape": [2 ** 30, 25]}]},
                                         b"\0" * 16),
    "more-bytes-than-announced": _VALID + b"\0" * 8,
    "header-not-json": struct.pack("<Q", 4) + b"\xff\xfe{]",
}


@pytest.mark.parametrize("method", ["WorkerService/RunGraph", "WorkerService/RecvTensor",
                                    "WorkerService/RegisterGraph", "MasterService/RunStep",
                                    "MasterService/CreateSession"])
@pytest.mark.parametrize("name", sorted(BAD_MESSAGES))
def test_a_bad_message_gets_a_clear_error_and_the_server_serves_on(one_server, method, name):
    cls, message = _error_of_reply(_raw_call(one_server, method, BAD_MESSAGES[name]))
    assert cls is tf.errors.InvalidArgumentError
    assert message.startswith("Malformed message")
    _still_serves(one_server)


@pytest.mark.parametrize("method, header", [
    ("WorkerService/RunGraph", {"step_id": 1}),
    ("WorkerService/RecvTensor", {"key": "a;b"}),
    ("WorkerService/RegisterGraph", {"device": "/job:solo/replica:0/task:0/device:CPU:0"}),
    ("WorkerService/CleanupGraph", {}),
    ("MasterService/CreateSession", {}),
])
def test_a_request_missing_a_field_names_it(one_server, method, header):
    cls, message = _error_of_reply(_raw_call(one_server, method, messages.encode(header)))
    assert cls is tf.errors.InvalidArgumentError and "has no field" in message
    _still_serves(one_server)


def test_a_request_with_fields_of_the_wrong_type_is_an_error(one_server):
    request = messages.encode({"key": 12, "step_id": "one"})
    cls, _ = _error_of_reply(_raw_call(one_server, "WorkerService/RecvTensor", request))
    assert issubclass(cls, tf.errors.OpError)
    _still_serves(one_server)


def test_an_unknown_graph_handle_is_aborted_naming_the_task(one_server):
    request = messages.encode({"handle": "graph-from-an-old-life", "step_id": 7,
                               "feed_names": [], "fetch_names": []})
    cls, message = _error_of_reply(_raw_call(one_server, "WorkerService/RunGraph", request))
    assert cls is tf.errors.AbortedError
    assert "graph-from-an-old-life" in message and "/job:solo/replica:0/task:0" in message
    _still_serves(one_server)


def test_an_unknown_method_is_unimplemented(one_server):
    with pytest.raises(grpc.RpcError) as raised:
        _raw_call(one_server, "WorkerService/Format", b"")
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    _still_serves(one_server)


# ---- leaks ---------------------------------------------------------------------------------------
def _open_fds():
    return len(os.listdir("/proc/self/fd"))


def _threads_but_rpc_pools():
    """This process's threads, without the servers' RPC pools (they grow on demand, up
    to a bound, and end with their server)."""
    return [t for t in threading.enumerate() if not t.name.startswith("minitf-rpc")]


def _wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
        gc.collect()
    return condition()


def test_a_hundred_sessions_leave_nothing_behind():
    with in_process_cluster(ps=1, worker=1) as servers:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.arange(4, dtype=np.float32))
        with tf.device("/job:worker/task:0"):
            y = tf.reduce_sum(v * 2.0)
        target = servers[("worker", 0)].target

        def one_session():
            with tf.Session(target) as sess:
                sess.run(v.initializer)
                assert sess.run(y) == 12.0

        one_session()  # warm: gRPC's own threads, the channel between the tasks
        gc.collect()
        threads, fds = len(_threads_but_rpc_pools()), _open_fds()
        for _ in range(100):
            one_session()
        assert _wait_until(lambda: len(_threads_but_rpc_pools()) <= threads), \
            [t.name for t in _threads_but_rpc_pools()]
        assert _wait_until(lambda: _open_fds() <= fds + 4), (fds, _open_fds())
        rpc_threads = [t for t in threading.enumerate() if t.name.startswith("minitf-rpc")]
        assert len(rpc_threads) <= 16
        # The masters forgot the sessions, the workers their partitions and steps.
        assert _wait_until(lambda: not [o for o in gc.get_objects()
                                        if isinstance(o, MasterSession)])
        for server in servers.values():
            assert _wait_until(lambda: not server.worker._graphs)
            assert not server.worker._steps


def test_stopped_servers_leave_no_threads_or_sockets():
    gc.collect()
    threads, fds = len(threading.enumerate()), _open_fds()
    for _ in range(5):
        with in_process_cluster(ps=1, worker=1) as servers:
            with tf.Graph().as_default():
                with tf.device("/job:ps/task:0"):
                    x = tf.constant(3.0)
                with tf.Session(servers[("worker", 0)].target) as sess:
                    assert sess.run(x * 2.0) == 6.0
    assert _wait_until(lambda: len(threading.enumerate()) <= threads), \
        [t.name for t in threading.enumerate()]
    assert _wait_until(lambda: _open_fds() <= fds + 4), (fds, _open_fds())


def test_stop_wakes_a_step_blocked_on_the_server_and_join_returns():
    server = tf.train.Server.create_local_server()
    try:
        with tf.device("/job:localhost/task:0/device:CPU:0"):
            take = tf.FIFOQueue(1, tf.float32).dequeue()
        joined = threading.Event()
        threading.Thread(target=lambda: (server.join(), joined.set()), daemon=True).start()
        with tf.Session(server.target) as sess:
            threading.Timer(0.5, server.stop).start()
            _raises_within((tf.errors.UnavailableError, tf.errors.CancelledError), 10.0,
                           sess.run, take)
        assert joined.wait(10.0)
    finally:
        server.stop()
