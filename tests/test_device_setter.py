"""``tf.train.replica_device_setter`` and device functions in ``tf.device``.

Expectations are TF1's documented behaviour (``tf.train.replica_device_setter``,
``tf.contrib.training.GreedyLoadBalancingStrategy``, ``tf.device``): variables
round-robin over the ps tasks, everything else on the worker device, inner
``tf.device`` fields win, ops colocated with a variable (its slots, its
updates) follow it, and a cluster without a ps job gives no device function.
"""

import logging

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.planning.placer import place
from minitf.train.device_setter import STANDARD_PS_OPS
from tests.test_placer_cluster import cluster_devices

CLUSTER = {"ps": ["ps0:2222", "ps1:2222"],
           "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]}


def test_three_variables_over_two_ps_tasks_round_robin():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0)
        v2 = tf.Variable(2.0)
        v3 = tf.Variable(3.0)
        total = v1 + v2 + v3
    assert [v.device for v in (v1, v2, v3)] == \
        ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert total.device == "/job:worker"


def test_a_variables_initializer_and_read_are_on_its_task():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        tf.Variable(1.0)
        v = tf.Variable(2.0)
    assert v.initializer.device == v.value().device == "/job:ps/task:1"


def test_cluster_gives_the_number_of_ps_tasks():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER)):
        devices = [tf.Variable(float(i)).device for i in range(3)]
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    spec = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]})
    with tf.device(tf.train.replica_device_setter(ps_tasks=7, cluster=spec)):  # ps_tasks ignored
        devices = [tf.Variable(float(i)).device for i in range(4)]
    assert devices == ["/job:ps/task:%d" % t for t in (0, 1, 2, 0)]


def test_a_cluster_without_a_ps_job_or_no_ps_tasks_gives_none():
    assert tf.train.replica_device_setter(cluster={"worker": ["w0:2222"]}) is None
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    # the ps job's name comes from ps_device
    assert tf.train.replica_device_setter(cluster=CLUSTER, ps_device="/job:params") is None
    with tf.device(tf.train.replica_device_setter(cluster={"worker": ["w0:2222"]})):
        v = tf.Variable(1.0)  # tf.device(None): no placement
    assert v.device == ""


def test_ps_device_and_worker_device_strings():
    setter = tf.train.replica_device_setter(
        ps_tasks=2, ps_device="/job:params/device:CPU:0",
        worker_device="/job:worker/task:3/device:GPU:0")
    with tf.device(setter):
        v1 = tf.Variable(1.0)
        v2 = tf.Variable(2.0)
        y = v1 * v2
    assert v1.device == "/job:params/task:0/device:CPU:0"
    assert v2.device == "/job:params/task:1/device:CPU:0"
    assert y.device == "/job:worker/task:3/device:GPU:0"


def test_empty_ps_device_places_variables_like_other_ops():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_device="")):
        v = tf.Variable(1.0)
    assert v.device == "/job:worker"


def test_ps_device_without_a_job_gets_no_task():
    # TF sets the task only when ps_device names a job.
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_device="/device:CPU:0")):
        v = tf.Variable(1.0)
    assert v.device == "/device:CPU:0"


def test_inner_device_merges_with_the_setters_choice():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER)):
        with tf.device("/cpu:0"):
            v = tf.Variable(1.0)
            y = v * 2.0
        with tf.device("/job:ps/task:1/device:GPU:0"):
            w = tf.Variable(1.0)
        with tf.device("/job:worker/task:2"):
            z = y + 1.0
    assert y.device == "/job:worker/device:CPU:0"
    assert v.device == "/job:ps/task:0/device:CPU:0"
    # the inner task wins over the strategy's choice (task 1 here, by round-robin)
    assert w.device == "/job:ps/task:1/device:GPU:0"
    assert z.device == "/job:worker/task:2"


def test_inner_job_other_than_ps_takes_no_task_and_skips_the_strategy():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        with tf.device("/job:local"):
            local = tf.Variable(1.0)
        v1 = tf.Variable(1.0)
        v2 = tf.Variable(2.0)
    assert local.device == "/job:local"
    assert (v1.device, v2.device) == ("/job:ps/task:0", "/job:ps/task:1")


def test_merge_devices_false_keeps_any_inner_request_whole(caplog):
    with caplog.at_level(logging.WARNING):
        setter = tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)
    assert "merge_devices=true" in caplog.text
    with tf.device(setter):
        with tf.device("/cpu:0"):
            v = tf.Variable(1.0)
            y = v * 2.0
        u = tf.Variable(2.0)
    assert v.device == "/device:CPU:0"
    assert y.device == "/device:CPU:0"
    assert u.device == "/job:ps/task:0"


def test_outer_device_string_fills_what_the_setter_leaves_unset():
    with tf.device("/job:worker/task:1/device:CPU:0"):
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="")):
            v = tf.Variable(1.0)
            y = v * 2.0
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert y.device == "/job:worker/task:1/device:CPU:0"


def test_adam_slots_and_updates_are_on_their_variables_task():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        w = tf.Variable(np.ones([3, 2], np.float32), name="w")
        b = tf.Variable(np.zeros([2], np.float32), name="b")
        x = tf.constant(np.ones([1, 3], np.float32))
        loss = tf.reduce_sum(tf.matmul(x, w) + b)
        optimizer = tf.train.AdamOptimizer(0.1)
        train_op = optimizer.minimize(loss)
    assert (w.device, b.device) == ("/job:ps/task:0", "/job:ps/task:1")
    for var in (w, b):
        for slot_name in ("m", "v"):
            slot = optimizer.get_slot(var, slot_name)
            assert slot.device == var.device
            assert slot.initializer.device == var.device
    graph = tf.get_default_graph()
    assert graph.get_operation_by_name("Adam/update_w/ApplyAdam").device == w.device
    assert graph.get_operation_by_name("Adam/update_b/ApplyAdam").device == b.device
    # the slots, colocated, did not advance the round-robin: the next variable is task 0
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        assert tf.Variable(1.0).device == "/job:ps/task:0"
    assert loss.device == "/job:worker"
    assert train_op.device == "/job:worker"


def test_global_step_is_on_a_ps_task():
    with tf.device(tf.train.replica_device_setter(cluster=CLUSTER)):
        v = tf.Variable(1.0)
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(v * v, global_step=global_step)
    assert v.device == "/job:ps/task:0"
    assert global_step.device == "/job:ps/task:1"
    assert train_op.device == global_step.device  # its AssignAdd is colocated with it


def test_greedy_strategy_balances_bytes():
    # TF's documented example: a big variable, then two small ones.  Round-robin
    # would put the third on the big one's task; greedy puts both small ones together.
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        big = tf.Variable(tf.zeros([1000, 100]))
        small1 = tf.Variable(tf.zeros([10]))
        small2 = tf.Variable(tf.zeros([10]))
        small3 = tf.Variable(tf.zeros([10]))
    assert big.device == "/job:ps/task:0"
    assert [v.device for v in (small1, small2, small3)] == ["/job:ps/task:1"] * 3
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        devices = [tf.Variable(tf.zeros([n])).device for n in (1000, 10, 10)]
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_greedy_strategy_ties_go_to_the_lowest_task():
    strategy = tf.train.GreedyLoadBalancingStrategy(3, tf.train.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
        devices = [tf.Variable(tf.zeros([4])).device for _ in range(4)]
    assert devices == ["/job:ps/task:%d" % t for t in (0, 1, 2, 0)]


def test_byte_size_load_fn():
    a = tf.Variable(tf.zeros([3, 4], tf.float32))
    b = tf.Variable(tf.zeros([5], tf.float64))
    c = tf.Variable(1, dtype=tf.int32)
    assert tf.train.byte_size_load_fn(a.op) == 48
    assert tf.train.byte_size_load_fn(b.op) == 40
    assert tf.train.byte_size_load_fn(c.op) == 4
    split = tf.split(tf.zeros([4]), 2)[0].op
    with pytest.raises(ValueError, match="single output"):
        tf.train.byte_size_load_fn(split)
    unknown = tf.Variable(tf.placeholder_with_default(tf.zeros([2]), [None]),
                          validate_shape=False)
    with pytest.raises(ValueError):
        tf.train.byte_size_load_fn(unknown.op)


def test_custom_ps_ops_and_strategy():
    with tf.device(tf.train.replica_device_setter(
            ps_tasks=4, ps_ops=["VariableV2", "Const"], ps_strategy=lambda op: 3)):
        c = tf.constant(1.0)
        v = tf.Variable(2.0)
        y = c + v
    assert (c.device, v.device, y.device) == ("/job:ps/task:3",) * 2 + ("/job:worker",)
    assert "VariableV2" in STANDARD_PS_OPS and "VarHandleOp" in STANDARD_PS_OPS


def test_strategy_must_be_callable():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_placement_over_a_cluster_keeps_the_setters_tasks():
    # The placer honours the setter's choices and finds no colocation conflicts.
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        w = tf.Variable(np.ones([2], np.float32), name="w")
        b = tf.Variable(np.ones([2], np.float32), name="b")
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(w * b)
        tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    ps0, ps1 = "/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"
    worker = "/job:worker/replica:0/task:0/device:CPU:0"
    devices = cluster_devices(ps0, ps1, worker)
    ops = tf.get_default_graph().get_operations()
    placement = {op.name: d.name for op, d in
                 place(ops, devices, get_registry(), default_task="/job:worker/replica:0/task:0")
                 .items()}
    assert placement["w"] == placement["w/Adam"] == placement["Adam/update_w/ApplyAdam"] == ps0
    assert placement["b"] == placement["b/Adam_1"] == ps1
    assert placement["global_step"] == ps0
    assert placement["Sum"] == worker


def test_a_local_session_trains_under_the_setter():
    # One local task stands in for both jobs: the graph must run as placed.
    setter = tf.train.replica_device_setter(ps_tasks=1, ps_device="/job:localhost",
                                            worker_device="/job:localhost")
    with tf.device(setter):
        w = tf.Variable(np.array([1.0, -1.0], np.float32))
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(tf.square(w))
        train_op = tf.train.AdamOptimizer(0.5).minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(loss)
        for _ in range(3):
            sess.run(train_op)
        assert sess.run(loss) < before
        assert sess.run(step) == 3


# ---- device functions in tf.device -------------------------------------------------

def test_a_device_function_sees_the_op_and_inner_requests():
    seen = []

    def fn(op):
        seen.append((op.type, op.device, [t.shape.as_list() for t in op.outputs]))
        return "/job:worker/task:1" if op.type == "Const" else tf.DeviceSpec(job="ps")
    with tf.device(fn):
        a = tf.constant([1.0, 2.0])
        with tf.device("/cpu:0"):
            b = a * 2.0
    assert a.device == "/job:worker/task:1"
    assert b.device == "/job:ps"  # the function ignored the inner request
    assert seen[0] == ("Const", "", [[2]])
    assert ("Mul", "/device:CPU:0", [[2]]) in seen


def test_device_none_stops_outer_device_functions():
    calls = []
    with tf.device(lambda op: calls.append(op.name) or "/job:worker"):
        with tf.device(None):
            a = tf.constant(1.0, name="a")
        b = tf.constant(1.0, name="b")
    assert (a.device, b.device) == ("", "/job:worker")
    assert calls == ["b"]


def test_colocate_with_takes_the_ops_device_not_the_outer_device_blocks():
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(1.0)
    with tf.device("/job:worker/device:GPU:0"):
        with tf.colocate_with(v.op):
            a = tf.identity(v)
        c = tf.identity(v)
    assert a.device == "/job:ps/task:1"
    assert c.device == "/job:worker/device:GPU:0"
