"""Gradients of the array ops: one table, checked by finite differences and by hand.

``CASES`` lists every differentiable array op (and each op the gradients
build: ``StridedSliceGrad``, ``UnsortedSegmentSum``, ``MirrorPadGrad``) with a
function that draws its inputs and parameters: random small shapes, axes
(negative ones too), permutations, slices with negative strides, ellipses and
new axes, indices with duplicates.  The table drives two Hypothesis
properties, in float32 and float64, on every device:

* first order: ``tf.test.check_gradients`` of the op's output against central
  differences, with respect to every floating input;
* second order: the same check applied to the *gradients* ``tf.gradients``
  builds, as functions of the inputs and of ``grad_ys``, which exercises the
  gradients of the ops the gradients are made of.

Array ops are linear in their floating inputs, so the first check pins each
gradient's routing exactly; the exact tests below pin a few by hand
(duplicate indices accumulate, ``x[1, ..., tf.newaxis, ::-2]`` scatters back
to the right elements, concat and split undo each other), and the ops that are
not differentiable get None.
"""

import dataclasses
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minitf as tf
from minitf.ops import padding_ops
from minitf.ops.op_def_library import OP_DEFS
from minitf.registry import get_registry
from tests.conftest import device_config

FLOATS = [np.float32, np.float64]
ARRAY_MODULES = ("array_ops.py", "transpose_ops.py", "joining_ops.py", "slicing_ops.py",
                 "padding_ops.py", "gather_ops.py", "numerics_ops.py",
                 "custom_gradient.py")
ARRAY_OP_TYPES = {d.name for d in OP_DEFS
                  if d.site.split(":")[0].endswith(tuple("/" + m for m in ARRAY_MODULES))}
NOT_DIFFERENTIABLE = {"Placeholder", "StopGradient", "Shape", "ShapeN", "Size", "Rank",
                      "ZerosLike", "OneHot", "InvertPermutation"}

# Hypothesis runs each example inside one function call, so the per-test
# fixtures (the device parameter, the fresh default graph) are shared by the
# examples on purpose: every example builds its own graph.
hypothesis_settings = settings(max_examples=10, deadline=None,
                               suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---- Drawing shapes, axes and indices ------------------------------------------------
def _shape(draw, min_rank=0, max_rank=3, min_dim=1, max_dim=3):
    rank = draw(st.integers(min_rank, max_rank))
    return [draw(st.integers(min_dim, max_dim)) for _ in range(rank)]


def _axis(draw, rank):
    """An axis of a rank-``rank`` tensor, negative half of the time."""
    axis = draw(st.integers(0, rank - 1))
    return axis - rank if draw(st.booleans()) else axis


def _normal(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _slice_spec(draw, shape):
    """A random NumPy basic index of a tensor of ``shape``: per dimension an int
    (maybe negative), or a slice with any bounds and strides ±1, ±2; sometimes
    ``...`` over a run of dimensions and ``tf.newaxis`` anywhere."""
    items = []
    for dim in shape:
        if draw(st.integers(0, 3)) == 0:
            items.append(draw(st.integers(-dim, dim - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-dim - 1, dim + 1))
            step = st.sampled_from([None, 1, 2, -1, -2])
            items.append(slice(draw(bound), draw(bound), draw(step)))
    if items and draw(st.booleans()):
        start = draw(st.integers(0, len(items) - 1))
        stop = draw(st.integers(start, len(items)))
        items[start:stop] = [Ellipsis]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), tf.newaxis)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # x[i] rather than x[(i,)]
    return tuple(items)


# ---- Drawing the inputs of each kind of op -------------------------------------------
# A draw function takes (draw, rng, dtype) and returns (values, attrs): the
# arrays fed to the builder's placeholders and keyword arguments for it.
def one_input(min_rank=0):
    def draw_inputs(draw, rng, dtype):
        return [_normal(rng, _shape(draw, min_rank=min_rank), dtype)], {}
    return draw_inputs


def draw_reshape(draw, rng, dtype):
    shape = _shape(draw)
    targets = [[-1], shape[::-1], [1] + shape, shape + [1], [int(np.prod(shape))]]
    target = list(draw(st.sampled_from(targets)))
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return [_normal(rng, shape, dtype)], {"shape": target}


def draw_expand_dims(draw, rng, dtype):
    shape = _shape(draw)
    return [_normal(rng, shape, dtype)], {"axis": draw(st.integers(-len(shape) - 1, len(shape)))}


def draw_squeeze(draw, rng, dtype):
    shape = [draw(st.sampled_from([1, 1, 2, 3])) for _ in range(draw(st.integers(0, 4)))]
    ones = [i for i, d in enumerate(shape) if d == 1]
    axes = draw(st.lists(st.sampled_from(ones), unique=True)) if ones else []
    axes = [a - len(shape) if draw(st.booleans()) else a for a in axes]
    return [_normal(rng, shape, dtype)], {"axis": axes or None}


def draw_fill(draw, rng, dtype):
    return [_normal(rng, (), dtype)], {"dims": _shape(draw)}


def draw_transpose(draw, rng, dtype):
    shape = _shape(draw)
    perm = draw(st.permutations(range(len(shape))))
    return [_normal(rng, shape, dtype)], {"perm": list(perm)}


def draw_reverse(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    axes = draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    axes = [a - len(shape) if draw(st.booleans()) else a for a in axes]
    return [_normal(rng, shape, dtype)], {"axis": axes}


def draw_reverse_sequence(draw, rng, dtype):
    shape = _shape(draw, min_rank=2)
    seq_axis, batch_axis = draw(st.permutations(range(len(shape))))[:2]
    lengths = [draw(st.integers(0, shape[seq_axis])) for _ in range(shape[batch_axis])]
    return ([_normal(rng, shape, dtype)],
            {"seq_lengths": lengths, "seq_axis": seq_axis, "batch_axis": batch_axis})


def draw_pack(draw, rng, dtype):
    shape = _shape(draw)
    n = draw(st.integers(1, 3))
    return ([_normal(rng, shape, dtype) for _ in range(n)],
            {"axis": _axis(draw, len(shape) + 1)})


def draw_unpack(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    axis = _axis(draw, len(shape))
    return [_normal(rng, shape, dtype)], {"axis": axis,
                                          "output": draw(st.integers(0, shape[axis] - 1))}


def draw_concat(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    axis = _axis(draw, len(shape))
    values = []
    for i in range(draw(st.integers(2, 3))):
        shape[axis] = draw(st.integers(0 if i else 1, 3))  # empty pieces too
        values.append(_normal(rng, shape, dtype))
    return values, {"axis": axis}


def draw_split(draw, rng, dtype):
    shape = _shape(draw, min_rank=1, max_dim=2)
    axis = _axis(draw, len(shape))
    num = draw(st.integers(1, 3))
    shape[axis] *= num
    return [_normal(rng, shape, dtype)], {"num_or_size_splits": num, "axis": axis,
                                          "output": draw(st.integers(0, num - 1))}


def draw_split_v(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    axis = _axis(draw, len(shape))
    sizes = draw(st.lists(st.integers(0, 2), min_size=1, max_size=3))
    shape[axis] = sum(sizes)
    if draw(st.booleans()):
        sizes[draw(st.integers(0, len(sizes) - 1))] = -1
    return [_normal(rng, shape, dtype)], {"num_or_size_splits": sizes, "axis": axis,
                                          "output": draw(st.integers(0, len(sizes) - 1))}


def draw_slice(draw, rng, dtype):
    shape = _shape(draw)
    begin = [draw(st.integers(0, d)) for d in shape]
    size = [draw(st.integers(-1, d - b)) for d, b in zip(shape, begin)]
    return [_normal(rng, shape, dtype)], {"begin": begin, "size": size}


def draw_strided_slice(draw, rng, dtype):
    shape = _shape(draw, max_rank=3, max_dim=4)
    return [_normal(rng, shape, dtype)], {"index": _slice_spec(draw, shape)}


def draw_strided_slice_grad(draw, rng, dtype):
    """The gradient of a random slice: ``dy`` has the slice's shape."""
    shape = _shape(draw, max_rank=3, max_dim=4)
    index = _slice_spec(draw, shape)
    dy_shape = np.zeros(shape)[index].shape
    return [_normal(rng, dy_shape, dtype)], {"x_shape": shape, "index": index}


def draw_gather(draw, rng, dtype):
    """Indices drawn from few positions, so that duplicates are common."""
    shape = _shape(draw, min_rank=1)
    axis = _axis(draw, len(shape))
    indices = rng.integers(0, shape[axis], _shape(draw, max_rank=2, max_dim=4))
    return [_normal(rng, shape, dtype)], {"indices": indices, "axis": axis}


def _coordinates(draw, rng, shape):
    """Coordinates into the first K dims of ``shape``, few distinct, so duplicates are common."""
    depth = draw(st.integers(1, len(shape)))
    rows = _shape(draw, min_rank=1, max_rank=2, max_dim=4)
    return np.stack([rng.integers(0, shape[k], rows) for k in range(depth)], axis=-1)


def draw_gather_nd(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    return [_normal(rng, shape, dtype)], {"indices": _coordinates(draw, rng, shape)}


def draw_scatter_nd(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    indices = _coordinates(draw, rng, shape)
    updates_shape = list(indices.shape[:-1]) + shape[indices.shape[-1]:]
    return [_normal(rng, updates_shape, dtype)], {"indices": indices, "shape": shape}


def draw_unsorted_segment_sum(draw, rng, dtype):
    """Ids in ``[-1, num_segments)``: repeated ids add up, -1 drops a slice."""
    ids_shape = _shape(draw, min_rank=1, max_rank=2)
    num_segments = draw(st.integers(1, 4))
    ids = rng.integers(-1, num_segments, ids_shape)
    data_shape = ids_shape + _shape(draw, max_rank=2)
    return [_normal(rng, data_shape, dtype)], {"segment_ids": ids,
                                               "num_segments": num_segments}


def draw_tile(draw, rng, dtype):
    shape = _shape(draw)
    return [_normal(rng, shape, dtype)], {"multiples": [draw(st.integers(0, 2)) for _ in shape]}


def draw_pad(mode):
    """Paddings as large as ``mode`` allows: REFLECT mirrors without the edge."""
    def draw_inputs(draw, rng, dtype):
        shape = _shape(draw)
        most = {"CONSTANT": lambda d: 2, "REFLECT": lambda d: d - 1, "SYMMETRIC": lambda d: d}
        paddings = [[draw(st.integers(0, most[mode](d))) for _ in range(2)] for d in shape]
        paddings = np.array(paddings, dtype=np.int32).reshape(len(shape), 2)  # [0, 2] too
        return [_normal(rng, shape, dtype)], {"paddings": paddings, "mode": mode}
    return draw_inputs


def draw_mirror_pad(draw, rng, dtype):
    return draw_pad(draw(st.sampled_from(["REFLECT", "SYMMETRIC"])))(draw, rng, dtype)


def draw_mirror_pad_grad(draw, rng, dtype):
    """The gradient of a random mirror padding: ``input`` has the padded shape."""
    values, attrs = draw_mirror_pad(draw, rng, dtype)
    padded = np.array(values[0].shape, dtype=int) + attrs["paddings"].sum(axis=1)
    return [_normal(rng, padded, dtype)], attrs


# ---- The table --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One differentiable array op: ``build(*placeholders, **attrs)`` and its inputs.

    ``name`` is the op type whose gradient the case checks (a ``:variant``
    suffix tells cases of one op apart).
    """

    name: str
    build: Callable
    draw: Callable

    def __str__(self):
        return self.name


def _slice_gradient(dy, x_shape, index):
    """The ``StridedSliceGrad`` that ``tf.gradients`` builds for ``x[index]``."""
    x = tf.zeros(x_shape, dy.dtype)
    (dx,) = tf.gradients(x[index], x, grad_ys=dy)
    assert dx.op.type == "StridedSliceGrad"
    return dx


CASES = [
    # Passing values through and reshaping them.
    Case("Identity", tf.identity, one_input()),
    Case("IdentityN", lambda x: tf.identity_n([x, 2.0 * x])[1], one_input()),
    Case("CheckNumerics", lambda x: tf.check_numerics(x, "checked"), one_input()),
    Case("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, x.shape),
         one_input()),
    Case("Reshape", tf.reshape, draw_reshape),
    Case("ExpandDims", tf.expand_dims, draw_expand_dims),
    Case("Squeeze", tf.squeeze, draw_squeeze),
    Case("Fill", lambda value, dims: tf.fill(dims, value), draw_fill),
    # Reordering.
    Case("Transpose", tf.transpose, draw_transpose),
    Case("Transpose:matrix_transpose", tf.matrix_transpose, one_input(min_rank=2)),
    Case("ReverseV2", tf.reverse, draw_reverse),
    Case("ReverseSequence", tf.reverse_sequence, draw_reverse_sequence),
    # Joining and splitting (one output of the split ops: the others get zeros).
    Case("Pack", lambda *xs, axis: tf.stack(list(xs), axis=axis), draw_pack),
    Case("Unpack", lambda x, axis, output: tf.unstack(x, axis=axis)[output], draw_unpack),
    Case("ConcatV2", lambda *xs, axis: tf.concat(list(xs), axis), draw_concat),
    Case("Split", lambda x, output, **a: tf.split(x, **a)[output], draw_split),
    Case("SplitV", lambda x, output, **a: tf.split(x, **a)[output], draw_split_v),
    # Slicing.
    Case("Slice", tf.slice, draw_slice),
    Case("StridedSlice", lambda x, index: x[index], draw_strided_slice),
    Case("StridedSliceGrad", _slice_gradient, draw_strided_slice_grad),
    # Gathering and its scatter-add.
    Case("GatherV2", tf.gather, draw_gather),
    Case("GatherNd", tf.gather_nd, draw_gather_nd),
    Case("ScatterNd", lambda updates, indices, shape: tf.scatter_nd(indices, updates, shape),
         draw_scatter_nd),
    Case("UnsortedSegmentSum", tf.unsorted_segment_sum, draw_unsorted_segment_sum),
    # Growing.
    Case("Tile", tf.tile, draw_tile),
    Case("Pad", tf.pad, draw_pad("CONSTANT")),
    Case("PadV2", lambda x, **a: tf.pad(x, constant_values=-1.5, **a), draw_pad("CONSTANT")),
    Case("MirrorPad", tf.pad, draw_mirror_pad),
    Case("MirrorPadGrad", padding_ops.mirror_pad_grad, draw_mirror_pad_grad),
]


def _build(case, device, data, dtype):
    """Draws the case's inputs and builds it in a new graph.

    Returns:
        ``(graph, y, xs, x_values, rng)``.
    """
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    values, attrs = case.draw(data.draw, rng, dtype)
    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in values]
        with tf.device(device):
            y = case.build(*xs, **attrs)
    return graph, y, xs, values, rng


def _check(y, xs, x_values, session):
    tf.test.check_gradients(y, xs, x_values if len(xs) > 1 else x_values[0], session=session)


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data(), dtype=st.sampled_from(FLOATS))
@hypothesis_settings
def test_gradient_matches_finite_differences(device, case, data, dtype):
    graph, y, xs, x_values, _ = _build(case, device, data, dtype)
    with graph.as_default(), tf.Session(graph=graph, config=device_config(device)) as session:
        _check(y, xs, x_values, session)


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data(), dtype=st.sampled_from(FLOATS))
@hypothesis_settings
def test_second_order_gradient_matches_finite_differences(device, case, data, dtype):
    """The gradients of the case, as functions of its inputs and of grad_ys, are checked."""
    graph, y, xs, x_values, rng = _build(case, device, data, dtype)
    with graph.as_default(), tf.Session(graph=graph, config=device_config(device)) as session:
        grad_y = tf.placeholder(y.dtype, y.shape, name="grad_y")
        grad_y_value = _normal(rng, y.shape.as_list(), dtype)
        for dx in tf.gradients(y, xs, grad_ys=grad_y):
            dx = tf.convert_to_tensor(dx)  # a gather's gradient is an IndexedSlices
            _check(dx, xs + [grad_y], x_values + [grad_y_value], session)


def test_every_array_op_has_a_row_or_is_not_differentiable():
    """A new array op must get a gradient and a row, or be declared not differentiable."""
    covered = {case.name.split(":")[0] for case in CASES}
    assert ARRAY_OP_TYPES >= covered | NOT_DIFFERENTIABLE
    for op_type in ARRAY_OP_TYPES:
        fn = get_registry().gradient(op_type)  # LookupError: no gradient declared at all
        if op_type in NOT_DIFFERENTIABLE:
            assert fn is None, "%s should not be differentiable" % op_type
        else:
            assert fn is not None, "%s is declared not differentiable" % op_type
            assert op_type in covered, "%s has a gradient but no row in CASES" % op_type


# ---- Exact gradients ----------------------------------------------------------------------
def _gradient(sess, y, x, grad_y):
    (dx,) = tf.gradients(y, x, grad_ys=grad_y)
    return sess.run(dx)


def test_gather_with_duplicate_indices_accumulates(device, sess):
    params = tf.constant(np.zeros((4, 2)))
    with tf.device(device):
        y = tf.gather(params, [1, 3, 1, 1])
    grad_y = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0], [1000.0, 2000.0]])
    (dx,) = tf.gradients(y, params, grad_ys=grad_y)
    assert isinstance(dx, tf.IndexedSlices)  # the rows, not yet added up
    np.testing.assert_array_equal(sess.run(dx.indices), [1, 3, 1, 1])
    dense = tf.convert_to_tensor(dx)
    assert dense.op.type == "UnsortedSegmentSum"
    np.testing.assert_array_equal(sess.run(dense), [[0, 0], [1101, 2202], [0, 0], [10, 20]])


def test_gather_along_an_inner_axis_with_matrix_indices(device, sess):
    params = tf.constant(np.zeros((2, 3, 2)))
    with tf.device(device):
        y = tf.gather(params, [[2, 0], [2, 2]], axis=-2)  # shape [2, 2, 2, 2]
    grad_y = np.arange(16.0).reshape(2, 2, 2, 2)
    expected = np.zeros((2, 3, 2))
    np.add.at(expected.transpose(1, 0, 2), np.array([2, 0, 2, 2]),
              grad_y.reshape(2, 4, 2).transpose(1, 0, 2))
    np.testing.assert_array_equal(_gradient(sess, y, params, grad_y), expected)


def test_gather_gradient_of_unknown_shapes(sess):
    params, indices = tf.placeholder(tf.float32, None), tf.placeholder(tf.int64, None)
    y = tf.gather(params, indices)
    (dx,) = tf.gradients(y, params, grad_ys=tf.ones_like(y))
    with pytest.warns(UserWarning, match="dense Tensor of unknown shape"):
        dense = tf.convert_to_tensor(dx)
    got = sess.run(dense, {params: np.zeros((3, 2)), indices: [[0, 2], [2, 2]]})
    np.testing.assert_array_equal(got, [[1, 1], [0, 0], [3, 3]])


def test_gather_gradient_needs_a_constant_axis():
    axis = tf.placeholder(tf.int32, [])
    params = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="needs a constant axis"):
        tf.gradients(tf.gather(params, [0], axis=axis), params)


def test_unsorted_segment_sum_gradient_is_a_gather_dropping_negative_ids(device, sess):
    data = tf.constant(np.zeros((4, 2)))
    with tf.device(device):
        y = tf.unsorted_segment_sum(data, [2, -1, 0, 2], 3)
    grad_y = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(_gradient(sess, y, data, grad_y),
                                  [[5, 6], [0, 0], [1, 2], [5, 6]])


def _newaxis_and_reversed_depths(g):  # x[1, ..., tf.newaxis, ::-2]: y[j, 0, k] = x[1, j, 3 - 2k]
    dx = np.zeros((2, 3, 4))
    dx[1, :, 3], dx[1, :, 1] = g[:, 0, 0], g[:, 0, 1]
    return dx


def _one_row(g):  # x[-1, 0]: both leading dimensions shrink, y[k] = x[1, 0, k]
    dx = np.zeros((2, 3, 4))
    dx[1, 0, :] = g
    return dx


def _rows_backwards_last_depth(g):  # x[:, 2:0:-1, tf.newaxis, 3]: y[i, j, 0] = x[i, 2 - j, 3]
    dx = np.zeros((2, 3, 4))
    dx[:, 2, 3], dx[:, 1, 3] = g[:, 0, 0], g[:, 1, 0]
    return dx


@pytest.mark.parametrize("index, expected", [
    ((1, Ellipsis, tf.newaxis, slice(None, None, -2)), _newaxis_and_reversed_depths),
    ((-1, 0), _one_row),
    ((slice(None), slice(2, 0, -1), tf.newaxis, 3), _rows_backwards_last_depth),
])
def test_strided_slice_routes_gradients_to_the_sliced_elements(device, sess, index, expected):
    x = tf.constant(np.zeros((2, 3, 4)))
    with tf.device(device):
        y = x[index]
    grad_y = np.arange(1.0, 1.0 + np.prod(y.shape.as_list())).reshape(y.shape.as_list())
    np.testing.assert_array_equal(_gradient(sess, y, x, grad_y), expected(grad_y))


def test_strided_slice_gradient_with_bounds_known_only_when_running(sess):
    x = tf.placeholder(tf.float64, [5])
    begin = tf.placeholder(tf.int32, [])
    y = x[begin:begin + 2]
    (dx,) = tf.gradients(y, x, grad_ys=[np.array([1.0, 2.0])])
    np.testing.assert_array_equal(sess.run(dx, {x: np.zeros(5), begin: 2}), [0, 0, 1, 2, 0])


def test_concat_and_split_route_gradients_to_their_pieces(device, sess):
    a, b = tf.constant(np.zeros((2, 1))), tf.constant(np.zeros((2, 3)))
    with tf.device(device):
        y = tf.concat([a, b], -1)
    grad_y = np.arange(8.0).reshape(2, 4)
    da, db = sess.run(tf.gradients(y, [a, b], grad_ys=grad_y))
    np.testing.assert_array_equal(da, grad_y[:, :1])
    np.testing.assert_array_equal(db, grad_y[:, 1:])
    # Splitting columns [0 | 1 | 2 3] and joining them back as [2 3 | 1 | 0].
    x = tf.constant(np.zeros((3, 4)))
    pieces = tf.split(x, [1, -1, 2], axis=1)
    grad_y = np.arange(12.0).reshape(3, 4)
    (dx,) = tf.gradients(tf.concat(pieces[::-1], 1), x, grad_ys=grad_y)
    np.testing.assert_array_equal(sess.run(dx), grad_y[:, [3, 2, 0, 1]])


def test_pieces_without_a_gradient_get_zeros(sess):
    x = tf.constant(np.zeros((4, 2)))
    first, _ = tf.split(x, 2)
    _, middle, _, _ = tf.unstack(x)
    (dx,) = tf.gradients([first, middle], x, grad_ys=[np.ones((2, 2)), np.full(2, 5.0)])
    np.testing.assert_array_equal(sess.run(dx), [[1, 1], [6, 6], [0, 0], [0, 0]])


def test_concat_gradient_with_an_axis_known_only_when_running(sess):
    a, b = tf.placeholder(tf.float32, [2, None]), tf.placeholder(tf.float32, [2, None])
    axis = tf.placeholder(tf.int32, [])
    y = tf.concat([a, b], axis)
    da, db = tf.gradients(y, [a, b], grad_ys=tf.reshape(tf.range(8.0), [2, 4]))
    feed = {a: np.zeros((2, 3)), b: np.zeros((2, 1)), axis: -1}
    got_a, got_b = sess.run([da, db], feed)
    np.testing.assert_array_equal(got_a, [[0, 1, 2], [4, 5, 6]])
    np.testing.assert_array_equal(got_b, [[3], [7]])


def test_tile_gradient_sums_the_copies(device, sess):
    x = tf.constant(np.zeros((1, 2)))
    with tf.device(device):
        y = tf.tile(x, [2, 3])
    grad_y = np.arange(12.0).reshape(2, 6)
    expected = grad_y.reshape(2, 1, 3, 2).sum(axis=(0, 2))
    np.testing.assert_array_equal(_gradient(sess, y, x, grad_y), expected)


@pytest.mark.parametrize("mode, expected", [
    ("REFLECT", [100, 10 + 1000, 1 + 10000]),     # padded: [x2, x1, x0, x1, x2]
    ("SYMMETRIC", [10 + 100, 1 + 1000, 10000])])  # padded: [x1, x0, x0, x1, x2]
def test_mirror_pad_gradient_folds_the_copies_back(device, sess, mode, expected):
    x = tf.constant(np.zeros(3))
    with tf.device(device):
        y = tf.pad(x, [[2, 0]], mode)
    (dx,) = tf.gradients(y, x, grad_ys=[np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])])
    assert dx.op.type == "MirrorPadGrad"
    np.testing.assert_array_equal(sess.run(dx), expected)


def test_transpose_gradient_uses_the_inverse_permutation(device, sess):
    x = tf.placeholder(tf.float32, [2, 3, 4])
    with tf.device(device):
        y = tf.transpose(x, [1, 2, 0])
    (dx,) = tf.gradients(y, x)
    assert dx.op.inputs[1].op.type == "InvertPermutation"
    assert dx.shape.as_list() == [2, 3, 4]
    perm = tf.placeholder(tf.int32, [3])
    (dx,) = tf.gradients(tf.transpose(x, perm), x, grad_ys=np.arange(24.0).reshape(3, 4, 2))
    got = sess.run(dx, {x: np.zeros((2, 3, 4)), perm: [1, 2, 0]})
    np.testing.assert_array_equal(got, np.arange(24.0).reshape(3, 4, 2).transpose(2, 0, 1))


def test_fill_gradient_is_the_sum_for_the_value_only(sess):
    value = tf.constant(2.0)
    dims = tf.constant([2, 3])
    y = tf.fill(dims, value)
    (d_value, d_dims) = tf.gradients(y, [value, dims])
    assert d_dims is None
    assert sess.run(d_value) == 6.0


@pytest.mark.parametrize("build", [
    tf.zeros_like, tf.ones_like, tf.stop_gradient,
    lambda x: tf.one_hot([0, 2], 3, on_value=x[0, 0]),
    lambda x: tf.cast(tf.shape(x), tf.float32)])
def test_ops_that_are_not_differentiable_give_none(build):
    x = tf.placeholder(tf.float32, [None, 2])
    assert tf.gradients(build(x), x) == [None]


def test_second_derivative_through_slices_and_pads(sess):
    # d^2/dx^2 sum(x[1:]^2 padded) = 2 on the sliced elements, 0 elsewhere.
    x = tf.constant(np.array([1.0, 2.0, 3.0]))
    y = tf.reduce_sum(tf.square(tf.pad(x[1:], [[1, 1]])))
    (hessian,) = tf.hessians(y, x)
    np.testing.assert_array_equal(sess.run(hessian), np.diag([0.0, 2.0, 2.0]))
