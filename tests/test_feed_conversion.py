"""The fast conversion of common feed kinds gives what the general path gives.

``make_feed_converter`` converts Python scalars and NumPy scalars of common
types with one ``np.array`` call when the value is in range
(``feeds._exact_scalar_feeds``); everything else goes through ``_to_array``
with TF1's checks.  The two must agree on every value: the same array (dtype,
shape, value) or the same error class.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitf as tf
from minitf.runtime.feeds import _to_array, make_feed_converter

DTYPES = [tf.float32, tf.float64, tf.float16, tf.int32, tf.int64, tf.uint8, tf.bool]

scalars = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-2 ** 70, max_value=2 ** 70),
    st.booleans(),
    st.floats(width=32).map(np.float32),
    st.floats().map(np.float64),
    st.integers(-2 ** 31, 2 ** 31 - 1).map(np.int32),
    st.integers(-2 ** 63, 2 ** 63 - 1).map(np.int64),
    st.booleans().map(np.bool_),
)


def outcome(convert, value):
    """``(dtype, shape, bytes)`` of the converted array, or the error class."""
    try:
        with np.errstate(all="ignore"):
            array = convert(value)
    except (TypeError, ValueError, OverflowError) as e:
        return type(e)
    return array.dtype, array.shape, array.tobytes()


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(DTYPES), scalars)
def test_the_scalar_fast_path_agrees_with_the_general_conversion(dtype, value):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [])
        np_dtype = np.dtype(dtype.as_numpy_dtype)
        fast = outcome(make_feed_converter(x), value)
        general = outcome(lambda v: _to_array(v, np_dtype, x), value)
    assert fast == general


@pytest.mark.parametrize("value, dtype, expected", [
    (1.5, tf.float32, np.float32(1.5)),
    (3, tf.float32, np.float32(3)),
    (np.float64(2.5), tf.float32, np.float32(2.5)),
    (True, tf.int32, np.int32(1)),
    (7, tf.int64, np.int64(7)),
])
def test_common_scalars_run_as_typed_arrays(value, dtype, expected):
    x = tf.placeholder(dtype, [])
    y = tf.identity(x)
    with tf.Session() as sess:
        result = sess.run(y, {x: value})
    assert result == expected and result.dtype == expected.dtype


@pytest.mark.parametrize("value, dtype, error", [
    (2 ** 31, tf.int32, TypeError),          # does not fit: TF1's check
    (10 ** 40, tf.float32, TypeError),       # beyond int64: not a number NumPy can hold
    ("1.5", tf.float32, ValueError),         # a string for a number
])
def test_scalars_out_of_range_keep_their_errors(value, dtype, error):
    x = tf.placeholder(dtype, [])
    with tf.Session() as sess, pytest.raises(error):
        sess.run(tf.identity(x), {x: value})


def test_arrays_of_another_dtype_and_nested_lists_convert_with_shape_checks():
    x = tf.placeholder(tf.float32, [None, 2])
    y = x * 2.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.array([[1.0, 2.0]])}), [[2.0, 4.0]])
        np.testing.assert_array_equal(sess.run(y, {x: [[1, 2], [3, 4]]}), [[2, 4], [6, 8]])
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: np.zeros((2, 3))})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: np.zeros((2,))})
