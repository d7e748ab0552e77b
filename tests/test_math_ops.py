"""Math ops against NumPy: elementwise, reductions, matrices, casts, ranges, operators.

One table per family drives the numeric checks; each row is run on every
device in ``conftest.DEVICES`` over scalars, vectors, matrices, broadcasting
pairs and empty tensors.  The rest checks what TF1 decides while the graph is
built (static shapes, ``ValueError``/``TypeError``), what fails only at run
time (``tf.errors.InvalidArgumentError`` naming the op), and op names.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.ops import math_ops, unary_ops
from minitf.ops.gradient_util import broadcast_gradient_args
from tests.conftest import run_on, run_without_gpu_kernel

FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64)
NUMBERS = FLOATS + INTS

# Operand shapes for binary ops: equal shapes, scalar with tensor, broadcasting, empty.
BINARY_SHAPES = [((), ()), ((4,), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((3, 1), (1, 4)),
                 ((2, 3, 4), (4,)), ((0, 3), (3,))]
UNARY_SHAPES = [(), (5,), (2, 3), (0, 3)]

_rng = np.random.default_rng(0)


def values(shape, dtype, domain="any"):
    """Test data of ``shape``: small integers (exact in every dtype), and for
    floats a fractional part; ``domain`` keeps them where the op is defined."""
    data = _rng.integers(-5, 6, size=shape).astype(np.float64)
    if np.issubdtype(dtype, np.floating):
        data += _rng.uniform(0.1, 0.9, size=shape)
    if domain == "positive":
        data = np.abs(data) + 0.5
    elif domain == "nonzero":
        data = np.where(data == 0, 3, data)
    elif domain == "exponent":
        data = np.abs(np.round(data)) % 4
    elif domain == "unit":
        data = data / 6.0
    return data.astype(dtype)


# ---- elementwise binary ------------------------------------------------------------------
BINARY = [
    # (tf function, NumPy reference, dtypes, domain of y)
    (tf.add, np.add, NUMBERS, "any"),
    (math_ops.add_v2, np.add, NUMBERS, "any"),
    (tf.subtract, np.subtract, NUMBERS, "any"),
    (tf.multiply, np.multiply, NUMBERS, "any"),
    (tf.realdiv, np.true_divide, FLOATS, "nonzero"),
    (tf.floordiv, np.floor_divide, NUMBERS, "nonzero"),
    (tf.floor_div, np.floor_divide, NUMBERS, "nonzero"),
    (tf.floormod, np.mod, NUMBERS, "nonzero"),
    (tf.pow, np.power, NUMBERS, "exponent"),
    (tf.maximum, np.maximum, NUMBERS, "any"),
    (tf.minimum, np.minimum, NUMBERS, "any"),
    (tf.squared_difference, lambda x, y: np.square(x - y), NUMBERS, "any"),
    (tf.equal, np.equal, NUMBERS, "any"),
    (tf.not_equal, np.not_equal, NUMBERS, "any"),
    (tf.less, np.less, NUMBERS, "any"),
    (tf.less_equal, np.less_equal, NUMBERS, "any"),
    (tf.greater, np.greater, NUMBERS, "any"),
    (tf.greater_equal, np.greater_equal, NUMBERS, "any"),
]


def _binary_cases():
    for fn, ref, dtypes, domain in BINARY:
        for dtype in dtypes:
            for x_shape, y_shape in BINARY_SHAPES:
                yield pytest.param(fn, ref, dtype, domain, x_shape, y_shape,
                                   id="%s-%s-%s-%s" % (fn.__name__, np.dtype(dtype).name,
                                                       x_shape, y_shape))


@pytest.mark.parametrize("fn, ref, dtype, domain, x_shape, y_shape", list(_binary_cases()))
def test_binary_op_matches_numpy(device, fn, ref, dtype, domain, x_shape, y_shape):
    x = values(x_shape, dtype)
    y = values(y_shape, dtype, domain)
    out = run_on(device, fn, x, y)
    expected = ref(x, y)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("fn, ref", [(tf.logical_and, np.logical_and),
                                     (tf.logical_or, np.logical_or),
                                     (tf.logical_xor, np.logical_xor)])
@pytest.mark.parametrize("x_shape, y_shape", BINARY_SHAPES)
def test_logical_op_matches_numpy(device, fn, ref, x_shape, y_shape):
    x = _rng.random(x_shape) < 0.5
    y = _rng.random(y_shape) < 0.5
    out = run_on(device, fn, x, y)
    np.testing.assert_array_equal(out, ref(x, y))
    assert out.dtype == np.bool_


@pytest.mark.parametrize("dtype, result_dtype", [
    (np.int8, np.float32), (np.int16, np.float32), (np.uint8, np.float32),
    (np.uint16, np.float32), (np.int32, np.float64), (np.int64, np.float64),
    (np.float16, np.float16), (np.float32, np.float32), (np.float64, np.float64)])
def test_truediv_casts_integers_to_floats_as_tf1(device, dtype, result_dtype):
    x = np.array([7, 1, 9], dtype)
    y = np.array([2, 3, 4], dtype)
    if dtype == np.float16:   # the GPU device has no float16 kernels
        out = run_without_gpu_kernel(device, "RealDiv", tf.truediv, x, y)
    else:
        out = run_on(device, tf.truediv, x, y)
    assert out.dtype == result_dtype
    np.testing.assert_allclose(out, [3.5, 1 / 3, 2.25], rtol=1e-3)


def test_truediv_ops_and_names():
    x = tf.constant([7, 1])
    quotient = tf.truediv(x, 2)
    assert quotient.op.name == "truediv" and quotient.op.type == "RealDiv"
    assert [t.op.name for t in quotient.op.inputs] == ["truediv/Cast", "truediv/Cast_1"]
    assert tf.divide(x, 2).op.name == "truediv_1"
    floats = tf.constant([1.0])
    assert [t.op.type for t in tf.truediv(floats, floats).op.inputs] == ["Const", "Const"]


def test_division_and_remainder_signs(sess):
    """Floor semantics: the quotient rounds down, the remainder takes the divisor's sign."""
    x, y = tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2])
    np.testing.assert_array_equal(sess.run(x // y), [3, -4, -4, 3])
    np.testing.assert_array_equal(sess.run(x % y), [1, 1, -1, -1])
    np.testing.assert_array_equal(sess.run(tf.div(x, y)), [3, -4, -4, 3])
    np.testing.assert_allclose(sess.run(tf.div(7.0, -2.0)), -3.5)
    assert tf.div(x, y).op.type == "FloorDiv" and tf.div(1.0, 2.0).op.type == "RealDiv"
    assert tf.mod is tf.floormod


# ---- elementwise unary -------------------------------------------------------------------
UNARY = [
    # (tf function, NumPy reference, dtypes, domain of x)
    (tf.negative, np.negative, NUMBERS, "any"),
    (tf.abs, np.abs, NUMBERS, "any"),
    (tf.sign, np.sign, NUMBERS, "any"),
    (tf.square, np.square, NUMBERS, "any"),
    (tf.sqrt, np.sqrt, FLOATS, "positive"),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS, "positive"),
    (tf.reciprocal, np.reciprocal, FLOATS, "nonzero"),
    (tf.exp, np.exp, FLOATS, "any"),
    (tf.expm1, np.expm1, FLOATS, "unit"),
    (tf.log, np.log, FLOATS, "positive"),
    (tf.log1p, np.log1p, FLOATS, "unit"),
    (tf.sin, np.sin, FLOATS, "any"),
    (tf.cos, np.cos, FLOATS, "any"),
    (tf.tan, np.tan, FLOATS, "unit"),
    (tf.tanh, np.tanh, FLOATS, "any"),
    (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), FLOATS, "any"),
    (tf.floor, np.floor, FLOATS, "any"),
    (tf.ceil, np.ceil, FLOATS, "any"),
    (tf.round, np.round, FLOATS, "any"),
    (tf.is_nan, np.isnan, FLOATS, "any"),
    (tf.is_inf, np.isinf, FLOATS, "any"),
    (tf.is_finite, np.isfinite, FLOATS, "any"),
    (tf.logical_not, np.logical_not, (np.bool_,), "any"),
]


def _unary_cases():
    for fn, ref, dtypes, domain in UNARY:
        for dtype in dtypes:
            for shape in UNARY_SHAPES:
                yield pytest.param(fn, ref, dtype, domain, shape,
                                   id="%s-%s-%s" % (fn.__name__, np.dtype(dtype).name, shape))


@pytest.mark.parametrize("fn, ref, dtype, domain, shape", list(_unary_cases()))
def test_unary_op_matches_numpy(device, fn, ref, dtype, domain, shape):
    x = values(shape, dtype, domain)
    out = run_on(device, fn, x)
    expected = ref(x)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_special_values(device):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0], np.float32)
    np.testing.assert_array_equal(run_on(device, tf.is_nan, x), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(run_on(device, tf.is_inf, x), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(run_on(device, tf.is_finite, x), [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(run_on(device, tf.log, x)[1:], [np.inf, np.nan, -np.inf, np.nan])
    np.testing.assert_array_equal(run_on(device, tf.reciprocal, x)[3:], [np.inf, -1.0])


def test_round_is_bankers_rounding(device):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6], np.float32)
    np.testing.assert_array_equal(run_on(device, tf.round, x), [0, 2, 2, -0.0, -2, 2, 3])


def test_round_of_integers_is_the_input():
    x = tf.constant([1, 2])
    assert tf.round(x) is x


def test_sigmoid_does_not_overflow(device):
    x = np.array([-1000.0, 0.0, 1000.0], np.float32)
    np.testing.assert_array_equal(run_on(device, tf.sigmoid, x), [0.0, 0.5, 1.0])


# ---- Cast ---------------------------------------------------------------------------------
CASTS = [
    # (input, target dtype, expected): TF1's conversions
    (np.array([-1.7, 1.7, 2.5, -0.2], np.float32), tf.int32, [-1, 1, 2, 0]),
    (np.array([-1.7, 1.7], np.float64), tf.int64, [-1, 1]),
    (np.array([0.0, 2.0, -1.0, np.nan], np.float32), tf.bool, [False, True, True, True]),
    (np.array([True, False]), tf.float32, [1.0, 0.0]),
    (np.array([True, False]), tf.int32, [1, 0]),
    (np.array([0, 3, -2], np.int32), tf.bool, [False, True, True]),
    (np.array([-1, 256], np.int32), tf.uint8, [255, 0]),
    (np.array([1, 2], np.int64), tf.float16, [1.0, 2.0]),
    (np.zeros((0, 3), np.float32), tf.int32, np.zeros((0, 3), np.int32)),
]


@pytest.mark.parametrize("x, dtype, expected", CASTS)
def test_cast(device, x, dtype, expected):
    def build(t):
        return tf.cast(t, dtype)
    if dtype == tf.float16:
        # No float16 tensors live on the GPU device: a Cast to float16 has no kernel
        # there (kernel_dtypes counts a Cast's output, docs/concepts/opencl.rst).
        out = run_without_gpu_kernel(device, "Cast", build, x)
    else:
        out = run_on(device, build, x)
    assert out.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(out, expected)


def test_cast_to_same_dtype_is_the_input_and_to_helpers():
    x = tf.constant([1, 2])
    assert tf.cast(x, tf.int32) is x
    assert tf.cast(x, "float32").op.type == "Cast"
    assert tf.cast(x, tf.float32).op.get_attr("DstT") == tf.float32
    for fn, dtype, name in [(tf.to_float, tf.float32, "ToFloat"),
                            (tf.to_double, tf.float64, "ToDouble"),
                            (tf.to_int64, tf.int64, "ToInt64")]:
        out = fn(x)
        assert out.dtype == dtype and out.op.name == name
    assert tf.to_int32(tf.constant(1.5)).op.name == "ToInt32"


# ---- where, clip_by_value, add_n -------------------------------------------------------------
def test_where_with_values_selects_elements_or_rows(device):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = -x
    same_shape = np.array([[True, False, True], [False, True, False]])
    np.testing.assert_array_equal(run_on(device, tf.where, same_shape, x, y),
                                  np.where(same_shape, x, y))
    rows = np.array([False, True])
    np.testing.assert_array_equal(run_on(device, tf.where, rows, x, y), [[0, -1, -2], [3, 4, 5]])
    np.testing.assert_array_equal(run_on(device, tf.where, np.array(True), x, y), x)


def test_where_without_values_finds_coordinates(device):
    condition = np.array([[True, False], [False, True], [True, True]])
    out = run_without_gpu_kernel(device, "Where", tf.where, condition)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [[0, 0], [1, 1], [2, 0], [2, 1]])
    empty = run_without_gpu_kernel(device, "Where", tf.where, np.zeros((0, 3), bool))
    assert empty.shape == (0, 2)
    numbers = run_without_gpu_kernel(device, "Where", tf.where,
                                     np.array([0, 3, 0, -1], np.int32))
    np.testing.assert_array_equal(numbers, [[1], [3]])


def test_where_v2_broadcasts(device):
    condition = np.array([True, False, True])
    x = np.ones((2, 3), np.float32)
    out = run_on(device, lambda c, t: tf.where_v2(c, t, 0.0), condition, x)
    np.testing.assert_array_equal(out, [[1, 0, 1], [1, 0, 1]])


def test_where_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.where(tf.placeholder(tf.bool, [None]), x, x).shape.as_list() == [None, 3]
    assert tf.where(x > 0).shape.as_list() == [None, 2]
    assert tf.where(tf.placeholder(tf.bool)).shape.as_list() == [None, None]
    assert tf.where_v2(tf.placeholder(tf.bool, [4, 1]), x, 0.0).shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and"):
        tf.where([True, False, True], [[1, 2], [3, 4]], [[5, 6], [7, 8]])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.where([[True, False]], [[1, 2], [3, 4]], [[5, 6], [7, 8]])  # no broadcasting in v1
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where([True], [1])
    with pytest.raises(TypeError, match="'condition' has DataType int32"):
        tf.where([1, 0], [1, 2], [3, 4])
    with pytest.raises(TypeError):
        tf.where([True], [1], [2.0])


def test_select_checks_fed_shapes_at_run_time(sess):
    condition = tf.placeholder(tf.bool)
    x = tf.placeholder(tf.float32)
    out = tf.where(condition, x, x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Number of batches"):
        sess.run(out, {condition: [True, False, True], x: np.ones((2, 2))})


@pytest.mark.parametrize("t_shape, bound_shape", [((2, 3), ()), ((2, 3), (3,)), ((0, 3), ())])
def test_clip_by_value(device, t_shape, bound_shape):
    t = values(t_shape, np.float32)
    low = np.full(bound_shape, -1.0, np.float32)
    out = run_on(device, lambda x, lo: tf.clip_by_value(x, lo, 2.0), t, low)
    np.testing.assert_array_equal(out, np.clip(t, -1.0, 2.0))


def test_clip_by_value_is_minimum_then_maximum():
    clipped = tf.clip_by_value(tf.constant([1, 5]), 0, 3)
    assert clipped.op.name == "clip_by_value" and clipped.op.type == "Maximum"
    assert clipped.op.inputs[0].op.name == "clip_by_value/Minimum"
    with pytest.raises(ValueError):
        tf.clip_by_value(tf.constant([1, 5]), [[0], [1]], 3)  # would broadcast t


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 3)])
@pytest.mark.parametrize("dtype", NUMBERS)
def test_add_n(device, shape, dtype):
    arrays = [values(shape, dtype) for _ in range(3)]
    out = run_on(device, lambda *xs: tf.add_n(list(xs)), *arrays)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, arrays[0] + arrays[1] + arrays[2], rtol=1e-6)


def test_add_n_names_and_errors():
    x = tf.constant([1.0, 2.0])
    assert tf.add_n([x, x, [1.0, 1.0]]).op.type == "AddN"
    assert tf.add_n([x]) is x
    assert tf.add_n([x], name="total").op.name == "total"
    with pytest.raises(ValueError):
        tf.add_n([])
    with pytest.raises(ValueError):
        tf.add_n([[1], [2, 3]])
    with pytest.raises(TypeError):
        tf.add_n([x, tf.constant([1, 2])])


# ---- reductions ---------------------------------------------------------------------------
REDUCTIONS = [
    (tf.reduce_sum, np.sum, NUMBERS),
    (tf.reduce_mean, np.mean, FLOATS),
    (tf.reduce_max, np.max, NUMBERS),
    (tf.reduce_min, np.min, NUMBERS),
    (tf.reduce_prod, np.prod, NUMBERS),
    (tf.reduce_logsumexp,
     lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)), FLOATS),
]
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], []]


def _reduction_cases():
    for fn, ref, dtypes in REDUCTIONS:
        for dtype in dtypes:
            for axis in AXES:
                for keepdims in (False, True):
                    yield pytest.param(fn, ref, dtype, axis, keepdims, id="%s-%s-%s-%s" % (
                        fn.__name__, np.dtype(dtype).name, axis, keepdims))


@pytest.mark.parametrize("fn, ref, dtype, axis, keepdims", list(_reduction_cases()))
def test_reduction_matches_numpy(device, fn, ref, dtype, axis, keepdims):
    x = values((2, 3, 4), dtype, "unit" if fn is tf.reduce_prod else "any")
    out = run_on(device, lambda t: fn(t, axis=axis, keepdims=keepdims), x)
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = ref(x, axis=np_axis, keepdims=keepdims).astype(dtype)
    assert out.shape == expected.shape and out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=_sum_tolerance(fn, x, np_axis))


def _sum_tolerance(fn, x, axis):
    """The absolute error a float sum may have when added up in another order.

    A device adds the terms in its own order (the GPU by work groups, NumPy
    pairwise), and a sum whose terms cancel has a large *relative* error (in one
    case here, eight terms of size up to 6 sum to 0.0102).  A sum of ``n`` terms in any
    order is within ``n * eps * sum(|x_i|)`` of the exact sum (Higham,
    "Accuracy and Stability of Numerical Algorithms", 4.2); a mean is that over ``n``.
    Here: at most 8 terms of at most 6 in float32, a bound of about 5e-5.
    """
    if fn not in (tf.reduce_sum, tf.reduce_mean) or not np.issubdtype(x.dtype, np.floating):
        return 0
    terms = x.size // np.sum(x, axis=axis).size
    bound = terms * np.finfo(x.dtype).eps * np.abs(x).sum(axis=axis).max()
    return bound / terms if fn is tf.reduce_mean else bound


@pytest.mark.parametrize("fn, ref", [(tf.reduce_any, np.any), (tf.reduce_all, np.all)])
@pytest.mark.parametrize("axis", AXES)
def test_boolean_reductions(device, fn, ref, axis):
    x = _rng.random((2, 3, 4)) < 0.7
    out = run_on(device, lambda t: fn(t, axis), x)
    np.testing.assert_array_equal(out, ref(x, axis=tuple(axis) if isinstance(axis, list) else axis))


def test_logsumexp_does_not_overflow(sess):
    x = tf.constant([[0.0, 0.0], [1000.0, 1000.0], [-np.inf, -np.inf]])
    result = tf.reduce_logsumexp(x, 1)
    assert result.op.name == "ReduceLogSumExp" and result.shape.as_list() == [3]
    np.testing.assert_allclose(sess.run(result), [np.log(2), 1000 + np.log(2), -np.inf],
                               rtol=1e-6)
    assert tf.reduce_logsumexp(x).shape.as_list() == []


def test_integer_mean_truncates_toward_zero(sess):
    assert sess.run(tf.reduce_mean([-1, -2])) == -1
    assert sess.run(tf.reduce_mean([1, 2])) == 1
    np.testing.assert_array_equal(sess.run(tf.reduce_mean([[7, -7], [2, -2]], 0)), [4, -4])
    assert sess.run(tf.reduce_mean(tf.constant([], tf.int32))) == 0
    assert np.isnan(sess.run(tf.reduce_mean(tf.constant([], tf.float32))))


def test_empty_reductions_give_the_identity(device):
    x = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(run_on(device, lambda t: tf.reduce_sum(t, 0), x), [0, 0, 0])
    np.testing.assert_array_equal(run_on(device, lambda t: tf.reduce_prod(t, 0), x), [1, 1, 1])
    np.testing.assert_array_equal(run_on(device, lambda t: tf.reduce_max(t, 0), x), [-np.inf] * 3)
    assert run_on(device, lambda t: tf.reduce_max(t, 1), x).shape == (0,)
    ints = np.zeros((0, 2), np.int32)
    np.testing.assert_array_equal(run_on(device, lambda t: tf.reduce_min(t, 0), ints),
                                  [np.iinfo(np.int32).max] * 2)


def test_reduction_deprecated_argument_names(sess):
    x = tf.constant([[1, 2], [3, 4]])
    np.testing.assert_array_equal(sess.run(tf.reduce_sum(x, reduction_indices=[1])), [3, 7])
    assert tf.reduce_sum(x, 1, keep_dims=True).shape.as_list() == [2, 1]
    with pytest.raises(ValueError, match="Cannot specify both 'reduction_indices' and 'axis'"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)


@pytest.mark.parametrize("build, expected", [
    (lambda x: tf.reduce_sum(x), []),
    (lambda x: tf.reduce_sum(x, 0), [3, 4]),
    (lambda x: tf.reduce_sum(x, -1), [None, 3]),
    (lambda x: tf.reduce_mean(x, [0, 2], keepdims=True), [1, 3, 1]),
    (lambda x: tf.reduce_max(x, [1, 1]), [None, 4]),
    (lambda x: tf.reduce_sum(x, tf.placeholder(tf.int32)), None),
    (lambda x: tf.reduce_sum(x, tf.placeholder(tf.int32), keepdims=True), [None, None, None]),
    (lambda x: tf.argmax(x), [3, 4]),
    (lambda x: tf.argmin(x, -1), [None, 3]),
    (lambda x: tf.argmax(x, tf.placeholder(tf.int32, [])), [None, None]),
])
def test_reduction_static_shapes(build, expected):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    shape = build(x).shape
    assert (shape.ndims is None) if expected is None else shape.as_list() == expected


def test_reduction_of_unknown_rank_is_a_scalar(sess):
    x = tf.placeholder(tf.float32)
    total = tf.reduce_sum(x)
    assert total.shape.as_list() == []
    assert tf.reduce_sum(x, 1).shape.ndims is None
    assert sess.run(total, {x: np.ones((2, 3, 4))}) == 24


@pytest.mark.parametrize("build, message", [
    (lambda: tf.reduce_sum([[1, 2], [3, 4]], 2), "Invalid reduction dimension 2 for input with 2"),
    (lambda: tf.reduce_sum([[1, 2], [3, 4]], -3), "Invalid reduction dimension -3"),
    (lambda: tf.reduce_sum([1, 2], [[0]]), "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.argmax([[1, 3], [4, 0]], 2), r"Dimension \(2\) must be in the range \[-2, 2\)"),
])
def test_reduction_axis_out_of_range_is_a_construction_error(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("fn, axes, message", [
    (tf.reduce_sum, [0, 0], "duplicate dimension: 0"),
    (tf.reduce_sum, [2], "Invalid reduction dimension"),
    (tf.argmax, 0, "Reduction axis 0 is empty"),
])
def test_reduction_axes_are_checked_at_run_time(sess, fn, axes, message):
    fed_axes = tf.placeholder(tf.int32)
    out = fn(tf.constant(np.zeros((0, 3), np.float32)), fed_axes)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(out, {fed_axes: axes})


def test_reductions_reject_other_dtypes():
    with pytest.raises(TypeError):
        tf.reduce_sum([True, False])
    with pytest.raises(TypeError):
        tf.reduce_all(tf.constant([1, 0]))
    with pytest.raises(TypeError):
        tf.reduce_sum([1, 2], tf.constant(0.0))


# ---- ArgMax and ArgMin ------------------------------------------------------------------------
@pytest.mark.parametrize("fn, ref", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("dtype", NUMBERS)
def test_arg_reductions_match_numpy(device, fn, ref, axis, dtype):
    x = values((2, 3, 4), dtype)
    out = run_on(device, lambda t: fn(t, axis), x)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, ref(x, axis=0 if axis is None else axis))


def test_argmax_ties_output_type_and_names(sess):
    x = tf.constant([[1, 3, 3], [4, 0, 4]])
    assert tf.argmax(x).op.name == "ArgMax" and tf.argmin(x).op.name == "ArgMin"
    np.testing.assert_array_equal(sess.run(tf.argmax(x)), [1, 0, 1])  # TF1's default axis is 0
    np.testing.assert_array_equal(sess.run(tf.argmax(x, dimension=1)), [1, 0])
    narrow = tf.argmin(x, 1, output_type=tf.int32)
    assert narrow.dtype == tf.int32 and sess.run(narrow).dtype == np.int32
    with pytest.raises(TypeError):
        tf.argmax(x, output_type=tf.float32)


# ---- matrices -----------------------------------------------------------------------------
MATMULS = [
    # (a shape, b shape, keyword arguments, op type)
    ((2, 3), (3, 4), {}, "MatMul"),
    ((3, 2), (3, 4), {"transpose_a": True}, "MatMul"),
    ((2, 3), (4, 3), {"transpose_b": True}, "MatMul"),
    ((3, 2), (4, 3), {"adjoint_a": True, "adjoint_b": True}, "MatMul"),
    ((0, 3), (3, 4), {}, "MatMul"),
    ((2, 0), (0, 4), {}, "MatMul"),
    ((5, 2, 3), (5, 3, 4), {}, "BatchMatMulV2"),
    ((5, 2, 3), (3, 4), {}, "BatchMatMulV2"),
    ((2, 1, 2, 3), (3, 4, 3), {"transpose_b": True}, "BatchMatMulV2"),
    ((5, 3, 2), (1, 3, 4), {"adjoint_a": True}, "BatchMatMulV2"),
]


@pytest.mark.parametrize("a_shape, b_shape, kwargs, op_type", MATMULS)
@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.int32, np.int64))
def test_matmul_matches_numpy(device, a_shape, b_shape, kwargs, op_type, dtype):
    a, b = values(a_shape, dtype), values(b_shape, dtype)
    out = run_on(device, lambda x, y: tf.matmul(x, y, **kwargs), a, b)
    if kwargs.get("transpose_a") or kwargs.get("adjoint_a"):
        a = np.swapaxes(a, -1, -2)
    if kwargs.get("transpose_b") or kwargs.get("adjoint_b"):
        b = np.swapaxes(b, -1, -2)
    expected = np.matmul(a, b)
    assert out.shape == expected.shape and out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    product = tf.matmul(tf.placeholder(tf.float32, a_shape), tf.placeholder(tf.float32, b_shape),
                        **kwargs)
    assert product.op.type == op_type


@pytest.mark.parametrize("a_shape, b_shape, expected", [
    ([None, 3], [3, 4], [None, 4]),
    ([2, None], [None, 4], [2, 4]),
    ([None, 2, 3], [3, None], [None, 2, None]),
    ([7, 1, 2, 3], [5, 3, 4], [7, 5, 2, 4]),
    (None, [3, 4], None),
])
def test_matmul_static_shapes(a_shape, b_shape, expected):
    a = tf.placeholder(tf.float32, a_shape)
    b = tf.placeholder(tf.float32, b_shape)
    shape = tf.matmul(a, b).shape
    assert (shape.ndims is None) if expected is None else shape.as_list() == expected


@pytest.mark.parametrize("a_shape, b_shape, kwargs, message", [
    ([2, 3], [4, 5], {}, "Dimensions must be equal, but are 3 and 4"),
    ([2, 2, 3], [2, 4, 5], {}, "Dimensions must be equal, but are 3 and 4"),
    ([3], [3, 5], {}, "Shape must be rank 2 but is rank 1"),
    ([2, 2, 3], [3], {}, "Shape must be at least rank 2 but is rank 1"),
    ([2, 2, 3], [3, 3, 5], {}, "Dimensions must be equal, but are 2 and 3"),
    ([2, 3], [3, 5], {"transpose_a": True, "adjoint_a": True}, "Only one of"),
])
def test_matmul_construction_errors(a_shape, b_shape, kwargs, message):
    a = tf.placeholder(tf.float32, a_shape)
    b = tf.placeholder(tf.float32, b_shape)
    with pytest.raises(ValueError, match=message):
        tf.matmul(a, b, **kwargs)


def test_matmul_error_names_the_op_and_shapes():
    with pytest.raises(ValueError) as info:
        tf.matmul(tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [4, 5]))
    assert "for 'MatMul' (op: 'MatMul') with input shapes: [2,3], [4,5]" in str(info.value)


def test_matmul_dtype_errors():
    with pytest.raises(TypeError):
        tf.matmul(tf.placeholder(tf.int32, [2, 3]), tf.placeholder(tf.float32, [3, 5]))
    with pytest.raises(TypeError):
        tf.matmul(tf.placeholder(tf.int8, [2, 3]), tf.placeholder(tf.int8, [3, 5]))


def test_matmul_fed_shapes_are_checked_at_run_time(sess):
    a = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        sess.run(tf.matmul(a, a), {a: np.ones((2, 3))})


@pytest.mark.parametrize("shape", [(3, 3), (4, 2, 2), (0, 2, 2)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_matrix_inverse_and_determinant(device, shape, dtype):
    x = (values(shape, dtype) + 4 * np.eye(shape[-1])).astype(dtype)
    inverse = run_without_gpu_kernel(device, "MatrixInverse", tf.matrix_inverse, x)
    assert inverse.dtype == dtype
    np.testing.assert_allclose(inverse, np.linalg.inv(x), rtol=1e-4, atol=1e-6)
    adjoint = run_without_gpu_kernel(device, "MatrixInverse",
                                     lambda t: tf.matrix_inverse(t, adjoint=True), x)
    np.testing.assert_allclose(adjoint, np.linalg.inv(np.swapaxes(x, -1, -2)), rtol=1e-4,
                               atol=1e-6)
    determinant = run_without_gpu_kernel(device, "MatrixDeterminant", tf.matrix_determinant, x)
    assert determinant.shape == shape[:-2] and determinant.dtype == dtype
    np.testing.assert_allclose(determinant, np.linalg.det(x), rtol=1e-4)


def test_singular_matrix_inverse_is_an_invalid_argument_naming_the_op(sess):
    inverse = tf.matrix_inverse(tf.placeholder_with_default([[1.0, 2.0], [2.0, 4.0]], [2, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible.") as info:
        sess.run(inverse)
    assert "MatrixInverse" in info.value.message
    assert info.value.op is inverse.op


def test_matrix_shape_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.matrix_inverse(tf.placeholder(tf.float32, [2, 3]))
    with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
        tf.matrix_determinant([1.0])
    with pytest.raises(TypeError):
        tf.matrix_inverse([[1, 2], [3, 4]])
    assert tf.matrix_determinant(tf.placeholder(tf.float32, [None, 3, 3])).shape.as_list() == [None]


# ---- Range ------------------------------------------------------------------------------------
RANGES = [
    # (arguments, keyword arguments, expected, dtype)
    ((5,), {}, np.arange(5), np.int32),
    ((3, 18, 3), {}, [3, 6, 9, 12, 15], np.int32),
    ((5, 1, -2), {}, [5, 3], np.int32),
    ((0,), {}, [], np.int32),
    ((2, 2), {}, [], np.int32),
    ((1, 7, 2.5), {}, [1.0, 3.5, 6.0], np.float32),
    ((0.0, 1.0, 0.3), {}, np.float32(0.3) * np.arange(4, dtype=np.float32), np.float32),
    ((4,), {"dtype": tf.int64}, [0, 1, 2, 3], np.int64),
    ((1, 3), {"dtype": tf.float64}, [1.0, 2.0], np.float64),
]


@pytest.mark.parametrize("args, kwargs, expected, dtype", RANGES)
def test_range(sess, args, kwargs, expected, dtype):
    out = tf.range(*args, **kwargs)
    assert out.dtype == dtype and out.shape.as_list() == [len(expected)]
    value = sess.run(out)
    assert value.dtype == dtype
    np.testing.assert_array_equal(value, expected)


def test_range_names_and_casts():
    r = tf.range(1.0, 5)
    assert r.op.name == "range" and r.op.type == "Range"
    assert [t.op.name for t in r.op.inputs] == ["range/start", "range/Cast", "range/Cast_1"]


def test_range_errors(sess):
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(0, 5, 0)
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/1"):
        tf.range(5, 1)
    delta = tf.placeholder(tf.int32, [])
    fed = tf.range(0, 5, delta)
    assert fed.shape.as_list() == [None]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Requires delta != 0") as info:
        sess.run(fed, {delta: 0})
    assert "[[node %s " % fed.op.name in info.value.message
    np.testing.assert_array_equal(sess.run(fed, {delta: 2}), [0, 2, 4])


# ---- dtype rules --------------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda: tf.constant(1) + tf.constant(1.0),
    lambda: tf.add(tf.constant(1.0), tf.constant(1.0, tf.float64)),
    lambda: tf.constant(1) + 1.5,
    lambda: tf.constant(1) / tf.constant(1.0),
    lambda: tf.multiply(tf.constant(True), tf.constant(False)),
    lambda: tf.sqrt(tf.constant(4)),
    lambda: tf.exp(tf.constant([1, 2])),
    lambda: tf.abs(tf.constant(1, tf.uint8)),
    lambda: tf.less(tf.constant(True), tf.constant(False)),
    lambda: tf.logical_and(tf.constant(1), tf.constant(0)),
    lambda: tf.constant([True]) / tf.constant([False]),
    lambda: tf.pow(tf.constant(2), 0.5),
    lambda: tf.cast(tf.constant(1), "complex64"),
])
def test_dtype_mixes_and_disallowed_dtypes_are_type_errors(build):
    with pytest.raises(TypeError):
        build()


def test_python_numbers_adopt_the_tensor_dtype(sess):
    x = tf.constant([1.0, 2.0])
    assert (x + 1).dtype == tf.float32 and (1 - x).dtype == tf.float32
    assert (2 * tf.constant(3, tf.int64)).dtype == tf.int64
    assert (tf.constant([2], tf.float64) ** 2).dtype == tf.float64
    np.testing.assert_allclose(sess.run(1 / x), [1.0, 0.5])
    assert sess.run(tf.constant(5, tf.uint8) - 7) == 254  # wraps, as TF


def test_broadcast_shape_errors_at_construction():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.placeholder(tf.float32, [2, 3]) + tf.placeholder(tf.float32, [4])
    x = tf.placeholder(tf.float32, [None, 3])
    assert (x * tf.placeholder(tf.float32, [5, 1])).shape.as_list() == [5, 3]
    assert (x - tf.placeholder(tf.float32)).shape.ndims is None


def test_integer_division_by_zero_is_a_run_time_error(sess):
    y = tf.placeholder(tf.int32)
    for out in (tf.floordiv(5, y), tf.floormod(5, y)):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            sess.run(out, {y: 0})
    assert sess.run(tf.truediv(5, y), {y: 0}) == np.inf
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        sess.run(tf.pow(2, y), {y: -1})


# ---- operators and op names -------------------------------------------------------------------
OPERATORS = [
    # (expression, op name, op type)
    (lambda a, b: a + b, "add", "Add"),
    (lambda a, b: a - b, "sub", "Sub"),
    (lambda a, b: a * b, "mul", "Mul"),
    (lambda a, b: a / b, "truediv", "RealDiv"),
    (lambda a, b: a // b, "floordiv", "FloorDiv"),
    (lambda a, b: a % b, "mod", "FloorMod"),
    (lambda a, b: a ** b, "pow", "Pow"),
    (lambda a, b: a @ b, "matmul", "MatMul"),
    (lambda a, b: -a, "Neg", "Neg"),
    (lambda a, b: abs(a), "Abs", "Abs"),
    (lambda a, b: a < b, "Less", "Less"),
    (lambda a, b: a <= b, "LessEqual", "LessEqual"),
    (lambda a, b: a > b, "Greater", "Greater"),
    (lambda a, b: a >= b, "GreaterEqual", "GreaterEqual"),
    (lambda a, b: (a > 0) & (b > 0), "and", "LogicalAnd"),
    (lambda a, b: (a > 0) | (b > 0), "or", "LogicalOr"),
    (lambda a, b: (a > 0) ^ (b > 0), "xor", "LogicalAnd"),
    (lambda a, b: ~(a > 0), "LogicalNot", "LogicalNot"),
]


@pytest.mark.parametrize("expression, name, op_type", OPERATORS)
def test_operator_names(expression, name, op_type):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    b = tf.constant([[5.0, 6.0], [7.0, 8.0]])
    out = expression(a, b)
    assert out.op.name == name and out.op.type == op_type


def test_operators_compute_like_numpy(sess):
    a_np = np.array([[1.0, -2.0], [3.0, 4.5]], np.float32)
    b_np = np.array([[5.0, 6.0], [-7.0, 8.0]], np.float32)
    a, b = tf.constant(a_np), tf.constant(b_np)
    results = sess.run([a + b, a - b, a * b, a / b, a // b, a % b, abs(a) ** 2, a @ b, -a, a < b,
                        2.0 - a, 3.0 / a, 2.0 ** a, (a > 0) ^ (b > 0)])
    expected = [a_np + b_np, a_np - b_np, a_np * b_np, a_np / b_np, a_np // b_np, a_np % b_np,
                np.abs(a_np) ** 2, a_np @ b_np, -a_np, a_np < b_np, 2 - a_np, 3 / a_np,
                2 ** a_np, (a_np > 0) ^ (b_np > 0)]
    for out, ref in zip(results, expected):
        np.testing.assert_allclose(out, ref, rtol=1e-6)


FUNCTION_NAMES = [
    (tf.add, "Add"), (tf.subtract, "Sub"), (tf.multiply, "Mul"), (tf.realdiv, "RealDiv"),
    (tf.truediv, "truediv"), (tf.divide, "truediv"), (tf.div, "div"), (tf.floordiv, "floordiv"),
    (tf.floor_div, "FloorDiv"), (tf.floormod, "FloorMod"), (tf.pow, "Pow"),
    (tf.maximum, "Maximum"), (tf.minimum, "Minimum"), (tf.squared_difference, "SquaredDifference"),
    (tf.equal, "Equal"), (tf.greater_equal, "GreaterEqual"), (tf.matmul, "MatMul"),
]


@pytest.mark.parametrize("fn, name", FUNCTION_NAMES)
def test_function_default_names(fn, name):
    a, b = tf.constant([[1.0]]), tf.constant([[2.0]])
    assert fn(a, b).op.name == name
    assert fn(a, b, name="mine").op.name == "mine"


def test_logical_xor_is_a_composite_named_after_its_scope():
    xor = tf.logical_xor(tf.constant(True), False)
    assert xor.op.name == "LogicalXor" and xor.op.type == "LogicalAnd"
    assert [t.op.name for t in xor.op.inputs] == ["LogicalXor/LogicalOr", "LogicalXor/LogicalNot"]


def test_reflected_operators_convert_the_python_value():
    a = tf.constant([1.0])
    reflected = 1 - a
    assert reflected.op.name == "sub" and reflected.dtype == tf.float32
    assert [t.op.name for t in reflected.op.inputs] == ["sub/x", "Const"]
    assert [t.name for t in (a * 2).op.inputs] == ["Const:0", "mul/y:0"]


def test_equality_stays_identity():
    a = tf.constant(1.0)
    assert (a == a) is True and (a == tf.constant(1.0)) is False
    assert {a: 1}[a] == 1


# ---- the ops gradients are built from --------------------------------------------------------
BROADCAST_GRADIENT_ARGS = [
    # (s0, s1, r0, r1), as TF's BroadcastGradientArgs computes them
    ([2, 3], [2, 3], [], []), ([1], [1], [], []), ([], [], [], []),
    ([3, 1], [1, 4], [1], [0]), ([2, 3, 4], [4], [], [0, 1]), ([], [2, 3], [0, 1], []),
    ([1, 1], [1], [0, 1], [0, 1]), ([], [1], [0], [0]), ([0, 1], [1, 5], [1], [0]),
    ([1], [0], [0], []), ([2, 1, 3], [1, 3], [1], [0, 1]), ([5, 1], [5, 1, 1], [0, 2], [1, 2]),
]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("s0, s1, r0, r1", BROADCAST_GRADIENT_ARGS)
def test_broadcast_gradient_args_matches_tf(device, s0, s1, r0, r1, dtype):
    out = run_on(device, broadcast_gradient_args, np.array(s0, dtype), np.array(s1, dtype))
    np.testing.assert_array_equal(out[0], r0)
    np.testing.assert_array_equal(out[1], r1)
    assert out[0].dtype == dtype and out[1].dtype == dtype


def test_broadcast_gradient_args_rejects_shapes_that_do_not_broadcast(sess):
    r0, _ = broadcast_gradient_args([2, 3], [4])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\] vs"):
        sess.run(r0)
    with pytest.raises(ValueError, match="must be rank 1"):
        broadcast_gradient_args([[2]], [4])


FUSED_GRADIENTS = [
    # (op wrapper, NumPy reference of dy * f'(x) written with y = f(x), domain of y)
    ("sqrt_grad", lambda y, dy: dy * 0.5 / y, "positive"),
    ("rsqrt_grad", lambda y, dy: dy * -0.5 * y ** 3, "any"),
    ("reciprocal_grad", lambda y, dy: -dy * y ** 2, "any"),
    ("tanh_grad", lambda y, dy: dy * (1 - y ** 2), "unit"),
    ("sigmoid_grad", lambda y, dy: dy * y * (1 - y), "unit"),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize("name, ref, domain", FUSED_GRADIENTS)
def test_fused_unary_gradient_ops_match_numpy(device, name, ref, domain, shape, dtype):
    y, dy = values(shape, dtype, domain), values(shape, dtype)
    out = run_on(device, getattr(unary_ops, name), y, dy)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, ref(y, dy), rtol=1e-5)


def test_add_concatenates_strings_as_tf1_add_does(sess):
    hello, world = tf.constant("Hello, "), tf.constant("World!")
    assert sess.run(hello + world) == b"Hello, World!"
    words = tf.constant(["a", "b"])
    np.testing.assert_array_equal(sess.run(tf.add(words, [["1"], ["2"]])),
                                  np.array([[b"a1", b"b1"], [b"a2", b"b2"]], dtype=object))
    with pytest.raises(TypeError, match="Expected string, got 1"):
        hello + 1
    with pytest.raises(TypeError, match="DataType string not in list"):
        hello * world


def test_add_v2_is_tf2s_add_of_numbers_while_plus_stays_add():
    x = tf.constant([[1.0], [2.0]])
    total = math_ops.add_v2(x, [10.0, 20.0, 30.0])
    assert (total.op.type, total.op.name, total.shape.as_list()) == ("AddV2", "AddV2", [2, 3])
    assert [t.op.name for t in total.op.inputs] == ["Const", "AddV2/y"]
    assert (x + 1.0).op.type == "Add" and tf.add(x, x).op.type == "Add"
    with pytest.raises(TypeError, match="DataType string not in list"):
        math_ops.add_v2(tf.constant("a"), "b")
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type int32"):
        math_ops.add_v2(x, tf.constant([1]))
    with pytest.raises(ValueError, match="\\(op: 'AddV2'\\) with input shapes: \\[2\\], \\[3\\]"):
        math_ops.add_v2(tf.zeros([2]), tf.zeros([3]))


def test_scalar_mul(sess):
    x = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    y = tf.scalar_mul(3.0, x)
    assert y.op.type == "Mul" and y.op.name == "scalar_mul"
    np.testing.assert_array_equal(sess.run(y), np.array([[3.0, -6.0], [9.0, 1.5]]))
    with pytest.raises(ValueError, match="Only scalar multiply works"):
        tf.scalar_mul(tf.constant([1.0, 2.0]), x)
