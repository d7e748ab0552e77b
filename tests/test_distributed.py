"""The distributed runtime's API and behaviour, as TF1 defines them.

``tf.train.Server`` (construction errors, ``target``, ``server_def``,
``create_local_server``, several servers in one process, ``join``/``stop``),
``tf.Session(server)`` and ``tf.Session("grpc://...")`` over a cluster (a graph
spread over ``/job:ps`` and ``/job:worker``, variables that outlive client
sessions, ``tf.Session.reset``, ``list_devices``, ``device_filters``,
deadlines, errors naming the user's op), ``MonitoredTrainingSession(master=...)``,
``TF_CONFIG`` end to end, the wire format's size checks, and rendezvous keys
that carry the source device's incarnation.

The expectations are TF1's (``tf.compat.v1`` in TF 2.x): checked against its
documentation and behaviour, not against minitf's code.  Every server listens
on 127.0.0.1 in this process and is stopped by the test that started it; the
faults (tasks killed, hung, restarted; bad messages; leaks) are in
``test_distributed_faults.py``.
"""

import json
import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest

pytest.importorskip("grpc", reason="the distributed runtime needs grpcio (minitf[distributed])")
pytest.importorskip("tensorboard.compat.proto.cluster_pb2",
                    reason="the distributed runtime needs TF's protos (minitf[distributed])")

import minitf as tf  # noqa: E402
from minitf.distributed import messages  # noqa: E402
from minitf.distributed.tf_config import server_from_tf_config  # noqa: E402
from minitf.registry import get_registry  # noqa: E402
from minitf.runtime.rendezvous import create_key, parse_key, rendezvous_key  # noqa: E402
from minitf.runtime.worker.service import WorkerService  # noqa: E402
from tests.cluster_fixtures import (  # noqa: E402
    free_ports, in_process_cluster, loopback_cluster, rpc_methods_called)

pytestmark = pytest.mark.timeout(120)

PS = "/job:ps/replica:0/task:0"
WORKER0 = "/job:worker/replica:0/task:0"
WORKER1 = "/job:worker/replica:0/task:1"


@pytest.fixture
def cluster():
    """ps:0, worker:0 and worker:1, each a server in this process."""
    with in_process_cluster(ps=1, worker=2) as servers:
        yield servers


def _line():
    """The line number of the caller (where it creates an op)."""
    import inspect
    return inspect.currentframe().f_back.f_lineno


# ---- tf.train.Server ----------------------------------------------------------------------------
def test_an_unknown_job_is_a_value_error():
    spec = loopback_cluster(ps=1, worker=1)
    with pytest.raises(ValueError):
        tf.train.Server(spec, job_name="chief", task_index=0, start=False)


def test_an_unknown_task_is_a_value_error():
    spec = loopback_cluster(ps=1, worker=1)
    with pytest.raises(ValueError):
        tf.train.Server(spec, job_name="worker", task_index=3, start=False)


def test_several_jobs_need_a_job_name():
    spec = loopback_cluster(ps=1, worker=1)
    with pytest.raises(ValueError, match="job_name"):
        tf.train.Server(spec, task_index=0, start=False)


def test_several_tasks_need_a_task_index():
    spec = loopback_cluster(worker=2)
    with pytest.raises(ValueError, match="task_index"):
        tf.train.Server(spec, job_name="worker", start=False)


def test_a_one_task_cluster_needs_neither():
    server = tf.train.Server(loopback_cluster(solo=1))
    try:
        assert server.server_def.job_name == "solo" and server.server_def.task_index == 0
    finally:
        server.stop()


def test_only_grpc_is_spoken():
    with pytest.raises(ValueError):
        tf.train.Server(loopback_cluster(solo=1), protocol="grpc+verbs", start=False)


def test_target_and_server_def():
    spec = loopback_cluster(ps=1, worker=2)
    server = tf.train.Server(spec, job_name="worker", task_index=1)
    try:
        assert server.target == "grpc://" + spec["worker"][1]
        server_def = server.server_def
        assert (server_def.job_name, server_def.task_index, server_def.protocol) == \
            ("worker", 1, "grpc")
        assert tf.train.ClusterSpec(server_def.cluster).as_dict() == spec
    finally:
        server.stop()


def test_port_zero_is_replaced_by_the_bound_port():
    server = tf.train.Server({"local": ["localhost:0"]})
    try:
        port = int(server.target.rsplit(":", 1)[1])
        assert port > 0 and server.target == "grpc://localhost:%d" % port
        cluster = tf.train.ClusterSpec(server.server_def.cluster)
        assert cluster.task_address("local", 0) == "localhost:%d" % port
    finally:
        server.stop()


def test_create_local_server():
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        assert server.server_def.job_name == "localhost"
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    finally:
        server.stop()


def test_a_port_in_use_is_an_error():
    first = tf.train.Server.create_local_server()
    try:
        address = first.target[len("grpc://"):]
        with pytest.raises(tf.errors.UnknownError, match="Could not start"):
            tf.train.Server({"local": [address]})
    finally:
        first.stop()


def test_several_servers_serve_one_process(cluster):
    targets = {server.target for server in cluster.values()}
    assert len(targets) == 3
    for server in cluster.values():
        with tf.Session(server) as sess:
            assert sess.run(tf.constant(1.0) + 1.0) == 2.0


def test_join_returns_after_stop_from_another_thread():
    server = tf.train.Server.create_local_server()
    joined = threading.Event()
    joiner = threading.Thread(target=lambda: (server.join(), joined.set()), daemon=True)
    joiner.start()
    assert not joined.wait(0.3)  # serving: join blocks
    threading.Timer(0.1, server.stop).start()
    assert joined.wait(10.0)
    joiner.join(5.0)
    server.stop()  # a second stop is harmless


# ---- sessions through a master ------------------------------------------------------------------
def test_session_of_a_server_and_of_its_target(cluster):
    server = cluster[("worker", 0)]
    a = tf.constant([1.0, 2.0])
    with tf.Session(server) as sess:
        assert sess.sess_str == server.target
        np.testing.assert_allclose(sess.run(a * 2.0), [2.0, 4.0])
    with tf.Session(server.target) as sess:
        np.testing.assert_allclose(sess.run(a * 3.0), [3.0, 6.0])


def test_a_graph_spread_over_ps_and_worker_trains(cluster, capfd):
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(y, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    config = tf.ConfigProto(log_device_placement=True)
    with tf.Session(cluster[("worker", 0)].target, config=config) as sess:
        sess.run(tf.global_variables_initializer())
        ones = {x: np.ones((4, 3), np.float32)}
        assert sess.run(loss, ones) == 24.0
        for _ in range(3):
            sess.run(train, ones)
        trained = sess.run(w)
    # Each gradient step subtracts 0.1 * 4 (four rows of ones) from every weight.
    np.testing.assert_allclose(trained, np.full((3, 2), 1.0 - 3 * 0.4), rtol=1e-5)
    placements = capfd.readouterr().err
    assert "w: (VariableV2): %s/device:" % PS in placements
    assert "y: (MatMul): %s/device:" % WORKER1 in placements
    assert "loss: (Sum): %s/device:" % WORKER0 in placements  # no job: the master's task


def test_variables_outlive_client_sessions(cluster):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="v")
        bump = v.assign_add([10.0, 10.0])
    with tf.Session(cluster[("worker", 0)].target) as sess:
        sess.run(v.initializer)
        sess.run(bump)
    # Another client, through another task's master, sees what the first left on the ps.
    with tf.Session(cluster[("worker", 1)].target) as sess:
        np.testing.assert_allclose(sess.run(v), [11.0, 12.0])
    with tf.Session(cluster[("ps", 0)]) as sess:
        np.testing.assert_allclose(sess.run(v), [11.0, 12.0])


def test_session_reset_clears_the_containers_of_every_task(cluster):
    with tf.device("/job:ps/task:0"):
        on_ps = tf.Variable(1.0, name="on_ps")
    with tf.device("/job:worker/task:1"):
        on_worker = tf.Variable(2.0, name="on_worker")
    target = cluster[("worker", 0)].target
    with tf.Session(target) as sess:
        sess.run([on_ps.initializer, on_worker.initializer])
    tf.Session.reset(target)
    with tf.Session(target) as sess:
        for variable in (on_ps, on_worker):
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(variable)
        sess.run(on_ps.initializer)
    tf.Session.reset(cluster[("ps", 0)], containers=["", "experiment"])  # a server, containers
    with tf.Session(target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(on_ps)


def test_session_reset_of_a_local_target_does_nothing():
    tf.Session.reset("")


def test_session_reset_of_an_unknown_scheme():
    with pytest.raises(tf.errors.NotFoundError):
        tf.Session.reset("nowhere://host:1")


def test_list_devices_lists_every_task(cluster):
    with tf.Session(cluster[("worker", 1)].target) as sess:
        devices = sess.list_devices()
    names = [d.name for d in devices]
    for task in (PS, WORKER0, WORKER1):
        assert "%s/device:CPU:0" % task in names
    assert all(d.device_type in ("CPU", "GPU") for d in devices)
    assert len(set(names)) == len(names)
    # Each device has its incarnation: random, not 0, one per device.
    incarnations = [d.incarnation for d in devices]
    assert all(incarnations) and len(set(incarnations)) == len(incarnations)


def test_device_filters_restrict_placement(cluster):
    with tf.device("/job:worker/task:1"):
        elsewhere = tf.constant(1.0, name="elsewhere")
    with tf.device("/job:ps/task:0"):
        on_ps = tf.constant(2.0, name="on_ps") * 2.0
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    with tf.Session(cluster[("worker", 0)].target, config=config) as sess:
        assert sess.run(on_ps) == 4.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="elsewhere"):
            sess.run(elsewhere)
    with tf.Session(cluster[("worker", 0)].target) as sess:  # no filters: it runs
        assert sess.run(elsewhere) == 1.0


def test_a_task_ruled_out_by_device_filters_is_not_needed(cluster):
    cluster.pop(("worker", 1)).stop()  # gone: a session that filters it out never asks it
    with tf.device("/job:ps/task:0"):
        on_ps = tf.constant(2.0) * 2.0
    config = tf.ConfigProto(device_filters=["/job:ps"])
    with tf.Session(cluster[("worker", 0)].target, config=config) as sess:
        assert sess.run(on_ps) == 4.0


def _empty_queue_on_ps():
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(2, tf.float32, name="queue")
        return queue.dequeue(name="take")


def test_run_options_timeout_across_tasks(cluster):
    take = _empty_queue_on_ps()
    with tf.Session(cluster[("worker", 0)].target) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError) as raised:
            sess.run(take, options=tf.RunOptions(timeout_in_ms=300))
        elapsed = time.monotonic() - start
    assert 0.25 <= elapsed < 3.0
    assert "take" in str(raised.value)


def test_operation_timeout_in_ms_across_tasks(cluster):
    take = _empty_queue_on_ps()
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    with tf.Session(cluster[("worker", 1)].target, config=config) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(take)
        assert 0.25 <= time.monotonic() - start < 3.0


def test_an_error_on_another_task_names_the_users_op(cluster):
    with tf.device("/job:ps/task:0"):
        line = _line() + 1
        bad = tf.gather(tf.constant([1, 2]), tf.constant(5), name="bad")
    with tf.Session(cluster[("worker", 0)].target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(bad)
    message = str(raised.value)
    assert "[[node bad (defined at %s:%d) ]]" % (__file__, line) in message
    assert raised.value.op is bad.op


def test_a_placement_error_names_where_the_op_was_created(cluster):
    with tf.device("/job:nowhere/task:0"):
        line = _line() + 1
        lost = tf.constant(1.0, name="lost")
    with tf.Session(cluster[("worker", 0)].target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            sess.run(lost)
    assert "lost" in str(raised.value)
    assert "%s:%d" % (__file__, line) in str(raised.value)


def test_feeds_fetches_and_strings_cross_tasks(cluster):
    x = tf.placeholder(tf.float32, name="x")
    with tf.device("/job:ps/task:0"):
        words = tf.constant(["ab", "c"], name="words")
        doubled = x * 2.0
    with tf.Session(cluster[("worker", 0)].target) as sess:
        assert sess.run(x, {x: 3.0}) == 3.0  # a fed fetch runs nothing
        assert sess.run(doubled, {x: 3.0}) == 6.0
        assert list(sess.run(words)) == [b"ab", b"c"]
        assert sess.run(tf.constant("abc")) == b"abc"
        assert sess.run([]) == []


def test_monitored_training_session_runs_through_a_master(cluster):
    with tf.device("/job:ps/task:0"):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(5.0, name="w")
    loss = tf.square(w)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=global_step)
    target = cluster[("worker", 0)].target
    steps = 0
    with tf.train.MonitoredTrainingSession(
            master=target, is_chief=True,
            hooks=[tf.train.StopAtStepHook(last_step=4)]) as session:
        while not session.should_stop():
            session.run(train)
            steps += 1
    assert steps == 4
    with tf.Session(cluster[("worker", 1)].target) as sess:  # it ran on the cluster
        assert sess.run(global_step) == 4
        assert sess.run(w) == pytest.approx(5.0 * 0.5 ** 4)


def test_tf_config_end_to_end(monkeypatch):
    spec = loopback_cluster(ps=1, worker=1)
    servers = []
    try:
        for job in ("ps", "worker"):
            monkeypatch.setenv("TF_CONFIG", json.dumps(
                {"cluster": spec, "task": {"type": job, "index": 0}}))
            servers.append(server_from_tf_config())
        ps, worker = servers
        assert ps.target == "grpc://" + spec["ps"][0]
        assert worker.server_def.job_name == "worker"
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(7.0)
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            assert sess.run(v * 2.0) == 14.0
    finally:
        for server in servers:
            server.stop()


def test_an_unreachable_master_is_unavailable_promptly():
    port, = free_ports(1)  # nothing listens there
    start = time.monotonic()
    with pytest.raises(tf.errors.UnavailableError):
        with tf.Session("grpc://127.0.0.1:%d" % port) as sess:
            sess.run(tf.constant(1.0))
    assert time.monotonic() - start < 10.0


def test_a_closed_session_cannot_run(cluster):
    sess = tf.Session(cluster[("worker", 0)].target)
    sess.run(tf.constant(1.0))
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(tf.constant(1.0))


# ---- a master in the client's own process (TF's LocalMaster) --------------------------------------
def test_a_master_in_this_process_is_called_without_grpc(cluster, monkeypatch):
    called = rpc_methods_called(monkeypatch)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0])
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    with tf.Session(cluster[("worker", 0)].target) as sess:
        sess.run(v.initializer)
        fetched = sess.run(doubled)
        fetched[0] = 100.0  # the caller's own copy
        np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
    assert "RunGraph" in called  # the ps task is reached over gRPC ...
    assert not {"CreateSession", "RunStep", "CloseSession"} & set(called)  # ... the master not


def test_a_stopped_servers_master_is_not_called_directly(monkeypatch):
    called = rpc_methods_called(monkeypatch)
    server = tf.train.Server.create_local_server()
    target = server.target
    server.stop()
    with tf.Session(target) as sess:
        with pytest.raises(tf.errors.UnavailableError):
            sess.run(tf.constant(1.0), options=tf.RunOptions(timeout_in_ms=2000))
    assert "CreateSession" in called


def test_a_client_with_other_credentials_goes_through_the_port(monkeypatch):
    from minitf.distributed.security import ClusterCredentials, TOKEN_ENV
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    spec = loopback_cluster(solo=1)
    server = tf.train.Server(spec, "solo", 0, credentials=ClusterCredentials(token="s3cret"))
    try:
        with tf.Session(server.target) as sess:  # no token in this process's environment
            with pytest.raises(tf.errors.UnauthenticatedError):
                sess.run(tf.constant(1.0))
        monkeypatch.setenv(TOKEN_ENV, "s3cret")
        called = rpc_methods_called(monkeypatch)
        with tf.Session(server.target) as sess:
            assert sess.run(tf.constant(1.0)) == 1.0
        assert called == []
    finally:
        server.stop()


# ---- RecvTensors: a step's tensors from one task in as few calls as they allow --------------------
def test_a_step_asks_a_task_once_for_the_tensors_it_needs_of_it(cluster, monkeypatch):
    with tf.device("/job:ps/task:0"):
        variables = [tf.Variable(np.full([3], i, np.float32)) for i in range(4)]
    with tf.device("/job:worker/task:0"):
        total = tf.add_n([tf.reduce_sum(v) for v in variables])
    with tf.Session(cluster[("worker", 0)].target) as sess:
        sess.run(tf.variables_initializer(variables))
        sess.run(total)
        called = rpc_methods_called(monkeypatch)
        assert sess.run(total) == 3.0 * (0 + 1 + 2 + 3)
    # The ps sends its four tensors at once: the first RecvTensors brings them all.
    assert called.count("RecvTensors") == 1 and "RecvTensor" not in called


def test_a_malformed_recv_tensors_request_is_an_invalid_argument(cluster):
    from minitf.distributed.rpc import Stub
    from minitf.distributed.worker_rpc import SERVICE
    stub = Stub(cluster[("ps", 0)].address, SERVICE)
    try:
        for keys in ("not a list", [], [1, 2], ["no;such;key"]):
            with pytest.raises(tf.errors.InvalidArgumentError):
                stub.call("RecvTensors", {"step_id": 1, "keys": keys, "timeout": 1.0},
                          timeout=10.0)
    finally:
        stub.close()
    with tf.device("/job:ps/task:0"):
        x = tf.constant(2.0)
    with tf.Session(cluster[("worker", 0)].target) as sess:
        assert sess.run(x * 3.0) == 6.0  # the task serves on


# ---- rendezvous keys carry the source device's incarnation ---------------------------------------
def test_rendezvous_keys_carry_the_source_incarnation():
    key = create_key("/job:ps/replica:0/task:0/device:CPU:0", 0xABC,
                     "/job:worker/replica:0/task:0/device:CPU:0", "w:0", 3, 4)
    assert key == ("/job:ps/replica:0/task:0/device:CPU:0;0000000000000abc;"
                   "/job:worker/replica:0/task:0/device:CPU:0;w:0;3:4")
    parsed = parse_key(key)
    assert parsed.send_device_incarnation == 0xABC and parsed.tensor_name == "w:0"
    assert (parsed.frame_id, parsed.iteration) == (3, 4)
    with pytest.raises(tf.errors.InvalidArgumentError):
        parse_key("not;a;key")


def test_partitions_of_a_cluster_step_carry_the_task_incarnations(cluster):
    with tf.device("/job:ps/task:0"):
        w = tf.constant(2.0, name="w")
    with tf.device("/job:worker/task:1"):
        y = w * 3.0
    with tf.Session(cluster[("worker", 0)].target) as sess:
        incarnation = {d.name: d.incarnation for d in sess.list_devices()}
        parts = sess.partition_graphs(y)
    recvs = [op for graph in parts.values() for op in graph.get_operations()
             if op.type == "_Recv" and op.get_attr("send_device").startswith(PS)]
    assert recvs
    for recv in recvs:
        send_device = recv.get_attr("send_device")
        assert recv.get_attr("send_device_incarnation") == incarnation[send_device]
        assert ";%016x;" % incarnation[send_device] in rendezvous_key(recv)


def test_a_traced_remote_run_reports_the_step_stats_of_every_task(cluster):
    """RunOptions go to the master and RunMetadata come back as TF's protos: a
    FULL_TRACE run fills step_stats with the ops each task's device ran."""
    with tf.device("/job:ps/task:0"):
        w = tf.constant(2.0, name="w")
    with tf.device("/job:worker/task:1"):
        y = tf.multiply(w, 3.0, name="y")
    metadata = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(cluster[("worker", 0)].target) as sess:
        assert sess.run(y, options=options, run_metadata=metadata) == 6.0
    nodes = {d.device: [n.node_name for n in d.node_stats] for d in metadata.step_stats.dev_stats}
    assert "y" in nodes["/job:worker/replica:0/task:1/device:CPU:0"]
    assert any(name.startswith("_send_w") for name in nodes[PS + "/device:CPU:0"])
    (y_stats,) = [n for d in metadata.step_stats.dev_stats for n in d.node_stats
                  if n.node_name == "y"]
    assert y_stats.op_type == "Mul" and y_stats.all_end_rel_micros >= 0
    assert abs(y_stats.all_start_micros / 1e6 - time.time()) < 60  # wall-clock micros


def test_a_recv_for_another_incarnation_is_aborted():
    cpu = get_registry().device_factory("CPU").create(0, name=PS + "/device:CPU:0")
    cpu.incarnation = 0x1234
    service = WorkerService([cpu], get_registry())
    stale = create_key(cpu.name, 0x9999, WORKER0 + "/device:CPU:0", "w:0")
    with pytest.raises(tf.errors.AbortedError, match="incarnation"):
        service.recv_tensor(1, stale)
    service.rendezvous(1).send(create_key(cpu.name, 0x1234, WORKER0 + "/device:CPU:0", "w:0"),
                               np.float32(5.0))
    assert service.recv_tensor(1, create_key(cpu.name, 0x1234, WORKER0 + "/device:CPU:0",
                                             "w:0"), timeout=1.0) == 5.0
    service.close()


# ---- the wire format checks sizes before it allocates ------------------------------------------
def _message(header, payload=b""):
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + payload


def test_messages_round_trip_numbers_booleans_and_strings():
    tensors = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]),
               np.int64(7), np.array([b"ab", "é", b""], dtype=object), np.array(b"xyz")]
    header, arrays = messages.decode(messages.encode({"method": "x"}, tensors))
    assert header["method"] == "x"
    np.testing.assert_array_equal(arrays[0], tensors[0])
    assert arrays[1].dtype == np.bool_ and arrays[2] == 7
    assert list(arrays[3]) == [b"ab", "é".encode(), b""]
    assert arrays[4][()] == b"xyz"


def test_objects_do_not_cross():
    with pytest.raises(tf.errors.InvalidArgumentError, match="cross"):
        messages.encode({}, [np.array([{"a": 1}], dtype=object)])


@pytest.mark.parametrize("descriptor", [
    {"dtype": "<f4", "shape": [2 ** 30, 25]},     # 100 GiB of float32
    {"dtype": "string", "shape": [10 ** 9]},      # a billion strings
], ids=["100GiB-float32", "1e9-strings"])
def test_a_huge_tensor_announced_in_a_small_message_allocates_nothing(descriptor):
    tracemalloc.start()
    try:
        with pytest.raises(tf.errors.InvalidArgumentError, match="truncated"):
            messages.decode(_message({"tensors": [descriptor]}, b"\0" * 64))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_string_lengths_beyond_the_message_are_refused():
    lengths = np.array([2 ** 62, 1], dtype="<u8").tobytes()
    header = {"tensors": [{"dtype": "string", "shape": [2]}]}
    with pytest.raises(tf.errors.InvalidArgumentError, match="truncated"):
        messages.decode(_message(header, lengths + b"ab"))


@pytest.mark.parametrize("message", [
    b"",                                                  # nothing at all
    b"\x01\x02",                                          # shorter than the length field
    struct.pack("<Q", 2 ** 60) + b"{}",                   # a header longer than the message
    struct.pack("<Q", 5) + b"{not json",                  # an unreadable header
    _message([1, 2, 3]),                                  # a header that is not an object
    _message({"no": "tensors"}),                          # no tensor list
    _message({"tensors": {"a": 1}}),                      # a tensor list that is not a list
    _message({"tensors": [{"dtype": "<f4"}]}),            # no shape
    _message({"tensors": [{"dtype": "|O", "shape": [1]}]}, b"\0" * 8),  # pickled objects
    _message({"tensors": [{"dtype": "<f4", "shape": [-1]}]}),
    _message({"tensors": [{"dtype": "<f4", "shape": [2 ** 40, 2 ** 40]}]}),  # overflows int64
    _message({"tensors": [{"dtype": "<f4", "shape": [10 ** 30]}]}),
    _message({"tensors": [{"dtype": "<f4", "shape": [2 ** 21] * 3}]}, b"\0" * 16),
    _message({"tensors": [{"dtype": "<f4", "shape": [1]}]}, b"\0" * 6),  # 2 bytes too many
], ids=["empty", "short", "long-header", "bad-json", "header-list", "no-tensors",
        "tensors-dict", "no-shape", "object-dtype", "negative-dim", "int64-overflow",
        "huge-dim", "huge-product", "trailing-bytes"])
def test_malformed_messages_are_invalid_argument_errors(message):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Malformed message"):
        messages.decode(message)


def _worker_of_a_cluster_without_its_ps():
    """A ps + worker cluster on free ports, with only the worker's server started."""
    ps_port, worker_port = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ps_port],
                                    "worker": ["127.0.0.1:%d" % worker_port]})
    return cluster, tf.train.Server(cluster, "worker", 0)


def test_the_master_waits_for_a_task_that_is_still_starting():
    # TF's master waits for the workers a session needs ("CreateSession still
    # waiting for response from worker"): a TF1 script may start its tasks in
    # any order.  Here the ps comes up 1.5 s after the client's first run.
    cluster, worker = _worker_of_a_cluster_without_its_ps()
    started = []
    timer = threading.Timer(1.5, lambda: started.append(tf.train.Server(cluster, "ps", 0)))
    timer.start()
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
        with tf.Session(worker.target) as sess:
            begin = time.monotonic()
            sess.run(v.initializer)
            assert time.monotonic() - begin >= 1.0  # it waited for the ps
            assert sess.run(v) == 3.0
    finally:
        timer.join()
        for server in started + [worker]:
            server.stop()


def test_a_task_that_never_comes_up_is_unavailable_after_the_deadline():
    _, worker = _worker_of_a_cluster_without_its_ps()
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
        with tf.Session(worker.target) as sess:
            begin = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match="ps/replica:0/task:0"):
                sess.run(v.initializer, options=tf.RunOptions(timeout_in_ms=1500))
            assert time.monotonic() - begin < 10.0
    finally:
        worker.stop()
