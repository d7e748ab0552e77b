"""Gradients of the math ops: one table, checked by finite differences (STYLE 11).

Every differentiable math op has a row in ``GRADIENTS``: how to build it from
placeholders, the input shapes it accepts (a Hypothesis strategy, broadcasting
pairs included), and where its inputs must lie for central differences to mean
something (``log`` needs positive inputs, ``maximum`` inputs away from ties).
The table drives

* a property test: random shapes and values, float32 and float64, analytic
  gradients against central differences (``tf.test.check_gradients``);
* fixed broadcasting pairs for the binary ops;
* a second-order test: the gradient of ``<dy/dx · v, w>`` against central
  differences, so that every gradient op is itself differentiated;
* exact derivatives, for the rows that give a NumPy formula.

Then come TF1's rules at the edges, checked against values TF 1.x computes:
ties in ``maximum``/``minimum``/``reduce_max``, ``pow`` at 0, ``abs``/``sign``
at 0, ``Select``, casts, integers, products with zeros, matrix inverses.
"""

import dataclasses
from typing import Callable, Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitf as tf
from minitf.ops import math_ops, op_def_library, unary_ops
from minitf.registry import get_registry
from tests.conftest import DEVICES, device_config

FLOATS = (np.float32, np.float64)


# ---- where the inputs live -----------------------------------------------------------------
def _invertible(rng, shape):
    """Well-conditioned square matrices: small noise plus twice the identity."""
    return rng.uniform(-0.5, 0.5, shape) + 2 * np.eye(shape[-1])


DOMAINS = {
    "any": lambda rng, shape: rng.uniform(-2, 2, shape),
    "positive": lambda rng, shape: rng.uniform(0.5, 2, shape),
    "nonzero": lambda rng, shape: rng.choice([-1, 1], shape) * rng.uniform(0.5, 2, shape),
    "unit": lambda rng, shape: rng.uniform(-1, 1, shape),
    "near_one": lambda rng, shape: rng.choice([-1, 1], shape) * rng.uniform(0.7, 1.3, shape),
    # quarters (k/2 + 1/4) never tie with halves (k/2): max/min and clip bounds.
    "quarters": lambda rng, shape: rng.integers(-4, 5, shape) / 2 + 0.25,
    "halves": lambda rng, shape: rng.integers(-4, 5, shape) / 2,
    "lower_bound": lambda rng, shape: np.full(shape, -0.5),
    "upper_bound": lambda rng, shape: np.full(shape, 0.5),
    # Distinct values 0.4 apart: a reduce_max has no ties.
    "distinct": lambda rng, shape: (rng.permutation(int(np.prod(shape))) * 0.4 - 1).reshape(shape),
    # x / 1.5 stays 0.2 away from an integer: FloorMod is smooth there.
    "mod_dividend": lambda rng, shape: 1.5 * (rng.integers(-3, 3, shape)
                                              + rng.uniform(0.2, 0.8, shape)),
    "mod_divisor": lambda rng, shape: np.full(shape, 1.5),
    "invertible": _invertible,
}


# ---- the shapes an op accepts: (Hypothesis strategy, fixed example) -----------------------------
def _shape(min_rank=0, max_rank=3):
    return st.lists(st.integers(1, 3), min_size=min_rank, max_size=max_rank).map(tuple)


@st.composite
def _broadcast_pair(draw, max_rank=3):
    """Two shapes that broadcast: suffixes of one shape, with some dims set to 1."""
    out = draw(_shape(0, max_rank))

    def operand():
        rank = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else d for d in out[len(out) - rank:])
    return operand(), operand()


UNARY = (_shape().map(lambda s: (s,)), ((2, 3),))
BINARY = (_broadcast_pair(), ((3, 1), (1, 4)))
REDUCE = (_shape(1).map(lambda s: (s,)), ((2, 3),))
REDUCE_2D = (_shape(2).map(lambda s: (s,)), ((2, 3, 2),))
REDUCE_2D_EINSUM = (_shape(2, 2).map(lambda s: (s,)), ((2, 3),))  # exactly rank 2


def same(n, min_rank=0):
    """n inputs of one shape."""
    return (_shape(min_rank).map(lambda s: (s,) * n), ((2, 3),) * n)


CLIP = (_shape().map(lambda s: (s, (), ())), ((2, 3), (), ()))


def matmul_shapes(transpose_a, transpose_b):
    @st.composite
    def draw_shapes(draw):
        m, k, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
        return ((k, m) if transpose_a else (m, k)), ((n, k) if transpose_b else (k, n))
    example = ((3, 2) if transpose_a else (2, 3)), ((4, 3) if transpose_b else (3, 4))
    return draw_shapes(), example


def batch_matmul_shapes(adj_x, adj_y):
    @st.composite
    def draw_shapes(draw):
        bx, by = draw(_broadcast_pair(max_rank=2))
        if not bx and not by:
            by = (2,)  # at least one batch dimension: a BatchMatMulV2
        m, k, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
        return bx + ((k, m) if adj_x else (m, k)), by + ((n, k) if adj_y else (k, n))
    example = ((2, 1) + ((3, 2) if adj_x else (2, 3)),   # batch (2, 1) with (3,)
               (3,) + ((4, 3) if adj_y else (3, 4)))
    return draw_shapes(), example


SQUARE = (st.tuples(_shape(0, 1), st.integers(1, 3)).map(lambda bn: (bn[0] + (bn[1],) * 2,)),
          ((2, 3, 3),))


# ---- helpers the builders use -------------------------------------------------------------
def _pattern(shape):
    """A fixed bool condition of ``shape``: alternating True and False."""
    return np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0


def _static(t):
    return tuple(t.shape.as_list())


def _dynamic(fn):
    """``fn`` applied to inputs whose static shapes are hidden (every dim unknown),
    to exercise the gradients' run-time shape paths; the result's shape is restored."""
    def build(*xs):
        known = fn(*xs)
        hidden = [tf.placeholder_with_default(x, [None] * x.shape.ndims) for x in xs]
        y = fn(*hidden)
        y.set_shape(known.shape)
        return y
    return build


@dataclasses.dataclass
class Grad:
    """One differentiable op (or composite) in the gradient table."""
    name: str
    fn: Callable                      # fn(*tensors) -> Tensor
    shapes: tuple                     # (strategy of input-shape tuples, fixed example)
    domains: tuple                    # one DOMAINS key per input
    dtypes: tuple = FLOATS
    derivative: Optional[Callable] = None   # NumPy dy/dx of a unary op, for exact checks

    def __str__(self):
        return self.name


GRADIENTS = [
    # elementwise binary ops, broadcasting
    Grad("add", tf.add, BINARY, ("any", "any")),
    Grad("add_v2", math_ops.add_v2, BINARY, ("any", "any")),
    Grad("subtract", tf.subtract, BINARY, ("any", "any")),
    Grad("multiply", tf.multiply, BINARY, ("any", "any")),
    Grad("realdiv", tf.realdiv, BINARY, ("any", "nonzero")),
    Grad("truediv_operator", lambda x, y: x / y, BINARY, ("any", "nonzero")),
    Grad("floormod", tf.floormod, BINARY, ("mod_dividend", "mod_divisor")),
    Grad("pow", tf.pow, BINARY, ("positive", "any")),
    Grad("maximum", tf.maximum, BINARY, ("quarters", "halves")),
    Grad("minimum", tf.minimum, BINARY, ("quarters", "halves")),
    Grad("squared_difference", tf.squared_difference, BINARY, ("any", "any")),
    Grad("where_v2", lambda x, y: tf.where_v2(
        _pattern(np.broadcast_shapes(_static(x), _static(y))), x, y), BINARY, ("any", "any")),
    Grad("multiply_dynamic", _dynamic(tf.multiply), BINARY, ("any", "any")),
    # inputs of one shape
    Grad("add_n", lambda a, b, c: tf.add_n([a, b, c]), same(3), ("any",) * 3),
    Grad("where", lambda x, y: tf.where(_pattern(_static(x)), x, y), same(2), ("any", "any")),
    Grad("where_rows", lambda x, y: tf.where(_pattern(_static(x)[:1]), x, y), same(2, 1),
         ("any", "any")),
    Grad("sqrt_grad", unary_ops.sqrt_grad, same(2), ("positive", "any")),
    Grad("rsqrt_grad", unary_ops.rsqrt_grad, same(2), ("positive", "any")),
    Grad("reciprocal_grad", unary_ops.reciprocal_grad, same(2), ("any", "any")),
    Grad("tanh_grad", unary_ops.tanh_grad, same(2), ("any", "any")),
    Grad("sigmoid_grad", unary_ops.sigmoid_grad, same(2), ("any", "any")),
    Grad("clip_by_value", tf.clip_by_value, CLIP, ("quarters", "lower_bound", "upper_bound")),
    # elementwise unary ops
    Grad("negative", tf.negative, UNARY, ("any",), derivative=lambda x: -np.ones_like(x)),
    Grad("abs", tf.abs, UNARY, ("nonzero",), derivative=np.sign),
    Grad("sign", tf.sign, UNARY, ("nonzero",), derivative=np.zeros_like),
    Grad("square", tf.square, UNARY, ("any",), derivative=lambda x: 2 * x),
    Grad("sqrt", tf.sqrt, UNARY, ("positive",), derivative=lambda x: 0.5 / np.sqrt(x)),
    Grad("rsqrt", tf.rsqrt, UNARY, ("positive",), derivative=lambda x: -0.5 * x ** -1.5),
    Grad("reciprocal", tf.reciprocal, UNARY, ("nonzero",), derivative=lambda x: -1 / x ** 2),
    Grad("exp", tf.exp, UNARY, ("any",), derivative=np.exp),
    Grad("expm1", tf.expm1, UNARY, ("any",), derivative=np.exp),
    Grad("log", tf.log, UNARY, ("positive",), derivative=lambda x: 1 / x),
    Grad("log1p", tf.log1p, UNARY, ("positive",), derivative=lambda x: 1 / (1 + x)),
    Grad("sin", tf.sin, UNARY, ("any",), derivative=np.cos),
    Grad("cos", tf.cos, UNARY, ("any",), derivative=lambda x: -np.sin(x)),
    Grad("tan", tf.tan, UNARY, ("unit",), derivative=lambda x: 1 / np.cos(x) ** 2),
    Grad("tanh", tf.tanh, UNARY, ("any",), derivative=lambda x: 1 - np.tanh(x) ** 2),
    Grad("sigmoid", tf.sigmoid, UNARY, ("any",),
         derivative=lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    Grad("cast_to_float64", lambda x: tf.cast(x, tf.float64), UNARY, ("any",),
         dtypes=(np.float32,), derivative=np.ones_like),
    # reductions
    Grad("reduce_sum", tf.reduce_sum, REDUCE, ("any",)),
    Grad("reduce_sum_axis0", lambda x: tf.reduce_sum(x, 0), REDUCE, ("any",)),
    Grad("reduce_sum_keepdims", lambda x: tf.reduce_sum(x, -1, keepdims=True), REDUCE, ("any",)),
    Grad("reduce_sum_two_axes", lambda x: tf.reduce_sum(x, [0, -1]), REDUCE_2D, ("any",)),
    Grad("reduce_sum_dynamic", _dynamic(lambda x: tf.reduce_sum(x, -1)), REDUCE, ("any",)),
    Grad("reduce_mean", tf.reduce_mean, REDUCE, ("any",)),
    Grad("reduce_mean_keepdims", lambda x: tf.reduce_mean(x, 0, keepdims=True), REDUCE,
         ("any",)),
    Grad("reduce_mean_dynamic", _dynamic(lambda x: tf.reduce_mean(x, 0)), REDUCE, ("any",)),
    Grad("reduce_prod", tf.reduce_prod, REDUCE, ("near_one",)),
    Grad("reduce_prod_axis", lambda x: tf.reduce_prod(x, -1), REDUCE, ("near_one",)),
    Grad("cumsum", lambda x: tf.cumsum(x, -1), REDUCE, ("any",)),
    Grad("cumsum_exclusive_reverse", lambda x: tf.cumsum(x, 0, exclusive=True, reverse=True),
         REDUCE, ("any",)),
    Grad("cumprod", lambda x: tf.cumprod(x, -1), REDUCE, ("near_one",)),
    Grad("cumprod_exclusive_reverse", lambda x: tf.cumprod(x, 0, exclusive=True, reverse=True),
         REDUCE, ("near_one",)),
    Grad("reduce_max", tf.reduce_max, REDUCE, ("distinct",)),
    Grad("reduce_max_axis", lambda x: tf.reduce_max(x, -1), REDUCE, ("distinct",)),
    Grad("reduce_min_keepdims", lambda x: tf.reduce_min(x, 0, keepdims=True), REDUCE,
         ("distinct",)),
    Grad("reduce_max_dynamic", _dynamic(lambda x: tf.reduce_max(x, [0])), REDUCE, ("distinct",)),
    Grad("reduce_logsumexp", tf.reduce_logsumexp, REDUCE, ("any",)),
    Grad("reduce_logsumexp_axis", lambda x: tf.reduce_logsumexp(x, -1), REDUCE, ("any",)),
    # matrices
    Grad("einsum_matmul", lambda a, b: tf.einsum("ij,jk->ik", a, b), matmul_shapes(False, False),
         ("any", "any")),
    Grad("einsum_summed_only_here", lambda a, b: tf.einsum("ij,jk->i", a, b),
         matmul_shapes(False, False), ("any", "any")),
    Grad("einsum_transposed_sum", lambda x: tf.einsum("ij->j", x), REDUCE_2D_EINSUM, ("any",)),
    *[Grad("matmul_ta%d_tb%d" % (ta, tb),
           lambda a, b, ta=ta, tb=tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb),
           matmul_shapes(ta, tb), ("any", "any"))
      for ta in (False, True) for tb in (False, True)],
    *[Grad("batch_matmul_adj%d_adj%d" % (ax, ay),
           lambda x, y, ax=ax, ay=ay: tf.matmul(x, y, adjoint_a=ax, adjoint_b=ay),
           batch_matmul_shapes(ax, ay), ("any", "any"))
      for ax in (False, True) for ay in (False, True)],
    Grad("batch_matmul_dynamic", _dynamic(tf.matmul), batch_matmul_shapes(False, False),
         ("any", "any")),
    Grad("matrix_inverse", tf.matrix_inverse, SQUARE, ("invertible",)),
    Grad("matrix_inverse_adjoint", lambda a: tf.matrix_inverse(a, adjoint=True), SQUARE,
         ("invertible",)),
    Grad("matrix_determinant", tf.matrix_determinant, SQUARE, ("invertible",)),
]


def _values(case, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [np.asarray(DOMAINS[d](rng, s), dtype) for d, s in zip(case.domains, shapes)]


def _check_gradients(case, shapes, dtype, seed, device="/cpu:0"):
    values = _values(case, shapes, dtype, seed)
    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.placeholder(dtype, s, name="x%d" % i) for i, s in enumerate(shapes)]
        with tf.device(device):
            y = case.fn(*xs)
        with tf.Session(graph=graph, config=device_config(device)) as sess:
            tf.test.check_gradients(y, xs, values if len(xs) > 1 else values[0], session=sess)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", GRADIENTS, ids=str)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_gradient_matches_finite_differences(case, device, data):
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    shapes = data.draw(case.shapes[0], label="shapes")
    seed = data.draw(st.integers(0, 2 ** 31), label="seed")
    _check_gradients(case, shapes, dtype, seed, device)


BROADCAST_PAIRS = [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (2, 3)), ((2, 3), ()),
                   ((2, 1, 3), (2, 3)), ((3,), (3,))]


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("case", [c for c in GRADIENTS if c.shapes is BINARY], ids=str)
def test_binary_gradient_undoes_broadcasting(case, shapes):
    _check_gradients(case, shapes, np.float64, seed=1)


@pytest.mark.parametrize("case", GRADIENTS, ids=str)
def test_second_order_matches_finite_differences(case, sess):
    """Differentiates ``z = sum(w * (v · dy/dx))``: the gradient ops' own gradients."""
    shapes = case.shapes[1]
    values = _values(case, shapes, np.float64, seed=2)
    rng = np.random.default_rng(3)
    xs = [tf.placeholder(tf.float64, s) for s in shapes]
    y = case.fn(*xs)
    v = rng.uniform(-1, 1, _static(y)).astype(y.dtype.as_numpy_dtype)
    grads = tf.gradients(y, xs, grad_ys=[v])
    z = tf.add_n([tf.reduce_sum(g * rng.uniform(-1, 1, _static(g))) for g in grads
                  if g is not None])
    tf.test.check_gradients(z, xs, values if len(xs) > 1 else values[0], session=sess)


@pytest.mark.parametrize("case", [c for c in GRADIENTS if c.derivative], ids=str)
def test_known_derivatives(case, sess):
    x_value = _values(case, [(7,)], case.dtypes[-1], seed=4)[0]
    x = tf.constant(x_value)
    (dx,) = tf.gradients(case.fn(x), x)
    assert dx.dtype == x.dtype
    np.testing.assert_allclose(sess.run(dx), case.derivative(x_value), rtol=1e-5, atol=1e-7)


# ---- every math op has a gradient, or is declared not differentiable --------------------------
_MATH_MODULES = ("math_ops.py", "unary_ops.py", "comparison_ops.py", "select_ops.py",
                 "reduction_ops.py", "linalg_ops.py", "gradient_util.py")
NOT_DIFFERENTIABLE = {
    "FloorDiv", "Floor", "Ceil", "Round", "Range", "BroadcastGradientArgs",
    "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot", "IsNan", "IsInf", "IsFinite",
    "Any", "All", "ArgMax", "ArgMin", "Where", "LinSpace",
}


def test_every_math_op_has_a_gradient_or_is_declared_not_differentiable():
    registry = get_registry()
    math_op_types = {op_def.name for op_def in op_def_library.OP_DEFS
                     if op_def.site.split(":")[0].endswith(_MATH_MODULES)}
    assert "MatMul" in math_op_types and "TanhGrad" in math_op_types
    undeclared = sorted(name for name in math_op_types if not registry.has_gradient(name))
    assert not undeclared, "math ops without a gradient or not_differentiable: %s" % undeclared
    no_gradient = {name for name in math_op_types if registry.gradient(name) is None}
    assert no_gradient == NOT_DIFFERENTIABLE


@pytest.mark.parametrize("build", [tf.floor, tf.ceil, tf.round, lambda x: tf.floordiv(x, 2.0),
                                   lambda x: tf.cast(tf.argmax(x), tf.float32),
                                   lambda x: tf.cast(tf.less(x, 0.5), tf.float32)])
def test_step_functions_pass_no_gradient(build):
    x = tf.constant([0.3, 1.7, -2.5])
    assert tf.gradients(build(x), x) == [None]


# ---- broadcasting ------------------------------------------------------------------------
def test_binary_gradients_sum_over_broadcast_dimensions(sess):
    x = tf.constant(np.ones((3, 1)))
    y = tf.constant(np.arange(4.0))
    dx, dy = tf.gradients(x * y, [x, y])
    assert dx.shape.as_list() == [3, 1] and dy.shape.as_list() == [4]
    np.testing.assert_allclose(sess.run(dx), [[6.0]] * 3)
    np.testing.assert_allclose(sess.run(dy), [3.0] * 4)
    # The static shapes say which axes to sum over: no run-time shape ops.
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "BroadcastGradientArgs" not in types and "Shape" not in types


def _sum_to(array, shape):
    """``array`` summed over the axes along which ``shape`` was broadcast (NumPy)."""
    array = array.sum(axis=tuple(range(array.ndim - len(shape))))
    return array.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)


def test_unknown_shapes_find_the_broadcast_axes_at_run_time(sess):
    x = tf.placeholder(tf.float64, [None, None])
    y = tf.placeholder(tf.float64, [None])
    dx, dy = tf.gradients(x * y, [x, y])
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "BroadcastGradientArgs" in types
    for x_value, y_value in [(np.full((3, 1), 2.0), np.arange(4.0)),
                             (np.arange(8.0).reshape(2, 4), np.array([3.0]))]:
        gx, gy = sess.run([dx, dy], {x: x_value, y: y_value})
        ones = np.ones(np.broadcast_shapes(x_value.shape, y_value.shape))
        np.testing.assert_allclose(gx, _sum_to(ones * y_value, x_value.shape))
        np.testing.assert_allclose(gy, _sum_to(ones * x_value, y_value.shape))


def test_batch_plus_bias_sums_the_bias_gradient_over_constant_axes(sess):
    """``matmul(x, w) + b`` with an unknown batch size: the shapes settle the axes."""
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.constant([1.0, 2.0, 3.0])
    dx, db = tf.gradients(tf.reduce_mean(x + b), [x, b])
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "BroadcastGradientArgs" not in types and "Shape" in types  # Mean's batch size only
    gx, gb = sess.run([dx, db], {x: np.ones((4, 3))})
    np.testing.assert_allclose(gx, np.full((4, 3), 1 / 12), rtol=1e-6)
    np.testing.assert_allclose(gb, np.full(3, 4 / 12), rtol=1e-6)


def test_equal_static_shapes_need_no_reduction():
    x = tf.constant(np.ones((2, 3)))
    tf.gradients(x * x + x, x)
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "BroadcastGradientArgs" not in types and "Sum" not in types


# ---- TF1's rules at ties and edges ---------------------------------------------------------
def test_maximum_and_minimum_ties_go_to_x(sess):
    """TF's masks are ``x >= y`` for Maximum and ``x <= y`` for Minimum."""
    x = tf.constant([1.0, 2.0, 3.0, 0.0])
    y = tf.constant([1.0, 5.0, 3.0, 0.0])
    for fn, x_grad in ((tf.maximum, [1, 0, 1, 1]), (tf.minimum, [1, 1, 1, 1])):
        dx, dy = sess.run(tf.gradients(fn(x, y), [x, y]))
        np.testing.assert_array_equal(dx, x_grad)
        np.testing.assert_array_equal(dy, 1 - np.array(x_grad))


def test_clip_by_value_passes_the_gradient_at_its_bounds(sess):
    """Minimum-then-Maximum: a value equal to a bound keeps its gradient (TF1)."""
    t = tf.constant([-1.0, -0.5, 0.0, 0.5, 1.0])
    low, high = tf.constant(-0.5), tf.constant(0.5)
    dt, dlow, dhigh = sess.run(tf.gradients(tf.clip_by_value(t, low, high), [t, low, high]))
    np.testing.assert_array_equal(dt, [0, 1, 1, 1, 0])
    assert (dlow, dhigh) == (1.0, 1.0)


def test_reduce_max_and_min_split_ties_evenly(sess):
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    (dmax,) = sess.run(tf.gradients(tf.reduce_max(x, axis=1), x))
    np.testing.assert_allclose(dmax, [[0, 0.5, 0.5], [1 / 3] * 3])
    (dmin,) = sess.run(tf.gradients(tf.reduce_min(x), x))
    np.testing.assert_allclose(dmin, [[1, 0, 0], [0, 0, 0]])


def test_abs_and_sign_at_zero(sess):
    x = tf.constant([0.0, -1.0, 2.0])
    np.testing.assert_array_equal(sess.run(tf.gradients(tf.abs(x), x)[0]), [0, -1, 1])
    np.testing.assert_array_equal(sess.run(tf.gradients(tf.sign(x), x)[0]), [0, 0, 0])


def test_pow_at_zero_and_negative_bases(sess):
    """TF: dx = y x^(y-1) as computed (inf, nan at 0 included); dy = 0 where x <= 0."""
    x = tf.constant([0.0, 0.0, 0.0, -2.0, 0.0, 2.0])
    y = tf.constant([1.0, 2.0, 0.5, 2.0, 0.0, 3.0])
    dx, dy = sess.run(tf.gradients(tf.pow(x, y), [x, y]))
    np.testing.assert_array_equal(dx, [1, 0, np.inf, -4, np.nan, 12])
    np.testing.assert_allclose(dy, [0, 0, 0, 0, 0, 8 * np.log(2.0)])
    (ddx,) = tf.gradients(tf.gradients(tf.pow(x, y), y)[0], x)
    finite_dx = [0, 1, 3, 5]  # where dx itself is finite, the masked log(0) adds no NaN
    assert np.all(np.isfinite(sess.run(ddx)[finite_dx]))


def test_select_routes_the_gradient_and_the_condition_gets_none(sess):
    condition = tf.constant([True, False])
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    e = tf.constant([[5.0, 6.0], [7.0, 8.0]])
    dc, dt, de = tf.gradients(tf.where(condition, t, e), [condition, t, e])
    assert dc is None
    np.testing.assert_array_equal(sess.run(dt), [[1, 1], [0, 0]])
    np.testing.assert_array_equal(sess.run(de), [[0, 0], [1, 1]])
    scalar = tf.constant(2.0)
    dt, ds = tf.gradients(tf.where_v2([[True], [False]], t, scalar), [t, scalar])
    np.testing.assert_array_equal(sess.run(dt), [[1, 1], [0, 0]])
    assert sess.run(ds) == 2.0


def test_cast_gradients(sess):
    x = tf.constant([1.5, -2.0])
    (dx,) = tf.gradients(tf.cast(x, tf.float64) * 3.0, x)
    assert dx.dtype == tf.float32
    np.testing.assert_array_equal(sess.run(dx), [3, 3])
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]
    i = tf.constant([1, 2])
    assert tf.gradients(tf.cast(i, tf.float32), i) == [None]


def test_integer_inputs_get_none(sess):
    i = tf.constant([1, 2])
    x = tf.constant([0.5, 0.25])
    di, dx = tf.gradients(tf.cast(i * i, tf.float32) * x, [i, x])
    assert di is None
    np.testing.assert_array_equal(sess.run(dx), [1, 4])


def test_add_n_gives_every_input_the_gradient(sess):
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    da, db = sess.run(tf.gradients(tf.add_n([a, b, a]), [a, b]))
    np.testing.assert_array_equal(da, [2, 2])
    np.testing.assert_array_equal(db, [1, 1])


def test_reduce_prod_with_zeros(sess):
    """The product of the *other* elements, without dividing by zero (TF's values)."""
    x = tf.constant([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 3.0]])
    (dx,) = sess.run(tf.gradients(tf.reduce_prod(x, axis=1), x))
    np.testing.assert_array_equal(dx, [[6, 0, 0], [0, 0, 0], [6, 3, 2]])


def test_reduce_mean_divides_by_the_count(sess):
    x = tf.constant(np.ones((2, 3, 4)))
    (dx,) = sess.run(tf.gradients(tf.reduce_mean(x, [0, 2]), x))
    np.testing.assert_allclose(dx, np.full((2, 3, 4), 1 / 8))


def test_matmul_gradients(sess):
    a = tf.constant(np.arange(6.0).reshape(2, 3))
    b = tf.constant(np.arange(12.0).reshape(3, 4))
    da, db = sess.run(tf.gradients(tf.matmul(a, b), [a, b]))
    np.testing.assert_allclose(da, np.ones((2, 4)) @ np.arange(12.0).reshape(3, 4).T)
    np.testing.assert_allclose(db, np.arange(6.0).reshape(2, 3).T @ np.ones((2, 4)))


def test_batch_matmul_sums_over_broadcast_batch_dimensions(sess):
    x = tf.constant(np.ones((2, 3)))
    y = tf.constant(np.ones((5, 3, 4)))
    dx, dy = tf.gradients(tf.matmul(x, y), [x, y])
    assert dx.shape.as_list() == [2, 3] and dy.shape.as_list() == [5, 3, 4]
    np.testing.assert_allclose(sess.run(dx), np.full((2, 3), 20.0))
    np.testing.assert_allclose(sess.run(dy), np.full((5, 3, 4), 2.0))


A = [[2.0, 1.0], [0.5, 3.0]]
G = [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("adjoint, expected", [
    (False, [[-0.01652892, -0.23966941], [-0.2975207, -0.31404963]]),
    (True, [[0.03305785, -0.42975208], [-0.13223141, -0.28099173]])])
def test_matrix_inverse_gradient_matches_tf(sess, adjoint, expected):
    a = tf.constant(A)
    (da,) = tf.gradients(tf.matrix_inverse(a, adjoint=adjoint), a, grad_ys=[tf.constant(G)])
    np.testing.assert_allclose(sess.run(da), expected, rtol=1e-5)


def test_matrix_determinant_gradient_is_det_times_inverse_transpose(sess):
    a = tf.constant([A, np.eye(2) * 3])
    (da,) = sess.run(tf.gradients(tf.matrix_determinant(a), a))
    for matrix, grad in zip([A, np.eye(2) * 3], da):
        np.testing.assert_allclose(grad, np.linalg.det(matrix) * np.linalg.inv(matrix).T,
                                   rtol=1e-6)


# ---- higher orders --------------------------------------------------------------------------
def test_second_and_third_derivatives_of_a_cube(sess):
    x = tf.constant([1.0, -2.0])
    (g,) = tf.gradients(x * x * x, x)
    (gg,) = tf.gradients(g, x)
    (ggg,) = tf.gradients(gg, x)
    np.testing.assert_allclose(sess.run([g, gg, ggg]), [[3, 12], [6, -12], [6, 6]])


def test_hessian_of_a_quadratic_form_through_matmul(sess):
    """d²(xᵀ A x)/dx² = A + Aᵀ, one Hessian row per basis vector."""
    a = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 4.0, 2.0]])
    x = tf.constant([[0.3], [-1.0], [2.0]])
    y = tf.matmul(tf.matmul(x, a, transpose_a=True), x)
    (g,) = tf.gradients(y, x)
    rows = [tf.gradients(tf.reduce_sum(g * np.eye(3)[:, i:i + 1]), x)[0] for i in range(3)]
    hessian = np.concatenate(sess.run(rows), axis=1)
    np.testing.assert_allclose(hessian, a + a.T)


@pytest.mark.parametrize("fn, second", [
    (tf.tanh, lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    (tf.sigmoid, lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-x)))),
    (tf.sqrt, lambda x: -0.25 * x ** -1.5),
    (tf.rsqrt, lambda x: 0.75 * x ** -2.5),
    (tf.reciprocal, lambda x: 2 / x ** 3),
    (tf.log, lambda x: -1 / x ** 2),
    (tf.tan, lambda x: 2 * np.tan(x) / np.cos(x) ** 2)])
def test_second_derivatives_through_fused_gradient_ops(sess, fn, second):
    x_value = np.array([0.3, 0.7, 1.2])
    x = tf.constant(x_value)
    (g,) = tf.gradients(fn(x), x)
    (gg,) = tf.gradients(g, x)
    np.testing.assert_allclose(sess.run(gg), second(x_value), rtol=1e-10)
