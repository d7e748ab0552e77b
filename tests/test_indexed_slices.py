"""Sparse gradients as TF1 has them: ``tf.IndexedSlices``.

The gradient of ``tf.gather`` (and so of ``tf.nn.embedding_lookup``) along
axis 0 is an IndexedSlices of the rows read; contributions that are all
slices are concatenated, a mix with dense gradients is summed densely;
``tf.convert_to_tensor`` densifies (with TF's warnings); clipping keeps the
slices; ``Session.run`` returns an ``IndexedSlicesValue``; a ``tf.cond`` keeps
them; ``SyncReplicasOptimizer`` accumulates them in a
``SparseConditionalAccumulator``.  Expectations are NumPy sums of rows.
"""

import threading
import time
import warnings

import numpy as np
import pytest

import minitf as tf

W = np.arange(12.0, dtype=np.float32).reshape(4, 3)


def _densify(value, shape):
    """An IndexedSlicesValue as a dense array: its rows added up (np.add.at)."""
    dense = np.zeros(shape, value.values.dtype)
    np.add.at(dense, value.indices, value.values)
    return dense


def _gather_loss(params, ids):
    """``sum(gather(params, ids) * coefficients)``: row ``ids[i]``'s gradient is
    the coefficients of position i."""
    rows = tf.gather(params, ids)
    coefficients = np.arange(1.0, 1.0 + np.prod(rows.shape.as_list()),
                             dtype=np.float32).reshape(rows.shape.as_list())
    return tf.reduce_sum(rows * coefficients), coefficients


# ---- the gradient of a gather ------------------------------------------------------------
def test_the_gradient_of_a_gather_is_indexed_slices_of_the_rows_read(sess):
    w = tf.Variable(W)
    loss, coefficients = _gather_loss(w, tf.constant([[0, 2], [2, 3]]))
    (grad,) = tf.gradients(loss, [w])
    assert isinstance(grad, tf.IndexedSlices)
    assert grad.indices.dtype == tf.int32 and grad.dense_shape.dtype == tf.int32
    assert grad.values.shape.as_list() == [4, 3] and grad.indices.shape.as_list() == [4]
    assert grad.dtype == tf.float32 and grad.shape.as_list() == [4, 3]
    sess.run(tf.global_variables_initializer())
    value = sess.run(grad)
    assert isinstance(value, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, [0, 2, 2, 3])   # duplicates kept, not summed
    np.testing.assert_array_equal(value.values, coefficients.reshape(4, 3))
    np.testing.assert_array_equal(value.dense_shape, [4, 3])


def test_int64_indices_stay_int64(sess):
    params = tf.constant(W)
    (grad,) = tf.gradients(tf.reduce_sum(tf.gather(params, tf.constant([3], tf.int64))), params)
    assert grad.indices.dtype == tf.int64
    np.testing.assert_array_equal(sess.run(grad.indices), [3])


def test_a_gather_along_another_axis_has_a_dense_gradient(sess):
    params = tf.constant(W)
    (grad,) = tf.gradients(tf.reduce_sum(tf.gather(params, [2, 2], axis=1)), params)
    assert isinstance(grad, tf.Tensor)
    np.testing.assert_array_equal(sess.run(grad), [[0, 0, 2]] * 4)


def test_unsorted_segment_sum_has_a_dense_gradient_as_in_tf(sess):
    data = tf.constant(W)
    (grad,) = tf.gradients(tf.unsorted_segment_sum(data, [1, 0, 1, -1], 2), data)
    assert isinstance(grad, tf.Tensor)
    np.testing.assert_array_equal(sess.run(grad), [[1, 1, 1]] * 3 + [[0, 0, 0]])


def test_embedding_lookup_of_one_matrix_gives_slices(sess):
    emb = tf.Variable(W)
    looked_up = tf.nn.embedding_lookup(emb, [[1, 3], [1, 0]])
    (grad,) = tf.gradients(tf.reduce_sum(looked_up), [emb])
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    value = sess.run(grad)
    np.testing.assert_array_equal(value.indices, [1, 3, 1, 0])
    np.testing.assert_array_equal(_densify(value, (4, 3)), [[1] * 3, [2] * 3, [0] * 3, [1] * 3])


@pytest.mark.parametrize("strategy, shard_rows", [
    # ids 0, 4, 3, 4 of 5 rows in 2 shards.  mod: shard id % 2, row id // 2.
    # div: ids [0, 1, 2] and [3, 4].
    ("mod", {0: [0, 2, 2], 1: [1]}),
    ("div", {0: [0], 1: [0, 1, 1]}),
])
def test_embedding_lookup_of_a_partitioned_variable_gives_slices_per_shard(
        sess, strategy, shard_rows):
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(2)):
        emb = tf.get_variable("emb", shape=[5, 2])  # the loss is linear: values do not matter
    ids = [0, 4, 3, 4]
    weights = np.array([[1.0], [10.0], [100.0], [1000.0]], np.float32)
    looked_up = tf.nn.embedding_lookup(emb, ids, partition_strategy=strategy)
    shards = list(emb)
    grads = tf.gradients(tf.reduce_sum(looked_up * weights), shards)
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    sess.run(tf.global_variables_initializer())
    full = np.zeros((5, 2), np.float32)
    np.add.at(full, ids, np.broadcast_to(weights, (4, 2)))
    offset = 0
    for shard, grad in zip(shards, grads):
        value = sess.run(grad)
        rows = shard.shape.as_list()[0]
        assert sorted(value.indices.tolist()) == sorted(shard_rows[shards.index(shard)])
        dense = _densify(value, (rows, 2))
        if strategy == "div":
            np.testing.assert_array_equal(dense, full[offset:offset + rows])
        else:
            np.testing.assert_array_equal(dense, full[shards.index(shard)::2])
        offset += rows


# ---- aggregation -----------------------------------------------------------------------------
def test_contributions_that_are_all_slices_are_concatenated(sess):
    w = tf.Variable(W)
    loss = (tf.reduce_sum(tf.gather(w, [3, 0])) +
            tf.reduce_sum(tf.gather(w, tf.constant([0], tf.int64))) * 2.0)
    (grad,) = tf.gradients(loss, [w])
    assert isinstance(grad, tf.IndexedSlices)
    assert grad.values.op.type == "ConcatV2" and grad.indices.op.type == "ConcatV2"
    assert grad.indices.dtype == tf.int64  # int32 indices are cast to concatenate with int64
    sess.run(tf.global_variables_initializer())
    value = sess.run(grad)
    assert sorted(value.indices.tolist()) == [0, 0, 3]
    np.testing.assert_array_equal(_densify(value, (4, 3)),
                                  [[3] * 3, [0] * 3, [0] * 3, [1] * 3])


def test_a_mix_of_dense_and_slices_is_summed_densely(sess):
    w = tf.Variable(W)
    loss = tf.reduce_sum(tf.gather(w, [1, 1])) + tf.reduce_sum(w * 3.0)
    (grad,) = tf.gradients(loss, [w])
    assert isinstance(grad, tf.Tensor) and grad.op.type == "AddN"
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(grad), [[3] * 3, [5] * 3, [3] * 3, [3] * 3])


# ---- densifying --------------------------------------------------------------------------
def test_convert_to_tensor_sums_the_rows_without_warning_for_a_small_known_shape(sess):
    slices = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                              tf.constant([2, 0, 2]), tf.constant([3, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dense = tf.convert_to_tensor(slices)
    assert dense.op.type == "UnsortedSegmentSum" and dense.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(sess.run(dense), [[3, 4], [0, 0], [6, 8]])
    np.testing.assert_array_equal(sess.run(slices.values + tf.convert_to_tensor(slices)[:1]),
                                  [[4, 6], [6, 8], [8, 10]])


def test_densifying_slices_of_unknown_shape_warns_as_tf1(sess):
    params = tf.placeholder(tf.float32, [None, 2])
    (grad,) = tf.gradients(tf.reduce_sum(tf.gather(params, [1])), params)
    with pytest.warns(UserWarning, match="^Converting sparse IndexedSlices to a dense Tensor of "
                                         "unknown shape. This may consume a large amount of "
                                         "memory.$"):
        dense = tf.convert_to_tensor(grad)
    np.testing.assert_array_equal(sess.run(dense, {params: np.zeros((3, 2))}),
                                  [[0, 0], [1, 1], [0, 0]])


def test_densifying_a_hundred_million_elements_warns_with_the_count():
    slices = tf.IndexedSlices(tf.zeros([1, 1000]), tf.constant([0]), tf.constant([100000, 1000]))
    with pytest.warns(UserWarning, match="^Converting sparse IndexedSlices to a dense Tensor "
                                         "with 100000000 elements. This may consume"):
        tf.convert_to_tensor(slices)


def test_convert_to_tensor_errors():
    slices = tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0]))
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(slices)
    with pytest.raises(ValueError, match="requested dtype int32 for IndexedSlices with dtype "
                                         "float32"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.zeros([1, 2]), tf.constant([0]), [1, 2]),
                             dtype=tf.int32)
    assert tf.convert_to_tensor_or_indexed_slices(slices) is slices
    with pytest.raises(ValueError, match="dtype int32"):
        tf.convert_to_tensor_or_indexed_slices(slices, dtype=tf.int32)


def test_an_op_needing_a_tensor_densifies_slices(sess):
    slices = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([1]), tf.constant([2, 2]))
    np.testing.assert_array_equal(sess.run(tf.add_n([slices, tf.ones([2, 2])])),
                                  [[1, 1], [2, 2]])


# ---- the holder itself, and fetching it ---------------------------------------------------
def test_the_holder_names_its_parts():
    values, indices = tf.constant([[1.0, 2.0]], name="v"), tf.constant([4], name="i")
    slices = tf.IndexedSlices(values, indices, tf.constant([5, 2], name="s"))
    assert slices.name == "v:0" and slices.op is values.op and slices.graph is values.graph
    assert slices.dtype == tf.float32 and slices.shape.as_list() == [5, 2]
    assert tf.IndexedSlices(values, indices).shape.ndims is None
    negated = -slices
    assert isinstance(negated, tf.IndexedSlices) and negated.indices is indices
    y = values * 2.0
    assert slices.consumers() == [negated.values.op, y.op]
    assert "IndexedSlices(indices=" in repr(slices)


def test_fetching_slices_inside_a_structure_and_without_a_dense_shape(sess):
    values, indices = tf.constant([[1.0, 2.0]]), tf.constant([4])
    with_shape = tf.IndexedSlices(values, indices, tf.constant([5, 2]))
    got = sess.run({"a": [with_shape], "b": tf.IndexedSlices(values, indices)})
    assert isinstance(got["a"][0], tf.IndexedSlicesValue)
    np.testing.assert_array_equal(got["a"][0].dense_shape, [5, 2])
    assert got["b"].dense_shape is None
    np.testing.assert_array_equal(got["b"].indices, [4])


# ---- clipping ------------------------------------------------------------------------------
def _slices_and_value():
    values = np.array([[3.0, 0.0], [0.0, 4.0], [6.0, 8.0]], np.float32)
    slices = tf.IndexedSlices(tf.constant(values), tf.constant([0, 0, 2]), tf.constant([3, 2]))
    return slices, values


def test_clip_by_global_norm_keeps_slices_and_takes_the_norm_of_their_values(sess):
    slices, values = _slices_and_value()
    dense = np.array([0.0, 5.0], np.float32)
    (clipped_slices, clipped_dense), norm = tf.clip_by_global_norm(
        [slices, tf.constant(dense), None][:2], 5.0)
    assert isinstance(clipped_slices, tf.IndexedSlices)
    assert clipped_slices.indices is slices.indices
    assert clipped_slices.dense_shape is slices.dense_shape
    expected_norm = np.sqrt(np.sum(values ** 2) + np.sum(dense ** 2))  # rows as they are
    np.testing.assert_allclose(sess.run(norm), expected_norm, rtol=1e-6)
    np.testing.assert_allclose(sess.run(clipped_slices.values),
                               values * 5.0 / expected_norm, rtol=1e-6)
    np.testing.assert_allclose(sess.run(clipped_dense), dense * 5.0 / expected_norm, rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.global_norm([slices])),
                               np.sqrt(np.sum(values ** 2)), rtol=1e-6)


def test_clip_by_norm_keeps_slices(sess):
    slices, values = _slices_and_value()
    clipped = tf.clip_by_norm(slices, 1.0)
    assert isinstance(clipped, tf.IndexedSlices) and clipped.indices is slices.indices
    np.testing.assert_allclose(sess.run(clipped.values), values / np.linalg.norm(values),
                               rtol=1e-6)


# ---- control flow ----------------------------------------------------------------------------
def test_a_cond_keeps_slices_and_the_untaken_branch_gives_zero_rows(sess):
    w = tf.Variable(W)
    pred = tf.placeholder(tf.bool, [])
    y = tf.cond(pred, lambda: tf.reduce_sum(tf.gather(w, [1, 1])),
                lambda: tf.reduce_sum(tf.gather(w, [3])) * 2.0)
    (grad,) = tf.gradients(y, [w])
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    taken = sess.run(grad, {pred: True})
    np.testing.assert_array_equal(_densify(taken, (4, 3)), [[0] * 3, [2] * 3, [0] * 3, [0] * 3])
    not_taken = sess.run(grad, {pred: False})
    np.testing.assert_array_equal(_densify(not_taken, (4, 3)),
                                  [[0] * 3, [0] * 3, [0] * 3, [2] * 3])


def test_a_cond_with_one_branch_not_using_the_variable(sess):
    w = tf.Variable(W)
    pred = tf.placeholder(tf.bool, [])
    y = tf.cond(pred, lambda: tf.reduce_sum(tf.gather(w, [2])), lambda: tf.constant(0.0))
    (grad,) = tf.gradients(y, [w])
    sess.run(tf.global_variables_initializer())
    expected = {True: [[0] * 3, [0] * 3, [1] * 3, [0] * 3], False: np.zeros((4, 3))}
    for taken, dense in expected.items():
        np.testing.assert_array_equal(_densify(sess.run(grad, {pred: taken}), (4, 3)), dense)


def test_a_gather_in_a_while_loop_body_is_differentiated(sess):
    w = tf.Variable(W)

    def body(i, total):
        return i + 1, total + tf.reduce_sum(tf.gather(w, [i, i]))

    _, total = tf.while_loop(lambda i, _: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    (grad,) = tf.gradients(total, [w])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(grad)),
                                  [[2] * 3, [2] * 3, [2] * 3, [0] * 3])


def test_gate_graph_keeps_slices(sess):
    w = tf.Variable(W)
    opt = tf.train.GradientDescentOptimizer(1.0)
    [(grad, _)] = opt.compute_gradients(tf.reduce_sum(tf.gather(w, [1])), [w],
                                        gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(grad).indices, [1])


# ---- optimizers accept them ------------------------------------------------------------------
def test_apply_gradients_rejects_a_constraint_on_a_sparse_variable():
    w = tf.Variable(W, constraint=lambda x: tf.clip_by_value(x, 0.0, 1.0))
    slices = tf.IndexedSlices(tf.ones([1, 3]), tf.constant([0]), tf.constant([4, 3]))
    with pytest.raises(RuntimeError, match="Cannot use a constraint function on a sparse "
                                           "variable."):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(slices, w)])


def test_minimize_through_an_embedding_updates_only_the_rows_looked_up(sess):
    emb = tf.Variable(W)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(
        tf.reduce_sum(tf.nn.embedding_lookup(emb, [2, 0, 2])))
    assert "ScatterSub" in {op.type for op in tf.get_default_graph().get_operations()}
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_array_equal(sess.run(emb), W - 0.5 * np.array([[1], [0], [2], [0]]))


# ---- SyncReplicasOptimizer: sparse gradients meet in a SparseConditionalAccumulator --------
# At the session's end the chief's queue runner is cancelled in take_grad, as in TF.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sync_replicas_averages_slices_row_by_row():
    global_step = tf.train.get_or_create_global_step()
    emb = tf.Variable(np.zeros((4, 2), np.float32), name="emb")
    ids = tf.placeholder(tf.int32, [2])
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0),
                                         replicas_to_aggregate=2)
    loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids))
    train_op = opt.minimize(loss, global_step=global_step)
    accumulator = opt._accumulator_list[0][0]
    assert isinstance(accumulator, tf.SparseConditionalAccumulator)
    with tf.train.MonitoredTrainingSession(hooks=[opt.make_session_run_hook(True)],
                                           stop_grace_period_secs=0.5) as sess:
        # Two replicas: ids [0, 1] and [1, 1].  Row 1 is in both gradients:
        # (1 + 2) / 2; row 0 only in the first: 1 / 1 (each row by its own count).
        replicas = [threading.Thread(target=sess.run, args=(train_op, {ids: feed}))
                    for feed in ([0, 1], [1, 1])]
        for replica in replicas:
            replica.start()
        for replica in replicas:
            replica.join(10.0)
        deadline = time.monotonic() + 10.0
        while sess.run(global_step) != 1:
            assert time.monotonic() < deadline, "the chief did not apply the gradients"
            time.sleep(0.02)
        np.testing.assert_allclose(sess.run(emb), [[-1, -1], [-1.5, -1.5], [0, 0], [0, 0]])
    # The chief's queue runner ends (cancelled) within this test, not during another one.
    for thread in threading.enumerate():
        if thread.name.startswith("QueueRunner-"):
            thread.join(10.0)
