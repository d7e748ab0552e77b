"""Elementwise fusion (XLA in miniature): the jit switches, the clustering pass and the
generated OpenCL kernels, checked against the same step with fusion off.

The switches and the pass's refusals need no GPU.  Everything that runs a
fused kernel is skipped, with the reason the OpenCL plugin recorded, where
no OpenCL device exists (as ``test_opencl.py`` is).
"""

import numpy as np
import pytest

import minitf as tf
from minitf.ops.op_def_library import apply_op
from minitf.registry import get_registry

_registry = get_registry()
_unavailable = _registry.unavailable_devices().get("GPU")
HAS_GPU = _registry.device_factory("GPU") is not None
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason="OpenCL GPU tests SKIPPED: %s" % (
    _unavailable[1] if _unavailable else "no GPU device registered"))

JIT_ON = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.ON_1)))
JIT_OFF = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF)))
RNG = np.random.RandomState(7)


def traced_run(config, fetches, feed=None, graph=None):
    """``(values, op types the step ran)`` of one traced run."""
    with tf.Session(graph=graph, config=config) as sess:
        metadata = tf.RunMetadata()
        values = sess.run(fetches, feed, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
    types = [n.op_type for d in metadata.step_stats.dev_stats for n in d.node_stats]
    return values, types


def fused_ops(sess_graph, fetches, feed=None, config=JIT_ON):
    """The ``_FusedElementwise`` ops of the partitions ``run(fetches, feed)`` would run."""
    with tf.Session(graph=sess_graph, config=config) as sess:
        parts = sess.partition_graphs(fetches, feed)
    return [op for g in parts.values() for op in g.get_operations()
            if op.type == "_FusedElementwise"]


def assert_same(fused, plain):
    for a, b in zip(fused, plain):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)


def compare(build, arrays, expect_fused=True):
    """Runs ``build(*placeholders)`` on /gpu:0 with jit on and off; the results must agree."""
    graph = tf.Graph()
    with graph.as_default():
        feeds = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
        with tf.device("/gpu:0"):
            outs = build(*feeds)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    feed = dict(zip(feeds, arrays))
    fused, fused_types = traced_run(JIT_ON, outs, feed, graph)
    plain, plain_types = traced_run(JIT_OFF, outs, feed, graph)
    assert_same(fused, plain)
    assert ("_FusedElementwise" in fused_types) == expect_fused, fused_types
    assert "_FusedElementwise" not in plain_types
    return fused_types, plain_types


# ---- the switches -----------------------------------------------------------------------
def test_jit_levels_have_tf_numbers_and_fields():
    levels = tf.OptimizerOptions
    assert (levels.OFF, levels.DEFAULT, levels.ON_1, levels.ON_2) == (-1, 0, 1, 2)
    assert JIT_ON.graph_options.global_jit and not JIT_OFF.graph_options.global_jit
    assert not tf.GraphOptions().global_jit
    assert tf.GraphOptions(global_jit_level=levels.ON_2).global_jit  # minitf's shorthand


@pytest.mark.parametrize("flags,on", [("--tf_xla_auto_jit=2", True), ("--tf_xla_auto_jit=1", True),
                                      ("--tf_xla_auto_jit=single-gpu(2)", True),
                                      ("--tf_xla_auto_jit=fusible", True),
                                      ("--tf_xla_auto_jit=-1", False),
                                      ("--tf_xla_auto_jit=0", False), ("", False)])
def test_tf_xla_flags_turn_the_jit_on_where_the_level_is_default(monkeypatch, flags, on):
    monkeypatch.setenv("TF_XLA_FLAGS", flags)
    assert tf.GraphOptions().global_jit is on
    assert not JIT_OFF.graph_options.global_jit      # a level set in the config wins
    assert JIT_ON.graph_options.global_jit


@needs_gpu
def test_tf_xla_flags_fuse_a_default_session(monkeypatch):
    a = RNG.uniform(-1, 1, (4, 5)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            y = tf.nn.relu(x * 2.0) + 1.0
    assert fused_ops(graph, y, {x: a}, config=None) == []
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2")
    assert len(fused_ops(graph, y, {x: a}, config=None)) == 1


def test_jit_level_crosses_processes_in_tf_message():
    proto = JIT_ON.to_proto()
    assert proto.graph_options.optimizer_options.global_jit_level == 1
    assert tf.ConfigProto.from_proto(proto).graph_options.global_jit


def test_jit_scope_marks_the_ops_it_creates():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        outside = x + 1.0
        with tf.xla.experimental.jit_scope():
            inside = x * 2.0
            with tf.xla.experimental.jit_scope(compile_ops=False):
                excluded = x - 3.0
        with tf.xla.experimental.jit_scope(compile_ops=lambda node_def: node_def.op == "Neg"):
            picked, skipped = tf.negative(x), tf.abs(x)
    assert "_XlaCompile" not in outside.op.node_def.attr
    assert inside.op.get_attr("_XlaCompile") is True
    assert excluded.op.get_attr("_XlaCompile") is False
    assert excluded.op.get_attr("_XlaScope") == inside.op.get_attr("_XlaScope") == "jit_scope_0"
    assert picked.op.get_attr("_XlaCompile") and not skipped.op.get_attr("_XlaCompile")
    assert picked.op.get_attr("_XlaScope") == "jit_scope_1"


def test_cpu_ops_are_never_fused():
    with tf.Graph().as_default() as graph, tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [3])
        y = tf.nn.relu(x + 1.0) * 2.0
    assert fused_ops(graph, y, {x: np.ones(3, np.float32)}) == []


# ---- fusion on the OpenCL device ------------------------------------------------------
def _fusable():
    if not HAS_GPU:
        return []
    from minitf_opencl_gpu.kernels import elementwise
    return sorted(elementwise.EXPRESSIONS.items())


def _operand(group, shape, positive=False):
    if group == "float":
        low = 0.5 if positive else -2.0
        return RNG.uniform(low, 2.0, shape).astype(np.float32)
    if group == "int":
        return RNG.randint(1 if positive else -4, 5, shape).astype(np.int64)
    return RNG.rand(*shape) > 0.5


POSITIVE = {"Log", "Log1p", "Sqrt", "Rsqrt", "Reciprocal", "Pow", "RealDiv", "FloorDiv",
            "FloorMod", "SqrtGrad", "RsqrtGrad"}


SAME_SHAPES = {"EluGrad", "ReciprocalGrad", "Relu6Grad", "ReluGrad", "RsqrtGrad", "SeluGrad",
               "SigmoidCrossEntropyWithLogits", "SigmoidGrad", "SoftplusGrad", "SoftsignGrad",
               "SqrtGrad", "TanhGrad"}


@needs_gpu
@pytest.mark.parametrize("op_type,expression", _fusable(), ids=[t for t, _ in _fusable()])
def test_every_elementwise_op_fuses(op_type, expression):
    """Each op joins a chain with a broadcast operand; per dtype group it has a template for."""
    for group in expression.templates:
        positive = op_type in POSITIVE
        a = _operand(group, (4, 5), positive)
        # a row, repeated along the batch (the fused gradients take equal shapes only)
        b = _operand(group, (4, 5) if op_type in SAME_SHAPES else (5,), positive)
        c = _operand(group, (4, 5), positive)

        def build(x, y, z, op_type=op_type, group=group):
            first = tf.maximum(x, z) if group != "bool" else tf.logical_or(x, z)
            inputs = [first] if expression.arity == 1 else [first, y]
            out = apply_op(op_type, inputs)
            return out if group == "bool" or expression.bool_output else tf.square(out)

        compare(build, [a, b, c])


@needs_gpu
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)),
                                    ((2, 3, 4), ()), ((2, 1, 4), (3, 1)), ((5,), (3, 1))])
def test_chains_with_broadcasting(shapes):
    a, b = (RNG.uniform(-2, 2, s).astype(np.float32) for s in shapes)
    compare(lambda x, y: tf.tanh(tf.sigmoid(x * y) - x) + y, [a, b])


@needs_gpu
def test_casts_and_bias_add_fuse():
    a = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
    bias = RNG.uniform(-1, 1, (4,)).astype(np.float32)

    def build(x, b):
        rounded = tf.cast(tf.cast(tf.nn.bias_add(x, b) * 2.0, tf.int64), tf.float32)
        return rounded, tf.cast(x > 0.5, tf.float32) + 1.0
    compare(build, [a, bias])


def test_expression_lines_carry_float_attrs():
    from minitf.ops import xla_ops
    line = xla_ops.expression_line(3, "LeakyRelu", ["t2"], tf.float32, {"alpha": 0.25})
    assert line == "t3 = LeakyRelu(t2) : float32 {alpha=0.25}"
    op_type, operands, dtype = parsed = xla_ops.parse_expression(line)
    assert (op_type, operands, dtype, parsed.attrs) == ("LeakyRelu", ("t2",), tf.float32,
                                                        {"alpha": 0.25})
    assert xla_ops.parse_expression("t0 = AddN(x0, x1, t5) : int64").attrs == {}
    with pytest.raises(ValueError, match="Not a line"):
        xla_ops.parse_expression("t0 = LeakyRelu(x0) : float32 {alpha=much}")


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_add_n_fuses(dtype):
    a, b, c = (RNG.uniform(-3, 3, (3, 5)).astype(dtype) for _ in range(3))
    fused, _ = compare(lambda x, y, z: tf.add_n([x * y, z, x, y - z]) * y, [a, b, c])
    assert fused.count("_FusedElementwise") == 1 and "AddN" not in fused


@needs_gpu
def test_select_and_select_v2_fuse_with_their_producers():
    a, b = (RNG.uniform(-2, 2, (4, 6)).astype(np.float32) for _ in range(2))
    row = RNG.uniform(-2, 2, (6,)).astype(np.float32)

    def build(x, y, r):
        picked = tf.where(x > y, x * 2.0, y - 1.0) * 3.0                # Select, same shapes
        broadcast = tf.where_v2(x > 0.0, tf.exp(x), r) + 1.0          # SelectV2, a row
        return picked, broadcast
    fused, _ = compare(build, [a, b, row])
    assert "Select" not in fused and "SelectV2" not in fused


@needs_gpu
def test_select_merges_the_clusters_of_its_operands():
    """Greater, Mul and Sub each start a cluster of their own; Select joins all three."""
    a, b = (RNG.uniform(-2, 2, (4, 6)).astype(np.float32) for _ in range(2))
    graph = tf.Graph()
    with graph.as_default():
        x, y = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
        with tf.device("/gpu:0"):
            out = tf.where(x > y, x * 2.0, y - 1.0) * 3.0
    (op,) = fused_ops(graph, out, {x: a, y: b})
    assert sorted(name.split("/")[-1] for name in op.get_attr("fused_ops")) == [
        "Greater", "Select", "mul", "mul_1", "sub"]


@needs_gpu
def test_a_select_choosing_rows_is_not_fused():
    """TF1's Select with a vector condition picks whole rows: not elementwise."""
    a, b = (RNG.uniform(-2, 2, (4, 3)).astype(np.float32) for _ in range(2))
    rows = np.array([True, False, False, True])
    fused, _ = compare(lambda c, x, y: tf.where(c, tf.exp(x), y * 2.0) + 1.0, [rows, a, b],
                       expect_fused=False)
    assert "Select" in fused


@needs_gpu
def test_fused_select_refuses_shapes_as_unfused():
    graph = tf.Graph()
    with graph.as_default():
        c = tf.placeholder(tf.bool, [None, None])
        x = tf.placeholder(tf.float32, [None, None])
        with tf.device("/gpu:0"):
            out = tf.where(c, tf.exp(x), x * 2.0) + 1.0
    feed = {c: np.ones((2, 3), bool), x: np.ones((3, 3), np.float32)}
    for config in (JIT_ON, JIT_OFF):
        with tf.Session(graph=graph, config=config) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="'cond' and 'then' must have the same size"):
                sess.run(out, feed)


@needs_gpu
def test_leaky_relu_and_its_gradient_fuse_with_their_alpha():
    a, b = (RNG.uniform(-2, 2, (5, 4)).astype(np.float32) for _ in range(2))
    graph = tf.Graph()
    with graph.as_default():
        x, y = tf.placeholder(tf.float32, a.shape), tf.placeholder(tf.float32, b.shape)
        with tf.device("/gpu:0"):
            act = tf.nn.leaky_relu(x * 1.5, alpha=0.1) + tf.nn.leaky_relu(x, alpha=0.3)
            grad = tf.gradients(tf.reduce_sum(act * y), x)[0] * 2.0
    feed = {x: a, y: b}
    sources = [op.get_attr("_kernel_source") for op in fused_ops(graph, [act, grad], feed)]
    assert any("(T)(0.1)" in text and "(T)(0.3)" in text for text in sources)
    fused, types = traced_run(JIT_ON, [act, grad], feed, graph)
    plain, _ = traced_run(JIT_OFF, [act, grad], feed, graph)
    assert_same(fused, plain)
    assert "LeakyRelu" not in types and "LeakyReluGrad" not in types
    leaky = lambda v, alpha: np.where(v > 0, v, v * alpha)  # noqa: E731
    np.testing.assert_allclose(fused[0], leaky(a * 1.5, 0.1) + leaky(a, 0.3), rtol=1e-6)
    slope = lambda v, alpha: np.where(v > 0, 1.0, alpha)   # noqa: E731
    np.testing.assert_allclose(fused[1], 2 * b * (1.5 * slope(a * 1.5, 0.1) + slope(a, 0.3)),
                               rtol=1e-5)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_zeros_like_identity_and_stop_gradient_fuse(dtype):
    a = (RNG.uniform(-2, 2, (3, 4)) * 3).astype(dtype)

    def build(x):
        y = tf.logical_not(x) if dtype == np.bool_ else x * x
        z = tf.zeros_like(y)
        kept = tf.stop_gradient(tf.identity(y))
        return (tf.logical_or(kept, z) if dtype == np.bool_ else kept + z), z
    fused, plain = compare(build, [a])
    assert not {"ZerosLike", "StopGradient", "Identity"} & set(fused), fused


REDUCE = {"Sum": tf.reduce_sum, "Mean": tf.reduce_mean, "Max": tf.reduce_max,
          "Min": tf.reduce_min, "Prod": tf.reduce_prod}


@needs_gpu
@pytest.mark.parametrize("op_type", sorted(REDUCE))
@pytest.mark.parametrize("axis,keepdims", [(None, False), (2, False), (2, True), ([1, 2], False),
                                           (0, False), ([0, 1], True), (1, False)])
def test_reductions_end_a_cluster(op_type, axis, keepdims):
    """A reduction over adjacent axes is the cluster's root: the values it reduces are
    computed where they are read (rows: the last axes; cols: others)."""
    a = RNG.uniform(0.5, 1.5, (6, 5, 70)).astype(np.float32)
    row = RNG.uniform(0.5, 1.5, (70,)).astype(np.float32)

    def build(x, r):
        return REDUCE[op_type](tf.sqrt(x) * r + 0.25, axis=axis, keepdims=keepdims)
    fused, plain = compare(build, [a, row])
    assert op_type in plain and op_type not in fused


@needs_gpu
def test_reduced_values_match_numpy():
    a = RNG.uniform(-2, 2, (33, 130)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            rows = tf.reduce_sum(tf.exp(x) * 0.5, axis=1)
            cols = tf.reduce_max(tf.abs(x) - 1.0, axis=0, keepdims=True)
            total = tf.reduce_mean(tf.square(x))
    values, types = traced_run(JIT_ON, [rows, cols, total], {x: a}, graph)
    assert types.count("_FusedElementwise") == 3
    np.testing.assert_allclose(values[0], (np.exp(a) * 0.5).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(values[1], (np.abs(a) - 1).max(axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(values[2], (a ** 2).mean(), rtol=1e-5)


@needs_gpu
def test_l2_loss_and_bias_add_grad_end_clusters():
    a = RNG.uniform(-1, 1, (6, 3, 20)).astype(np.float32)
    bias = RNG.uniform(-1, 1, (20,)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        b = tf.placeholder(tf.float32, bias.shape)
        with tf.device("/gpu:0"):
            loss = tf.nn.l2_loss(tf.exp(x) * 0.5)
            z = tf.nn.bias_add(x * 2.0, b)
            grad_b = tf.gradients(tf.reduce_sum(tf.tanh(z) * x), b)[0]
    feed = {x: a, b: bias}
    (l2, gb), types = traced_run(JIT_ON, [loss, grad_b], feed, graph)
    assert "L2Loss" not in types and "BiasAddGrad" not in types
    np.testing.assert_allclose(l2, 0.5 * ((np.exp(a) * 0.5) ** 2).sum(), rtol=1e-5)
    expected = ((1 - np.tanh(a * 2 + bias) ** 2) * a).sum(axis=(0, 1))
    np.testing.assert_allclose(gb, expected, rtol=1e-4, atol=1e-5)
    plain, _ = traced_run(JIT_OFF, [loss, grad_b], feed, graph)
    assert_same([l2, gb], plain)


@needs_gpu
def test_bias_add_grad_of_nchw_is_not_fused():
    a = RNG.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    bias = RNG.uniform(-1, 1, (3,)).astype(np.float32)

    def build(x, b):
        z = tf.nn.bias_add(x, b, data_format="NCHW")
        return tf.gradients(tf.reduce_sum(tf.exp(z) * 2.0), b)[0]
    fused, _ = compare(build, [a, bias])
    assert "BiasAddGrad" in fused


@needs_gpu
def test_no_op_joins_a_cluster_after_its_reduction():
    a = RNG.uniform(-1, 1, (4, 9)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            total = tf.reduce_sum(tf.exp(x) * 2.0, axis=1)
            out = tf.tanh(total) * 3.0
    clusters = [op.get_attr("fused_ops") for op in fused_ops(graph, out, {x: a})]
    assert [names[-1] for names in clusters if total.op.name in names] == [total.op.name]
    assert not any(out.op.name in names and total.op.name in names for names in clusters)
    compare(lambda v: tf.tanh(tf.reduce_sum(tf.exp(v) * 2.0, axis=1)) * 3.0, [a])


@needs_gpu
def test_reductions_the_kernel_cannot_serve_run_op_by_op():
    """Axes apart, an empty reduced axis, a reduced value also read outside, a NaN:
    the results are the unfused step's."""
    a = RNG.uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    apart, _ = compare(lambda v: tf.reduce_sum(tf.exp(v) + 1.0, axis=[0, 2]), [a])
    assert "Sum" in apart     # Exp and Add fuse; the Sum does not
    compare(lambda v: (tf.reduce_sum(tf.exp(v) * 2.0, axis=2), tf.exp(v) * 2.0), [a])
    with_nan = a.copy()
    with_nan[1, 2, 3] = np.nan
    compare(lambda v: tf.reduce_max(v * 2.0 + 1.0, axis=2), [with_nan])
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        with tf.device("/gpu:0"):
            sums = tf.reduce_sum(tf.exp(x) + 1.0, axis=0)
            means = tf.reduce_mean(tf.exp(x) - 1.0, axis=0)
    empty = np.zeros((0, 3), np.float32)
    (s, m), _ = traced_run(JIT_ON, [sums, means], {x: empty}, graph)
    np.testing.assert_array_equal(s, np.zeros(3, np.float32))
    assert np.isnan(m).all()


@needs_gpu
def test_integer_reductions_are_not_fused():
    a = RNG.randint(-5, 5, (4, 6)).astype(np.int64)
    fused, _ = compare(lambda v: tf.reduce_sum(v * 2 + 1, axis=1), [a])
    assert "Sum" in fused


@needs_gpu
def test_clusters_linked_through_another_op_are_not_merged():
    """``a`` and ``b`` both feed ``a + b``, but ``b`` is computed from ``a`` by a MatMul:
    one kernel for both would have to run before and after it."""
    v = RNG.uniform(-1, 1, (3, 3)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, v.shape)
        with tf.device("/gpu:0"):
            a = tf.exp(x) * 2.0
            b = tf.tanh(tf.matmul(a, a)) + 1.0
            out = a + b
    clusters = [set(op.get_attr("fused_ops")) for op in fused_ops(graph, out, {x: v})]
    assert {a.op.name, out.op.name} not in clusters
    assert not any(a.op.name in c and b.op.name in c for c in clusters)
    fused, _ = traced_run(JIT_ON, out, {x: v}, graph)
    plain, _ = traced_run(JIT_OFF, out, {x: v}, graph)
    assert_same([fused], [plain])


@needs_gpu
def test_an_intermediate_fetched_or_read_outside_is_an_output():
    a = RNG.uniform(-2, 2, (6, 7)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            h = tf.nn.relu(x * 3.0)
            y = tf.exp(h) - 1.0
            z = tf.matmul(h, tf.transpose(h))   # reads h outside the cluster
    (op,) = fused_ops(graph, [y, z], {x: a})
    assert len(op.outputs) == 2 and op.get_attr("outputs") == ["t1", "t3"]
    fused, _ = traced_run(JIT_ON, [h, y, z], {x: a}, graph)
    plain, _ = traced_run(JIT_OFF, [h, y, z], {x: a}, graph)
    assert_same(fused, plain)


@needs_gpu
def test_no_cluster_closes_a_cycle():
    """``b = Neg(a); c = MatMul(b, b); d = b + c``: b and d in one op would need c first."""
    a = RNG.uniform(-1, 1, (3, 3)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            b = tf.negative(tf.abs(x))
            c = tf.matmul(b, b)
            d = tf.square(b + c)
    clusters = sorted(op.get_attr("fused_ops") for op in fused_ops(graph, d, {x: a}))
    assert clusters == sorted([[b.op.inputs[0].op.name, b.op.name],
                               [d.op.inputs[0].op.name, d.op.name]])
    fused, _ = traced_run(JIT_ON, d, {x: a}, graph)
    plain, _ = traced_run(JIT_OFF, d, {x: a}, graph)
    assert_same([fused], [plain])


@needs_gpu
def test_only_jit_scope_ops_fuse_when_global_jit_is_off():
    a = RNG.uniform(-2, 2, (8,)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, a.shape)
        with tf.device("/gpu:0"):
            with tf.xla.experimental.jit_scope():
                y = tf.exp(x) + 1.0
                y = y * y
            z = tf.sqrt(tf.abs(y) + 2.0)
            with tf.xla.experimental.jit_scope(compile_ops=False):
                w = tf.sin(z) * 3.0
    (op,) = fused_ops(graph, w, {x: a}, config=None)
    assert [name.split("/")[-1] for name in op.get_attr("fused_ops")] == ["Exp", "add", "mul"]
    (op_a, op_b) = sorted(fused_ops(graph, w, {x: a}), key=lambda o: o.name)
    assert len(op_a.get_attr("fused_ops")) == 3 and len(op_b.get_attr("fused_ops")) == 3
    values, _ = traced_run(None, w, {x: a}, graph)
    np.testing.assert_allclose(values, np.sin(np.sqrt(np.abs((np.exp(a) + 1) ** 2) + 2)) * 3,
                               rtol=1e-5, atol=1e-5)


@needs_gpu
def test_fused_op_shows_its_program_and_kernel_source():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [16])
        with tf.device("/gpu:0"):
            y = tf.nn.relu(x + 1.0) * 2.0
    (op,) = fused_ops(graph, y, {x: np.ones(16, np.float32)})
    assert op.get_attr("expression") == ["t0 = Add(x0, x1) : float32",
                                         "t1 = Relu(t0) : float32",
                                         "t2 = Mul(t1, x2) : float32"]
    source = op.get_attr("_kernel_source")
    assert "return (float)(a < 0 ? 0 : a); }  // Relu" in source   # Relu's own template
    assert "__kernel void fused(" in source and "y0[i] = t2;" in source


@needs_gpu
def test_a_signature_compiles_once_and_steps_drop_ops():
    from minitf_opencl_gpu.kernels import fusion
    a = np.arange(40, dtype=np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.device("/gpu:0"):
            y = x
            for _ in range(20):
                y = y + x
    with tf.Session(graph=graph, config=JIT_ON) as sess:
        sess.run(y, {x: a})
        compiled = len(fusion._kernels)
        for size in (40, 41, 400):
            np.testing.assert_array_equal(sess.run(y, {x: np.arange(size, dtype=np.float32)}),
                                          21 * np.arange(size, dtype=np.float32))
        assert len(fusion._kernels) == compiled   # same signature, whatever the size
    fused_types = traced_run(JIT_ON, y, {x: a}, graph)[1]
    plain_types = traced_run(JIT_OFF, y, {x: a}, graph)[1]
    assert fused_types.count("_FusedElementwise") == 1 and "Add" not in fused_types
    assert plain_types.count("Add") == 20


@needs_gpu
def test_outputs_of_another_shape_than_the_cluster():
    a = RNG.uniform(-1, 1, (3,)).astype(np.float32)
    b = RNG.uniform(-1, 1, (2, 3)).astype(np.float32)

    def build(x, y):
        small = tf.exp(x) * 2.0                # [3], read outside
        return small, tf.tanh(small + y)       # [2, 3]
    compare(build, [a, b])


@needs_gpu
def test_incompatible_shapes_fail_as_unfused():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None])
        y = tf.placeholder(tf.float32, [None])
        with tf.device("/gpu:0"):
            z = tf.exp(x + y) * 2.0
    with tf.Session(graph=graph, config=JIT_ON) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
            sess.run(z, {x: np.ones(3, np.float32), y: np.ones(4, np.float32)})


@needs_gpu
def test_fused_steps_replay_in_the_compiled_step():
    """Plain runs (no trace): the OpenCL device records a fused step's launches — the
    2-D bias grid, the reduction kernels — and replays them for later feeds."""
    rng = np.random.RandomState(3)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 30])
        b = tf.placeholder(tf.float32, [30])
        with tf.device("/gpu:0"):
            z = tf.nn.bias_add(x * 2.0, b)
            loss = tf.reduce_mean(tf.square(tf.tanh(z) - 0.5)) + tf.nn.l2_loss(z) * 0.01
            rows = tf.reduce_max(tf.exp(z) * 0.1, axis=1)
            grad_b = tf.gradients(loss, b)[0]
    feeds = [{x: rng.randn(n, 30).astype(np.float32), b: rng.randn(30).astype(np.float32)}
             for n in (16, 16, 40, 16, 40)]
    results = {}
    for name, config in (("fused", JIT_ON), ("plain", JIT_OFF)):
        with tf.Session(graph=graph, config=config) as sess:
            results[name] = [sess.run([loss, rows, grad_b], feed) for feed in feeds]
    for fused, plain in zip(results["fused"], results["plain"]):
        assert_same(fused, plain)


@needs_gpu
def test_mlp_gradients_equal_the_unfused_step():
    rng = np.random.RandomState(0)
    images = rng.rand(32, 20).astype(np.float32)
    labels = rng.randint(0, 5, 32).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 20])
        y = tf.placeholder(tf.int64, [None])
        with tf.device("/gpu:0"):
            w1 = tf.constant(rng.randn(20, 16).astype(np.float32) * 0.3)
            b1 = tf.constant(rng.randn(16).astype(np.float32) * 0.1)
            w2 = tf.constant(rng.randn(16, 5).astype(np.float32) * 0.3)
            hidden = tf.nn.sigmoid(tf.nn.relu(tf.matmul(x, w1) + b1) * 1.5)
            logits = tf.tanh(tf.matmul(hidden, w2)) * 4.0
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            grads = tf.gradients(loss, [w1, b1, w2])
    feed = {x: images, y: labels}
    fused, fused_types = traced_run(JIT_ON, [loss] + grads, feed, graph)
    plain, plain_types = traced_run(JIT_OFF, [loss] + grads, feed, graph)
    assert_same(fused, plain)
    assert "_FusedElementwise" in fused_types and len(fused_types) < len(plain_types)
    assert "SigmoidGrad" not in fused_types and "ReluGrad" not in fused_types
