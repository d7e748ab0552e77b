"""The array ops against NumPy, on every device, with TF1's shapes, names and errors.

One table drives the value tests: each case builds ops from placeholders and
names the NumPy expression it must equal.  Every case runs twice: with the
placeholders' full static shapes (then the inferred static shape must be
exactly the result's shape) and with unknown shapes (then only the kernels'
own logic is at work).  The expected names, static shapes and error messages
below were read off real TensorFlow (``tf.compat.v1`` graph mode).
"""

import numpy as np
import pytest

import minitf as tf
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops import padding_ops, slicing_ops

DTYPES = [np.float32, np.int32, np.int64, np.bool_]
NUMERIC = [np.float32, np.int32, np.int64]


def _array(shape, dtype, offset=0):
    """A deterministic array with distinct values (alternating, for bool)."""
    values = np.arange(offset, offset + int(np.prod(shape))).reshape(shape)
    return (values % 2).astype(dtype) if dtype == np.bool_ else values.astype(dtype)


def _evaluate(device, build, arrays, static):
    """Builds ``build(*placeholders)`` and runs it on ``arrays``.

    Returns:
        ``(output tensors, their values)``, each a list.
    """
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape if static else None)
                        for a in arrays]
        with tf.device(device):
            out = build(*placeholders)
        outputs = out if isinstance(out, list) else [out]
        with tf.Session(graph=graph) as session:
            values = session.run(outputs, dict(zip(placeholders, arrays)))
    return outputs, values


# (id, input shapes, build, NumPy reference, dtypes)
CASES = [
    ("reshape", [(2, 3)], lambda x: tf.reshape(x, [3, 2]), lambda x: x.reshape(3, 2), DTYPES),
    ("reshape_infer", [(2, 3, 2)], lambda x: tf.reshape(x, [3, -1]),
     lambda x: x.reshape(3, -1), DTYPES),
    ("reshape_flat", [(2, 3)], lambda x: tf.reshape(x, [-1]), np.ravel, DTYPES),
    ("reshape_scalar", [()], lambda x: tf.reshape(x, [1, 1]), lambda x: x.reshape(1, 1), DTYPES),
    ("reshape_to_scalar", [(1,)], lambda x: tf.reshape(x, []), lambda x: x.reshape(()), DTYPES),
    ("reshape_empty", [(0, 3)], lambda x: tf.reshape(x, [-1, 3]),
     lambda x: x.reshape(0, 3), DTYPES),
    ("transpose", [(2, 3)], tf.transpose, np.transpose, DTYPES),
    ("transpose_3d", [(2, 3, 4)], tf.transpose, np.transpose, DTYPES),
    ("transpose_perm", [(2, 3, 4)], lambda x: tf.transpose(x, [1, 0, 2]),
     lambda x: np.transpose(x, [1, 0, 2]), DTYPES),
    ("transpose_empty", [(0, 3)], tf.transpose, np.transpose, DTYPES),
    ("matrix_transpose", [(2, 3, 4)], tf.matrix_transpose,
     lambda x: np.swapaxes(x, -1, -2), DTYPES),
    ("reverse", [(2, 3)], lambda x: tf.reverse(x, [0]), lambda x: x[::-1], DTYPES),
    ("reverse_both", [(2, 3)], lambda x: tf.reverse(x, [1, -2]), lambda x: x[::-1, ::-1],
     DTYPES),
    ("concat_0", [(2, 3), (4, 3)], lambda x, y: tf.concat([x, y], 0),
     lambda x, y: np.concatenate([x, y], 0), DTYPES),
    ("concat_neg", [(2, 3), (2, 1)], lambda x, y: tf.concat([x, y], -1),
     lambda x, y: np.concatenate([x, y], -1), DTYPES),
    ("concat_three", [(1, 2), (3, 2), (0, 2)], lambda *xs: tf.concat(list(xs), 0),
     lambda *xs: np.concatenate(xs, 0), DTYPES),
    ("concat_one", [(2, 3)], lambda x: tf.concat([x], 1), lambda x: x, DTYPES),
    ("split", [(6, 4)], lambda x: tf.split(x, 3), lambda x: np.split(x, 3), DTYPES),
    ("split_one", [(6, 4)], lambda x: tf.split(x, 1, axis=1),
     lambda x: np.split(x, 1, axis=1), DTYPES),
    ("split_sizes", [(4, 6)], lambda x: tf.split(x, [1, 2, 3], axis=1),
     lambda x: np.split(x, [1, 3], axis=1), DTYPES),
    ("split_infer", [(5, 2)], lambda x: tf.split(x, [2, -1], axis=-2),
     lambda x: np.split(x, [2], axis=0), DTYPES),
    ("stack", [(2, 3), (2, 3)], lambda x, y: tf.stack([x, y]),
     lambda x, y: np.stack([x, y]), DTYPES),
    ("stack_axis", [(2, 3), (2, 3)], lambda x, y: tf.stack([x, y], axis=-1),
     lambda x, y: np.stack([x, y], axis=-1), DTYPES),
    ("stack_scalars", [(), (), ()], lambda *xs: tf.stack(list(xs), axis=0),
     lambda *xs: np.stack(xs), DTYPES),
    ("unstack", [(3, 2)], lambda x: tf.unstack(x, num=3), list, DTYPES),
    ("unstack_axis", [(3, 2)], lambda x: tf.unstack(x, num=2, axis=-1), lambda x: list(x.T),
     DTYPES),
    ("gather", [(5, 3)], lambda x: tf.gather(x, [4, 0, 2]), lambda x: np.take(x, [4, 0, 2], 0),
     DTYPES),
    ("gather_axis", [(2, 3)], lambda x: tf.gather(x, [[0, 2], [1, 1]], axis=1),
     lambda x: np.take(x, [[0, 2], [1, 1]], 1), DTYPES),
    ("gather_scalar", [(4, 2)], lambda x: tf.gather(x, 3), lambda x: x[3], DTYPES),
    ("gather_empty", [(4, 2)], lambda x: tf.gather(x, np.zeros(0, np.int64)),
     lambda x: x[:0], DTYPES),
    ("unsorted_segment_sum", [(4, 3)], lambda x: tf.unsorted_segment_sum(x, [0, 2, 0, -1], 3),
     lambda x: np.stack([x[0] + x[2], np.zeros_like(x[0]), x[1]]), NUMERIC),
    ("unsorted_segment_sum_2d", [(2, 2, 3)],
     lambda x: tf.unsorted_segment_sum(x, [[1, 1], [0, 1]], 2),
     lambda x: np.stack([x[1, 0], x[0, 0] + x[0, 1] + x[1, 1]]), NUMERIC),
    ("slice", [(4, 5)], lambda x: tf.slice(x, [1, 2], [2, -1]), lambda x: x[1:3, 2:], DTYPES),
    ("slice_empty", [(4, 5)], lambda x: tf.slice(x, [4, 0], [0, 3]), lambda x: x[4:4, 0:3],
     DTYPES),
    ("strided_slice", [(5, 6)], lambda x: tf.strided_slice(x, [1, 5], [4, 0], [2, -2]),
     lambda x: x[1:4:2, 5:0:-2], DTYPES),
    ("strided_slice_masks", [(5, 6)],
     lambda x: tf.strided_slice(x, [9, 1], [9, 0], [1, 1], begin_mask=1, end_mask=3,
                                shrink_axis_mask=0),
     lambda x: x[:, 1:], DTYPES),
    ("strided_slice_grad", [(2, 2)],  # the gradient of x[1:3, 3:0:-2] for a [3, 4] x
     lambda dy: slicing_ops.strided_slice_grad([3, 4], [1, 3], [3, 0], [1, -2], dy),
     lambda dy: np.array([[0, 0, 0, 0], [0, dy[0, 1], 0, dy[0, 0]], [0, dy[1, 1], 0, dy[1, 0]]],
                         dy.dtype), NUMERIC),
    ("strided_slice_grad_masks", [(3,)],  # the gradient of x[1, tf.newaxis, :] for a [2, 3] x
     lambda dy: slicing_ops.strided_slice_grad([2, 3], [1, 0, 0], [2, 0, 0], [1, 1, 1],
                                               tf.reshape(dy, [1, 3]), end_mask=4,
                                               new_axis_mask=2, shrink_axis_mask=1),
     lambda dy: np.stack([np.zeros_like(dy), dy]), NUMERIC),
    ("expand_dims", [(2, 3)], lambda x: tf.expand_dims(x, 1), lambda x: x[:, None], DTYPES),
    ("expand_dims_last", [(2, 3)], lambda x: tf.expand_dims(x, -1), lambda x: x[..., None],
     DTYPES),
    ("expand_dims_legacy", [()], lambda x: tf.expand_dims(x, dim=0), lambda x: x[None], DTYPES),
    ("squeeze", [(1, 3, 1)], tf.squeeze, np.squeeze, DTYPES),
    ("squeeze_axis", [(1, 3, 1)], lambda x: tf.squeeze(x, -1), lambda x: x[..., 0], DTYPES),
    ("squeeze_legacy", [(1, 3, 1)], lambda x: tf.squeeze(x, squeeze_dims=[0]),
     lambda x: x[0], DTYPES),
    ("tile", [(2, 3)], lambda x: tf.tile(x, [2, 1]), lambda x: np.tile(x, [2, 1]), DTYPES),
    ("tile_empty", [(0, 2)], lambda x: tf.tile(x, [2, 2]), lambda x: np.tile(x, [2, 2]),
     DTYPES),
    ("pad", [(2, 3)], lambda x: tf.pad(x, [[1, 2], [0, 1]]),
     lambda x: np.pad(x, [[1, 2], [0, 1]]), DTYPES),
    ("pad_value", [(2, 3)], lambda x: tf.pad(x, [[1, 0], [2, 2]], constant_values=7),
     lambda x: np.pad(x, [[1, 0], [2, 2]], constant_values=7), NUMERIC),
    ("pad_reflect", [(3, 4)], lambda x: tf.pad(x, [[2, 1], [3, 0]], "REFLECT"),
     lambda x: np.pad(x, [[2, 1], [3, 0]], "reflect"), DTYPES),
    ("pad_symmetric", [(3, 4)], lambda x: tf.pad(x, [[3, 1], [0, 4]], "symmetric"),
     lambda x: np.pad(x, [[3, 1], [0, 4]], "symmetric"), DTYPES),
    ("mirror_pad_grad", [(6, 2)],  # REFLECT [[2, 1], [0, 0]] of 3 rows: [2, 1, 0, 1, 2, 1]
     lambda g: padding_ops.mirror_pad_grad(g, [[2, 1], [0, 0]], "REFLECT"),
     lambda g: np.stack([g[2], g[1] + g[3] + g[5], g[0] + g[4]]), NUMERIC),
    ("mirror_pad_grad_symmetric", [(2, 5)],  # SYMMETRIC [[0, 0], [1, 2]]: [0, 0, 1, 1, 0]
     lambda g: padding_ops.mirror_pad_grad(g, [[0, 0], [1, 2]], "SYMMETRIC"),
     lambda g: np.stack([g[:, 0] + g[:, 1] + g[:, 4], g[:, 2] + g[:, 3]], 1), NUMERIC),
    ("identity", [(2, 3)], tf.identity, lambda x: x, DTYPES),
    ("stop_gradient", [(2, 3)], tf.stop_gradient, lambda x: x, DTYPES),
    ("zeros_like", [(2, 3)], tf.zeros_like, np.zeros_like, DTYPES),
    ("ones_like", [(2, 0)], tf.ones_like, np.ones_like, DTYPES),
    ("zeros_like_dtype", [(2, 3)], lambda x: tf.zeros_like(x, dtype=tf.int64),
     lambda x: np.zeros(x.shape, np.int64), DTYPES),
    ("ones_like_dtype", [(3,)], lambda x: tf.ones_like(x, dtype=tf.float32),
     lambda x: np.ones(x.shape, np.float32), DTYPES),
    ("shape", [(2, 0, 3)], tf.shape, lambda x: np.array(x.shape, np.int32), DTYPES),
    ("shape_int64", [(2, 3)], lambda x: tf.shape(x, out_type=tf.int64),
     lambda x: np.array(x.shape, np.int64), DTYPES),
    ("shape_n", [(2, 3), ()], lambda x, y: tf.shape_n([x, y]),
     lambda x, y: [np.array(x.shape, np.int32), np.array(y.shape, np.int32)], DTYPES),
    ("size", [(2, 3)], tf.size, lambda x: np.int32(x.size), DTYPES),
    ("rank", [(2, 3, 1)], tf.rank, lambda x: np.int32(x.ndim), DTYPES),
    ("fill_like", [(2, 3)], lambda x: tf.fill(tf.shape(x), tf.constant(5, x.dtype)),
     lambda x: np.full(x.shape, 5, x.dtype), NUMERIC),
]


CASES_BY_DTYPE = [pytest.param(case, dtype, id="%s-%s" % (case[0], np.dtype(dtype).name))
                  for case in CASES for dtype in case[4]]


@pytest.mark.parametrize("static", [True, False], ids=["static_shapes", "unknown_shapes"])
@pytest.mark.parametrize("case, dtype", CASES_BY_DTYPE)
def test_matches_numpy(device, case, dtype, static):
    _, shapes, build, reference, _ = case
    arrays = [_array(s, dtype, offset=10 * i) for i, s in enumerate(shapes)]
    outputs, values = _evaluate(device, build, arrays, static)
    expected = reference(*arrays)
    expected = expected if isinstance(expected, list) else [expected]
    assert len(values) == len(expected)
    for tensor, value, want in zip(outputs, values, expected):
        want = np.asarray(want)
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_array_equal(value, want)
        assert tensor.shape.is_compatible_with(want.shape)
        if static:
            assert tensor.shape.as_list() == list(want.shape)


# ---- Tensor.__getitem__ ------------------------------------------------------------------
INDEXES = [
    1, -1, (1, 2), (2, 3, 4), (-3, -4, -5), Ellipsis, (Ellipsis, 1), (1, Ellipsis),
    (Ellipsis, None), (None, Ellipsis, -1), slice(None, None, -1), slice(1, None),
    (slice(None), None, slice(1, 3)), (slice(1, None, 2), slice(None, None, -2)),
    (slice(None), slice(-2, None)), slice(-100, 100), slice(2, 1), slice(None, None, -3),
    (slice(1, 3), Ellipsis, slice(None, None, 2)), (), (slice(None),) * 3,
    (None, None, 1, None), (slice(3, None, -1), 0, slice(-1, -6, -2)), np.int64(2),
    (slice(np.int32(1), None),),
]


@pytest.mark.parametrize("static", [True, False], ids=["static_shapes", "unknown_shapes"])
@pytest.mark.parametrize("index", INDEXES, ids=[repr(i) for i in INDEXES])
def test_getitem_matches_numpy(device, index, static):
    x = _array((3, 4, 5), np.float32)
    outputs, values = _evaluate(device, lambda t: t[index], [x], static)
    want = x[index]
    assert values[0].shape == want.shape
    np.testing.assert_array_equal(values[0], want)
    assert outputs[0].op.type == "StridedSlice" and outputs[0].op.name == "strided_slice"
    if static:
        assert outputs[0].shape.as_list() == list(want.shape)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_getitem_with_tensor_indices(device, dtype):
    x = _array((4, 3), np.int32)
    with tf.device(device):
        t = tf.constant(x)
        i = tf.placeholder(dtype, [])
        picked, tail, block = t[i], t[i:], t[i, 1:3]
    # TF: a tensor bound makes the slice's length unknown, even beside constants.
    assert picked.shape.as_list() == [3]
    assert tail.shape.as_list() == [None, 3]
    assert block.shape.as_list() == [None]
    assert picked.op.inputs[1].op.type == "Pack"
    assert picked.op.inputs[1].name == "strided_slice/stack:0"
    with tf.Session() as sess:
        out = sess.run([picked, tail, block, t[-i]], {i: 2})
    for value, want in zip(out, [x[2], x[2:], x[2, 1:3], x[-2]]):
        np.testing.assert_array_equal(value, want)


def test_getitem_names_like_tf():
    x = tf.placeholder(tf.float32, [3, 4])
    x[1]
    x[1:]
    names = [(op.name, op.type) for op in tf.get_default_graph().get_operations()]
    assert names == [
        ("Placeholder", "Placeholder"),
        ("strided_slice/stack", "Const"), ("strided_slice/stack_1", "Const"),
        ("strided_slice/stack_2", "Const"), ("strided_slice", "StridedSlice"),
        ("strided_slice_1/stack", "Const"), ("strided_slice_1/stack_1", "Const"),
        ("strided_slice_1/stack_2", "Const"), ("strided_slice_1", "StridedSlice")]


def test_getitem_on_variables_and_iteration(sess):
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v[1, ::-1]), [4.0, 3.0])
    with pytest.raises(TypeError, match="only iterable when eager execution"):
        list(tf.constant([[1, 2], [3, 4]]))   # TF1 graph mode: use tf.unstack
    rows = tf.unstack(tf.constant([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(sess.run(rows), [[1, 2], [3, 4]])


@pytest.mark.parametrize("index, message", [
    (5, "slice index 5 of dimension 0 out of bounds."),
    (-4, "slice index -1 of dimension 0 out of bounds."),
    ((0, 7), "slice index 7 of dimension 1 out of bounds."),
    ((1, 2, 3), "Index out of range using input dim 2; input has only 2 dims"),
    ((Ellipsis, Ellipsis), "Multiple ellipses in slice spec not allowed"),
    (slice(None, None, 0), "strides[0] must be non-zero"),
])
def test_getitem_errors_at_construction_and_run_time(index, message):
    x = tf.placeholder(tf.float32, [3, 4])
    with pytest.raises(ValueError, match=r"%s.*strided_slice" % _escape(message.rstrip("."))):
        x[index]
    unknown = tf.placeholder(tf.float32)
    y = unknown[index]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=_escape(message)) as info:
            sess.run(y, {unknown: np.zeros((3, 4), np.float32)})
    assert info.value.op is y.op


@pytest.mark.parametrize("index", [1.5, [1.0], "a", tf.float32, np.array([1, 2])])
def test_getitem_rejects_other_index_types(index):
    with pytest.raises(TypeError, match="Only integers, slices"):
        tf.zeros([3, 4])[index]


def test_getitem_rejects_vector_and_float_tensors():
    x = tf.zeros([3, 4])
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors"):
        x[tf.constant([0, 1])]
    with pytest.raises(TypeError, match="scalar tf.int32/tf.int64 tensors"):
        x[tf.constant(1.0)]


def _escape(message):
    return message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")


# ---- one_hot, zeros, ones, fill -----------------------------------------------------------------
@pytest.mark.parametrize("index_dtype", [np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("axis", [None, -1, 0, 1])
def test_one_hot_matches_numpy(device, index_dtype, axis):
    indices = np.array([[0, 2, 5], [1, 1, 3]], index_dtype)
    out = _evaluate(device, lambda i: tf.one_hot(i, 4, axis=axis), [indices], True)
    tensor, value = out[0][0], out[1][0]
    want = (indices[..., None] == np.arange(4)).astype(np.float32)
    want = np.moveaxis(want, -1, -1 if axis is None else axis)
    assert value.dtype == np.float32 and tensor.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(value, want)


def test_invert_permutation(device, sess):
    with tf.device(device):
        inverse = tf.invert_permutation([3, 4, 0, 2, 1])
        inverse64 = tf.invert_permutation(tf.constant([1, 0], tf.int64))
    assert inverse.op.name == "InvertPermutation" and inverse.shape.as_list() == [5]
    assert constant_value(inverse).tolist() == [2, 4, 3, 0, 1]  # known while building
    np.testing.assert_array_equal(sess.run(inverse), [2, 4, 3, 0, 1])
    assert sess.run(inverse64).dtype == np.int64
    p = tf.placeholder(tf.int32, [None])
    for value, message in [([0, 0, 1], "0 is duplicated in the input."),
                           ([0, 5, 1], "5 is not between 0 and 3")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(tf.invert_permutation(p), {p: value})


def test_one_hot_values_and_dtypes(sess):
    on_off = tf.one_hot([0, -1, 2], 3, on_value=5, off_value=-1)
    cast = tf.one_hot([1], 2, on_value=1, dtype=tf.float64)
    floats = tf.one_hot([1], 2, on_value=5.0)
    assert (on_off.dtype, cast.dtype, floats.dtype) == (tf.int32, tf.float64, tf.float32)
    np.testing.assert_array_equal(sess.run(on_off), [[5, -1, -1], [-1, -1, -1], [-1, -1, 5]])
    np.testing.assert_array_equal(sess.run(cast), [[0.0, 1.0]])
    assert on_off.op.name == "one_hot" and on_off.op.inputs[2].op.name == "one_hot/Const"
    assert cast.op.inputs[3].op.name == "one_hot_1/off_value"
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 3, on_value=5.0, off_value=0)
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 3, on_value=tf.constant(1.0), dtype=tf.int32)
    with pytest.raises(TypeError, match="parameter 'indices'"):
        tf.one_hot([1.0], 3)


@pytest.mark.parametrize("make, value", [(tf.zeros, 0), (tf.ones, 1)])
@pytest.mark.parametrize("dtype", [tf.float32, tf.int32, tf.int64, tf.bool])
def test_zeros_and_ones(device, sess, make, value, dtype):
    with tf.device(device):
        small, large, dynamic = make([2, 3], dtype), make([40, 30], dtype), make(
            tf.placeholder(tf.int32, [2]), dtype)
        scalar_shape = make(tf.constant(3), dtype)
    assert (small.op.type, large.op.type, dynamic.op.type) == ("Const", "Fill", "Fill")
    assert small.dtype == large.dtype == dtype
    assert dynamic.shape.as_list() == [None, None] and scalar_shape.shape.as_list() == [3]
    np_dtype = dtype.as_numpy_dtype
    out = sess.run([small, large, dynamic, scalar_shape], {dynamic.op.inputs[0]: [1, 2]})
    for array, shape in zip(out, [(2, 3), (40, 30), (1, 2), (3,)]):
        assert array.dtype == np_dtype
        np.testing.assert_array_equal(array, np.full(shape, value, np_dtype))


def test_zeros_names_follow_tf():
    assert tf.zeros([2, 3]).name == "zeros:0"
    large = tf.zeros([100, 100])
    assert large.name == "zeros_1:0"
    assert [t.op.name for t in large.op.inputs] == ["zeros_1/shape_as_tensor", "zeros_1/Const"]
    n = tf.placeholder(tf.int32, [])
    packed = tf.zeros([n, 2])
    assert packed.op.type == "Fill" and packed.shape.as_list() == [None, 2]


def test_zeros_like_and_ones_like_build_what_tf1_builds():
    x = tf.placeholder(tf.float32, [3, 4])
    p = tf.placeholder(tf.float32, [None, 3])
    static_zeros, dynamic_zeros = tf.zeros_like(x), tf.zeros_like(p)
    static_ones, dynamic_ones = tf.ones_like(x), tf.ones_like(p)
    assert (static_zeros.op.type, dynamic_zeros.op.type) == ("Const", "ZerosLike")
    assert (static_ones.op.type, dynamic_ones.op.type) == ("Fill", "Fill")
    assert static_ones.op.name == "ones_like"
    assert [t.op.name for t in dynamic_ones.op.inputs] == ["ones_like_1/Shape",
                                                           "ones_like_1/Const"]
    assert dynamic_zeros.shape.as_list() == dynamic_ones.shape.as_list() == [None, 3]
    assert tf.zeros_like(p, dtype=tf.int32).op.type == "Fill"


def test_fill(sess):
    filled = tf.fill([2, 3], 9)
    assert filled.op.name == "Fill" and filled.dtype == tf.int32
    np.testing.assert_array_equal(sess.run(filled), np.full((2, 3), 9, np.int32))
    np.testing.assert_array_equal(constant_value(filled), np.full((2, 3), 9, np.int32))
    assert tf.fill(tf.placeholder(tf.int32, [2]), 1.0).shape.as_list() == [None, None]


# ---- static shapes of partially known inputs --------------------------------------------------
def _partial_shape_cases():
    p = tf.placeholder(tf.float32, [None, 3])
    u = tf.placeholder(tf.float32)
    x = tf.placeholder(tf.float32, [2, 6])
    i = tf.placeholder(tf.int32, [None])
    n = tf.placeholder(tf.int32, [])
    y = tf.placeholder(tf.float32, [None, 4])
    return [
        (tf.reshape(p, [-1, 3]), [None, 3]),
        (tf.reshape(p, [3, -1]), [3, None]),
        (tf.reshape(p, [4, 3]), [4, 3]),
        (tf.reshape(u, [2, -1]), [2, None]),
        (tf.reshape(x, [n, -1]), [None, None]),
        (tf.reshape(x, [n, 3, 4]), [1, 3, 4]),
        (tf.reshape(x, tf.shape(y)), [3, 4]),
        (tf.reshape(p, tf.shape(y)), [None, 4]),
        (tf.reshape(x, tf.concat([[3], tf.shape(y)[1:]], 0)), [3, 4]),
        (tf.transpose(p), [3, None]),
        (tf.transpose(u), None),
        (tf.matrix_transpose(u), None),
        (tf.concat([p, p], 0), [None, 3]),
        (tf.concat([p, x[:, :3]], 0), [None, 3]),
        (tf.concat([p, p], 1), [None, 6]),
        (tf.concat([u, x], 0), [None, 6]),
        (tf.concat([p, p], n), [None, None]),
        (p[:, None, 1:3], [None, 1, 2]),
        (p[1], [3]),
        (p[::2], [None, 3]),
        (u[1], None),
        (tf.expand_dims(p, 1), [None, 1, 3]),
        (tf.expand_dims(p, n), None),
        (tf.squeeze(p), None),
        (tf.squeeze(p, [0]), [3]),
        (tf.stack([p, p], 1), [None, 2, 3]),
        (tf.stack([p, x[:, :3]]), [2, 2, 3]),
        (tf.unstack(p, num=2)[0], [3]),
        (tf.tile(p, [2, 2]), [None, 6]),
        (tf.pad(p, [[1, 1], [2, 2]]), [None, 7]),
        (tf.gather(p, [0, 1]), [2, 3]),
        (tf.gather(p, [[0]], axis=1), [None, 1, 1]),
        (tf.gather(x, i, axis=1), [2, None]),
        (tf.split(p, 3, axis=1)[2], [None, 1]),
        (tf.split(p, [1, -1])[1], [None, 3]),
        (tf.split(x, [1, -1], axis=1)[1], [2, 5]),
        (tf.one_hot(i, 4), [None, 4]),
        (tf.one_hot(i, n), [None, None]),
        (tf.slice(p, [1, 1], [-1, -1]), [None, 2]),
        (tf.slice(p, [1, 1], [2, -1]), [2, 2]),
        (tf.shape(p), [2]),
        (tf.shape(u), [None]),
        (tf.fill(tf.shape(p), 1.0), [None, 3]),
        (tf.reverse(p, [1]), [None, 3]),
    ]


def test_static_shapes_of_partially_known_inputs():
    for tensor, expected in _partial_shape_cases():
        actual = None if tensor.shape.ndims is None else tensor.shape.as_list()
        assert actual == expected, "%s: %s != %s" % (tensor.op.name, actual, expected)


def test_partial_shapes_run(sess):
    p = tf.placeholder(tf.float32, [None, 3])
    u = tf.placeholder(tf.float32)
    value = _array((2, 3), np.float32)
    out = sess.run([tf.transpose(u), tf.matrix_transpose(u), tf.squeeze(p), tf.shape(p)],
                   {u: _array((2, 3, 4), np.float32), p: value})
    np.testing.assert_array_equal(out[0], np.transpose(_array((2, 3, 4), np.float32)))
    np.testing.assert_array_equal(out[1], np.swapaxes(_array((2, 3, 4), np.float32), 1, 2))
    np.testing.assert_array_equal(out[2], value)
    np.testing.assert_array_equal(out[3], [2, 3])


# ---- TF1's names, and the Consts TF1 builds instead of ops --------------------------------------
def test_default_names_and_types_follow_tf1():
    x = tf.placeholder(tf.float32, [3, 4])
    p = tf.placeholder(tf.float32, [None, 3])
    expected = [
        (tf.reshape(x, [-1]), "Reshape", "Reshape"),
        (tf.transpose(x), "transpose", "Transpose"),
        (tf.matrix_transpose(x), "matrix_transpose/transpose", "Transpose"),
        (tf.concat([x, x], 0), "concat", "ConcatV2"),
        (tf.concat([x], 0), "concat_1/concat", "Identity"),
        (tf.split(x, 2, axis=1)[0], "split", "Split"),
        (tf.split(x, [1, 3], axis=1)[0], "split_1", "SplitV"),
        (tf.stack([x, x]), "stack", "Pack"),
        (tf.stack([1, 2]), "stack_1", "Const"),
        (tf.unstack(x)[0], "unstack", "Unpack"),
        (tf.gather(x, [0]), "GatherV2", "GatherV2"),
        (tf.unsorted_segment_sum(x, [0, 0, 1], 2), "UnsortedSegmentSum", "UnsortedSegmentSum"),
        (tf.invert_permutation([1, 0]), "InvertPermutation", "InvertPermutation"),
        (tf.slice(x, [0, 0], [1, 1]), "Slice", "Slice"),
        (tf.strided_slice(x, [0], [1]), "StridedSlice", "StridedSlice"),
        (tf.expand_dims(x, 0), "ExpandDims", "ExpandDims"),
        (tf.squeeze(tf.expand_dims(x, 0)), "Squeeze", "Squeeze"),
        (tf.tile(x, [1, 2]), "Tile", "Tile"),
        (tf.pad(x, [[1, 1], [0, 0]]), "Pad", "Pad"),
        (tf.pad(x, [[1, 1], [0, 0]], constant_values=2.0), "PadV2", "PadV2"),
        (tf.pad(x, [[1, 1], [0, 0]], "REFLECT"), "MirrorPad", "MirrorPad"),
        (tf.one_hot([1], 3), "one_hot", "OneHot"),
        (tf.fill([2], 1.0), "Fill", "Fill"),
        (tf.reverse(x, [0]), "ReverseV2", "ReverseV2"),
        (tf.stop_gradient(x), "StopGradient", "StopGradient"),
        (tf.shape(x), "Shape", "Const"),
        (tf.shape(p), "Shape_1", "Shape"),
        (tf.size(x), "Size", "Const"),
        (tf.size(p), "Size_1", "Size"),
        (tf.size(tf.placeholder(tf.float32, [None, 0])), "Size_2", "Const"),
        (tf.rank(p), "Rank", "Const"),
        (tf.rank(tf.placeholder(tf.float32)), "Rank_1", "Rank"),
        (tf.shape_n([x, p])[1], "ShapeN", "ShapeN"),
    ]
    for tensor, name, op_type in expected:
        assert (tensor.op.name, tensor.op.type) == (name, op_type)
    assert x[0].op.inputs[1].op.name == "strided_slice/stack"
    assert tf.transpose(x).op.inputs[1].op.name == "transpose_1/perm"
    assert tf.concat([x, x], 1).op.inputs[2].op.name == "concat_2/axis"


# ---- autopacking ------------------------------------------------------------------------------
def test_autopacking_lists_holding_tensors(sess):
    a = tf.constant(1.0)
    b = tf.placeholder(tf.float32, [])
    packed = tf.convert_to_tensor([a, b, 3.0])
    nested = tf.convert_to_tensor([[a, 2.0], [np.float32(3.0), b]])
    assert packed.op.type == "Pack" and packed.op.name == "packed"
    assert packed.op.inputs[2].op.name == "packed/2"
    assert nested.op.name == "packed_1" and nested.op.inputs[0].op.name == "packed_1/0"
    assert nested.shape.as_list() == [2, 2]
    np.testing.assert_array_equal(sess.run(packed, {b: 2.0}), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sess.run(nested, {b: 4.0}), [[1.0, 2.0], [3.0, 4.0]])
    assert tf.convert_to_tensor([1, 2]).op.type == "Const"
    assert tf.convert_to_tensor((a, a), dtype=tf.float32).op.type == "Pack"
    assert tf.convert_to_tensor([tf.constant(1), 2], name="dims").op.name == "dims"


def test_autopacking_variables_and_arrays(sess):
    v = tf.Variable(2.0)
    packed = tf.stack([v, np.array(1.0), 4.0])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(packed), [2.0, 1.0, 4.0])


def test_autopacking_dtype_errors():
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor of dtype"):
        tf.convert_to_tensor([tf.constant(1), tf.constant(2.5)])
    with pytest.raises(TypeError, match="Expected int32"):
        tf.convert_to_tensor([tf.constant(1), 2.5])
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor of dtype"):
        tf.convert_to_tensor([tf.constant(1)], dtype=tf.float32)


def test_reshape_with_a_scalar_tensor_dimension(sess):
    x = tf.placeholder(tf.float32, [None, 6])
    n = tf.shape(x)[0]
    flat = tf.reshape(x, [n, 2, -1])
    assert flat.op.inputs[1].op.type == "Pack" and flat.op.inputs[1].op.name == "Reshape/shape"
    assert flat.shape.as_list() == [None, 2, None]
    out = sess.run(flat, {x: _array((2, 6), np.float32)})
    np.testing.assert_array_equal(out, _array((2, 6), np.float32).reshape(2, 2, 3))


# ---- constant_value stays in sync ---------------------------------------------------------------
def test_constant_value_of_array_ops():
    p = tf.placeholder(tf.float32, [None, 3])
    x = tf.placeholder(tf.float32, [2, 5])
    assert constant_value(tf.shape(p)) is None
    np.testing.assert_array_equal(constant_value(tf.shape(x)), [2, 5])
    np.testing.assert_array_equal(constant_value(tf.stack([tf.size(x), 3], axis=0)), [10, 3])
    np.testing.assert_array_equal(constant_value(tf.concat([tf.shape(x), [7]], 0)), [2, 5, 7])
    np.testing.assert_array_equal(constant_value(tf.zeros([2])), [0.0, 0.0])
    assert constant_value(tf.rank(p)) == 2
    assert constant_value_as_shape(tf.shape(p)).as_list() == [None, 3]
    assert constant_value_as_shape(tf.shape(p)[1:]).as_list() == [3]
    assert constant_value_as_shape(tf.concat([tf.shape(p), [4]], 0)).as_list() == [None, 3, 4]


# ---- errors while building ------------------------------------------------------------------
def _construction_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    v = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.float32, [None, 3])
    u = tf.placeholder(tf.float32)
    return [
        (lambda: tf.reshape(x, [4]),
         r"Cannot reshape a tensor with 6 elements to shape \[4\] \(4 elements\) for 'Reshape'"),
        (lambda: tf.reshape(x, [4, -1]), "Dimension size must be evenly divisible by 4 but is 6"),
        (lambda: tf.reshape(p, [4, 2]), "Dimension size must be evenly divisible by 3 but is 8"),
        (lambda: tf.reshape(x, [-2, 3]), "Invalid value in tensor used for shape: -2"),
        (lambda: tf.concat([x, v], 0), "Shape must be rank 2 but is rank 1"),
        (lambda: tf.concat([x, tf.zeros([2, 4])], 0),
         "Dimension 1 in both shapes must be equal, but are 3 and 4"),
        (lambda: tf.concat([x, x], 2), "Shape must be at least rank 3 but is rank 2"),
        (lambda: tf.concat([x, x], -3), "Shape must be at least rank 3 but is rank 2"),
        (lambda: tf.split(x, 2, axis=1), "Dimension size must be evenly divisible by 2 but is 3"),
        (lambda: tf.split(x, [1, 1], axis=1),
         r"can't split axis of size 3 into pieces of size \[1,1\]"),
        (lambda: tf.split(x, [1, 5], axis=1),
         r"can't split axis of size 3 into pieces of size \[1,5\]"),
        (lambda: tf.split(x, 1, axis=2), r"must be in range \[-2, 2\)"),
        (lambda: tf.split(x, tf.constant(3)), "Rank-0 tensors are not supported"),
        (lambda: tf.split(x, tf.placeholder(tf.int32, [None])), "Cannot infer num"),
        (lambda: tf.squeeze(x, [1]), r"Can not squeeze dim\[1\], expected a dimension of 1, got 3"),
        (lambda: tf.squeeze(x, [5]), "Tried to squeeze dim index 5 for tensor with 2 dimensions"),
        (lambda: tf.expand_dims(x, 3), r"dim 3 not in the interval \[-3, 2\]"),
        (lambda: tf.expand_dims(x), "Must specify an axis argument to tf.expand_dims()"),
        (lambda: tf.expand_dims(x, 1, dim=1), "Cannot specify both 'axis' and 'dim'"),
        (lambda: tf.squeeze(x, 1, squeeze_dims=[1]), "Cannot specify both"),
        (lambda: tf.stack([x, v]), "Shapes must be equal rank, but are 2 and 1"),
        (lambda: tf.stack([x, tf.zeros([2, 4])]),
         "Dimension 1 in both shapes must be equal, but are 3 and 4"),
        (lambda: tf.stack([x, x], axis=3), r"axis = 3 not in \[-3, 3\)"),
        (lambda: tf.unstack(u), "Cannot infer num from shape <unknown>"),
        (lambda: tf.unstack(p), r"Cannot infer num from shape \(\?, 3\)"),
        (lambda: tf.unstack(x, axis=2), r"axis = 2 not in \[-2, 2\)"),
        (lambda: tf.unstack(x, num=3), "Dimension must be 3 but is 2"),
        (lambda: tf.tile(x, [2]), "Shape must be rank 2 but is rank 1"),
        (lambda: tf.pad(x, [[1, 1]]), "Shape must be rank 1 but is rank 2"),
        (lambda: tf.pad(x, [[-1, 1], [0, 0]]), "Paddings must be non-negative"),
        (lambda: tf.pad(x, [[1, 1], [0, 0]], "FOO"), "Unknown padding mode: FOO"),
        (lambda: tf.gather(x, [0], axis=2), "Shape must be at least rank 3 but is rank 2"),
        (lambda: tf.transpose(x, [0, 1, 2]), "Dimension must be 2 but is 3"),
        (lambda: tf.transpose(x, [0, 2]), "perm dim 2 is out of range of input rank 2"),
        (lambda: tf.matrix_transpose(v), r"should be a \(batch\) matrix"),
        (lambda: tf.slice(x, [1], [1]), "Shape must be rank 1 but is rank 2"),
        (lambda: tf.fill([2, -1], 1.0), "Fill dimensions must be >= 0"),
        (lambda: tf.reverse(x, [2]), "'axis'\\[0\\] = 2 is out of valid range"),
        (lambda: tf.reverse(x, [0, 0]), "axis 0 specified more than once"),
        (lambda: tf.one_hot([1], 3, axis=2), "Expected axis to be -1 or between"),
        (lambda: tf.placeholder_with_default([1.0, 2.0], [3]), "are incompatible"),
        (lambda: tf.unsorted_segment_sum(x, [0, 1, 0], 2),
         "Dimensions must be equal, but are 2 and 3"),
        (lambda: tf.unsorted_segment_sum(x, [0, 1], [2]), "Shape must be rank 0 but is rank 1"),
        (lambda: tf.invert_permutation([[0, 1]]), "Shape must be rank 1 but is rank 2"),
    ]


def test_construction_errors():
    for build, message in _construction_errors():
        with pytest.raises(ValueError, match=message):
            build()


def test_dtype_errors_at_construction():
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(TypeError, match="parameter 'shape' has DataType float32 not in list"):
        tf.reshape(x, tf.constant([2.0, 3.0]))
    with pytest.raises(TypeError, match="parameter 'indices' has DataType float32"):
        tf.gather(x, [0.0])
    with pytest.raises(TypeError, match="parameter 'perm'"):
        tf.transpose(x, tf.constant([1.0, 0.0]))
    with pytest.raises(TypeError, match="does not match type float32"):
        tf.concat([x, tf.zeros([2, 3], tf.int32)], 0)
    with pytest.raises(TypeError, match="does not match type float32"):
        tf.stack([x, tf.zeros([2, 3], tf.int32)], axis=1)
    with pytest.raises(TypeError, match="parameter 'out_type'"):
        tf.shape(x, out_type=tf.float32)
    with pytest.raises(TypeError):
        tf.pad(tf.zeros([2], tf.int32), [[1, 1]], constant_values=1.5)


def test_python_values_adopt_the_tensor_dtype(sess):
    x = tf.placeholder(tf.float32, [2, 3])
    joined = tf.concat([x, [[1, 2, 3]]], 0)
    assert joined.shape.as_list() == [3, 3] and joined.dtype == tf.float32
    out = sess.run(joined, {x: np.zeros((2, 3), np.float32)})
    np.testing.assert_array_equal(out[2], [1.0, 2.0, 3.0])


# ---- errors while running ------------------------------------------------------------------
RUN_TIME_ERRORS = [
    ("reshape", lambda x: tf.reshape(x, [4]), (2, 3),
     "Input to reshape is a tensor with 6 values, but the requested shape has 4"),
    ("reshape_multiple", lambda x: tf.reshape(x, [4, -1]), (2, 3),
     "Input to reshape is a tensor with 6 values, but the requested shape requires a "
     "multiple of 4"),
    ("reshape_two_unknown", lambda x: tf.reshape(x, tf.constant([-1, -1])), (2, 3),
     "Only one input size may be -1, not both 0 and 1"),
    ("gather", lambda x: tf.gather(x, [0, 7]), (3,), r"indices\[1\] = 7 is not in \[0, 3\)"),
    ("gather_negative", lambda x: tf.gather(x, [[0, 1], [-1, 0]]), (3,),
     r"indices\[1,0\] = -1 is not in \[0, 3\)"),
    ("gather_axis", lambda x: tf.gather(x, [0, 7], axis=1), (2, 3),
     r"indices\[1\] = 7 is not in \[0, 3\)"),
    ("split", lambda x: tf.split(x, 2, axis=1)[0], (2, 3),
     "Number of ways to split should evenly divide the split dimension, but got split_dim 1 "
     r"\(size = 3\) and num_split 2"),
    ("split_v", lambda x: tf.split(x, [1, 1], axis=1)[0], (2, 3),
     "Determined shape must either match input shape along split_dim exactly"),
    ("slice_size", lambda x: tf.slice(x, [0, 1], [1, 3]), (2, 3),
     r"Expected size\[1\] in \[0, 2\], but got 3"),
    ("slice_begin", lambda x: tf.slice(x, [0, 4], [1, 0]), (2, 3),
     r"Expected begin\[1\] in \[0, 3\], but got 4"),
    ("transpose", lambda x: tf.transpose(x, [0, 0]), (2, 3), r"1 is missing from \{0,0\}"),
    ("tile", lambda x: tf.tile(x, [2]), (2, 3),
     "Expected multiples argument to be a vector of length 2 but got length 1"),
    ("pad", lambda x: tf.pad(x, tf.placeholder_with_default([[-1, 0], [0, 0]], [2, 2])),
     (2, 3),
     "Paddings must be non-negative: -1 0"),
    ("reflect", lambda x: tf.pad(x, [[2, 0], [0, 0]], "REFLECT"), (2, 3),
     "paddings must be less than the dimension size: 2, 0 not less than 2"),
    ("symmetric", lambda x: tf.pad(x, [[3, 0], [0, 0]], "SYMMETRIC"), (2, 3),
     "paddings must be no greater than the dimension size: 3, 0 greater than 2"),
    ("squeeze", lambda x: tf.squeeze(x, [1]), (2, 3),
     r"Can not squeeze dim\[1\], expected a dimension of 1, got 3"),
    ("expand_dims", lambda x: tf.expand_dims(x, 5), (2, 3),
     "Tried to expand dim index 5 for tensor with 2 dimensions"),
    ("unstack", lambda x: tf.unstack(x, num=3)[0], (2, 3),
     r"Input shape axis 0 must equal 3, got shape \[2,3\]"),
    ("stack", lambda x: tf.stack([x, tf.ones([3])]), (2,),
     r"Shapes of all inputs must match: values\[0\].shape = \[2\] != values\[1\].shape = \[3\]"),
    ("concat", lambda x: tf.concat([x, tf.ones([2, 4])], 0), (2, 3),
     r"ConcatOp : Dimension 1 in both shapes must be equal: shape\[0\] = \[2,3\] vs. "
     r"shape\[1\] = \[2,4\]"),
    ("concat_axis", lambda x: tf.concat([x, x], 2), (2, 3),
     r"ConcatOp : Expected concatenating dimensions in the range \[-2, 2\), but got 2"),
    ("fill", lambda x: tf.fill(tf.cast(tf.shape(x), tf.int32) - 3, 1.0), (2, 3),
     "Dimension -1 must be >= 0"),
    ("strided_slice", lambda x: tf.strided_slice(x, [0], [1], tf.constant([0])), (2, 3),
     r"strides\[0\] must be non-zero"),
    ("unsorted_segment_sum", lambda x: tf.unsorted_segment_sum(x, [0, 3], 3), (2, 3),
     r"segment_ids\[1\] = 3 is out of range \[0, 3\)"),
    ("unsorted_segment_sum_shape", lambda x: tf.unsorted_segment_sum(x, [0, 1, 1], 3), (2, 3),
     r"data.shape = \[2,3\] does not start with segment_ids.shape = \[3\]"),
    ("strided_slice_grad", lambda x: slicing_ops.strided_slice_grad([4], [0], [2], [1], x),
     (3,), r"shape of dy was \[3\] instead of \[2\]"),
    ("mirror_pad_grad", lambda x: padding_ops.mirror_pad_grad(x, [[1, 1], [0, 0]], "REFLECT"),
     (2, 3), "paddings must be less than the output dimension size: 1, 1 not less than 0"),
]


# Where TF's GPU kernel returns a value instead of raising (docs/concepts/opencl.rst,
# "Behaviour that differs from the CPU kernels"), the GPU device gives that value.
# tf.gather: "On GPU, if an out of bound index is found, a 0 is stored in the
# corresponding output value"; tf.math.unsorted_segment_sum: "On GPU, this does not
# throw an error for out-of-bound indices", the GPU kernel ignores them.
GPU_RESULTS = {
    "gather": [0.0, 0.0],                                       # x = [0, 1, 2]
    "gather_negative": [[0.0, 1.0], [0.0, 0.0]],
    "gather_axis": [[0.0, 0.0], [3.0, 0.0]],                    # x = [[0, 1, 2], [3, 4, 5]]
    "unsorted_segment_sum": [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
}


@pytest.mark.parametrize("case", RUN_TIME_ERRORS, ids=[c[0] for c in RUN_TIME_ERRORS])
def test_run_time_errors_name_the_op(device, case):
    name, build, shape, message = case
    with tf.device(device):
        x = tf.placeholder(tf.float32)
        y = build(x)
    with tf.Session() as sess:
        if name in GPU_RESULTS and tf.DeviceSpec.from_string(device).device_type == "GPU":
            np.testing.assert_array_equal(sess.run(y, {x: _array(shape, np.float32)}),
                                          GPU_RESULTS[name])
            return
        with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
            sess.run(y, {x: _array(shape, np.float32)})
    assert info.value.op is y.op
    assert "[[node %s" % y.op.name in info.value.message


def test_reshape_of_empty_tensors_infers_like_tf(sess):
    x = tf.placeholder(tf.float32, [0, 3])
    y = tf.reshape(x, [0, -1])
    assert y.shape.as_list() == [0, None]  # no element count to divide by
    out = sess.run(y, {x: np.zeros((0, 3), np.float32)})
    assert out.shape == (0, 3)


def test_attrs_survive_a_graph_def_round_trip():
    from minitf.framework import graph_def
    value = _array((2, 3), np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        i = tf.placeholder(tf.int32, [], name="i")
        outputs = [x[i, ::-1, tf.newaxis], tf.squeeze(tf.expand_dims(x, 0), [0]),
                   tf.split(x, [1, 2], axis=1)[1], tf.unstack(x, num=2, axis=0)[1],
                   tf.pad(x, [[1, 1], [0, 0]], "REFLECT"), tf.one_hot(i, 4, axis=0),
                   tf.shape_n([x, x])[1], tf.stack([x, x], axis=2)]
        serialized = graph.as_graph_def().SerializeToString()
    imported = tf.Graph()
    with imported.as_default():
        graph_def.import_graph_def(tf.GraphDef.FromString(serialized), name="")
    names = [t.name for t in outputs]
    with tf.Session(graph=graph) as original, tf.Session(graph=imported) as copy:
        want = original.run(outputs, {x: value, i: 1})
        got = copy.run(names, {"x:0": value, "i:0": 1})
    for a, b in zip(want, got):
        np.testing.assert_array_equal(a, b)


def test_unstack_of_an_empty_dimension_is_an_empty_list(sess):
    """An Unpack op with num=0 has no outputs: the list is empty, not the op."""
    assert tf.unstack(tf.zeros([0, 3])) == []
    rows = tf.unstack(tf.zeros([2, 0]), axis=0)
    assert [r.shape.as_list() for r in rows] == [[0], [0]]
    assert [sess.run(r).shape for r in rows] == [(0,), (0,)]


# ---- int64 indices beyond int32 ---------------------------------------------------------------
# The OpenCL kernels index with int32: an int64 index of 2**32 + 1 narrowed
# naively becomes 1 and reads element 1.  Every device must give the CPU
# kernel's answer instead: TF's InvalidArgumentError, or for one_hot (where an
# index out of range means an all-off row) and negative segment ids (dropped)
# that meaning.
_BIG = 2 ** 32 + 1


def _on_device(device, build):
    with tf.Graph().as_default():
        with tf.device(device):
            result = build()
        with tf.Session() as sess:
            return sess.run(result)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.gather(tf.constant([10.0, 20.0, 30.0]), tf.constant([0, _BIG], tf.int64)),
     r"indices\[1\] = 4294967297 is not in \[0, 3\)"),
    (lambda: tf.gather(tf.constant([[1, 2], [3, 4]]), tf.constant([[-_BIG]], tf.int64), axis=1),
     r"indices\[0,0\] = -4294967297 is not in \[0, 2\)"),
    (lambda: tf.gather_nd(tf.constant([10.0, 20.0, 30.0]), tf.constant([[_BIG]], tf.int64)),
     r"indices\[0\] = \[4294967297\] does not index into"),
    (lambda: tf.scatter_nd(tf.constant([[_BIG]], tf.int64), tf.constant([5.0]),
                           tf.constant([3], tf.int64)),
     r"indices\[0\] = \[4294967297\] does not index into"),
    (lambda: tf.unsorted_segment_sum(tf.constant([1.0, 2.0]), tf.constant([0, _BIG], tf.int64),
                                     3),
     r"segment_ids\[1\] = 4294967297 is out of range \[0, 3\)"),
    (lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.constant([_BIG], tf.int64), logits=tf.constant([[1.0, 2.0, 3.0]])),
     r"label value of 4294967297 which is outside the valid range of \[0, 3\)"),
])
def test_int64_indices_beyond_int32_are_invalid_argument(device, build, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        _on_device(device, build)


def test_int64_indices_beyond_int32_keep_their_cpu_meaning(device):
    one_hot = _on_device(device, lambda: tf.one_hot(tf.constant([_BIG, 1, -_BIG], tf.int64), 3))
    np.testing.assert_array_equal(one_hot, [[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    dropped = _on_device(device, lambda: tf.unsorted_segment_sum(
        tf.constant([1.0, 2.0]), tf.constant([-2 ** 32, 0], tf.int64), 3))
    np.testing.assert_array_equal(dropped, [2.0, 0.0, 0.0])
