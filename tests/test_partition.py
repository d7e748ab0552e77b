"""Placement across several devices, partitioning with Send/Recv, multi-device steps."""

import numpy as np
import pytest

import minitf as tf

# In-process devices keep these tests fast; test_device_processes.py covers processes.
TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2}, device_processes=False)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _two_device_graph():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:0"):
        a = tf.add(x, 1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, a, name="b")
        c = tf.add(a, b, name="c")  # a second consumer of `a` on cpu:1
        v = tf.Variable([10.0, 20.0], name="v")
    with tf.device("/cpu:0"):
        d = tf.add(c, v, name="d")
    return x, a, b, c, d, v


def test_partitions_have_one_recv_per_tensor_and_device():
    x, a, b, c, d, v = _two_device_graph()
    with tf.Session(config=TWO_CPUS) as sess:
        graphs = sess.partition_graphs(d, {x: [1.0, 2.0]})
    assert sorted(graphs) == [CPU0, CPU1]
    types0 = [op.type for op in graphs[CPU0].get_operations()]
    types1 = [op.type for op in graphs[CPU1].get_operations()]
    assert types1.count("_Recv") == 1  # `a` crosses once although b and c both use it
    assert types0.count("_Recv") == 2 and types1.count("_Send") == 2
    recv = next(op for op in graphs[CPU1].get_operations() if op.type == "_Recv")
    assert recv.get_attr("send_device") == CPU0 and recv.get_attr("recv_device") == CPU1
    assert recv.get_attr("tensor_name") == "a:0"
    from minitf.runtime.rendezvous import rendezvous_key
    assert recv.get_attr("send_device_incarnation") == 1  # local devices never restart
    assert rendezvous_key(recv) == "%s;0000000000000001;%s;a:0;0:0" % (CPU0, CPU1)
    assert all(op.device in (CPU0,) for op in graphs[CPU0].get_operations())


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_multi_device_results_match_single_device(processes):
    x, a, b, c, d, v = _two_device_graph()
    feed = {x: np.array([1.0, 2.0], np.float32)}
    config = tf.ConfigProto(device_count={"CPU": 2}, device_processes=processes)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        split = sess.run([d, c, x], feed)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True,
                                          device_count={"CPU": 1})) as sess:
        sess.run(tf.global_variables_initializer())
        whole = sess.run([d, c, x], feed)
    for s, w in zip(split, whole):
        np.testing.assert_array_equal(s, w)
    np.testing.assert_array_equal(split[0], [3 * 2 + 10, 3 * 3 + 20])  # d = 3a + v


def test_control_edges_cross_devices():
    with tf.device("/cpu:1"):
        v = tf.Variable(0.0, name="counter")
        bump = tf.assign_add(v, 1.0)
    with tf.device("/cpu:0"):
        with tf.control_dependencies([bump]):
            out = tf.identity(tf.constant(7.0), name="out")
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(v.initializer)
        graphs = sess.partition_graphs(out)
        assert any(op.type == "_Recv" for op in graphs[CPU0].get_operations())
        assert sess.run(out) == 7.0
        sess.run(out)
        assert sess.run(v) == 2.0


def test_control_edges_from_one_device_cross_as_one_token():
    # A training step's group op waits for every update on a ps: one round
    # trip for all of them, and the op still runs after each.
    with tf.device("/cpu:1"):
        counters = [tf.Variable(0.0, name="counter%d" % i) for i in range(3)]
        bumps = [tf.assign_add(v, 1.0) for v in counters]
    with tf.device("/cpu:0"):
        with tf.control_dependencies(bumps):
            done = tf.identity(tf.constant(7.0), name="done")
        with tf.control_dependencies(bumps[:1]):
            first = tf.identity(tf.constant(8.0), name="first")
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        graphs = sess.partition_graphs([done, first])
        recvs = [op for op in graphs[CPU0].get_operations() if op.type == "_Recv"]
        sends = [op for op in graphs[CPU1].get_operations() if op.type == "_Send"]
        assert len(recvs) == 2 and len(sends) == 2  # {all three}, {the first}
        token = next(op for op in graphs[CPU1].get_operations()
                     if op.name.startswith("_ctrl_") and "and_2_more" in op.name)
        assert sorted(c.name for c in token.control_inputs) == sorted(b.op.name for b in bumps)
        assert sess.run([done, first]) == [7.0, 8.0]
        assert sess.run(counters) == [1.0, 1.0, 1.0]


def test_variables_keep_values_on_their_device():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    step = tf.assign_add(v, 2.0)  # unconstrained: colocated with v
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(v.initializer)
        sess.run(step)
        sess.run(step)
        assert sess.run(v) == 5.0
        graphs = sess.partition_graphs(step)
        assert [op.type for op in graphs[CPU1].get_operations()].count("AssignAdd") == 1


def test_conflicting_colocation_is_invalid_argument():
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/cpu:0"):
        step = tf.assign_add(v, 2.0)
    with tf.Session(config=TWO_CPUS) as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="colocate"):
            sess.run(step)
    soft = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True,
                          device_processes=False)
    with tf.Session(config=soft) as sess:
        sess.run(v.initializer)
        assert sess.run(step) == 3.0


def test_unconstrained_ops_follow_their_inputs():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
    c = tf.add(a, b, name="c")  # no request: placed where its inputs are
    with tf.Session(config=TWO_CPUS) as sess:
        graphs = sess.partition_graphs(c)
    assert list(graphs) == [CPU1]


def test_failure_in_one_partition_stops_the_step():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        unfed = tf.placeholder(tf.float32, name="unfed")
        b = tf.add(unfed, 1.0)
    with tf.device("/cpu:0"):
        c = tf.add(x, b)
    with tf.Session(config=TWO_CPUS) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="unfed"):
            sess.run(c, {x: [1.0, 2.0]})
        np.testing.assert_array_equal(sess.run(c, {x: [1.0, 2.0], unfed: 1.0}), [3.0, 4.0])
