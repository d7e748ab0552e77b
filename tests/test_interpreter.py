"""The reference interpreter (minitf/runtime/executors/interpreter.py).

``run_plan(plan, feeds)`` is the specification every other executor is held
to: it must compute what the generated step computes (the op suites check
that on every step, see ``conftest.interpreter_oracle``), free each value
after its last reader, name the op when a kernel fails, be what
``ConfigProto.experimental.executor_type = "INTERPRETER"`` selects, and follow
the step protocol ``step(feeds, *, deadline=None, trace=None)`` that every
executor kind follows.
"""

import time
import weakref

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.executors import interpreter
from minitf.runtime.executors.control_flow import ControlFlowStep
from minitf.runtime.executors.interpreter import InterpreterStep, run_plan
from minitf.runtime.executors.multi_device import MultiDeviceStep
from minitf.runtime.executors.parallel import ParallelStep
from minitf.runtime.executors.plan import build_plan
from minitf.runtime.kernel_context import KernelContext
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.resources import ResourceManager

INTERPRETER = tf.ConfigProto(experimental=tf.ConfigProto.Experimental(executor_type="INTERPRETER"))
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


# ---- same values as the generated step --------------------------------------------------
def _train_mlp(config, steps=5):
    """Losses and final weights of a small MLP trained for ``steps`` steps under ``config``."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(42)
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        labels = tf.placeholder(tf.int32, [None], name="labels")
        hidden = tf.layers.dense(x, 64, activation=tf.nn.relu, name="hidden")  # 32x64: forwarded
        logits = tf.layers.dense(hidden, 3, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        rng = np.random.RandomState(0)
        batch = {x: rng.standard_normal((32, 16)).astype(np.float32),
                 labels: rng.randint(0, 3, size=32).astype(np.int32)}
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train_op], batch)[0] for _ in range(steps)]
            weights = sess.run(tf.trainable_variables())
    return losses, weights


def test_training_an_mlp_gives_the_same_values_as_the_generated_step():
    losses, weights = _train_mlp(tf.ConfigProto())
    reference_losses, reference_weights = _train_mlp(INTERPRETER)
    assert losses == reference_losses          # exactly: same kernels, same order
    assert losses[-1] < losses[0]              # and it did train
    assert len(weights) == len(reference_weights) == 4
    for value, reference in zip(weights, reference_weights):
        assert value.dtype == reference.dtype
        np.testing.assert_array_equal(value, reference)


# ---- values are freed after their last reader --------------------------------------------
def test_a_value_is_freed_right_after_its_last_reader():
    """``big`` is read by ``a`` only: while ``b`` runs, nothing holds it any more."""
    x = tf.placeholder(tf.float32, [1000], name="x")
    big = tf.multiply(x, 2.0, name="big")
    a = tf.add(big, 1.0, name="a")           # the last reader of big
    b = tf.multiply(a, 3.0, name="b")
    c = tf.add(b, 1.0, name="c")
    alive = {}                               # op name -> which outputs were alive when it ran
    outputs = {}                             # op name -> weakref to its output

    def spying(op, fn):
        def kernel(ctx, *inputs, **attrs):
            alive[op.name] = {name for name, ref in outputs.items() if ref() is not None}
            result = fn(ctx, *inputs, **attrs)
            outputs[op.name] = weakref.ref(result)
            return result
        return kernel

    plan = _plan([c], [x], kernel_fn=spying)
    (value,) = run_plan(plan, {x: np.ones(1000, np.float32)})
    np.testing.assert_array_equal(value, np.full(1000, 10.0, np.float32))
    assert "big" in alive["a"]                # a reads it
    assert "big" not in alive["b"]            # freed after a, its last reader
    assert "a" not in alive["c"]              # and a after b
    assert "b" in alive["c"]


def test_fetched_and_fed_values_are_not_freed_early():
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.add(x, 1.0, name="y")
    z = tf.multiply(y, 2.0, name="z")        # y's last reader, but y is fetched too
    plan = _plan([y, z, x], [x])
    y_value, z_value, x_value = run_plan(plan, {x: np.arange(3, dtype=np.float32)})
    np.testing.assert_array_equal(y_value, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(z_value, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x_value, [0.0, 1.0, 2.0])


def _plan(fetches, feeds, kernel_fn=lambda op, fn: fn):
    """The ExecutorPlan of the default graph's ops on /cpu:0 (kernels through ``kernel_fn``)."""
    registry = get_registry()
    device = registry.device_factory("CPU").create(0)
    resources = ResourceManager()
    fed_ops = {t.op for t in feeds}
    ops = [op for op in tf.get_default_graph().get_operations() if op not in fed_ops]

    class Kernel:
        def __init__(self, op):
            self.fn = kernel_fn(op, registry.kernel(op.type, "CPU", kernel_dtypes(op), node=op).fn)
    return build_plan(ops, list(feeds), list(fetches), kernel_for=Kernel,
                      ctx_for=lambda op: KernelContext(op, device, resources))


# ---- errors name the op --------------------------------------------------------------------
@pytest.mark.parametrize("build, feed, error", [
    (lambda x: tf.gather(tf.constant([1.0, 2.0]), tf.cast(x, tf.int32), name="culprit"),
     np.array([7.0], np.float32), tf.errors.InvalidArgumentError),    # a kernel's own check
    (lambda x: tf.matmul(tf.reshape(x, [1, -1]), tf.ones([2, 2]), name="culprit"),
     np.ones(3, np.float32), tf.errors.InvalidArgumentError),         # NumPy's ValueError
], ids=["op-error", "numpy-error"])
def test_a_failing_kernel_names_its_op_as_the_generated_step_does(build, feed, error):
    x = tf.placeholder(tf.float32, [None], name="x")
    y = build(x)
    messages = []
    for config in (INTERPRETER, tf.ConfigProto()):
        with tf.Session(config=config) as sess:
            with pytest.raises(error, match=r"\[\[node culprit \(defined at .*test_interpreter"
                                            r"\.py:\d+\) \]\]") as info:
                sess.run(y, {x: feed})
        assert info.value.op is y.op       # the user's op, not the step graph's copy
        messages.append(info.value.message)
    assert messages[0] == messages[1]


# ---- the ConfigProto switch --------------------------------------------------------------
@pytest.fixture
def interpreted(monkeypatch):
    """Counts the steps that ran through ``run_plan``."""
    calls = []

    def counting_run_plan(plan, feeds, records=None):
        calls.append(plan)
        return run_plan(plan, feeds, records)
    monkeypatch.setattr(interpreter, "run_plan", counting_run_plan)
    return calls


def test_the_config_switch_selects_the_interpreter(interpreted):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.nn.relu(x * 2.0)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [-1.0, 1.0]}), [0.0, 2.0])
    assert interpreted == []
    with tf.Session(config=INTERPRETER) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [-1.0, 1.0]}), [0.0, 2.0])
        assert len(interpreted) == 1
        metadata = tf.RunMetadata()
        sess.run(y, {x: [3.0, -3.0]}, options=FULL, run_metadata=metadata)
        assert len(interpreted) == 2
    (device,) = metadata.step_stats.dev_stats
    assert {"mul", "Relu"} <= {n.node_name for n in device.node_stats}


def test_the_interpreter_honours_the_deadline():
    queue = tf.FIFOQueue(2, tf.float32)
    with tf.Session(config=INTERPRETER) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(queue.dequeue(), options=tf.RunOptions(timeout_in_ms=100))
        assert time.monotonic() - start < 10


# ---- one step protocol, every executor kind ----------------------------------------------
def _mlp_step():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        h = tf.nn.relu(tf.matmul(x, tf.constant(np.eye(3, dtype=np.float32))), name="h")
    return x, tf.reduce_sum(h, name="out")


def _cond_step():
    x, out = _mlp_step()
    return x, tf.cond(out > 0, lambda: out * 2.0, lambda: out, name="branch")


def _two_device_step():
    x, out = _mlp_step()
    with tf.device("/cpu:1"):
        return x, tf.add(out, 1.0, name="remote")


def _is_generated(step):
    return callable(step) and hasattr(step, "source")


# (name, config, graph, which step the session must make, its value, devices traced)
STEP_KINDS = [
    ("generated", tf.ConfigProto(), _mlp_step, _is_generated, 6.0, 1),
    ("interpreter", INTERPRETER, _mlp_step, lambda s: isinstance(s, InterpreterStep), 6.0, 1),
    ("parallel", tf.ConfigProto(inter_op_parallelism_threads=2), _mlp_step,
     lambda s: isinstance(s, ParallelStep), 6.0, 1),
    ("control-flow", tf.ConfigProto(), _cond_step,
     lambda s: isinstance(s, ControlFlowStep), 12.0, 1),
    ("multi-device", tf.ConfigProto(device_count={"CPU": 2}), _two_device_step,
     lambda s: isinstance(s, MultiDeviceStep), 7.0, 2),
]


@pytest.mark.parametrize("config, build, is_kind, expected, num_devices",
                         [k[1:] for k in STEP_KINDS], ids=[k[0] for k in STEP_KINDS])
def test_every_step_kind_follows_the_step_protocol(made_steps, config, build, is_kind, expected,
                                                   num_devices):
    x, y = build()
    feeds = {x: np.array([[1.0, -1.0, 2.0], [3.0, 0.0, -4.0]], np.float32)}
    with tf.Session(config=config) as sess:
        sess.run(y, feeds, options=FULL, run_metadata=tf.RunMetadata())  # a traced step
        step = made_steps[-1]
        assert is_kind(step), step
        trace = {}
        values = step(feeds, deadline=time.monotonic() + 60, trace=trace)
        assert isinstance(values, tuple) and values == (expected,)
        assert step(feeds) == (expected,)                  # deadline and trace are optional
    assert len(trace) == num_devices, trace
    for device, records in trace.items():
        assert device.startswith("/job:localhost/replica:0/task:0/device:")
        for op, start, end in records:
            assert start <= end and op.type
    traced = {op.name for records in trace.values() for op, _, _ in records}
    assert {"h", "out"} <= traced
