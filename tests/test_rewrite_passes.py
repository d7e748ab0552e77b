"""The rewrite passes and their switches (minitf/runtime/passes/).

Each pass is checked on the step graph it produces (what was bypassed, what
stays), the ``RewriterConfig`` switches are checked to leave the step alone,
and random small graphs must compute the same values with every pass on as
with every pass off.
"""

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.config import RewriterConfig
from minitf.runtime.master import plan_step
from minitf.runtime.passes import PassContext, run_passes
from minitf.runtime.passes.arithmetic_optimizer import simplify_arithmetic
from minitf.runtime.passes.common_subgraph_elimination import eliminate_common_subgraphs
from minitf.runtime.passes.model_pruner import prune_identities
from minitf.runtime.planning.schedule import schedule
from minitf.runtime.planning.step_graph import copy_step
from minitf.runtime.planning.subgraph import prune

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
ALL_OFF = RewriterConfig(disable_meta_optimizer=True)


def config(rewrites):
    return tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=rewrites))


def step_of(fetches, feeds=(), targets=()):
    """The step graph of running ``fetches``, before any pass."""
    graph = tf.get_default_graph()
    order, _ = schedule(prune(list(fetches), list(targets), list(feeds)), list(feeds))
    return copy_step(graph, order, list(feeds), list(fetches), list(targets))


def rewritten(rewrite, fetches, feeds=(), targets=()):
    """The ops (by name) of the step after one pass, and the step."""
    context = PassContext(get_registry(), None, tf.ConfigProto())
    step = rewrite(step_of(fetches, feeds, targets), context).rescheduled()
    return {op.name: op for op in step.ops}, step


def types(ops):
    return sorted(op.type for op in ops.values())


def ran(sess, fetches, feed_dict=None):
    metadata = tf.RunMetadata()
    values = sess.run(fetches, feed_dict, options=FULL, run_metadata=metadata)
    return values, {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}


# ---- model pruning ---------------------------------------------------------------
def test_an_identity_chain_is_bypassed():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(tf.identity(tf.identity(x, name="a"), name="b"), name="y")
    ops, step = rewritten(prune_identities, [y], [x])
    assert types(ops) == ["Square"]
    assert ops["y"].inputs[0] is step.feeds[0]


def test_a_fetched_identity_and_one_with_control_inputs_stay():
    x = tf.placeholder(tf.float32, [2], name="x")
    v = tf.Variable([1.0, 2.0], name="v")
    named = tf.identity(x, name="named")
    with tf.control_dependencies([tf.assign_add(v, [1.0, 1.0], name="bump")]):
        ordered = tf.identity(x, name="ordered")
    ops, _ = rewritten(prune_identities, [named, ordered * 2.0], [x])
    assert "named" in ops and "ordered" in ops


def test_an_identity_on_another_device_or_of_a_reference_stays():
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        copied = tf.identity(x, name="copied")
    v = tf.Variable([1.0, 2.0], name="v")
    snapshot = tf.identity(v.op.outputs[0], name="snapshot")  # reads the float32_ref
    local = tf.identity(x, name="local")
    ops, _ = rewritten(prune_identities, [copied * 2.0, snapshot * 2.0, local * 2.0], [x])
    assert "copied" in ops and "snapshot" in ops
    assert "local" not in ops


def test_identities_in_a_cond_stay():
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.constant(3.0)
    y = tf.cond(p, lambda: tf.identity(x * 2.0, name="inner"), lambda: x)
    ops, _ = rewritten(prune_identities, [y], [p])
    assert any(name.endswith("inner") for name in ops)


# ---- common-subgraph elimination ------------------------------------------------------
def test_identical_pure_ops_are_computed_once_and_their_readers_merge():
    x = tf.placeholder(tf.float32, [3], name="x")
    a = tf.square(x, name="a") + 1.0
    b = tf.square(x, name="b") + 1.0
    ops, _ = rewritten(eliminate_common_subgraphs, [a * b], [x])
    assert types(ops).count("Square") == 1
    assert types(ops).count("Add") == 1
    assert types(ops).count("Const") == 1


def test_ops_differing_in_attrs_device_or_constant_value_stay_apart():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    sums = [tf.reduce_sum(x, 0, name="s0"), tf.reduce_sum(x, 0, keepdims=True, name="s1")[0]]
    with tf.device("/cpu:1"):
        sums.append(tf.reduce_sum(x, 0, name="s2"))
    sums.append(x[0] * tf.constant(0.0) + x[0] * tf.constant(-0.0))
    ops, _ = rewritten(eliminate_common_subgraphs, [tf.add_n(sums)], [x])
    assert {"s0", "s1", "s2"} <= set(ops)
    assert types(ops).count("Mul") == 2


def test_stateful_ops_and_fetched_duplicates_are_not_merged():
    r1 = tf.random_uniform([3], seed=1, name="r1")
    r2 = tf.random_uniform([3], seed=1, name="r2")
    c = tf.constant(2.0)
    fetched = [tf.square(c, name="f1"), tf.square(c, name="f2")]
    ops, _ = rewritten(eliminate_common_subgraphs, [r1 + r2] + fetched)
    assert types(ops).count("RandomUniform") == 2
    assert {"f1", "f2"} <= set(ops)


# ---- arithmetic simplification ------------------------------------------------------------
def test_multiplying_by_one_adding_zero_and_double_negation_are_bypassed():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.negative(tf.negative((1.0 * (x * tf.ones([3]))) + 0.0 - tf.zeros([1, 1])))
    ops, step = rewritten(simplify_arithmetic, [tf.square(y, name="out")], [x])
    assert types(ops) == ["Square"]
    assert ops["out"].inputs[0] is step.feeds[0]


def test_a_neutral_constant_that_would_broadcast_stays():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    wider = tf.multiply(x, tf.ones([2, 1, 1]), name="wider")     # rank grows
    unknown = tf.add(x, tf.zeros([4, 3]), name="unknown")         # None may become 4
    strings = tf.add(tf.constant(["a"]), tf.constant([""]), name="strings")
    ops, _ = rewritten(simplify_arithmetic, [wider * 2.0, unknown * 2.0, strings + "b"], [x])
    assert {"wider", "unknown", "strings"} <= set(ops)


def test_inverse_transposes_cancel_and_others_stay():
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    back = tf.transpose(tf.transpose(x, [1, 2, 0]), [2, 0, 1], name="back")
    twice = tf.transpose(tf.transpose(x, [1, 2, 0]), [1, 2, 0], name="twice")
    ops, step = rewritten(simplify_arithmetic, [back * 2.0, twice * 2.0], [x])
    assert "back" not in ops and "twice" in ops
    assert step.feeds[0] in [t for op in ops.values() if op.type == "Mul" for t in op.inputs]


def test_a_reshape_chain_reads_its_start_and_a_reshape_to_the_same_shape_goes():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.reshape(tf.reshape(tf.reshape(x, [6]), [3, 2]), [1, 6], name="y")
    same = tf.reshape(x, [2, 3], name="same")
    ops, step = rewritten(simplify_arithmetic, [y, same * 2.0], [x])
    assert types(ops) == ["Const", "Const", "Mul", "Reshape"]
    assert ops["y"].inputs[0] is step.feeds[0]


def test_a_reshape_chain_of_unknown_shape_is_left_to_fail_as_it_would():
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reshape(tf.reshape(x, [2, 2], name="inner"), [-1])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="inner"):
            sess.run(y, {x: np.zeros(6, np.float32)})


# ---- switches, the whole pipeline -----------------------------------------------------------
def test_the_passes_run_in_a_session_and_the_bypassed_ops_do_not():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.identity(tf.negative(tf.negative(x * 1.0, name="n1"), name="n2"), name="i")
    z = tf.add(tf.square(y, name="sq1"), tf.square(y, name="sq2"), name="z")
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session() as sess:
        value, names = ran(sess, z, {x: feed})
    np.testing.assert_array_equal(value, 2 * feed ** 2)
    assert names.isdisjoint({"n1", "n2", "i"})
    assert len(names & {"sq1", "sq2"}) == 1


@pytest.mark.parametrize("switch", ["arithmetic_optimization", "common_subgraph_elimination",
                                    "constant_folding", "dependency_optimization",
                                    "loop_optimization"])
def test_a_pass_switched_off_leaves_the_graph_alone(switch):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.add(tf.square(x * 1.0, name="sq1"), tf.square(x * 1.0, name="sq2"), name="y")
    folded = tf.reshape(tf.fill([2], 3.0), [2], name="folded")
    total = tf.add(y, folded, name="total")
    context = PassContext(get_registry(), None, config(RewriterConfig(**{switch: RewriterConfig.OFF})))
    run_passes(step_of([total], [x]), context)
    assert switch not in [applied.name for applied in context.applied]
    assert len(context.applied) == 5


def test_every_pass_off_keeps_every_op():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.identity(tf.negative(tf.negative(x)) * 1.0, name="y")
    z = tf.add(tf.square(y, name="sq1"), tf.square(y, name="sq2"), name="z")
    feed = np.array([1.0, -2.0], np.float32)
    with tf.Session(config=config(ALL_OFF)) as sess:
        value, names = ran(sess, z, {x: feed})
    np.testing.assert_array_equal(value, 2 * feed ** 2)
    assert {"y", "sq1", "sq2", "Neg", "Neg_1", "mul"} <= names


def test_disable_model_pruning_keeps_identities():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(tf.identity(x, name="i"))
    with tf.Session(config=config(RewriterConfig(disable_model_pruning=True))) as sess:
        _, names = ran(sess, y, {x: np.ones(2, np.float32)})
    assert "i" in names


def test_the_switches_travel_as_tfs_message():
    rewrites = RewriterConfig(arithmetic_optimization=RewriterConfig.OFF,
                              disable_model_pruning=True)
    proto = config(rewrites).to_proto()
    assert proto.graph_options.rewrite_options.arithmetic_optimization == RewriterConfig.OFF
    back = tf.ConfigProto.from_proto(proto).graph_options.rewrite_options
    assert not back.enabled("arithmetic_optimization") and not back.enabled("model_pruning")
    assert back.enabled("constant_folding")


def test_the_applied_passes_count_the_ops_before_and_after():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(tf.identity(x) * 1.0)
    context = PassContext(get_registry(), None, tf.ConfigProto())
    run_passes(step_of([y], [x]), context)
    counts = {p.name: (p.ops_before, p.ops_after) for p in context.applied}
    assert counts["model_pruning"] == (4, 3)          # Identity, Const, Mul, Square
    assert counts["arithmetic_optimization"] == (3, 1)


def test_a_traced_run_lists_the_passes_with_the_op_counts():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.square(tf.identity(x) * 1.0)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, {x: np.ones(2, np.float32)}, options=FULL, run_metadata=metadata)
        untraced = tf.RunMetadata()
        sess.run(y, {x: np.ones(2, np.float32)}, run_metadata=untraced)
    counts = {p.name: (p.ops_before, p.ops_after) for p in metadata.rewrites}
    assert counts["model_pruning"] == (4, 3)
    assert counts["arithmetic_optimization"] == (3, 1)
    assert [p.name for p in metadata.rewrites][:2] == ["model_pruning", "constant_folding"]
    assert str(metadata.rewrites[0]) == "model_pruning: 4 -> 3 ops"
    assert untraced.rewrites == []


# ---- dead-branch removal -------------------------------------------------------------------
CONTROL_FLOW = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}


def ran_types(sess, fetches, feed_dict=None):
    """The values and the op types of the ops that ran."""
    metadata = tf.RunMetadata()
    values = sess.run(fetches, feed_dict, options=FULL, run_metadata=metadata)
    graph = sess.graph
    names = {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}
    return values, names, {graph.get_operation_by_name(n).type for n in names
                           if not n.startswith("ConstantFolding/")}


def test_a_cond_on_a_constant_keeps_only_the_taken_branch():
    x = tf.placeholder(tf.float32, [3], name="x")
    is_training = tf.constant(False, name="is_training")
    y = tf.cond(is_training, lambda: tf.multiply(x, 2.0, name="train"),
                lambda: tf.nn.relu(x, name="evaluate"))
    z = tf.subtract(y, 3.0, name="z")
    feed = np.array([1.0, -2.0, 3.0], np.float32)
    with tf.Session() as sess:
        value, names, ran_ops = ran_types(sess, z, {x: feed})
    np.testing.assert_array_equal(value, np.maximum(feed, 0) - 3.0)
    assert "cond/evaluate" in names and "cond/train" not in names
    assert not ran_ops & CONTROL_FLOW


def test_a_predicate_folded_from_constants_selects_the_branch():
    x = tf.placeholder(tf.float32, [2], name="x")
    pred = tf.logical_not(tf.equal(tf.constant(1), 2))   # True, known before the step
    y = tf.cond(pred, lambda: tf.square(x, name="sq"), lambda: tf.negative(x, name="neg")) + 1.0
    with tf.Session() as sess:
        value, names, ran_ops = ran_types(sess, y, {x: np.array([2.0, -3.0], np.float32)})
    np.testing.assert_array_equal(value, [5.0, 10.0])
    assert "cond/sq" in names and "cond/neg" not in names
    assert not ran_ops & CONTROL_FLOW


def test_a_fed_predicate_keeps_both_branches():
    flag = tf.placeholder_with_default(tf.constant(True), [], name="flag")
    x = tf.constant([1.0, -1.0])
    y = tf.cond(flag, lambda: x * 2.0, lambda: x * 3.0) + 0.5
    with tf.Session() as sess:
        value, _, ran_ops = ran_types(sess, y, {flag: False})
    np.testing.assert_array_equal(value, [3.5, -2.5])
    assert {"Switch", "Merge"} <= ran_ops


def test_dead_branch_removal_switched_off_runs_the_switches():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.cond(tf.constant(True), lambda: x + 1.0, lambda: x - 1.0) * 2.0
    off = config(RewriterConfig(loop_optimization=RewriterConfig.OFF))
    with tf.Session(config=off) as sess:
        value, _, ran_ops = ran_types(sess, y, {x: np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(value, [4.0, 6.0])
    assert {"Switch", "Merge"} <= ran_ops


def test_a_fetched_merge_still_gives_the_taken_branch():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.cond(tf.constant(True), lambda: tf.square(x), lambda: tf.negative(x))
    feed = {x: np.array([2.0, 3.0], np.float32)}
    with tf.Session() as sess:
        merged, doubled = sess.run([y, y * 2.0], feed)
    np.testing.assert_array_equal(merged, [4.0, 9.0])
    np.testing.assert_array_equal(doubled, [8.0, 18.0])


def test_conds_nested_in_a_dead_branch_and_in_a_loop_and_their_gradients_are_unchanged():
    x = tf.placeholder(tf.float32, [2], name="x")
    inner = lambda: tf.cond(tf.constant(True), lambda: x * 5.0, lambda: x * 7.0)  # noqa: E731
    y = tf.cond(tf.constant(False), inner, lambda: tf.sin(x))
    _, looped = tf.while_loop(
        lambda i, v: i < 3,
        lambda i, v: (i + 1, tf.cond(tf.constant(True), lambda: v * 2.0, lambda: v - 1.0)),
        [tf.constant(0), y])
    grad, = tf.gradients(tf.reduce_sum(looped), x)
    feed = {x: np.array([0.5, -1.0], np.float32)}
    results = []
    for rewrites in (RewriterConfig(), ALL_OFF):
        with tf.Session(config=config(rewrites)) as sess:
            results.append(sess.run([looped, grad], feed))
    expected = 8.0 * np.sin(feed[x])
    np.testing.assert_allclose(results[0][0], expected, rtol=1e-6)
    np.testing.assert_allclose(results[0][1], 8.0 * np.cos(feed[x]), rtol=1e-6)
    for on, off in zip(results[0], results[1]):
        np.testing.assert_array_equal(on, off)


# ---- rewritten == not rewritten, over random graphs ----------------------------------------------
SHAPES = [(2, -1), (3, -1), (-1,), (1, -1), (1, 2, -1)]


@st.composite
def programs(draw):
    """A list of instructions building a graph over small tensors of 6 or 12 ... elements."""
    return draw(st.lists(st.tuples(
        st.sampled_from(["identity", "neg", "square", "mul1", "add0", "sub0", "transpose",
                         "reshape", "add", "twice", "cond"]),
        st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=12))


def build(program):
    """Builds ``program`` on the default graph; returns (x, the tensors to fetch).

    An instruction whose shapes do not fit (a broadcast of (3, 2) with (2, 1))
    is left out."""
    x = tf.placeholder(tf.float32, [1, 2, 3], name="x")
    tensors = [x, tf.reshape(tf.range(6.0), [3, 2])]
    for kind, a, b in program:
        try:
            tensors.append(instruction(kind, tensors[a % len(tensors)], b, tensors))
        except ValueError:
            pass
    # A fetched tensor is never rewritten: fetch what reads the program's values.
    return x, [tensors[-1] * 2.0, tensors[len(tensors) // 2] * 2.0]


def instruction(kind, t, b, tensors):
    """The tensor one instruction of :func:`programs` makes from ``t``."""
    rank = t.shape.rank
    if kind in ("identity", "neg", "square"):
        return {"identity": tf.identity, "neg": tf.negative, "square": tf.square}[kind](t)
    if kind in ("mul1", "add0", "sub0"):
        shape = [[], [1], [t.shape[-1]], [1] * (rank + 1), t.shape.as_list(),
                 [2] + [1] * (rank - 1)][b % 6]  # the last two may broadcast
        fill = tf.ones if kind == "mul1" else tf.zeros
        op = {"mul1": tf.multiply, "add0": tf.add, "sub0": tf.subtract}[kind]
        return op(fill(shape), t) if b % 2 and kind != "sub0" else op(t, fill(shape))
    if kind == "transpose":
        perms = list(itertools.permutations(range(rank)))
        return tf.transpose(t, list(perms[b % len(perms)]))
    if kind == "reshape":
        return tf.reshape(t, SHAPES[b % len(SHAPES)])
    if kind == "add":
        same = [u for u in tensors if u.shape == t.shape]
        return t + same[b % len(same)]
    if kind == "cond":  # a constant predicate: dead-branch removal
        return tf.cond(tf.constant(b % 2 == 0), lambda: tf.square(t), lambda: tf.negative(t))
    return tf.abs(t) + tf.abs(t)  # "twice": a duplicate for CSE


@settings(max_examples=60, deadline=None)
@given(programs())
@example([("transpose", 0, 3), ("transpose", 2, 3)])  # (1, 2, 0) twice: no identity
@example([("mul1", 0, 5), ("reshape", 2, 2)])         # ones (2, 1, 1) broadcast x up
def test_rewritten_steps_compute_what_unrewritten_ones_do(program):
    feed = np.array([[[1.5, -2.0, 0.0], [3.0, -0.5, 4.0]]], np.float32)
    results = []
    for rewrites in (RewriterConfig(), ALL_OFF):
        with tf.Graph().as_default():
            x, fetches = build(program)
            with tf.Session(config=config(rewrites)) as sess:
                try:
                    results.append(sess.run(fetches, {x: feed}))
                except tf.errors.InvalidArgumentError as error:
                    results.append(type(error))
    if not isinstance(results[1], list):
        assert results[0] is results[1]
        return
    for rewritten_value, plain_value in zip(*results):
        assert rewritten_value.shape == plain_value.shape
        np.testing.assert_array_equal(rewritten_value, plain_value)
