"""``tf.unique`` and ``tf.unique_with_counts``: distinct values in order of first occurrence."""

import numpy as np
import pytest

import minitf as tf
from tests.conftest import run_on, run_without_gpu_kernel


@pytest.mark.parametrize("values", [[1, 1, 4, 2, 4], [3.5, -1.0, 3.5], [7], []])
def test_unique_in_order_of_first_occurrence(device, values):
    x = np.array(values, dtype=np.float32 if any(isinstance(v, float) for v in values)
                 else np.int32)
    y, idx = run_without_gpu_kernel(device, "Unique", lambda t: tuple(tf.unique(t)), x)
    expected = list(dict.fromkeys(x.tolist()))  # insertion order = first occurrence
    assert y.dtype == x.dtype and y.tolist() == expected
    assert idx.dtype == np.int32 and idx.tolist() == [expected.index(v) for v in x.tolist()]
    np.testing.assert_array_equal(y[idx], x)


def test_unique_with_counts_and_out_idx():
    result = tf.unique_with_counts(tf.constant([b"b", b"a", b"b", b"c", b"b"]),
                                   out_idx=tf.int64)
    assert result.y.shape.as_list() == [None] and result.idx.shape.as_list() == [5]
    assert result.count.dtype == tf.int64
    with tf.Session() as sess:
        y, idx, count = sess.run(result)
    assert y.tolist() == [b"b", b"a", b"c"] and idx.tolist() == [0, 1, 0, 2, 0]
    assert idx.dtype == np.int64 and count.tolist() == [3, 1, 1]


def test_unique_errors():
    with pytest.raises(ValueError, match="rank 1 but is rank 2"):
        tf.unique([[1, 2]])
    with pytest.raises(TypeError, match="out_idx"):
        tf.unique([1], out_idx=tf.float32)
    x = tf.placeholder(tf.int32)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="1D vector"):
        sess.run(tf.unique(x).y, {x: [[1]]})
    assert tf.gradients(tf.cast(tf.unique(tf.constant([1.0])).y, tf.float32),
                        tf.constant(1.0)) == [None]
