"""Dependency optimization (minitf/runtime/passes/dependency_optimizer.py).

A ``NoOp`` that only relays control edges (``tf.group`` inside an
optimizer's ``minimize``) is bypassed, as grappler's DependencyOptimizer
does: it must not run, everything it ordered must stay ordered, and the
NoOps a user fetches, NoOps in control flow and NoOps whose bypass would add
edges or device crossings stay.
"""

import numpy as np

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.master import plan_step
from minitf.runtime.passes import PassContext
from minitf.runtime.passes.dependency_optimizer import bypass_noops
from minitf.runtime.planning.schedule import schedule
from minitf.runtime.planning.step_graph import copy_step
from minitf.runtime.planning.subgraph import prune

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def rewritten(targets, fetches=()):
    """The step graph of running ``targets`` after the pass, by op name."""
    graph = tf.get_default_graph()
    order, _ = schedule(prune(list(fetches), list(targets), []), [])
    step = copy_step(graph, order, [], list(fetches), list(targets))
    step = bypass_noops(step, PassContext(get_registry(), None, tf.ConfigProto())).rescheduled()
    return {op.name: op for op in step.ops}


def ran(sess, target):
    metadata = tf.RunMetadata()
    sess.run(target, options=FULL, run_metadata=metadata)
    return {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}


def test_a_group_relaying_updates_is_bypassed_and_the_order_kept(sess):
    v = tf.Variable(1.0, name="v")
    w = tf.Variable(2.0, name="w")
    step = tf.Variable(0.0, name="step")
    update_v = tf.assign_add(v, 1.0, name="update_v")
    update_w = tf.assign_add(w, 1.0, name="update_w")
    relay = tf.group(update_v, update_w, name="update")
    with tf.control_dependencies([relay]):
        # reads the updated values: they must have run before it
        total = tf.assign(step, v.read_value() + w.read_value(), name="total")
    ops = rewritten([total.op])
    assert "update" not in ops
    waiting = [op for op in ops.values()
               if {"update_v", "update_w"} <= {c.name for c in op.control_inputs}]
    assert waiting  # what waited for the group now waits for both updates
    sess.run(tf.global_variables_initializer())
    assert "update" not in ran(sess, total.op)
    assert sess.run(step) == 5.0  # (1+1) + (2+1): the updates ran first
    sess.run(total.op)
    assert sess.run(step) == 7.0


def test_a_fetched_group_stays(sess):
    v = tf.Variable(1.0)
    train_op = tf.group(tf.assign_add(v, 1.0), name="train_op")
    assert "train_op" in rewritten([train_op])
    sess.run(tf.global_variables_initializer())
    assert "train_op" in ran(sess, train_op)


def test_a_minimize_step_runs_without_its_update_relay(sess):
    x = tf.constant([[1.0, 2.0]])
    w = tf.Variable([[0.5], [-0.5]], name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    sess.run(tf.global_variables_initializer())
    names = ran(sess, train_op)
    assert not any(name.endswith("/update") for name in names)
    # w -= 0.1 * 2 * (x @ w) * x^T, with x @ w = -0.5; the step counted once.
    np.testing.assert_allclose(sess.run(w), [[0.6], [-0.3]], rtol=1e-6)
    assert sess.run(global_step) == 1


def test_a_relay_that_would_add_edges_stays():
    sources = [tf.assign_add(tf.Variable(0.0), 1.0, name="s%d" % i) for i in range(3)]
    relay = tf.group(*sources, name="relay")
    consumers = []
    for i in range(3):
        with tf.control_dependencies([relay]):
            consumers.append(tf.no_op(name="c%d" % i))
    assert "relay" in rewritten(consumers)  # 3 x 3 edges instead of 3 + 3


def test_a_relay_that_would_add_device_crossings_stays():
    with tf.device("/job:ps/task:0"):
        source = tf.assign_add(tf.Variable(0.0), 1.0, name="source")
    with tf.device("/job:worker/task:0"):
        relay = tf.group(source, name="relay")
    with tf.device("/job:worker/task:1"):
        consumers = []
        for i in range(2):
            with tf.control_dependencies([relay]):
                consumers.append(tf.no_op(name="c%d" % i))
    # before: ps -> relay, relay -> c0, relay -> c1 (3); after: ps -> c0, ps -> c1 (2)
    assert "relay" not in rewritten(consumers)
    with tf.device("/job:worker/task:1"):
        near = tf.assign_add(tf.Variable(0.0), 1.0, name="near")
    with tf.device("/job:worker/task:0"):
        local = tf.group(near, name="local")
    with tf.device("/job:ps/task:0"):
        far = [tf.no_op(name="far%d" % i) for i in range(1)]
        with tf.control_dependencies([local]):
            far.append(tf.no_op(name="far_after"))
    # before: near -> local (1 crossing), local -> far_after (1); after: 1 crossing: bypassed
    assert "local" not in rewritten([far[1]])


def test_a_relay_inside_a_cond_stays(sess):
    v = tf.Variable(0.0)
    flag = tf.placeholder(tf.bool, [])

    def bump():
        relay = tf.group(tf.assign_add(v, 1.0), name="relay")
        with tf.control_dependencies([relay]):
            return tf.identity(v.read_value())
    out = tf.cond(flag, bump, lambda: tf.identity(v.read_value()))
    sess.run(tf.global_variables_initializer())
    assert sess.run(out, {flag: True}) == 1.0
    assert sess.run(out, {flag: False}) == 1.0
    graph = tf.get_default_graph()
    step = plan_step(graph, [out], [flag], [], [_cpu()], tf.ConfigProto(), get_registry()).step
    assert any(op.name.endswith("relay") for op in step.ops)


def _cpu():
    from minitf.runtime.device_set import device_specs
    registry = get_registry()
    factory, index, _ = next(iter(device_specs(registry, tf.ConfigProto())))
    return factory.create(index, name="/job:localhost/replica:0/task:0/device:CPU:0",
                          options=tf.ConfigProto())
