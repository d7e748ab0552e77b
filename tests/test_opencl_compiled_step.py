"""The compiled GPU step: replayed launches give exactly what the generated step gives.

Each graph runs several steps twice — compiled (the OpenCL device's
:class:`~minitf_opencl_gpu.compiled_step.CompiledStep`) and with
``MINITF_OPENCL_COMPILED_STEP=0`` (the generated step) — and the results
must be identical, bit for bit: the same kernels run in the same order.
The tests also check that the replay really runs (its statistics), that
its liveness plan reuses buffers, that ops which must stay live (random
ops, a label check on the host) do, and that errors still name the op.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry

pytestmark = pytest.mark.skipif(get_registry().device_factory("GPU") is None,
                                reason="OpenCL GPU tests SKIPPED: no OpenCL device")

if get_registry().device_factory("GPU") is not None:
    from minitf_opencl_gpu import compiled_step


@pytest.fixture
def compiled_steps(monkeypatch):
    """The CompiledSteps made while the test runs."""
    made = []
    real = compiled_step.compile_partition

    def keeping(device, plan, compile_step):
        step = real(device, plan, compile_step)
        made.append(step)
        return step
    monkeypatch.setattr(compiled_step, "compile_partition", keeping)
    return made


def replays_of(steps):
    return [r for s in steps if s is not None for r in s.replays.values()
            if isinstance(r, compiled_step.Replay)]


def run_both(monkeypatch, build, feeds_per_run):
    """Results of ``build()``'s fetches over the runs, compiled and not."""
    results = []
    for compiled in (True, False):
        if compiled:
            monkeypatch.delenv(compiled_step.ENV_VAR, raising=False)
        else:
            monkeypatch.setenv(compiled_step.ENV_VAR, "0")
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(3)
            with tf.device("/gpu:0"):
                fetches, placeholders, init = build()
            with tf.Session() as sess:
                if init is not None:
                    sess.run(init)
                results.append([sess.run(fetches, dict(zip(placeholders, feeds)))
                                for feeds in feeds_per_run])
    return results


def assert_identical(compiled, generated):
    for run_c, run_g in zip(compiled, generated):
        for c, g in zip(run_c, run_g):
            if c is None:
                assert g is None
                continue
            np.testing.assert_array_equal(np.asarray(c), np.asarray(g))


def mlp():
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [None, 20])
    labels = tf.placeholder(tf.int64, [None])
    w1 = tf.Variable(rng.randn(20, 16).astype(np.float32) * 0.3)
    b1 = tf.Variable(tf.zeros([16]))
    w2 = tf.Variable(rng.randn(16, 5).astype(np.float32) * 0.3)
    b2 = tf.Variable(tf.zeros([5]))
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return [loss, train, w1, b2], [x, labels], tf.global_variables_initializer()


def mlp_feeds(runs, batch=8, seed=1):
    rng = np.random.RandomState(seed)
    return [(rng.rand(batch, 20).astype(np.float32), rng.randint(0, 5, batch))
            for _ in range(runs)]


def test_mlp_training_steps_equal_the_generated_step(monkeypatch, compiled_steps):
    compiled, generated = run_both(monkeypatch, mlp, mlp_feeds(5))
    assert_identical(compiled, generated)
    assert compiled[-1][0] < compiled[0][0]        # it trains
    replays = replays_of(compiled_steps)
    assert replays, [s.replays for s in compiled_steps if s is not None]
    stats = replays[0].stats
    assert stats["launches"] > 10 and stats["rebound"] > 0
    # The int64 labels are checked on the host when narrowed: that op runs live.
    assert stats["live_ops"] == 1


def test_the_liveness_plan_reuses_buffers(monkeypatch, compiled_steps):
    run_both(monkeypatch, mlp, mlp_feeds(2))
    stats = replays_of(compiled_steps)[0].stats
    assert stats["buffers"] < stats["values"], stats


def test_assign_buffers_reuses_after_the_last_reader():
    value = compiled_step.Value
    values = {0: value("step", 64, None, start=0, end=1),     # read last by action 1
              1: value("step", 64, None, start=1, end=2),     # overlaps 0 at action 1
              2: value("step", 32, None, start=2, end=3),     # 0 is free: reused
              3: value("step", 128, None, start=3, end=4)}    # too large for a free one
    assignment, sizes = compiled_step.assign_buffers(values)
    assert assignment[0] != assignment[1]
    assert assignment[2] == assignment[0]
    assert sizes == [64, 64, 128] and assignment[3] == 2


def test_broadcasting_and_reductions(monkeypatch, compiled_steps):
    def build():
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.float32, [5])
        z = x * y + 1.0
        return ([z, tf.reduce_sum(z, 0), tf.reduce_mean(z), tf.reduce_max(z, 1),
                 tf.nn.softmax(z), tf.shape(z)], [x, y], None)
    rng = np.random.RandomState(2)
    feeds = [(rng.randn(4, 5).astype(np.float32), rng.randn(5).astype(np.float32))
             for _ in range(3)]
    feeds.append((rng.randn(7, 5).astype(np.float32), rng.randn(5).astype(np.float32)))
    compiled, generated = run_both(monkeypatch, build, feeds + feeds[:1])
    assert_identical(compiled, generated)
    np.testing.assert_allclose(compiled[1][0], feeds[1][0] * feeds[1][1] + 1, rtol=1e-6)
    assert list(compiled[3][5]) == [7, 5]
    # Two feed shapes, two recordings.
    assert len(replays_of(compiled_steps)) == 2


def test_random_ops_stay_live(monkeypatch, compiled_steps):
    def build():
        x = tf.placeholder(tf.float32, [3, 4])
        return [x + tf.random_uniform([3, 4], seed=5)], [x], None
    feeds = [(np.zeros((3, 4), np.float32),)] * 4
    compiled, generated = run_both(monkeypatch, build, feeds)
    assert_identical(compiled, generated)
    assert not np.array_equal(compiled[1][0], compiled[2][0])   # new numbers each run
    stats = replays_of(compiled_steps)[0].stats
    assert stats["live_ops"] >= 1


def test_an_error_in_a_replayed_step_names_the_op(monkeypatch, compiled_steps):
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        fetches, (x, labels), init = mlp()
    feeds = mlp_feeds(1)[0]
    with graph.as_default(), tf.Session() as sess:
        sess.run(init)
        sess.run(fetches[0], {x: feeds[0], labels: feeds[1]})    # recorded
        sess.run(fetches[0], {x: feeds[0], labels: feeds[1]})    # replayed
        bad = feeds[1].copy()
        bad[0] = 2 ** 40
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="(?s)Received a label value of 1099511627776.*"
                                 "SparseSoftmaxCrossEntropyWithLogits"):
            sess.run(fetches[0], {x: feeds[0], labels: bad})
    assert replays_of(compiled_steps)


def test_a_launch_failure_names_the_op(monkeypatch, compiled_steps):
    import pyopencl as cl

    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [4])
        y = tf.exp(x, name="the_exp") * 2.0
    with graph.as_default(), tf.Session() as sess:
        sess.run(y, {x: np.ones(4, np.float32)})     # recorded

        def failing(*args, **kwargs):
            raise cl.LogicError("clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES")
        monkeypatch.setattr(cl, "enqueue_nd_range_kernel", failing)
        with pytest.raises(tf.errors.OpError, match="the_exp"):
            sess.run(y, {x: np.ones(4, np.float32)})


def test_turned_off_keeps_the_generated_step(monkeypatch, compiled_steps):
    monkeypatch.setenv(compiled_step.ENV_VAR, "0")
    with tf.Graph().as_default(), tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [2])
        with tf.Session() as sess:
            assert list(sess.run(x + 1.0, {x: [1.0, 2.0]})) == [2.0, 3.0]
    assert compiled_steps and all(s is None for s in compiled_steps)


def test_a_run_with_a_deadline_takes_the_generated_step(monkeypatch, compiled_steps):
    """The generated step checks the deadline between ops; a replay could not."""
    calls = []
    real_call = compiled_step.Replay.__call__

    def counting(self, feeds):
        calls.append(1)
        return real_call(self, feeds)
    monkeypatch.setattr(compiled_step.Replay, "__call__", counting)
    with tf.Graph().as_default(), tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [3])
        y = tf.square(x) + 1.0
        with tf.Session() as sess:
            for _ in range(2):
                assert list(sess.run(y, {x: [1.0, 2.0, 3.0]})) == [2.0, 5.0, 10.0]
            assert len(calls) == 1          # recorded, then replayed
            options = tf.RunOptions(timeout_in_ms=60000)
            assert list(sess.run(y, {x: [0.0, 1.0, 2.0]}, options=options)) == [1.0, 2.0, 5.0]
            assert len(calls) == 1
