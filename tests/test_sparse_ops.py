"""Computing with SparseTensors: sparse_tensor_dense_matmul, sparse_reduce_sum,
embedding_lookup_sparse, and Dataset.from_tensor_slices of a SparseTensor.

Values against NumPy here (and against TensorFlow's own results in
``test_image_nn_sparse_refs.py``); gradients in ``test_nn_gradients.py``.
"""

import numpy as np
import pytest

import minitf as tf

INDICES = np.array([[0, 1], [1, 0], [1, 2], [3, 1]])
VALUES = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
SHAPE = [4, 3]


def _dense():
    dense = np.zeros(SHAPE, np.float32)
    dense[tuple(INDICES.T)] = VALUES
    return dense


@pytest.mark.parametrize("adjoint_a, adjoint_b", [(False, False), (True, False), (False, True),
                                                  (True, True)])
def test_sparse_dense_matmul_is_the_dense_product(sess, adjoint_a, adjoint_b):
    sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
    a = _dense().T if adjoint_a else _dense()
    b = np.random.default_rng(0).standard_normal((a.shape[1], 2)).astype(np.float32)
    product = tf.sparse.sparse_dense_matmul(sp, b.T if adjoint_b else b, adjoint_a=adjoint_a,
                                            adjoint_b=adjoint_b)
    assert product.shape.as_list() == [a.shape[0], 2] and product.dtype == tf.float32
    np.testing.assert_allclose(sess.run(product), a @ b, rtol=1e-6)


def test_sparse_dense_matmul_names_and_aliases():
    assert tf.sparse.sparse_dense_matmul is tf.sparse_tensor_dense_matmul is tf.sparse.matmul
    product = tf.sparse_tensor_dense_matmul(tf.SparseTensor(INDICES, VALUES, SHAPE),
                                            np.ones((3, 2), np.float32))
    assert product.name == "SparseTensorDenseMatMul/SparseTensorDenseMatMul:0"


def test_sparse_dense_matmul_errors(sess):
    sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse_tensor_dense_matmul(_dense(), np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.sparse_tensor_dense_matmul(sp, np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="rank 2"):
        tf.sparse_tensor_dense_matmul(sp, np.ones((3, 2, 1), np.float32))
    with pytest.raises(TypeError):
        tf.sparse_tensor_dense_matmul(sp, np.ones((3, 2), np.float64))
    b = tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimension does not match"):
        sess.run(tf.sparse_tensor_dense_matmul(sp, b), {b: np.ones((5, 2))})
    outside = tf.SparseTensor([[0, 7]], [1.0], [2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        sess.run(tf.sparse_tensor_dense_matmul(outside, np.ones((3, 1), np.float32)))


@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1]])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sparse_reduce_sum_is_the_dense_sum(sess, axis, keepdims):
    total = tf.sparse.reduce_sum(tf.SparseTensor(INDICES, VALUES, SHAPE), axis=axis,
                                 keepdims=keepdims)
    expected = np.sum(_dense(), axis=None if axis is None else tuple(np.atleast_1d(axis)),
                      keepdims=keepdims)
    got = sess.run(total)
    assert total.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(got, expected)


def test_sparse_reduce_sum_aliases_and_errors(sess):
    sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
    assert tf.sparse_reduce_sum is tf.sparse.reduce_sum
    np.testing.assert_allclose(sess.run(tf.sparse_reduce_sum(sp, reduction_axes=0,
                                                             keep_dims=True)),
                               _dense().sum(0, keepdims=True))
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.sparse_reduce_sum(sp, axis=0, reduction_axes=0)
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse_reduce_sum(_dense())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 2"):
        sess.run(tf.sparse_reduce_sum(sp, 2))
    unknown = tf.sparse_placeholder(tf.float32)
    assert tf.sparse_reduce_sum(unknown, 0).shape.ndims is None
    np.testing.assert_allclose(
        sess.run(tf.sparse_reduce_sum(unknown), {unknown: (INDICES, VALUES, SHAPE)}), 10.0)


def test_embedding_lookup_sparse_combiners(sess):
    params = np.arange(10.0).reshape(5, 2)
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 4], tf.int64), [3, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 3.0, 2.0], [3, 2])
    expected = {"sum": [params[1] + 3 * params[3], [0, 0], 2 * params[4]],
                "mean": [(params[1] + 3 * params[3]) / 4, [0, 0], params[4]],
                "sqrtn": [(params[1] + 3 * params[3]) / np.sqrt(10), [0, 0], params[4]]}
    for combiner, rows in expected.items():
        got = sess.run(tf.nn.embedding_lookup_sparse(tf.constant(params), ids, weights,
                                                     combiner=combiner))
        np.testing.assert_allclose(got, rows, err_msg=combiner)
    unweighted = tf.nn.embedding_lookup_sparse(params, ids, None)  # TF1's default: "mean"
    np.testing.assert_allclose(sess.run(unweighted),
                               [(params[1] + params[3]) / 2, [0, 0], params[4]])


def test_embedding_lookup_sparse_errors():
    ids = tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(np.ones((2, 2)), ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(np.ones((2, 2)), [1], None)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(np.ones((2, 2)), ids, [1.0])


def test_embedding_lookup_names_follow_tf():
    single = tf.nn.embedding_lookup(np.ones((4, 2), np.float32), [1, 2])
    assert single.name == "embedding_lookup/Identity:0"
    assert single.op.inputs[0].op.name == "embedding_lookup"  # the GatherV2
    shards = [tf.ones([2, 2]), tf.ones([2, 2])]
    sharded = tf.nn.embedding_lookup(shards, [1, 2])
    assert sharded.name == "embedding_lookup_1/Reshape_1:0"


def test_from_tensor_slices_of_a_sparse_tensor(sess):
    sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
    dataset = tf.data.Dataset.from_tensor_slices((sp, tf.range(4)))
    assert dataset.output_classes == (tf.SparseTensor, tf.Tensor)
    assert dataset.output_shapes[0].as_list() == [3] and dataset.output_types[0] == tf.float32
    element = dataset.make_one_shot_iterator().get_next()
    rows = [sess.run(element) for _ in range(4)]
    for (row, label), dense_row in zip(rows, _dense()):
        assert isinstance(row, tf.SparseTensorValue) and list(row.dense_shape) == [3]
        restored = np.zeros(3, np.float32)
        restored[row.indices[:, 0]] = row.values
        np.testing.assert_array_equal(restored, dense_row)
    assert [label for _, label in rows] == [0, 1, 2, 3]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(element)


def test_sliced_sparse_tensors_map_and_batch(sess):
    value = tf.SparseTensorValue(INDICES, VALUES, SHAPE)
    densified = tf.data.Dataset.from_tensor_slices(value).map(tf.sparse_tensor_to_dense)
    np.testing.assert_array_equal(
        sess.run(densified.batch(4).make_one_shot_iterator().get_next()), _dense())
    batched = sess.run(tf.data.Dataset.from_tensor_slices(value).batch(2)
                       .make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(batched.indices, [[0, 1], [1, 0], [1, 2]])
    np.testing.assert_array_equal(batched.dense_shape, [2, 3])


def test_serialize_many_sparse_needs_rank_two(sess):
    from minitf.ops import sparse_ops
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be > 1"):
        sess.run(sparse_ops.serialize_many_sparse(tf.SparseTensor([[0]], [1.0], [2])))
