"""Partitioned variables: partitioners, ``get_variable(partitioner=...)``,
``PartitionedVariable``, sharded ``embedding_lookup`` and checkpoints of parts.

The expectations are TF1's (``tensorflow/python/ops/partitioned_variables.py``,
``variable_scope.py``, ``embedding_ops.py``): shard counts computed by hand
from TF's formulas, TF's part names, offsets and slice specs, TF's error
messages, and values checked against NumPy.
"""

import math
import os

import numpy as np
import pytest

import minitf as tf
from minitf.ops.partitioned_variables import PartitionInfo, iter_slices

FULL = np.arange(40, dtype=np.float32).reshape(10, 4)  # row i is [4i, 4i+1, 4i+2, 4i+3]


def _call(partitioner, shape, dtype=tf.float32):
    return partitioner(shape=tf.TensorShape(shape), dtype=dtype)


def _emb(num_shards=3, name="emb", value=FULL, **kwargs):
    return tf.get_variable(name, shape=list(value.shape), initializer=value,
                           partitioner=tf.fixed_size_partitioner(num_shards), **kwargs)


def _initialized(sess, *tensors):
    sess.run(tf.global_variables_initializer())
    return sess.run(list(tensors))


# ---- partitioners: shard counts from TF's formulas -------------------------------------------
def test_fixed_size_partitioner():
    assert _call(tf.fixed_size_partitioner(3), [10, 4]) == [3, 1]
    assert _call(tf.fixed_size_partitioner(2, axis=1), [10, 4]) == [1, 2]
    assert _call(tf.fixed_size_partitioner(5), [3, 4]) == [3, 1]  # no more shards than rows


def test_min_max_variable_partitioner():
    # float32 [1024, 1024] is 4 MiB: 4 MiB / 256 KiB = 16 shards, capped by max_partitions.
    assert _call(tf.min_max_variable_partitioner(max_partitions=100), [1024, 1024]) == [16, 1]
    assert _call(tf.min_max_variable_partitioner(max_partitions=4), [1024, 1024]) == [4, 1]
    # 160 bytes is far below one slice: one shard, whatever the maximum.
    assert _call(tf.min_max_variable_partitioner(max_partitions=8), [10, 4]) == [1, 1]
    # axis 1: 2 * 300000 * 4 bytes / 262144 = 9.16 -> 10 shards, capped at 8.
    assert _call(tf.min_max_variable_partitioner(8, axis=1), [2, 300000]) == [1, 8]
    assert _call(tf.min_max_variable_partitioner(20, axis=1), [2, 300000]) == [1, 10]
    # 12 MB wants 46 shards, but axis 0 has only 3 rows.
    assert _call(tf.min_max_variable_partitioner(10), [3, 1000000]) == [3, 1]
    # 256 * 128 float64 is 256 KiB: 4 slices of 64 KiB; float32, half the bytes, 2.
    small_slices = tf.min_max_variable_partitioner(100, min_slice_size=64 << 10)
    assert _call(small_slices, [256, 128], tf.float64) == [4, 1]
    assert _call(small_slices, [256, 128], tf.float32) == [2, 1]
    # strings count bytes_per_string_element each: 1000 * 16 / 1000 = 16.
    assert _call(tf.min_max_variable_partitioner(100, min_slice_size=1000), [1000],
                 tf.string) == [16]
    with pytest.raises(ValueError, match=r"Can not partition variable along axis 2 when shape "
                                         r"is only \(10, 4\)"):
        _call(tf.min_max_variable_partitioner(2, axis=2), [10, 4])


def test_variable_axis_size_partitioner():
    # A row of float32 [10, 4] is 16 bytes: 100 bytes hold 6 rows, so 2 shards.
    assert _call(tf.variable_axis_size_partitioner(100), [10, 4]) == [2, 1]
    # Less than a row per shard: every row is a shard, unless max_shards caps it.
    assert _call(tf.variable_axis_size_partitioner(10), [10, 4]) == [10, 1]
    assert _call(tf.variable_axis_size_partitioner(10, max_shards=4), [10, 4]) == [4, 1]
    # axis 1: a column is 40 bytes, 80 bytes hold 2 of the 4 columns.
    assert _call(tf.variable_axis_size_partitioner(80, axis=1), [10, 4]) == [1, 2]
    # strings: 250 bytes / 10 bytes per element = 25 per shard, 100 elements -> 4 shards.
    assert _call(tf.variable_axis_size_partitioner(250, bytes_per_string_element=10), [100],
                 tf.string) == [4]


def test_variable_axis_size_partitioner_errors():
    message = "Both max_shard_bytes and bytes_per_string_element must be positive."
    with pytest.raises(ValueError, match=message):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match=message):
        tf.variable_axis_size_partitioner(100, bytes_per_string_element=0)
    with pytest.raises(ValueError, match="max_shards must be positive."):
        tf.variable_axis_size_partitioner(100, max_shards=-1)
    partitioner = tf.variable_axis_size_partitioner(100)
    with pytest.raises(ValueError, match="shape is not a TensorShape"):
        partitioner(shape=[10, 4], dtype=tf.float32)
    with pytest.raises(ValueError, match="shape is not fully defined"):
        partitioner(shape=tf.TensorShape([None, 4]), dtype=tf.float32)
    with pytest.raises(ValueError, match="dtype is not a DType"):
        partitioner(shape=tf.TensorShape([10, 4]), dtype="float32")


@pytest.mark.parametrize("partitioner, message", [
    (lambda shape, dtype: [0, 1], "Partitioner returned zero partitions for some axes"),
    (lambda shape, dtype: [2, 2], "Can only slice a variable along one dimension"),
    (lambda shape, dtype: [2], "Partitioner returned a partition list that does not match "
                               "the Variable's rank"),
    (lambda shape, dtype: 2, "Partitioner must return a sequence, but saw: 2"),
])
def test_what_a_partitioner_returns_is_checked(partitioner, message):
    with pytest.raises(ValueError, match=message):
        tf.get_variable("v", [10, 4], partitioner=partitioner)


def test_partitioner_argument_errors():
    with pytest.raises(ValueError, match="Partitioner must be callable"):
        tf.get_variable("v", [10, 4], partitioner=3)
    with pytest.raises(ValueError, match="Shape of a new partitioned variable must be fully "
                                         "defined, but instead was <unknown>"):
        tf.get_variable("w", partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="A partitioned Variable must have rank at least 1"):
        tf.get_variable("x", tf.TensorShape([]), partitioner=tf.fixed_size_partitioner(2))


def test_a_scalar_shape_list_is_never_partitioned():
    v = tf.get_variable("s", [], partitioner=tf.fixed_size_partitioner(2))
    assert isinstance(v, tf.Variable) and v.name == "s:0"


# ---- the parts: names, shapes, offsets, slice specs --------------------------------------------
def test_parts_split_the_axis_the_first_ones_one_longer():
    pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
    assert isinstance(pv, tf.PartitionedVariable)
    assert [v.name for v in pv] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
    assert [v.shape.as_list() for v in pv] == [[4, 4], [3, 4], [3, 4]]
    infos = [v._save_slice_info for v in pv]
    assert [i.var_offset for i in infos] == [[0, 0], [4, 0], [7, 0]]
    assert [i.var_shape for i in infos] == [[4, 4], [3, 4], [3, 4]]
    assert {i.full_name for i in infos} == {"emb"}
    assert all(i.full_shape == [10, 4] for i in infos)
    assert [i.spec for i in infos] == ["10 4 0,4:0,4", "10 4 4,3:0,4", "10 4 7,3:0,4"]
    assert pv.name == "emb" and pv.dtype == tf.float32
    assert pv.shape.as_list() == pv.get_shape().as_list() == [10, 4]
    assert len(pv) == 3 and pv._get_partitions() == [3, 1]
    assert pv._get_variable_list() == list(pv)


def test_parts_along_axis_1():
    pv = tf.get_variable("w", [3, 5], partitioner=tf.fixed_size_partitioner(2, axis=1))
    assert [v.shape.as_list() for v in pv] == [[3, 3], [3, 2]]
    assert [v._save_slice_info.spec for v in pv] == ["3 5 0,3:0,3", "3 5 0,3:3,2"]


def test_iter_slices_by_hand():
    assert list(iter_slices([7, 2], 3, 0)) == [([0, 0], [3, 2]), ([3, 0], [2, 2]),
                                               ([5, 0], [2, 2])]
    assert list(iter_slices([2, 6], 2, 1)) == [([0, 0], [2, 3]), ([0, 3], [2, 3])]


def test_the_collections_hold_the_parts():
    pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
    frozen = tf.get_variable("frozen", [4, 2], partitioner=tf.fixed_size_partitioner(2),
                             trainable=False)
    assert tf.global_variables() == list(pv) + list(frozen)
    assert tf.trainable_variables() == list(pv)


def test_regularizer_applies_to_each_part():
    tf.get_variable("w", [4, 2], initializer=tf.ones_initializer(),
                    regularizer=tf.reduce_sum, partitioner=tf.fixed_size_partitioner(2))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(losses) == [4.0, 4.0]


# ---- initial values ------------------------------------------------------------------------
def test_a_numpy_initial_value_is_sliced_into_the_parts(sess):
    pv = _emb(3)
    parts = _initialized(sess, *pv)
    np.testing.assert_array_equal(parts[0], FULL[:4])
    np.testing.assert_array_equal(parts[1], FULL[4:7])
    np.testing.assert_array_equal(parts[2], FULL[7:])
    np.testing.assert_array_equal(sess.run(pv.as_tensor()), FULL)


def test_a_tensor_initial_value_gives_shape_and_dtype(sess):
    pv = tf.get_variable("t", initializer=tf.constant(FULL.astype(np.float64)),
                         partitioner=tf.fixed_size_partitioner(4))
    assert pv.dtype == tf.float64 and pv.shape.as_list() == [10, 4]
    assert [v.shape.as_list()[0] for v in pv] == [3, 3, 2, 2]
    np.testing.assert_array_equal(_initialized(sess, pv.as_tensor())[0], FULL)


def test_a_value_of_another_shape_is_an_error():
    with pytest.raises(ValueError):
        tf.get_variable("e", shape=[12, 4], initializer=FULL,
                        partitioner=tf.fixed_size_partitioner(3))


def test_a_constant_initializer_fills_each_part(sess):
    pv = tf.get_variable("c", [5, 2], initializer=tf.constant_initializer(2.5),
                         partitioner=tf.fixed_size_partitioner(2))
    np.testing.assert_array_equal(_initialized(sess, pv.as_tensor())[0], np.full([5, 2], 2.5))


def test_a_seeded_random_initializer_per_part():
    def values():
        with tf.Graph().as_default():
            pv = tf.get_variable("r", [300, 10], partitioner=tf.fixed_size_partitioner(3),
                                 initializer=tf.random_uniform_initializer(-1.0, 1.0, seed=7))
            with tf.Session() as sess:
                return _initialized(sess, pv.as_tensor())[0]
    first, second = values(), values()
    assert first.shape == (300, 10)
    assert -1.0 <= first.min() and first.max() < 1.0
    assert abs(first.mean()) < 0.05  # the mean of 3000 draws of U[-1, 1): std 0.0105
    np.testing.assert_array_equal(first, second)  # a seed makes it reproducible


def test_glorot_uses_the_full_shape_for_its_fans(sess):
    # Full [300, 10]: limit sqrt(6 / 310) = 0.139; a part [100, 10] alone would give 0.234.
    pv = tf.get_variable("g", [300, 10], partitioner=tf.fixed_size_partitioner(3))
    value = _initialized(sess, pv.as_tensor())[0]
    limit = math.sqrt(6.0 / 310.0)
    assert np.abs(value).max() <= limit
    assert np.abs(value).max() > 0.95 * limit


def test_identity_initializer_slices_the_full_identity(sess):
    pv = tf.get_variable("i", [4, 4], initializer=tf.initializers.identity(gain=2.0),
                         partitioner=tf.fixed_size_partitioner(2))
    np.testing.assert_array_equal(_initialized(sess, pv.as_tensor())[0], 2.0 * np.eye(4))


def test_initializers_get_partition_info_when_they_take_it(sess):
    calls = []

    def with_info(shape, dtype=None, partition_info=None):
        calls.append((shape, partition_info.full_shape, partition_info.var_offset))
        return tf.zeros(shape, dtype)

    def without_info(shape, dtype=None):
        return tf.ones(shape, dtype)

    a = tf.get_variable("a", [5, 2], initializer=with_info,
                        partitioner=tf.fixed_size_partitioner(2))
    b = tf.get_variable("b", [5, 2], initializer=without_info,
                        partitioner=tf.fixed_size_partitioner(2))
    assert calls == [([3, 2], [5, 2], [0, 0]), ([2, 2], [5, 2], [3, 0])]
    values = _initialized(sess, a.as_tensor(), b.as_tensor())
    np.testing.assert_array_equal(values[0], np.zeros([5, 2]))
    np.testing.assert_array_equal(values[1], np.ones([5, 2]))


def test_partition_info():
    info = PartitionInfo(full_shape=[10, 4], var_offset=[4, 0])
    assert info.single_slice_dim([3, 4]) == 0 and info.single_offset([3, 4]) == 4
    assert PartitionInfo([10, 4], [0, 0]).single_slice_dim([10, 4]) is None
    with pytest.raises(TypeError, match="`full_shape` must be a sequence"):
        PartitionInfo(full_shape=10, var_offset=[0])
    with pytest.raises(ValueError, match="Expected equal length"):
        PartitionInfo(full_shape=[10, 4], var_offset=[0])
    with pytest.raises(ValueError, match="Expected 0 <= offset < shape"):
        PartitionInfo(full_shape=[10, 4], var_offset=[10, 0])
    with pytest.raises(ValueError, match="would exceed"):
        info.single_slice_dim([7, 4])
    with pytest.raises(ValueError, match="slice dim could be either dimension"):
        PartitionInfo([10, 4], [0, 0]).single_slice_dim([3, 2])


# ---- sharing -------------------------------------------------------------------------------
def test_reuse_returns_the_same_partitioned_variable():
    partitioner = tf.fixed_size_partitioner(3)
    with tf.variable_scope("s"):
        pv = tf.get_variable("emb", [10, 4], partitioner=partitioner)
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("emb", [10, 4], partitioner=partitioner) is pv
        assert tf.get_variable("emb", [10, 4]) is pv  # TF: reuse=True needs no partitioner
    with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
        assert tf.get_variable("emb", [10, 4], partitioner=partitioner) is pv
    assert len(tf.global_variables()) == 3


def test_reuse_errors():
    partitioner = tf.fixed_size_partitioner(3)
    tf.get_variable("emb", [10, 4], partitioner=partitioner)
    with pytest.raises(ValueError, match="Partitioned variable with name emb already exists"):
        tf.get_variable("emb", [10, 4], partitioner=partitioner)
    with tf.variable_scope("", reuse=True):
        with pytest.raises(ValueError, match=r"Trying to reuse partitioned variable emb, but "
                                             r"specified shape \(12, 4\) and found shape "
                                             r"\(10, 4\)"):
            tf.get_variable("emb", [12, 4], partitioner=partitioner)
        with pytest.raises(ValueError, match=r"specified partitions \[2, 1\] and found "
                                             r"partitions \[3, 1\]"):
            tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="specified dtype float64 and found dtype float32"):
            tf.get_variable("emb", [10, 4], tf.float64, partitioner=partitioner)
        with pytest.raises(ValueError, match="PartitionedVariable missing does not exist"):
            tf.get_variable("missing", [10, 4], partitioner=partitioner)
    with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned "
                                         "version of the variable was found: emb/part_0"):
        tf.get_variable("emb", [10, 4])
    tf.get_variable("plain", [10, 4])
    with pytest.raises(ValueError, match="A partitioner was provided, but an unpartitioned "
                                         "version of the variable was found: plain"):
        tf.get_variable("plain", [10, 4], partitioner=partitioner)


def test_the_scope_partitioner_is_inherited():
    with tf.variable_scope("outer", partitioner=tf.fixed_size_partitioner(2)) as outer:
        with tf.variable_scope("inner"):
            inner = tf.get_variable("w", [4, 3])
        bias = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        unsplit = tf.get_variable("u", [4, 3], partitioner=None)
    assert outer.partitioner is not None
    assert isinstance(inner, tf.PartitionedVariable) and inner.name == "outer/inner/w"
    assert [v.name for v in inner] == ["outer/inner/w/part_0:0", "outer/inner/w/part_1:0"]
    assert isinstance(bias, tf.Variable)  # a scalar is never partitioned
    assert isinstance(unsplit, tf.PartitionedVariable)  # None means "inherit"


def test_create_partitioned_variables(sess):
    parts = tf.create_partitioned_variables([10, 4], [3, 1], tf.constant(FULL))
    assert [p.name for p in parts] == ["PartitionedVariable/part_%d:0" % i for i in range(3)]
    named = tf.create_partitioned_variables([4, 6], [1, 2], tf.zeros_initializer(), name="z")
    assert [p.shape.as_list() for p in named] == [[4, 3], [4, 3]]
    assert [p.name for p in named] == ["z/part_0:0", "z/part_1:0"]
    values = _initialized(sess, *parts)
    np.testing.assert_array_equal(np.concatenate(values), FULL)
    with pytest.raises(ValueError, match="must have the length"):
        tf.create_partitioned_variables([10, 4], [3], tf.zeros_initializer())
    with pytest.raises(ValueError, match="must have rank at least 1"):
        tf.create_partitioned_variables([], [], tf.zeros_initializer())


# ---- reading, converting, assigning ------------------------------------------------------------
def test_conversion_and_math_against_numpy(sess):
    pv = _emb(3)
    x = np.arange(20, dtype=np.float32).reshape(2, 10) / 10
    product = tf.matmul(x, pv)
    total = tf.reduce_sum(pv)
    shifted = tf.add(pv, 1.0)
    assert product.shape.as_list() == [2, 4]
    values = _initialized(sess, product, total, shifted)
    np.testing.assert_allclose(values[0], x @ FULL, rtol=1e-6)
    assert values[1] == FULL.sum()
    np.testing.assert_array_equal(values[2], FULL + 1)


def test_as_tensor_ops_and_conversion_errors():
    pv = _emb(3)
    with tf.control_dependencies([tf.no_op(name="before")]):
        full = pv.as_tensor()
    assert full.op.name == "emb" and full.op.type == "Identity"
    concat = full.op.inputs[0].op
    assert concat.name == "emb/ConcatPartitions/concat" and concat.type == "ConcatV2"
    assert full.op.control_inputs == [] and concat.control_inputs == []
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type "
                                         "'int32' for variable of type 'float32'"):
        tf.convert_to_tensor(pv, dtype=tf.int32)
    with pytest.raises(NotImplementedError, match="doesn't support being used as a reference"):
        tf.convert_to_tensor(pv, as_ref=True)
    with pytest.raises(TypeError):
        pv + 1  # noqa: B018 - as in TF, a PartitionedVariable has no operators


def test_assign_splits_the_value_across_the_parts(sess):
    pv = _emb(3)
    new = -FULL
    assigns = pv.assign(new)
    assert len(assigns) == 3
    sess.run(tf.global_variables_initializer())
    sess.run(assigns)
    np.testing.assert_array_equal(sess.run(pv.as_tensor()), new)
    np.testing.assert_array_equal(sess.run(list(pv)[1]), new[4:7])
    sess.run(pv.assign_add(np.ones([10, 4], np.float32)))
    np.testing.assert_array_equal(sess.run(pv.as_tensor()), new + 1)
    pieces = [np.zeros([4, 4]), np.ones([3, 4]), np.full([3, 4], 2.0)]
    ops = pv.assign([p.astype(np.float32) for p in pieces], read_value=False)
    assert all(isinstance(op, tf.Operation) for op in ops)
    sess.run(ops)
    np.testing.assert_array_equal(sess.run(pv.as_tensor()), np.concatenate(pieces))


# ---- training through a partitioned variable --------------------------------------------------
def test_gradient_descent_through_as_tensor(sess):
    pv = _emb(3)
    x = np.linspace(-1, 1, 30).reshape(3, 10).astype(np.float32)
    y = np.ones([3, 4], np.float32)
    loss = tf.reduce_sum(tf.square(tf.matmul(x, pv) - y))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    expected = FULL - 0.01 * (x.T @ (2 * (x @ FULL - y)))
    np.testing.assert_allclose(sess.run(pv.as_tensor()), expected, rtol=1e-5)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_gradient_descent_through_embedding_lookup(sess, strategy):
    pv = _emb(3)
    ids = np.array([[1, 4, 4], [9, 0, 1]])
    weights = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    looked_up = tf.nn.embedding_lookup(pv, ids, partition_strategy=strategy)
    loss = tf.reduce_sum(weights * looked_up)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    table = _table_by_id(sess.run(list(pv)), strategy)
    sess.run(train)
    # Each row's gradient: the weights of every place it was looked up, summed.
    grad = np.zeros_like(table)
    np.add.at(grad, ids.reshape(-1), weights.reshape(-1, 4))
    np.testing.assert_allclose(_table_by_id(sess.run(list(pv)), strategy), table - 0.5 * grad)


def _table_by_id(shards, strategy):
    """The vocabulary table, row i for id i, that ``shards`` hold under ``strategy``:
    for "div" consecutive ranges of ids, for "mod" shard p holds ids p, p + n, ..."""
    if strategy == "div":
        return np.concatenate(shards)
    table = np.zeros((sum(len(s) for s in shards),) + shards[0].shape[1:], shards[0].dtype)
    for p, shard in enumerate(shards):
        table[p::len(shards)] = shard
    return table


# ---- embedding_lookup over shards: TF's id -> shard mapping ----------------------------------
def _mod_shards(table, n):
    return [table[p::n] for p in range(n)]


def _div_shards(table, n):
    q, r = divmod(len(table), n)
    sizes = [q + 1 if p < r else q for p in range(n)]
    return np.split(table, np.cumsum(sizes)[:-1])


@pytest.mark.parametrize("vocab, n", [(10, 3), (7, 3), (8, 4), (5, 5)])
@pytest.mark.parametrize("ids", [3, [6, 0, 3, 3], [[4, 1], [1, 2]], [[[0, 4], [4, 4]]]])
def test_embedding_lookup_mod_and_div_against_numpy(sess, vocab, n, ids):
    table = np.random.RandomState(vocab).randn(vocab, 3).astype(np.float32)
    ids = np.asarray(ids) % vocab
    for strategy, shards in (("mod", _mod_shards(table, n)), ("div", _div_shards(table, n))):
        result = tf.nn.embedding_lookup([tf.constant(s) for s in shards], ids,
                                        partition_strategy=strategy)
        assert result.shape.as_list() == list(ids.shape) + [3]
        np.testing.assert_array_equal(sess.run(result), table[ids])


def test_div_uneven_shards_by_hand(sess):
    # 7 ids in 3 shards: ids 0-2 | 3-4 | 5-6 (the first 7 % 3 = 1 shard one longer).
    shards = [tf.constant([[0.0], [1.0], [2.0]]), tf.constant([[3.0], [4.0]]),
              tf.constant([[5.0], [6.0]])]
    result = tf.nn.embedding_lookup(shards, [6, 2, 3, 5, 0], partition_strategy="div")
    np.testing.assert_array_equal(sess.run(result)[:, 0], [6, 2, 3, 5, 0])
    # "mod": id i is row i // 3 of shard i % 3.
    shards = [tf.constant([[0.0], [3.0], [6.0]]), tf.constant([[1.0], [4.0]]),
              tf.constant([[2.0], [5.0]])]
    result = tf.nn.embedding_lookup(shards, [6, 2, 3, 5, 0])
    np.testing.assert_array_equal(sess.run(result)[:, 0], [6, 2, 3, 5, 0])


def test_embedding_lookup_on_a_partitioned_variable_is_div_ordered(sess):
    pv = _emb(3)  # fixed_size_partitioner splits as "div" routes: rows 0-3 | 4-6 | 7-9
    ids = tf.constant([[9, 0], [4, 7]], dtype=tf.int64)
    result = tf.nn.embedding_lookup(pv, ids, partition_strategy="div")
    np.testing.assert_array_equal(_initialized(sess, result)[0], FULL[[[9, 0], [4, 7]]])


def test_embedding_lookup_rows_of_higher_rank_and_max_norm(sess):
    table = np.arange(24, dtype=np.float32).reshape(6, 2, 2) / 10
    ids = np.array([5, 0, 2])
    shards = [tf.constant(s) for s in _mod_shards(table, 2)]
    result = tf.nn.embedding_lookup(shards, ids, max_norm=1.0)
    rows = table[ids]
    norms = np.sqrt((rows ** 2).sum(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(sess.run(result), rows / np.maximum(norms, 1.0), rtol=1e-6)
    single = tf.nn.embedding_lookup(tf.constant(table), ids, max_norm=1.0)
    np.testing.assert_allclose(sess.run(single), rows / np.maximum(norms, 1.0), rtol=1e-6)


def test_embedding_lookup_errors():
    with pytest.raises(ValueError, match="Unrecognized partition strategy: sideways"):
        tf.nn.embedding_lookup([tf.zeros([2, 2]), tf.zeros([2, 2])], [0],
                               partition_strategy="sideways")
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], [0])
    with pytest.raises(ValueError, match="params must be specified"):
        tf.nn.embedding_lookup(None, [0])


# ---- parameter servers -----------------------------------------------------------------------
def test_replica_device_setter_spreads_the_parts_over_ps_tasks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        other = tf.get_variable("w", [4, 2])
        rows = tf.nn.embedding_lookup(pv, [1, 5, 8])
    assert [v.device for v in pv] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert other.device == "/job:ps/task:1"
    assert [v.initializer.device for v in pv] == [v.device for v in pv]
    # Each shard's rows are gathered on the shard's task; the result is the worker's.
    shard_gathers = [op for op in tf.get_default_graph().get_operations()
                     if op.type == "GatherV2" and op.inputs[0].op.type == "Identity"
                     and op.inputs[0].op.inputs[0].op.type == "VariableV2"]
    assert [op.device for op in shard_gathers] == [v.device for v in pv]
    assert rows.device == "/job:worker"


# ---- checkpoints ---------------------------------------------------------------------------
def _save_three_parts(directory, var_list=None):
    """Saves emb = FULL as 3 parts (and b = [1, 1]) in a graph of its own."""
    with tf.Graph().as_default():
        _emb(3)
        tf.get_variable("b", [2], initializer=tf.ones_initializer())
        saver = tf.train.Saver(var_list)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, os.path.join(str(directory), "model.ckpt"))


def test_saved_under_the_full_name_as_one_tensor(tmp_path):
    path = _save_three_parts(tmp_path)
    assert tf.train.list_variables(path) == [("b", [2]), ("emb", [10, 4])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "emb"), FULL)


@pytest.mark.parametrize("make_var_list", [
    lambda pv: [pv],
    lambda pv: {"emb": pv},
    lambda pv: list(pv),
    lambda pv: {"emb": list(pv)},
])
def test_var_list_forms(tmp_path, make_var_list):
    with tf.Graph().as_default():
        pv = _emb(3)
        saver = tf.train.Saver(make_var_list(pv))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(str(tmp_path), "m"))
    assert tf.train.list_variables(path) == [("emb", [10, 4])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "emb"), FULL)


@pytest.mark.parametrize("num_shards", [2, 3, 5])
def test_restore_into_another_partitioning(tmp_path, num_shards):
    path = _save_three_parts(tmp_path)
    pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(num_shards))
    b = tf.get_variable("b", [2])
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        np.testing.assert_array_equal(sess.run(pv.as_tensor()), FULL)
        np.testing.assert_array_equal(sess.run(list(pv)[0]), FULL[:len(range(0, 10,
                                                                             num_shards))])
        np.testing.assert_array_equal(sess.run(b), [1.0, 1.0])


def test_restore_into_an_unpartitioned_variable_and_back(tmp_path):
    path = _save_three_parts(tmp_path)
    whole = tf.get_variable("emb", [10, 4])
    with tf.Session() as sess:
        tf.train.Saver([whole]).restore(sess, path)
        np.testing.assert_array_equal(sess.run(whole), FULL)
        sess.run(whole.assign(FULL * 2))
        path = tf.train.Saver([whole]).save(sess, os.path.join(str(tmp_path), "whole"))
    tf.reset_default_graph()
    pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        np.testing.assert_array_equal(sess.run(pv.as_tensor()), FULL * 2)


def test_restore_renamed_and_sliced_per_part(tmp_path):
    path = _save_three_parts(tmp_path)
    pv = tf.get_variable("other", [10, 4], partitioner=tf.fixed_size_partitioner(4))
    saver = tf.train.Saver({"emb": pv})
    restore = tf.get_default_graph().get_operation_by_name("save/RestoreV2")
    from minitf.framework.tensor_util import constant_value
    specs = [s.decode() for s in constant_value(restore.inputs[2]).tolist()]
    assert specs == ["10 4 0,3:0,4", "10 4 3,3:0,4", "10 4 6,2:0,4", "10 4 8,2:0,4"]
    with tf.Session() as sess:
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(pv.as_tensor()), FULL)


def test_saver_errors_for_parts(tmp_path):
    pv = _emb(3)
    with pytest.raises(ValueError, match="the parts of emb must all be saved together"):
        tf.train.Saver(list(pv)[:2])
    with pytest.raises(ValueError, match="At least two variables have the same name: emb"):
        tf.train.Saver([pv, pv])
    with pytest.raises(ValueError, match="Mixing slices and non-slices with the same name: emb"):
        tf.train.Saver([pv, list(pv)[0]])
    plain = tf.Variable(1.0, name="emb")  # the op name "emb" is free until as_tensor()
    with pytest.raises(ValueError, match="Mixing slices and non-slices with the same name: emb"):
        tf.train.Saver([plain] + list(pv))
    with pytest.raises(ValueError, match="Slices must all be slices"):
        tf.train.Saver({"x": [plain]})
    wrong = tf.get_variable("wrong", [12, 4], partitioner=tf.fixed_size_partitioner(2))
    path = _save_three_parts(tmp_path)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape "
                                                                  "stored in checkpoint"):
            tf.train.Saver({"emb": wrong}).restore(sess, path)


def test_init_from_checkpoint_into_parts(tmp_path):
    path = _save_three_parts(tmp_path)
    with tf.variable_scope("new"):
        pv = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(2))
    with tf.variable_scope("scoped"):
        scoped = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(4))
        b = tf.get_variable("b", [2])
    tf.train.init_from_checkpoint(path, {"emb": "new/emb", "/": "scoped/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([pv.as_tensor(), scoped.as_tensor(), b])
    np.testing.assert_array_equal(values[0], FULL)
    np.testing.assert_array_equal(values[1], FULL)
    np.testing.assert_array_equal(values[2], [1.0, 1.0])
