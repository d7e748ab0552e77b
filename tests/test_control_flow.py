"""Dynamic control flow: the primitives, the executor's frames and dead values,
tf.cond/case, tf.while_loop, TensorArray and the functional ops."""

import collections
import time

import numpy as np
import pytest

import minitf as tf
from minitf.ops import control_flow_primitives as cf
from minitf.registry import register_plugin, unregister_plugin
from minitf.runtime.executors import control_flow as control_flow_executor
from minitf.runtime.executors.control_flow import ControlFlowStep
from tests import plugin_fixtures
from tests.plugin_fixtures import TestPlugin, counting_identity


@pytest.fixture
def calls():
    plugin = TestPlugin()
    register_plugin(plugin, name="counting_plugin_cf")
    plugin_fixtures.CALLS.clear()
    yield plugin_fixtures.CALLS
    unregister_plugin(plugin)


def _two_cpus(processes=False):
    return tf.ConfigProto(device_count={"CPU": 2}, device_processes=processes)


# ---- the primitives, wired by hand ----------------------------------------------------
def test_switch_forwards_to_one_output_and_merge_takes_the_live_one(sess):
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    out_false, out_true = cf.switch(x, p)
    value, index = cf.merge([out_false + 100.0, out_true * 2.0])
    assert sess.run([value, index], {x: 3.0, p: True}) == [6.0, 1]
    assert sess.run([value, index], {x: 3.0, p: False}) == [103.0, 0]


def test_fetching_a_dead_tensor_is_an_invalid_argument_error(sess):
    x = tf.constant(1.0)
    _, out_true = cf.switch(x, tf.constant(False))
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
        sess.run(out_true * 2.0)


def test_a_hand_built_loop_of_enter_merge_switch_next_iteration_exit(sess):
    # i = 0; while i < 10: i += 3   (the constants enter the frame as invariants)
    limit = cf.enter(tf.constant(10), "loop", is_constant=True)
    step = cf.enter(tf.constant(3), "loop", is_constant=True)
    start = cf.enter(tf.constant(0), "loop")
    i, _ = cf.merge([start, start])
    pred = cf.loop_cond(i < limit)
    leave, stay = cf.switch(i, pred)
    i.op._update_input(1, cf.next_iteration(stay + step))
    assert sess.run(cf.exit(leave)) == 12


def test_switch_rejects_a_non_bool_or_non_scalar_predicate():
    with pytest.raises(TypeError, match="bool"):
        cf.switch(tf.constant(1.0), tf.constant(1))
    with pytest.raises(ValueError, match="scalar"):
        cf.switch(tf.constant(1.0), tf.constant([True, False]))


# ---- tf.cond ----------------------------------------------------------------------------
def test_cond_returns_the_taken_branch(sess):
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: x * 2.0, lambda: -x + 1.0)
    assert sess.run(y, {x: 3.0}) == 6.0
    assert sess.run(y, {x: -3.0}) == 4.0


def test_cond_runs_only_the_ops_of_the_taken_branch(sess, calls):
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: counting_identity(x * 2.0, "true"),
                lambda: counting_identity(x - 1.0, "false"))
    for value in (1.0, 2.0, -1.0):
        sess.run(y, {x: value})
    assert calls == {"true": 2, "false": 1}


def test_cond_with_nested_structures_and_constants(sess):
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: {"a": tf.constant(1), "b": (tf.constant(2.0), tf.constant([3]))},
                  lambda: {"a": tf.constant(10), "b": (tf.constant(20.0), tf.constant([30]))})
    result = sess.run(out, {p: False})
    assert result["a"] == 10 and result["b"][0] == 20.0 and list(result["b"][1]) == [30]
    assert sess.run(out, {p: True})["a"] == 1


def test_cond_branches_may_return_operations(sess):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    op = tf.cond(p, lambda: tf.assign(v, 1).op, lambda: tf.assign(v, 2).op)
    sess.run(v.initializer)
    sess.run(op, {p: False})
    assert sess.run(v) == 2


def test_cond_inside_cond_and_singleton_unpacking(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.cond(x > 0, lambda: tf.cond(x > 10, lambda: [x * 100], lambda: [x * 10]),
                lambda: [-x])
    assert isinstance(y, tf.Tensor)
    assert [sess.run(y, {x: v}) for v in (20, 5, -2)] == [2000, 50, 2]
    strict = tf.cond(x > 0, lambda: [x], lambda: [x], strict=True)
    assert isinstance(strict, list)


def test_cond_bad_input_is_reported_at_construction():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: x, lambda: x)
    with pytest.raises(TypeError, match="bool"):
        tf.cond(tf.constant(1.0), lambda: x, lambda: x)
    with pytest.raises(ValueError, match="scalar"):
        tf.cond(tf.constant([True, False]), lambda: x, lambda: x)
    with pytest.raises(ValueError, match=r"true_fn returned \(Tensor.*false_fn returned Tensor"):
        tf.cond(tf.constant(True), lambda: (x, x), lambda: x)
    with pytest.raises(ValueError, match="Received float32 from 'true_fn' and int32"):
        tf.cond(tf.constant(True), lambda: x, lambda: tf.constant(1))
    with pytest.raises(TypeError, match="callable"):
        tf.cond(tf.constant(True), x, lambda: x)


def test_case_picks_the_first_true_predicate_else_the_default(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(x > 10, lambda: tf.constant(10)), (x > 0, lambda: tf.constant(1))],
                default=lambda: tf.constant(-1))
    assert [sess.run(y, {x: v}) for v in (20, 5, -5)] == [10, 1, -1]
    with pytest.raises(TypeError, match="2-tuple"):
        tf.case([x > 0], default=lambda: x)


# ---- tf.while_loop ------------------------------------------------------------------------
def test_while_loop_counts(sess):
    r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    assert isinstance(r, tf.Tensor)
    assert sess.run(r) == 10
    bare = tf.while_loop(lambda i: i < 5, lambda i: i + 2, tf.constant(0))
    assert isinstance(bare, tf.Tensor) and sess.run(bare) == 6
    same = tf.while_loop(lambda i: i < 5, lambda i: [i + 2], [0], return_same_structure=True)
    assert isinstance(same, list) and sess.run(same) == [6]


def test_while_loop_with_several_variables_and_a_loop_invariant(sess):
    x = tf.placeholder(tf.float32, [3])
    n, acc = tf.while_loop(lambda k, a: k < 4, lambda k, a: (k + 1, a * 2.0 + x),
                           (0, tf.zeros([3])))
    got_n, got_acc = sess.run([n, acc], {x: [1.0, 2.0, 3.0]})
    assert got_n == 4
    np.testing.assert_allclose(got_acc, 15.0 * np.array([1.0, 2.0, 3.0]))  # 0 -> x, 3x, 7x, 15x


def test_while_loop_with_nested_structures(sess):
    Pair = collections.namedtuple("Pair", "a b")
    out = tf.while_loop(lambda s: s["i"] < 3,
                        lambda s: {"i": s["i"] + 1, "p": Pair(s["p"].a * 2, s["p"].b + 1.0)},
                        [{"i": tf.constant(0), "p": Pair(tf.constant(1), tf.constant(0.0))}])
    result = sess.run(out)
    assert result["i"] == 3 and result["p"] == Pair(8, 3.0)


def test_nested_while_loops(sess):
    def outer(i, total):
        _, inner = tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j), (0, 0))
        return i + 1, total + inner
    _, total = tf.while_loop(lambda i, t: i < 5, outer, (0, 0))
    assert sess.run(total) == sum(sum(range(i)) for i in range(5))


def test_cond_inside_while_loop(sess):
    def body(k, a):
        return k + 1, tf.cond(tf.equal(k % 2, 0), lambda: a + k, lambda: a - 1)
    _, a = tf.while_loop(lambda k, a: k < 6, body, (0, 0))
    expected = 0
    for k in range(6):
        expected = expected + k if k % 2 == 0 else expected - 1
    assert sess.run(a) == expected


def test_the_body_runs_once_per_iteration(sess, calls):
    r = tf.while_loop(lambda i: i < 7, lambda i: counting_identity(i + 1, "body"), [0])
    assert sess.run(r) == 7
    assert calls == {"body": 7}


def test_loop_in_the_untaken_branch_does_not_run(sess, calls):
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.while_loop(lambda i: i < 5,
                                         lambda i: counting_identity(i + 1, "loop"), [0]),
                lambda: tf.constant(-1))
    assert sess.run(y, {p: False}) == -1
    assert calls == {}
    assert sess.run(y, {p: True}) == 5


def test_data_dependent_trip_count(sess):
    x = tf.placeholder(tf.int32, [])
    steps, _ = tf.while_loop(lambda n, v: v > 1,
                             lambda n, v: (n + 1, tf.where(tf.equal(v % 2, 0), v // 2, 3 * v + 1)),
                             (0, x))

    def collatz(v):
        n = 0
        while v > 1:
            v, n = (v // 2 if v % 2 == 0 else 3 * v + 1), n + 1
        return n
    assert [sess.run(steps, {x: v}) for v in (1, 6, 27)] == [collatz(v) for v in (1, 6, 27)]


def test_maximum_iterations_stops_the_loop(sess):
    r = tf.while_loop(lambda i: i < 100, lambda i: i + 3, [tf.constant(0)],
                      maximum_iterations=5)
    assert sess.run(r) == 15
    short = tf.while_loop(lambda i: i < 4, lambda i: i + 1, [0], maximum_iterations=10)
    assert sess.run(short) == 4


def test_a_shape_change_needs_a_shape_invariant(sess):
    grow = lambda i, v: (i + 1, tf.concat([v, v], 0))  # noqa: E731
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda i, v: i < 3, grow, (0, tf.ones([1])))
    _, v = tf.while_loop(lambda i, v: i < 3, grow, (0, tf.ones([1])),
                         shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
    assert v.shape.as_list() == [None]
    assert sess.run(v).shape == (8,)


def test_while_loop_bad_input():
    with pytest.raises(TypeError, match="float32 .*int32|int32"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [0])
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda i, j: i < 3, lambda i, j: i + 1, (0, 0))
    with pytest.raises(ValueError, match="No loop variables"):
        tf.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(TypeError, match="LoopCond.*int32.*bool"):
        tf.while_loop(lambda i: i, lambda i: i + 1, [0])  # TF's class for a non-boolean cond
    with pytest.raises(TypeError, match="float32"):
        tf.while_loop(lambda i: tf.constant(1.0), lambda i: i + 1, [0])
    with pytest.raises(ValueError, match="scalar bool"):
        tf.while_loop(lambda i: tf.constant([True, False]), lambda i: i + 1, [0])
    with pytest.raises(ValueError, match="not compatible"):
        tf.while_loop(lambda v: True, lambda v: v, [tf.ones([2])],
                      shape_invariants=[tf.TensorShape([3])])


def test_the_loop_graph_holds_the_primitives():
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], name="loop")
    types = {op.type for op in tf.get_default_graph().get_operations()
             if op.name.startswith("loop/")}
    assert {"Enter", "Merge", "Switch", "LoopCond", "NextIteration", "Exit"} <= types
    enter = tf.get_default_graph().get_operation_by_name("loop/Enter")
    assert enter.get_attr("frame_name") == "loop/while_context"


@pytest.mark.parametrize("parallel_iterations", [1, 3, 10])
def test_parallel_iterations_bounds_iterations_in_flight(monkeypatch, parallel_iterations):
    in_flight = []
    start = control_flow_executor._StepState.start_iteration

    def recording(self, frame):
        result = start(self, frame)
        in_flight.append(frame.num_outstanding_iterations)
        return result
    monkeypatch.setattr(control_flow_executor._StepState, "start_iteration", recording)
    # Two independent loop variables: the counter can run ahead of the slow one.
    _, total = tf.while_loop(lambda i, s: i < 20, lambda i, s: (i + 1, s + tf.square(i)),
                             (0, 0), parallel_iterations=parallel_iterations)
    with tf.Session() as session:
        assert session.run(total) == sum(k * k for k in range(20))
    assert in_flight and max(in_flight) <= parallel_iterations


def test_inter_op_threads_run_the_kernels_of_independent_iterations_together(calls):
    from tests.plugin_fixtures import sleep_identity
    # Every iteration sleeps 0.15 s; the iterations do not depend on each other's sleep.
    _, total = tf.while_loop(
        lambda i, s: i < 4, lambda i, s: (i + 1, s + sleep_identity(tf.cast(i, tf.float32), 0.15)),
        (0, 0.0), parallel_iterations=4)
    config = tf.ConfigProto(inter_op_parallelism_threads=4)
    with tf.Session(config=config) as session:
        session.run(total)  # warm up: build the plan
        start = time.perf_counter()
        assert session.run(total) == 0.0 + 1.0 + 2.0 + 3.0
        elapsed = time.perf_counter() - start
    assert elapsed < 0.45, "4 sleeps of 0.15 s took %.2f s: they did not overlap" % elapsed


def test_graphs_without_control_flow_keep_the_straight_line_executor(sess):
    x = tf.constant(2.0) * 3.0
    sess.run(x)
    step, _ = next(iter(sess._runners.values()))
    assert not isinstance(step, ControlFlowStep)
    y = tf.cond(tf.constant(True), lambda: x, lambda: x)
    sess.run([y])
    assert any(isinstance(step, ControlFlowStep) for step, _ in sess._runners.values())


def test_step_stats_are_recorded_for_loops(sess):
    r = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    metadata = tf.RunMetadata()
    assert sess.run(r, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                    run_metadata=metadata) == 3
    names = [node.node_name for dev in metadata.step_stats.dev_stats for node in dev.node_stats]
    assert names.count("while/NextIteration") == 3


def test_errors_inside_a_loop_name_the_op(sess):
    x = tf.placeholder(tf.float32, [None])
    r = tf.while_loop(lambda i, v: i < 2,
                      lambda i, v: (i + 1, tf.gather(v, [5])), (0, x),
                      shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Gather"):
        sess.run(r, {x: [1.0, 2.0]})


# ---- across devices ---------------------------------------------------------------------
@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_loop_on_one_device_within_a_multi_device_graph(processes):
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/cpu:0"):
        a = x * 2.0
    with tf.device("/cpu:1"):
        _, r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * a), (0, a))
    with tf.device("/cpu:0"):
        out = r + 1.0
    with tf.Session(config=_two_cpus(processes)) as session:
        np.testing.assert_allclose(session.run(out, {x: [1.0, 2.0, 3.0]}),
                                   (2.0 * np.array([1.0, 2.0, 3.0])) ** 4 + 1.0)


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_cond_branch_on_another_device_receives_dead_values(processes, calls):
    x = tf.placeholder(tf.float32, [])

    def true_fn():
        with tf.device("/cpu:1"):
            return x * 10.0
    with tf.device("/cpu:0"):
        y = tf.cond(x > 0, true_fn, lambda: counting_identity(x - 1.0, "false"))
    with tf.Session(config=_two_cpus(processes)) as session:
        assert session.run(y, {x: 2.0}) == 20.0
        assert session.run(y, {x: -2.0}) == -3.0
        assert session.run(y, {x: 3.0}) == 30.0
    assert calls == {"false": 1}


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_loop_body_split_across_devices_runs_with_control_loops(processes):
    x = tf.placeholder(tf.float32, [3])

    def body(i, v):
        with tf.device("/cpu:1"):
            u = v * 2.0 + x       # computed on cpu:1 in every iteration
        return i + 1, u - 1.0     # back on cpu:0
    _, r = tf.while_loop(lambda i, v: i < 4, body, (0, x))
    [grad] = tf.gradients(tf.reduce_sum(r), [x])
    with tf.Session(config=_two_cpus(processes)) as session:
        parts = session.partition_graphs(r, {x: np.zeros(3)})
        got, got_grad = session.run([r, grad], {x: [1.0, 2.0, 3.0]})
        again = session.run(r, {x: [0.0, 0.0, 0.0]})
    types = {op.type for op in parts["/job:localhost/replica:0/task:0/device:CPU:1"]
             .get_operations()}
    assert {"Enter", "Merge", "Switch", "NextIteration", "_Recv", "_Send"} <= types
    v = np.array([1.0, 2.0, 3.0])
    for _ in range(4):
        v = v * 2.0 + np.array([1.0, 2.0, 3.0]) - 1.0
    np.testing.assert_allclose(got, v)
    np.testing.assert_allclose(got_grad, [16.0 + 15.0] * 3)  # v4 = 16 x + 15 x - 15
    np.testing.assert_allclose(again, [-15.0] * 3)


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_loop_on_cpu1_differentiated_from_cpu0(processes):
    # The backward loop (on cpu:0) and the forward one (on cpu:1) both need the
    # forward LoopCond on the other device: one Send/Recv pair must serve both.
    x = tf.placeholder(tf.float32, [])
    with tf.device("/cpu:1"):
        _, r = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * x), [0, 1.0])
    [grad] = tf.gradients(r, [x])
    with tf.Session(config=_two_cpus(processes)) as session:
        assert session.run([r, grad], {x: 2.0}) == [32.0, 80.0]   # x**5, 5 x**4
        assert session.run([r, grad], {x: -1.0}) == [-1.0, 5.0]


def test_nested_loops_across_devices_with_gradients():
    x = tf.placeholder(tf.float64, [2])
    w = tf.placeholder(tf.float64, [2])

    def inner(j, u):
        with tf.device("/cpu:1"):
            return j + 1, tf.sin(u) * w + 0.5

    def outer(i, v):
        _, u = tf.while_loop(lambda j, u: j < i + 1, inner, (0, v))
        return i + 1, u * 1.5
    with tf.device("/cpu:0"):
        _, r = tf.while_loop(lambda i, v: i < 3, outer, (0, x))
        loss = tf.reduce_sum(r * r)
        grad_x, grad_w = tf.gradients(loss, [x, w])

    def forward(xv, wv):
        v = xv.copy()
        for i in range(3):
            for _ in range(i + 1):
                v = np.sin(v) * wv + 0.5
            v = v * 1.5
        return (v * v).sum()

    def numeric(fn, a, eps=1e-6):
        return np.array([(fn(a + eps * e) - fn(a - eps * e)) / (2 * eps) for e in np.eye(a.size)])
    xv, wv = np.array([0.3, -0.2]), np.array([0.9, -0.7])
    with tf.Session(config=_two_cpus()) as session:
        got_loss, gx, gw = session.run([loss, grad_x, grad_w], {x: xv, w: wv})
    np.testing.assert_allclose(got_loss, forward(xv, wv))
    np.testing.assert_allclose(gx, numeric(lambda a: forward(a, wv), xv), rtol=1e-6)
    np.testing.assert_allclose(gw, numeric(lambda b: forward(xv, b), wv), rtol=1e-6)


def test_a_preferred_device_without_control_flow_kernels_leaves_loops_whole():
    """Constants in a body follow the loop's pivot, so the body is not split."""
    # A preferred test device (think: a GPU) with kernels for a few math ops only.
    plugin = plugin_fixtures.ExtraDevicePlugin("FPU", priority=100, kernels={
        "Mul": lambda ctx, x, y: np.multiply(x, y), "Add": lambda ctx, x, y: np.add(x, y)})
    register_plugin(plugin, name="fast_device_cf")
    try:
        x = tf.placeholder(tf.float32, [2])
        _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0 + 1.0), (0, x))
        z = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 3.0, lambda: x + 1.0)
        with tf.Session() as session:
            assert any(d.device_type == "FPU" for d in session.list_devices())
            got_y, got_z = session.run([y, z], {x: [1.0, 2.0]})
        np.testing.assert_allclose(got_y, [15.0, 23.0])
        np.testing.assert_allclose(got_z, [3.0, 6.0])
    finally:
        unregister_plugin(plugin)


def test_rendezvous_keys_carry_frame_and_iteration():
    from minitf.runtime.rendezvous import create_key, parse_key
    key = create_key("/cpu:0", 1, "/cpu:1", "while/add:0", 1234, 7)
    assert key.endswith(";1234:7") and parse_key(key)[4:] == (1234, 7)


# ---- TensorArray and the functional ops ------------------------------------------------------
def test_tensor_array_write_read_stack_unstack(sess):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, 1.0).write(1, 2.0).write(2, 3.0)
    assert sess.run(ta.read(1)) == 2.0
    np.testing.assert_array_equal(sess.run(ta.stack()), [1.0, 2.0, 3.0])
    un = tf.TensorArray(tf.int32, size=2).unstack([[1, 2], [3, 4]])
    np.testing.assert_array_equal(sess.run(un.read(1)), [3, 4])
    assert sess.run(un.size()) == 2


def test_tensor_array_errors(sess):
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not yet been written"):
        sess.run(ta.read(0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been written"):
        sess.run(ta.write(0, 1.0).write(0, 2.0).read(0))
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(2, 5.0)
    assert sess.run(grown.size()) == 3


def test_tensor_array_in_a_while_loop(sess):
    n = tf.placeholder(tf.int32, [])
    ta = tf.TensorArray(tf.int32, size=n)
    _, ta = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t.write(i, i * i)), (0, ta))
    np.testing.assert_array_equal(sess.run(ta.stack(), {n: 5}), [0, 1, 4, 9, 16])


def test_map_fn(sess):
    elems = tf.constant([1.0, 2.0, 3.0])
    np.testing.assert_allclose(sess.run(tf.map_fn(lambda x: x * x, elems)), [1.0, 4.0, 9.0])
    pair = tf.map_fn(lambda t: (t[0] + t[1], tf.cast(t[1], tf.int32)), (elems, elems),
                     dtype=(tf.float32, tf.int32))
    total, ints = sess.run(pair)
    np.testing.assert_allclose(total, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(ints, [1, 2, 3])


def test_scan_foldl_foldr(sess):
    elems = tf.constant([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(sess.run(tf.scan(lambda a, x: a + x, elems)), [1, 3, 6, 10])
    np.testing.assert_allclose(
        sess.run(tf.scan(lambda a, x: a * x, elems, initializer=tf.constant(1.0), reverse=True)),
        [24, 24, 12, 4])
    assert sess.run(tf.foldl(lambda a, x: a - x, elems)) == 1 - 2 - 3 - 4
    assert sess.run(tf.foldr(lambda a, x: a - x, elems, initializer=tf.constant(0.0))) == -10
    pairs = tf.foldl(lambda a, x: (a[0] + x, a[1] * x), elems,
                     initializer=(tf.constant(0.0), tf.constant(1.0)))
    assert sess.run(pairs) == (10.0, 24.0)


def test_variables_created_in_a_branch_or_loop_body_live_outside_it(sess):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [None, 2])

    def layer(inputs):
        with tf.variable_scope("dense", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [2, 2], initializer=tf.ones_initializer())
        return tf.matmul(inputs, w)
    y = tf.cond(p, lambda: layer(x), lambda: x)
    _, z = tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, layer(h)),
                         (0, tf.ones([1, 2])))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(y, {p: True, x: [[1.0, 2.0]]}), [[3.0, 3.0]])
    np.testing.assert_allclose(sess.run(y, {p: False, x: [[1.0, 2.0]]}), [[1.0, 2.0]])
    np.testing.assert_allclose(sess.run(z), [[4.0, 4.0]])
    assert len(tf.global_variables()) == 1


def test_while_loop_result_takes_the_structure_of_the_body_result():
    # TF1's BuildLoop packs the Exit tensors like the body's result.
    i = tf.constant(0)
    as_tuple = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [i, 1.0])
    as_list = tf.while_loop(lambda i, a: i < 3, lambda i, a: [i + 1, a * 2.0], (i, 1.0))
    assert isinstance(as_tuple, tuple) and isinstance(as_list, list)
    with tf.Session() as sess:
        assert sess.run(as_tuple) == (3, 8.0)
        assert sess.run(as_list) == [3, 8.0]


# ---- regressions from the adversarial review against TF1 ------------------------------------
def test_tensors_inside_a_loop_or_branch_cannot_be_fetched_or_fed(sess):
    x = tf.placeholder(tf.float32, [])
    inside = []

    def body(i, a):
        inside.append(a * 2.0)
        return i + 1, inside[-1]
    _, r = tf.while_loop(lambda i, a: i < 3, body, [0, x])
    branch = []
    c = tf.cond(x > 0, lambda: branch.append(x * 3.0) or branch[-1] + 1.0, lambda: x)
    with pytest.raises(tf.errors.InaccessibleTensorError, match="while/mul"):
        sess.run(inside[0], {x: 1.0})
    with pytest.raises(ValueError, match="not fetchable"):   # a ValueError, as in TF
        sess.run(branch[0], {x: 1.0})
    with pytest.raises(ValueError, match="may not be fed"):
        sess.run(r, {x: 1.0, inside[0]: 5.0})
    assert sess.run(r, {x: 1.0}) == 8.0                        # the Exit stays fetchable
    assert sess.run(c, {x: 1.0, branch[0]: 10.0}) == 11.0      # a branch value may be fed


def test_namedtuple_loop_vars_are_passed_positionally(sess):
    Pair = collections.namedtuple("Pair", "i a")
    out = tf.while_loop(lambda i, a: i < 4, lambda i, a: Pair(i + 1, a * 3.0),
                        Pair(tf.constant(0), tf.constant(1.0)))
    assert isinstance(out, Pair)
    assert sess.run(out) == Pair(4, 81.0)


def test_case_without_default_asserts_that_a_predicate_holds(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(x > 5, lambda: tf.constant(2)), (x > 0, lambda: tf.constant(1))])
    single = tf.case([(x > 0, lambda: tf.constant(7))])
    assert [sess.run(y, {x: v}) for v in (9, 3)] == [2, 1]
    assert sess.run(single, {x: 1}) == 7
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
        sess.run(y, {x: -1})
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions"):
        sess.run(single, {x: -1})


def test_exclusive_case_asserts_that_at_most_one_predicate_holds(sess):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(x > 5, lambda: tf.constant(2)), (x > 0, lambda: tf.constant(1))],
                default=lambda: tf.constant(0), exclusive=True)
    assert [sess.run(y, {x: v}) for v in (3, -3)] == [1, 0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        sess.run(y, {x: 9})


def test_cond_of_operations_returns_a_tensor_gated_on_the_taken_branch(sess):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.assign(v, 1).op, lambda: tf.assign(v, 2).op)
    assert isinstance(out, tf.Tensor) and out.dtype == tf.bool
    sess.run(v.initializer)
    assert sess.run(out, {p: True}) and sess.run(v) == 1
    assert not sess.run(out, {p: False}) and sess.run(v) == 2


def test_tensor_array_clears_elements_after_reading_them(sess):
    ta = tf.TensorArray(tf.float32, size=2).write(0, 1.0).write(1, 2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="twice"):
        sess.run([ta.read(0), ta.stack()])
    kept = tf.TensorArray(tf.float32, size=1, clear_after_read=False).write(0, 3.0)
    assert sess.run([kept.read(0), kept.read(0)]) == [3.0, 3.0]


def test_tensor_array_unwritten_elements_of_known_shape_read_as_zeros(sess):
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[2])
    grown = grown.write(0, [1.0, 2.0]).write(2, [3.0, 4.0])
    np.testing.assert_array_equal(sess.run(grown.stack()), [[1, 2], [0, 0], [3, 4]])
    partial = tf.TensorArray(tf.float32, size=2).write(0, 5.0)
    np.testing.assert_array_equal(sess.run(partial.stack()), [5.0, 0.0])
    unknown = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not yet been written"):
        sess.run(unknown.read(0))


def test_tensor_array_stack_of_elements_with_different_shapes_is_an_error(sess):
    v = tf.placeholder(tf.float32)
    ta = tf.TensorArray(tf.float32, size=2, infer_shape=False).write(0, v).write(1, [1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inconsistent shapes"):
        sess.run(ta.stack(), {v: [1.0]})


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_tensor_array_ops_run_where_the_array_lives(processes):
    # The gradient's TensorArray ops are built without a device; they must
    # follow the array's handle to cpu:1 (a handle cannot cross processes).
    x = tf.placeholder(tf.float32, [6])
    with tf.device("/cpu:1"):
        ta = tf.TensorArray(tf.float32, size=3).unstack(tf.reshape(x, [3, 2]))
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + ta.read(i)),
                               [0, tf.zeros([2])])
    [grad] = tf.gradients(tf.reduce_sum(acc * acc), [x])
    with tf.Session(config=_two_cpus(processes)) as session:
        got, got_grad = session.run([acc, grad], {x: [1, 2, 3, 4, 5, 6]})
    np.testing.assert_allclose(got, [9.0, 12.0])               # columns summed
    np.testing.assert_allclose(got_grad, [18.0, 24.0] * 3)     # 2 * acc, for every row


def test_tensor_array_split_and_concat_with_gradient(sess):
    x = tf.placeholder(tf.float32, [5, 2])
    pieces = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(x, [2, 1, 2])
    whole = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(x, [2, 1, 2]).concat()
    [grad] = tf.gradients(tf.reduce_sum(whole * whole), [x])
    xv = np.arange(10, dtype=np.float32).reshape(5, 2)
    last, got, got_grad = sess.run([pieces.read(2), whole, grad], {x: xv})
    np.testing.assert_array_equal(last, xv[3:])
    np.testing.assert_array_equal(got, xv)
    np.testing.assert_array_equal(got_grad, 2 * xv)
    with pytest.raises(tf.errors.InvalidArgumentError, match="sum of lengths"):
        sess.run(tf.TensorArray(tf.float32, size=2).split(x, [2, 2]).concat(), {x: xv})


@pytest.mark.parametrize("processes", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_an_error_in_a_loop_on_another_device_names_the_op_and_where_it_was_made(processes):
    x = tf.placeholder(tf.float32, [None])
    with tf.device("/cpu:1"):
        _, r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + tf.gather(a, i + 5)),
                             [0, x])
    with tf.Session(config=_two_cpus(processes)) as session:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            session.run(r, {x: [1.0, 2.0]})
    assert info.value.op is not None and info.value.op.type == "GatherV2"
    assert "while/GatherV2" in info.value.message
    assert "test_control_flow.py" in info.value.message


def test_feeding_a_branch_result_that_goes_straight_into_the_merge(sess):
    x = tf.placeholder(tf.float32, [])
    inside = []
    y = tf.cond(x > 0, lambda: inside.append(x * 3.0) or inside[-1], lambda: x - 1.0)
    assert sess.run(y, {x: 1.0, inside[0]: 10.0}) == 10.0   # the fed value, not 3.0
    assert sess.run(y, {x: 1.0}) == 3.0 and sess.run(y, {x: -1.0}) == -2.0


def test_tensor_array_ops_are_named_and_shaped_as_in_tf():
    ta = tf.TensorArray(tf.float32, size=3).write(0, 1.0)
    stacked = ta.stack()
    assert ta.handle.op.name == "TensorArray" and ta.handle.op.type == "TensorArrayV3"
    assert ta.flow.op.name == "TensorArrayWrite/TensorArrayWriteV3"
    assert ta.read(0).op.name == "TensorArrayReadV3"
    assert stacked.op.name == "TensorArrayStack/TensorArrayGatherV3"
    assert stacked.shape.as_list() == [3]           # a constant size is known statically
    grown = tf.TensorArray(tf.float32, size=3, dynamic_size=True).write(0, 1.0).stack()
    assert grown.shape.as_list() == [None]


def test_a_control_dependency_of_a_loop_body_on_an_outside_op_is_kept(sess):
    # TF turns such an edge into an Identity of the outside op's output,
    # entered as a loop invariant: the assign runs, before the body's reads.
    v = tf.Variable(1.0)
    reset = tf.assign(v, 7.0)

    def body(i, total):
        with tf.control_dependencies([reset]):
            return i + 1, total + v.read_value()
    _, total = tf.while_loop(lambda i, total: i < 2, body, [0, 0.0])
    sess.run(v.initializer)
    assert sess.run(total) == 14.0 and sess.run(v) == 7.0
