"""``tf.SparseTensor``: building, fetching, feeding and densifying one."""

import numpy as np
import pytest

import minitf as tf


def test_sparse_tensor_parts_and_static_shape():
    st = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    assert st.dtype == tf.float32
    assert st.shape.as_list() == [3, 4] and st.get_shape().as_list() == [3, 4]
    assert st.values.name == "SparseTensor/values:0"
    assert st.op is st.values.op and st.graph is tf.get_default_graph()
    unknown = tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]), tf.placeholder(tf.int32, [None]),
                              tf.placeholder(tf.int64, [2]))
    assert unknown.shape.as_list() == [None, None]


def test_parts_that_do_not_fit_are_a_value_error():
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 0]], values=[[1.0]], dense_shape=[3, 4])  # values not 1-D
    with pytest.raises(ValueError):
        tf.SparseTensor(indices=[[0, 0, 0]], values=[1.0], dense_shape=[3, 4])  # rank 3 vs 2


def test_is_not_a_tensor():
    st = tf.SparseTensor([[0]], [1], [2])
    with pytest.raises(TypeError):
        tf.convert_to_tensor(st)
    assert tf.convert_to_tensor_or_sparse_tensor(st) is st
    converted = tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensorValue([[0]], [1], [2]))
    assert isinstance(converted, tf.SparseTensor)


def test_fetch_returns_a_sparse_tensor_value(sess):
    st = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    value = sess.run(st)
    assert isinstance(value, tf.SparseTensorValue)
    assert value.indices.tolist() == [[0, 0], [1, 2]]
    assert value.values.tolist() == [1.0, 2.0] and value.values.dtype == np.float32
    assert value.dense_shape.tolist() == [3, 4]
    nested = sess.run({"sparse": st, "both": [st.values, st]})
    assert isinstance(nested["sparse"], tf.SparseTensorValue)
    assert nested["both"][1].dense_shape.tolist() == [3, 4]
    with sess.as_default():
        assert st.eval().values.tolist() == [1.0, 2.0]


def test_to_dense(sess):
    st = tf.SparseTensor([[0, 0], [1, 2]], [1, 2], [3, 4])
    dense = tf.sparse_tensor_to_dense(st, default_value=-1)
    assert dense.op.type == "SparseToDense" and dense.shape.as_list() == [3, 4]
    expected = np.full([3, 4], -1)
    expected[0, 0], expected[1, 2] = 1, 2
    np.testing.assert_array_equal(sess.run(dense), expected)
    assert sess.run(tf.sparse.to_dense(st)).sum() == 3  # zeros elsewhere
    words = tf.SparseTensor([[1]], [b"b"], [2])
    assert sess.run(tf.sparse_tensor_to_dense(words)).tolist() == [b"", b"b"]


def test_sparse_to_dense_with_scalar_value(sess):
    dense = tf.sparse_to_dense([1, 3], [5], 7.0, default_value=0.5)
    assert sess.run(dense).tolist() == [0.5, 7.0, 0.5, 7.0, 0.5]


@pytest.mark.parametrize("indices, message", [
    ([[1, 0], [0, 0]], r"indices\[1\] = \[0,0\] is out of order"),
    ([[0, 0], [0, 0]], r"indices\[1\] = \[0,0\] is repeated"),
    ([[0, 0], [5, 0]], r"indices\[1\] = \[5,0\] is out of bounds: need 0 <= index < \[3,4\]"),
])
def test_invalid_indices_are_an_invalid_argument(sess, indices, message):
    dense = tf.sparse_tensor_to_dense(tf.SparseTensor(indices, [1, 2], [3, 4]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(dense)


def test_unvalidated_indices_may_be_in_any_order(sess):
    dense = tf.sparse_tensor_to_dense(tf.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 1]),
                                      validate_indices=False)
    assert sess.run(dense).tolist() == [[2], [1]]


def test_sparse_placeholder_fed_with_a_value_or_a_tuple(sess):
    sp = tf.sparse_placeholder(tf.float32)
    assert sp.shape.ndims is None
    dense = tf.sparse.to_dense(sp, default_value=-1.0)
    fed = tf.SparseTensorValue([[0, 1]], [5.0], [2, 2])
    assert sess.run(dense, {sp: fed}).tolist() == [[-1.0, 5.0], [-1.0, -1.0]]
    assert sess.run(dense, {sp: ([[1, 0]], [3.0], [2, 2])}).tolist() == [[-1.0, -1.0],
                                                                          [3.0, -1.0]]
    echoed = sess.run(sp, {sp: fed})
    assert echoed.values.tolist() == [5.0] and echoed.dense_shape.tolist() == [2, 2]
    with pytest.raises(TypeError, match="SparseTensor"):
        sess.run(dense, {sp: [1.0, 2.0]})


def test_sparse_placeholder_names_and_known_shape(sess):
    sp = tf.sparse_placeholder(tf.int64, shape=[3, 4], name="sp")
    assert (sp.indices.name, sp.values.name, sp.dense_shape.name) == \
        ("sp/indices:0", "sp/values:0", "sp/shape:0")
    assert sp.shape.as_list() == [3, 4] and sp.indices.shape.as_list() == [None, 2]
    partly = tf.sparse_placeholder(tf.int64, shape=[None, 4], name="partly")
    assert partly.dense_shape.op.type == "Placeholder"
    dense = tf.sparse_tensor_to_dense(sp)  # the dense shape need not be fed
    value = sess.run(dense, {sp.indices: [[2, 3]], sp.values: [9]})
    assert value.shape == (3, 4) and value[2, 3] == 9


def test_serialized_sparse_tensors_stack_into_one_of_higher_rank(sess):
    """The variant form tf.data carries SparseTensors in: DeserializeSparse of
    ``[n, 3]`` prepends the position and takes each dimension's largest size."""
    from minitf.framework import dtypes
    from minitf.ops import sparse_ops
    a = tf.SparseTensor([[0, 1]], [1.0], [2, 3])
    b = tf.SparseTensor([[1, 0], [3, 2]], [2.0, 3.0], [4, 3])
    one = sparse_ops.serialize_sparse(a)
    assert one.dtype == dtypes.variant and one.shape.as_list() == [3]
    same = sess.run(sparse_ops.deserialize_sparse(one, tf.float32))
    np.testing.assert_array_equal(same.indices, [[0, 1]])
    stacked = sparse_ops.deserialize_sparse(tf.stack([one, sparse_ops.serialize_sparse(b)]),
                                            tf.float32, rank=3)
    assert stacked.indices.shape.as_list() == [None, 3]
    value = sess.run(stacked)
    np.testing.assert_array_equal(value.indices, [[0, 0, 1], [1, 1, 0], [1, 3, 2]])
    np.testing.assert_array_equal(value.values, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(value.dense_shape, [2, 4, 3])
    c = sparse_ops.serialize_sparse(tf.SparseTensor([[0]], [1.0], [5]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Inconsistent shape"):
        sess.run(sparse_ops.deserialize_sparse(tf.stack([one, c]), tf.float32))
