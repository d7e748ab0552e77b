"""Gradient accumulators: ``tf.ConditionalAccumulator`` and ``tf.SparseConditionalAccumulator``.

Expected values are computed independently with NumPy (or by hand) from the
documented semantics of TF's kernels: stale gradients (``local_step`` below
the global step) are dropped, ``take_grad`` returns the mean over the
gradients counted (per row for sparse gradients) and increments the global
step.  Blocking is tested with real threads and short waits; every test that
could block has a ``pytest.mark.timeout``.
"""

import logging
import time

import numpy as np
import pytest

import minitf as tf
from tests.threaded import start
from minitf.registry import get_registry

SHORT = tf.RunOptions(timeout_in_ms=100)


def run_all(sess, ops):
    for op in ops:
        sess.run(op)


# ---- graph construction -----------------------------------------------------------------
def test_dense_ops_names_and_static_shapes():
    with tf.name_scope("sync"):
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2, 3])
    assert acc.name == "conditional_accumulator"
    assert acc.accumulator_ref.op.name == "sync/conditional_accumulator"
    assert acc.accumulator_ref.op.type == "ResourceConditionalAccumulator"
    assert acc.accumulator_ref.dtype.name == "resource" and acc.dtype == tf.float32
    apply = acc.apply_grad(np.zeros((2, 3), np.float32), local_step=tf.constant(3))
    assert apply.type == "ResourceAccumulatorApplyGradient"
    assert apply.inputs[1].dtype == tf.int64  # local_step is cast, as in TF
    take = acc.take_grad(2)
    assert take.op.type == "ResourceAccumulatorTakeGradient"
    assert take.dtype == tf.float32 and take.shape.as_list() == [2, 3]
    count = acc.num_accumulated()
    assert count.op.type == "ResourceAccumulatorNumAccumulated"
    assert count.op.name == "conditional_accumulator_NumAccumulated" and count.dtype == tf.int32
    step = acc.set_global_step(5)
    assert step.type == "ResourceAccumulatorSetGlobalStep" and step.inputs[1].dtype == tf.int64


def test_sparse_ops_and_names():
    acc = tf.SparseConditionalAccumulator(tf.float64, shape=[4, 2])
    assert acc.name == "sparse_conditional_accumulator"
    assert acc.accumulator_ref.op.type == "SparseConditionalAccumulator"
    apply = acc.apply_grad([1], [[1.0, 2.0]], grad_shape=[4, 2])
    assert apply.type == "SparseAccumulatorApplyGradient"
    assert [t.dtype for t in apply.inputs[1:]] == [tf.int64, tf.int64, tf.float64, tf.int64]
    assert apply.get_attr("has_known_shape") is True
    assert acc.apply_grad([1], [[1.0, 2.0]]).get_attr("has_known_shape") is False
    indices, values, shape = acc.take_grad(1)
    assert indices.op.type == "SparseAccumulatorTakeGradient"
    assert (indices.dtype, values.dtype, shape.dtype) == (tf.int64, tf.float64, tf.int64)
    assert acc.num_accumulated().op.type == "AccumulatorNumAccumulated"
    assert acc.set_global_step(1).type == "AccumulatorSetGlobalStep"


@pytest.mark.parametrize("make", [tf.ConditionalAccumulator, tf.SparseConditionalAccumulator])
def test_only_float_dtypes_and_known_reductions(make):
    for dtype in (tf.float16, tf.float32, tf.float64):
        assert make(dtype).dtype == dtype
    for dtype in (tf.int32, tf.int64, tf.bool, tf.string):
        with pytest.raises(TypeError, match="not in list of allowed values"):
            make(dtype)
    with pytest.raises(ValueError, match="reduction_type"):
        make(tf.float32, reduction_type="MAX")


def test_apply_grad_checks_the_static_shape():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad(np.zeros(3, np.float32))
    acc.apply_grad(tf.placeholder(tf.float32, [None]))  # compatible: checked when it runs


@pytest.mark.parametrize("op_type", [
    "ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
    "ResourceAccumulatorTakeGradient", "ResourceAccumulatorNumAccumulated",
    "ResourceAccumulatorSetGlobalStep", "SparseConditionalAccumulator",
    "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient",
    "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep"])
def test_the_ops_are_stateful_and_not_differentiable(op_type):
    registry = get_registry()
    assert registry.op_def(op_type).stateful
    assert registry.gradient(op_type) is None


# ---- dense: mean, sum, staleness, global step ---------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_take_grad_returns_the_mean(sess, dtype):
    grads = np.random.default_rng(0).normal(size=(3, 2, 2)).astype(dtype.as_numpy_dtype)
    acc = tf.ConditionalAccumulator(dtype, shape=[2, 2])
    run_all(sess, [acc.apply_grad(g) for g in grads])
    assert sess.run(acc.num_accumulated()) == 3
    taken = sess.run(acc.take_grad(3))
    assert taken.dtype == dtype.as_numpy_dtype
    tolerance = 1e-2 if dtype == tf.float16 else 1e-6
    np.testing.assert_allclose(taken, grads.astype(np.float64).mean(axis=0), rtol=tolerance)
    assert sess.run(acc.num_accumulated()) == 0


def test_take_grad_with_sum_reduction(sess):
    grads = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    acc = tf.ConditionalAccumulator(tf.float32, shape=[3], reduction_type="SUM")
    run_all(sess, [acc.apply_grad(g) for g in grads])
    np.testing.assert_allclose(sess.run(acc.take_grad(4)), grads.sum(axis=0), rtol=1e-6)


def test_take_grad_averages_every_gradient_accumulated_beyond_num_required(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    run_all(sess, [acc.apply_grad(v) for v in (1.0, 2.0, 6.0)])
    assert sess.run(acc.take_grad(2)) == 3.0  # (1 + 2 + 6) / 3: the counter, not num_required


def test_each_take_starts_a_new_sum(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    step = tf.placeholder(tf.int64, [])
    grad = tf.placeholder(tf.float32, [2])
    apply, take = acc.apply_grad(grad, local_step=step), acc.take_grad(1)
    sess.run(apply, {grad: [1.0, 1.0], step: 0})
    np.testing.assert_array_equal(sess.run(take), [1.0, 1.0])
    sess.run(apply, {grad: [5.0, 7.0], step: 1})
    np.testing.assert_array_equal(sess.run(take), [5.0, 7.0])


def test_stale_gradients_are_dropped_and_not_counted(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    step = tf.placeholder(tf.int32, [])  # any integer type: cast to int64
    grad = tf.placeholder(tf.float32, [])
    apply, take, count = acc.apply_grad(grad, local_step=step), acc.take_grad(1), \
        acc.num_accumulated()
    sess.run(apply, {grad: 4.0, step: 0})
    assert sess.run(take) == 4.0  # the global step is now 1
    sess.run(apply, {grad: 100.0, step: 0})  # stale
    assert sess.run(count) == 0
    sess.run(apply, {grad: 2.0, step: 1})
    sess.run(apply, {grad: 6.0, step: 7})  # ahead of the global step: counted
    sess.run(apply, {grad: 100.0, step: 0})
    assert sess.run(count) == 2
    assert sess.run(take) == 4.0  # (2 + 6) / 2; the global step is now 2


def test_a_stale_gradient_of_the_wrong_shape_is_dropped_without_error(sess):
    acc = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32)
    step = tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(grad, local_step=step)
    sess.run(acc.set_global_step(3))
    sess.run(apply, {grad: np.ones(5), step: 2})
    assert sess.run(acc.num_accumulated()) == 0


def test_set_global_step(sess, caplog):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    new_step = tf.placeholder(tf.int64, [])
    local_step = tf.placeholder(tf.int64, [])
    set_step = acc.set_global_step(new_step)
    apply, count = acc.apply_grad(1.0, local_step=local_step), acc.num_accumulated()
    sess.run(set_step, {new_step: 5})
    sess.run(apply, {local_step: 4})
    assert sess.run(count) == 0
    sess.run(apply, {local_step: 5})
    assert sess.run(count) == 1
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        sess.run(set_step, {new_step: 2})  # lower: a warning, but it is set
    assert "Attempt to set current_global_step_ to smaller value" in caplog.text
    sess.run(apply, {local_step: 2})
    assert sess.run(count) == 2


def test_set_global_step_from_a_variable(sess):
    global_step = tf.Variable(3, name="global_step")  # int32, cast to int64
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    step = tf.placeholder(tf.int64, [])
    sess.run(global_step.initializer)
    sess.run(acc.set_global_step(global_step))
    apply = acc.apply_grad(1.0, local_step=step)
    sess.run(apply, {step: 2})
    sess.run(apply, {step: 3})
    assert sess.run(acc.num_accumulated()) == 1


def test_take_grad_increments_the_global_step(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    step = tf.placeholder(tf.int64, [])
    apply, take, count = acc.apply_grad(1.0, local_step=step), acc.take_grad(1), \
        acc.num_accumulated()
    for global_step in range(3):
        sess.run(apply, {step: global_step})
        sess.run(take)
    sess.run(apply, {step: 2})  # the global step is 3
    assert sess.run(count) == 0
    sess.run(apply, {step: 3})
    assert sess.run(count) == 1


# ---- run-time errors ---------------------------------------------------------------------
@pytest.mark.parametrize("num_required", [0, -2])
def test_num_required_below_one_is_invalid(sess, num_required):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = acc.take_grad(num_required)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="num_required must be positive, but was %d" % num_required) as info:
        sess.run(take)
    assert info.value.op is take.op


def test_a_gradient_of_the_wrong_shape_is_invalid_at_run_time(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2, None])
    grad = tf.placeholder(tf.float32)
    apply = acc.apply_grad(grad)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape mismatch: expected \[2,\?\], got \[3,1\]") as info:
        sess.run(apply, {grad: np.zeros((3, 1))})
    assert info.value.op is apply
    sess.run(apply, {grad: np.ones((2, 4))})
    # Later gradients must have the shape of the first one in the sum.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape mismatch: expected \[2,4\], got \[2,5\]"):
        sess.run(apply, {grad: np.ones((2, 5))})
    assert sess.run(acc.num_accumulated()) == 1


def test_an_unknown_shape_is_fixed_by_the_first_gradient_of_each_sum(sess):
    acc = tf.ConditionalAccumulator(tf.float32)
    grad = tf.placeholder(tf.float32)
    apply, take = acc.apply_grad(grad), acc.take_grad(1)
    assert take.shape.ndims is None
    sess.run(apply, {grad: [1.0, 2.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
        sess.run(apply, {grad: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(sess.run(take), [1.0, 2.0])
    sess.run(acc.apply_grad(np.full((2, 2), 3.0, np.float32), local_step=1))  # a new sum
    np.testing.assert_array_equal(sess.run(take), np.full((2, 2), 3.0))


# ---- blocking, deadlines, session close ----------------------------------------------------
@pytest.mark.timeout(10)
def test_blocked_take_grad_wakes_when_another_thread_applies(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    grad = tf.placeholder(tf.float32, [])
    take, apply = acc.take_grad(2), acc.apply_grad(grad)
    thread, result = start(sess.run, take)
    sess.run(apply, {grad: 1.0})
    time.sleep(0.2)
    assert thread.is_alive()  # one of two: still waiting
    sess.run(apply, {grad: 5.0})
    thread.join(5)
    assert result == {"value": 3.0}
    assert sess.run(acc.num_accumulated()) == 0


@pytest.mark.timeout(10)
def test_take_grad_times_out_with_the_run_deadline(sess):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    sess.run(acc.apply_grad(2.0))
    take = acc.take_grad(2)
    began = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError,
                       match="Timed out waiting for notification") as info:
        sess.run(take, options=SHORT)
    assert 0.09 <= time.monotonic() - began < 2.0
    assert info.value.op is take.op
    # Nothing was taken: the gradient is still counted, the global step still 0.
    sess.run(acc.apply_grad(4.0, local_step=0))
    assert sess.run(take) == 3.0


@pytest.mark.timeout(10)
def test_take_grad_times_out_with_the_session_default():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = acc.take_grad(1)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(take)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("make", [
    lambda: tf.ConditionalAccumulator(tf.float32, shape=[]).take_grad(1),
    lambda: tf.SparseConditionalAccumulator(tf.float32).take_indexed_slices_grad(1).values])
def test_closing_the_session_cancels_a_blocked_take_grad(make):
    take = make()
    sess = tf.Session()
    thread, result = start(sess.run, take)
    time.sleep(0.1)
    sess.close()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(result["error"], tf.errors.CancelledError)
    assert "TakeGrad operation was cancelled" in result["error"].message


# ---- sparse --------------------------------------------------------------------------------
def dense_of(indices, values, rows):
    """The dense tensor an IndexedSlices stands for (repeated rows add up)."""
    dense = np.zeros((rows,) + np.shape(values)[1:])
    np.add.at(dense, np.asarray(indices), np.asarray(values, np.float64))
    return dense


SPARSE_GRADS = [  # (indices, values): unsorted, with a repeated index in the first
    ([3, 0, 3], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
    ([1, 3], [[7.0, 8.0], [9.0, 10.0]]),
    ([3], [[-2.0, 0.5]]),
]


def expected_sparse(reduction):
    """Rows summed over the gradients; MEAN divides a row by how many gradients had it."""
    total = sum(dense_of(i, v, 5) for i, v in SPARSE_GRADS)
    having = sum(np.isin(np.arange(5), i).astype(float) for i, _ in SPARSE_GRADS)
    rows = np.flatnonzero(having)
    if reduction == "SUM":
        return rows, total[rows]
    return rows, total[rows] / having[rows, None]


@pytest.mark.parametrize("reduction", ["MEAN", "SUM"])
def test_sparse_rows_add_up_by_index_and_come_out_sorted(sess, reduction):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 2], reduction_type=reduction)
    run_all(sess, [acc.apply_grad(i, v, grad_shape=[5, 2]) for i, v in SPARSE_GRADS])
    assert sess.run(acc.num_accumulated()) == 3
    taken = sess.run(acc.take_grad(3))
    rows, values = expected_sparse(reduction)
    np.testing.assert_array_equal(taken.indices, rows)  # [0, 1, 3]
    np.testing.assert_allclose(taken.values, values, rtol=1e-6)
    np.testing.assert_array_equal(taken.shape, [5, 2])
    assert taken.values.dtype == np.float32 and taken.indices.dtype == np.int64


def test_sparse_mean_by_hand(sess):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 1])
    sess.run(acc.apply_grad([2, 0], [[4.0], [1.0]]))
    sess.run(acc.apply_grad([2], [[8.0]]))
    taken = sess.run(acc.take_grad(2))
    np.testing.assert_array_equal(taken.indices, [0, 2])
    np.testing.assert_array_equal(taken.values, [[1.0], [6.0]])  # 1 / 1 and (4 + 8) / 2


def test_indexed_slices_round_trip(sess):
    acc = tf.SparseConditionalAccumulator(tf.float64, shape=[6, 3])
    grad = tf.IndexedSlices(values=tf.constant(np.arange(6.0).reshape(2, 3)),
                            indices=tf.constant([4, 1]), dense_shape=tf.constant([6, 3]))
    assert grad.dtype == tf.float64 and grad.op is grad.values.op
    sess.run(acc.apply_indexed_slices_grad(grad))
    taken = acc.take_indexed_slices_grad(1)
    assert isinstance(taken, tf.IndexedSlices) and taken.dtype == tf.float64
    indices, values, dense_shape = sess.run([taken.indices, taken.values, taken.dense_shape])
    np.testing.assert_array_equal(indices, [1, 4])
    np.testing.assert_array_equal(values, [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]])
    np.testing.assert_array_equal(dense_shape, [6, 3])


@pytest.mark.parametrize("shape", [None, (), [None, 2]])
def test_sparse_dense_shape_of_an_unknown_first_dimension_is_minus_one(sess, shape):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=shape)
    sess.run(acc.apply_grad([7], [[1.0, 2.0]]))
    np.testing.assert_array_equal(sess.run(acc.take_grad(1)).shape, [-1, 2])


def test_sparse_stale_gradients_and_global_step(sess):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4])
    step = tf.placeholder(tf.int64, [])
    apply, count = acc.apply_grad([1], [5.0], local_step=step), acc.num_accumulated()
    sess.run(apply, {step: 0})
    sess.run(acc.take_grad(1))  # the global step is now 1
    sess.run(apply, {step: 0})
    assert sess.run(count) == 0
    sess.run(acc.set_global_step(4))
    sess.run(apply, {step: 3})
    sess.run(apply, {step: 4})
    assert sess.run(count) == 1


@pytest.mark.parametrize("indices, values, grad_shape, message", [
    ([[0]], [[1.0, 2.0]], None, "Input indices should be vector"),
    ([0], 1.0, None, "Values cannot be 0-dimensional"),
    ([0, 1], [[1.0, 2.0]], None, "Expected 2 non-empty input values, got 1"),
    ([0], [[1.0, 2.0]], [4, 3], "expected shape dim 1 to be 2, got 3"),
    ([0], [[1.0, 2.0]], [4], "expected shape rank at least 2, got 1"),
    ([4], [[1.0, 2.0]], None, "index of slice 0 exceeded limits of shape; index is 4 exceeded 4"),
    ([0], [[1.0, 2.0, 3.0]], None, "expected values dim 1 to be 2, got 3"),
    ([0], [1.0], None, "expected values rank at least 2, got 1"),
])
def test_sparse_gradients_that_do_not_fit_are_invalid(sess, indices, values, grad_shape,
                                                      message):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    apply = acc.apply_grad(indices, values, grad_shape=grad_shape)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        sess.run(apply)
    assert info.value.op is apply
    assert sess.run(acc.num_accumulated()) == 0


def test_sparse_rows_must_match_the_rows_in_the_sum(sess):
    acc = tf.SparseConditionalAccumulator(tf.float32)
    sess.run(acc.apply_grad([0], [[1.0, 2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected values rank 2, got 3"):
        sess.run(acc.apply_grad([0], [[[1.0, 2.0]]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected values dim 1 to be 2"):
        sess.run(acc.apply_grad([0], [[1.0]]))
    assert sess.run(acc.num_accumulated()) == 1


# ---- shared_name -----------------------------------------------------------------------------
def test_accumulators_are_per_op_without_shared_name(sess):
    first = tf.ConditionalAccumulator(tf.float32, shape=[])
    second = tf.ConditionalAccumulator(tf.float32, shape=[])
    sess.run(first.apply_grad(1.0))
    assert sess.run([first.num_accumulated(), second.num_accumulated()]) == [1, 0]


def test_shared_name_gives_one_accumulator_in_a_session(sess):
    first = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="grad_accum")
    second = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="grad_accum")
    sess.run(first.apply_grad(1.0))
    sess.run(second.apply_grad(3.0))
    assert sess.run(first.take_grad(2)) == 2.0


def test_local_sessions_do_not_share_accumulators():
    # As TF's DirectSession: each local session has resources of its own.
    acc = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="grad_accum")
    with tf.Session() as first, tf.Session() as second:
        first.run(acc.apply_grad(1.0))
        assert second.run(acc.num_accumulated()) == 0


@pytest.fixture
def server():
    """A one-task server in this process (the distributed runtime's extra must be installed)."""
    pytest.importorskip("grpc", reason="the distributed runtime needs grpcio")
    pytest.importorskip("tensorboard.compat.proto.cluster_pb2",
                        reason="the distributed runtime needs TF's protos")
    local = tf.train.Server.create_local_server()
    yield local
    local.stop()


def _on_server(shared_name):
    """A graph with a dense accumulator: (graph, accumulator)."""
    graph = tf.Graph()
    with graph.as_default():
        return graph, tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name=shared_name)


@pytest.mark.timeout(60)
def test_shared_name_is_shared_by_graphs_and_sessions_of_one_server(server):
    graph_a, acc_a = _on_server("w/grad_accum")
    graph_b, acc_b = _on_server("w/grad_accum")
    graph_c, acc_c = _on_server("other")
    with graph_a.as_default():
        apply_a = acc_a.apply_grad([1.0, 2.0])
        take = acc_a.take_grad(2)
    with graph_b.as_default():
        apply_b, count_b = acc_b.apply_grad([3.0, 4.0]), acc_b.num_accumulated()
    with graph_c.as_default():
        count_c = acc_c.num_accumulated()
    with tf.Session(server.target, graph=graph_a) as sess:
        sess.run(apply_a)
    with tf.Session(server.target, graph=graph_b) as sess:
        sess.run(apply_b)
        assert sess.run(count_b) == 2  # outlives the first client session
    with tf.Session(server.target, graph=graph_c) as sess:
        assert sess.run(count_c) == 0
    with tf.Session(server.target, graph=graph_a) as sess:
        np.testing.assert_array_equal(sess.run(take), [2.0, 3.0])


@pytest.mark.timeout(60)
def test_a_take_on_one_client_wakes_on_an_apply_from_another(server):
    graph_a, acc_a = _on_server("grad_accum")
    graph_b, acc_b = _on_server("grad_accum")
    with graph_a.as_default():
        take = acc_a.take_grad(1)
    with graph_b.as_default():
        apply = acc_b.apply_grad([4.0, 6.0])
    with tf.Session(server.target, graph=graph_a) as taker, \
            tf.Session(server.target, graph=graph_b) as applier:
        thread, result = start(taker.run, take)
        time.sleep(0.2)
        assert thread.is_alive()
        applier.run(apply)
        thread.join(10)
    np.testing.assert_array_equal(result["value"], [4.0, 6.0])


@pytest.mark.timeout(60)
def test_session_reset_clears_the_accumulators(server):
    graph, acc = _on_server("grad_accum")
    with graph.as_default():
        apply, take, count = acc.apply_grad([1.0, 1.0]), acc.take_grad(1), acc.num_accumulated()
    with tf.Session(server.target, graph=graph) as sess:
        sess.run(apply)
        sess.run(take)  # the global step is now 1: a local step of 0 is stale
        sess.run(apply)
        assert sess.run(count) == 0
    tf.Session.reset(server.target)
    with tf.Session(server.target, graph=graph) as sess:
        sess.run(apply)  # a new accumulator, its global step 0 again
        assert sess.run(count) == 1
