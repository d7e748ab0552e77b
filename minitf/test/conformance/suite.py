"""The conformance tests: minitf's ops on one device, against NumPy.

Every test takes the fixture ``minitf_device`` (a
:class:`~minitf.test.conformance.DeviceUnderTest`), builds its graph with the
ops under ``tf.device(minitf_device.name)`` — placeholders stay on the host,
so feeds and fetches cross to the device and back — and compares the values
with a NumPy expectation written here.  Nothing is compared with another
device: NumPy is the specification.

The families: elementwise math (unary, binary with broadcasting, comparisons,
casts), reductions, matrix products, array ops, ``tf.nn`` ops, gradients of
small models, and a training step whose variables live on the device.  Each
family's shapes include scalars, broadcasting, sizes that are no multiple of
a tile, and empty tensors.

Run it with the plugin (:mod:`minitf.test.conformance`), or import it into a
test module that defines the ``minitf_device`` fixture, as minitf's own
``tests/test_device_conformance.py`` does.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry

RNG_SEED = 20240611

# Tolerances against a float64 NumPy expectation: float32 keeps about 7
# digits, and a device's exp/log/tanh may be a few ulps off.
_TOLERANCE = {np.dtype(np.float16): dict(rtol=2e-3, atol=2e-3),
              np.dtype(np.float32): dict(rtol=3e-5, atol=3e-6),
              np.dtype(np.float64): dict(rtol=1e-10, atol=1e-12)}


# ---- running a graph on the device under test ---------------------------------------------
def _rng():
    return np.random.default_rng(RNG_SEED)


def _missing_kernels(graph, device_type):
    """``"'Op' (dtypes)"`` for each op placed on the device that has no kernel there."""
    registry, missing = get_registry(), []
    for op in graph.get_operations():
        if op.device and tf.DeviceSpec.from_string(op.device).device_type == device_type:
            dtypes = tuple(t.dtype.base_dtype for t in (op.inputs or op.outputs))
            if not registry.has_kernel(op.type, device_type, dtypes):
                missing.append("'%s' (%s)" % (op.type, ", ".join(d.name for d in dtypes)))
    return sorted(set(missing))


def _require_kernels(device, graph):
    missing = _missing_kernels(graph, device.device_type)
    if missing:
        message = "%s has no kernel for %s" % (device.device_type, ", ".join(missing))
        if device.strict:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def run(device, build, *arrays):
    """Builds ``build(*placeholders)`` on the device, feeds ``arrays``, returns the values."""
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), np.shape(a))
                        for a in arrays]
        with tf.device(device.name):
            out = build(*placeholders)
        _require_kernels(device, graph)
        with tf.Session(graph=graph) as session:
            return session.run(out, dict(zip(placeholders, arrays)))


def assert_matches(got, expected, dtype=None):
    """``got`` has the expected dtype and shape and NumPy's values (exact for
    integers and booleans, to the dtype's tolerance for floats)."""
    expected = np.asarray(expected)
    if dtype is not None:
        expected = expected.astype(dtype)
    got = np.asarray(got)
    assert got.dtype == expected.dtype, "dtype %s, expected %s" % (got.dtype, expected.dtype)
    assert got.shape == expected.shape, "shape %s, expected %s" % (got.shape, expected.shape)
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, **_TOLERANCE.get(got.dtype, {}))
    else:
        np.testing.assert_array_equal(got, expected)


def _uniform(shape, low=-2.0, high=2.0, dtype=np.float32):
    return _rng().uniform(low, high, size=shape).astype(dtype)


# ---- the device ------------------------------------------------------------------------
def test_the_device_is_listed_by_a_session(minitf_device):
    with tf.Session() as session:
        types = {d.device_type for d in session.list_devices()}
    assert minitf_device.device_type in types


def test_a_value_crosses_to_the_device_and_back(minitf_device):
    x = _uniform((5, 3))
    assert_matches(run(minitf_device, tf.identity, x), x)


# ---- elementwise: unary --------------------------------------------------------------------
UNARY = [
    ("negative", tf.negative, np.negative, None),
    ("abs", tf.abs, np.abs, None),
    ("square", tf.square, np.square, None),
    ("sqrt", tf.sqrt, np.sqrt, (0.1, 4.0)),
    ("rsqrt", tf.rsqrt, lambda x: 1 / np.sqrt(x), (0.1, 4.0)),
    ("reciprocal", tf.reciprocal, np.reciprocal, (0.5, 4.0)),
    ("exp", tf.exp, np.exp, None),
    ("log", tf.log, np.log, (0.1, 4.0)),
    ("log1p", tf.log1p, np.log1p, (-0.5, 4.0)),
    ("tanh", tf.tanh, np.tanh, None),
    ("sigmoid", tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), None),
    ("sin", tf.sin, np.sin, None),
    ("cos", tf.cos, np.cos, None),
    ("floor", tf.floor, np.floor, None),
    ("ceil", tf.ceil, np.ceil, None),
    ("sign", tf.sign, np.sign, None),
    ("relu", tf.nn.relu, lambda x: np.maximum(x, 0), None),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), (-8.0, 8.0)),
    ("elu", tf.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1), None),
    ("softplus", tf.nn.softplus, lambda x: np.log1p(np.exp(x)), None),
]


@pytest.mark.parametrize("name, fn, ref, domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("shape", [(), (7,), (3, 17), (0, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary(minitf_device, name, fn, ref, domain, shape, dtype):
    x = _uniform(shape, *(domain or (-3.0, 3.0)), dtype=dtype)
    assert_matches(run(minitf_device, fn, x), ref(x.astype(np.float64)), dtype)


@pytest.mark.parametrize("fn, ref", [(tf.negative, np.negative), (tf.abs, np.abs),
                                     (tf.square, np.square), (tf.sign, np.sign)],
                         ids=["negative", "abs", "square", "sign"])
def test_unary_on_integers(minitf_device, fn, ref):
    x = np.array([[-3, 0, 4], [7, -1, 2]], np.int32)
    assert_matches(run(minitf_device, fn, x), ref(x))


# ---- elementwise: binary, with broadcasting ----------------------------------------------
BINARY = [
    ("add", tf.add, np.add),
    ("subtract", tf.subtract, np.subtract),
    ("multiply", tf.multiply, np.multiply),
    ("divide", tf.divide, np.divide),
    ("maximum", tf.maximum, np.maximum),
    ("minimum", tf.minimum, np.minimum),
    ("squared_difference", tf.squared_difference, lambda x, y: (x - y) ** 2),
    ("pow", lambda x, y: tf.pow(tf.abs(x) + 0.5, y), lambda x, y: (np.abs(x) + 0.5) ** y),
]
SHAPE_PAIRS = [((), ()), ((5,), ()), ((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)),
               ((0, 3), (3,))]


@pytest.mark.parametrize("name, fn, ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("x_shape, y_shape", SHAPE_PAIRS,
                         ids=["%s-%s" % pair for pair in SHAPE_PAIRS])
def test_binary_broadcasts(minitf_device, name, fn, ref, x_shape, y_shape):
    x = _uniform(x_shape)
    y = _uniform(y_shape, 0.5, 2.0) * np.where(_rng().random(y_shape) < 0.5, -1, 1).astype(np.float32)
    assert_matches(run(minitf_device, fn, x, y), ref(x.astype(np.float64), y.astype(np.float64)),
                   np.float32)


@pytest.mark.parametrize("fn, ref", [(tf.add, np.add), (tf.multiply, np.multiply),
                                     (tf.floordiv, np.floor_divide), (tf.mod, np.mod),
                                     (tf.maximum, np.maximum)],
                         ids=["add", "multiply", "floordiv", "mod", "maximum"])
def test_binary_on_integers(minitf_device, fn, ref):
    x = np.array([[7, -7, 0], [5, 9, -3]], np.int32)
    y = np.array([2, 3, -4], np.int32)
    assert_matches(run(minitf_device, fn, x, y), ref(x, y))


@pytest.mark.parametrize("fn, ref", [(tf.equal, np.equal), (tf.not_equal, np.not_equal),
                                     (tf.less, np.less), (tf.less_equal, np.less_equal),
                                     (tf.greater, np.greater),
                                     (tf.greater_equal, np.greater_equal)],
                         ids=["equal", "not_equal", "less", "less_equal", "greater",
                              "greater_equal"])
def test_comparisons(minitf_device, fn, ref):
    x = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], np.float32)
    y = np.array([2.0, 2.0, 2.0], np.float32)
    assert_matches(run(minitf_device, fn, x, y), ref(x, y))


def test_logical_ops(minitf_device):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    assert_matches(run(minitf_device, tf.logical_and, a, b), a & b)
    assert_matches(run(minitf_device, tf.logical_or, a, b), a | b)
    assert_matches(run(minitf_device, tf.logical_not, a), ~a)


def test_where_selects_elements(minitf_device):
    condition = np.array([[True, False, True], [False, False, True]])
    x, y = _uniform((2, 3)), _uniform((2, 3), 5.0, 6.0)
    assert_matches(run(minitf_device, tf.where, condition, x, y), np.where(condition, x, y))


@pytest.mark.parametrize("source, target", [(np.float32, np.int32), (np.int32, np.float32),
                                            (np.float32, np.float64), (np.float32, np.bool_)],
                         ids=["f32-i32", "i32-f32", "f32-f64", "f32-bool"])
def test_cast(minitf_device, source, target):
    x = np.array([-2.7, -0.5, 0.0, 1.5, 3.9], np.float32).astype(source)
    assert_matches(run(minitf_device, lambda t: tf.cast(t, target), x), x.astype(target))


def test_add_n(minitf_device):
    arrays = [_uniform((4, 5)) * k for k in range(1, 4)]
    assert_matches(run(minitf_device, lambda *xs: tf.add_n(list(xs)), *arrays),
                   np.sum(arrays, axis=0), np.float32)


# ---- reductions ----------------------------------------------------------------------------
REDUCTIONS = [
    ("sum", tf.reduce_sum, np.sum),
    ("mean", tf.reduce_mean, np.mean),
    ("max", tf.reduce_max, np.max),
    ("min", tf.reduce_min, np.min),
    ("prod", tf.reduce_prod, np.prod),
]


@pytest.mark.parametrize("name, fn, ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction(minitf_device, name, fn, ref, axis, keepdims):
    x = _uniform((3, 4, 5), 0.5, 1.5)
    got = run(minitf_device, lambda t: fn(t, axis=axis, keepdims=keepdims), x)
    assert_matches(got, ref(x.astype(np.float64), axis=axis, keepdims=keepdims), np.float32)


def test_reductions_of_empty_tensors_give_the_identity(minitf_device):
    x = np.zeros((0, 3), np.float32)
    assert_matches(run(minitf_device, lambda t: tf.reduce_sum(t, axis=0), x), np.zeros(3, np.float32))
    assert_matches(run(minitf_device, lambda t: tf.reduce_prod(t, axis=0), x), np.ones(3, np.float32))


@pytest.mark.parametrize("fn, ref", [(tf.reduce_all, np.all), (tf.reduce_any, np.any)],
                         ids=["all", "any"])
def test_boolean_reductions(minitf_device, fn, ref):
    x = np.array([[True, False, True], [True, True, True]])
    assert_matches(run(minitf_device, lambda t: fn(t, axis=1), x), ref(x, axis=1))


@pytest.mark.parametrize("fn, ref", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)],
                         ids=["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1])
def test_arg_reductions(minitf_device, fn, ref, axis):
    x = _uniform((4, 6))
    assert_matches(run(minitf_device, lambda t: fn(t, axis=axis), x), ref(x, axis=axis).astype(np.int64))


def test_cumsum(minitf_device):
    x = _uniform((3, 5))
    assert_matches(run(minitf_device, lambda t: tf.cumsum(t, axis=1), x),
                   np.cumsum(x.astype(np.float64), axis=1), np.float32)


# ---- matrix products -----------------------------------------------------------------------
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (2, 3, 4), (17, 33, 9), (64, 64, 64), (0, 3, 2)])
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True)])
def test_matmul(minitf_device, m, k, n, transpose_a, transpose_b):
    a, b = _uniform((m, k)), _uniform((k, n), -1.0, 1.0)
    a_in, b_in = (a.T.copy() if transpose_a else a), (b.T.copy() if transpose_b else b)
    got = run(minitf_device, lambda x, y: tf.matmul(x, y, transpose_a=transpose_a,
                                                    transpose_b=transpose_b), a_in, b_in)
    assert_matches(got, a.astype(np.float64) @ b, np.float32)


def test_matmul_in_float64(minitf_device):
    a, b = _uniform((5, 7), dtype=np.float64), _uniform((7, 3), dtype=np.float64)
    assert_matches(run(minitf_device, tf.matmul, a, b), a @ b)


def test_batch_matmul(minitf_device):
    a, b = _uniform((3, 4, 5)), _uniform((3, 5, 2))
    assert_matches(run(minitf_device, tf.matmul, a, b), np.matmul(a.astype(np.float64), b), np.float32)


# ---- array ops -----------------------------------------------------------------------------
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
ARRAY_OPS = [
    ("reshape", lambda t: tf.reshape(t, [4, -1]), lambda x: x.reshape(4, -1)),
    ("transpose", lambda t: tf.transpose(t, [2, 0, 1]), lambda x: x.transpose(2, 0, 1)),
    ("expand_dims", lambda t: tf.expand_dims(t, 1), lambda x: x[:, None]),
    ("squeeze", lambda t: tf.squeeze(t[:, :1], [1]), lambda x: x[:, 0]),
    ("concat", lambda t: tf.concat([t, 2 * t], axis=1), lambda x: np.concatenate([x, 2 * x], 1)),
    ("stack", lambda t: tf.stack([t, -t], axis=0), lambda x: np.stack([x, -x])),
    ("slice", lambda t: tf.slice(t, [0, 1, 1], [2, 2, 2]), lambda x: x[0:2, 1:3, 1:3]),
    ("strided_slice", lambda t: t[:, ::-1, 1::2], lambda x: x[:, ::-1, 1::2]),
    ("tile", lambda t: tf.tile(t, [1, 2, 1]), lambda x: np.tile(x, (1, 2, 1))),
    ("pad", lambda t: tf.pad(t, [[0, 1], [1, 0], [2, 2]]),
     lambda x: np.pad(x, [(0, 1), (1, 0), (2, 2)])),
    ("reverse", lambda t: tf.reverse(t, [1]), lambda x: x[:, ::-1]),
    ("gather", lambda t: tf.gather(t, [2, 0, 2], axis=1), lambda x: x[:, [2, 0, 2]]),
    ("zeros_like", tf.zeros_like, np.zeros_like),
    ("ones_like", tf.ones_like, np.ones_like),
    ("fill", lambda t: t + tf.fill([2, 3, 4], 7.0), lambda x: x + 7.0),
]


@pytest.mark.parametrize("name, build, ref", ARRAY_OPS, ids=[a[0] for a in ARRAY_OPS])
def test_array_op(minitf_device, name, build, ref):
    assert_matches(run(minitf_device, build, X), ref(X))


def test_split(minitf_device):
    got = run(minitf_device, lambda t: tf.split(t, [1, 3], axis=2), X)
    expected = np.split(X, [1], axis=2)
    for g, e in zip(got, expected):
        assert_matches(g, e)


def test_one_hot(minitf_device):
    indices = np.array([0, 2, -1, 1], np.int32)
    assert_matches(run(minitf_device, lambda t: tf.one_hot(t, 3), indices),
                   np.array([[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 1, 0]], np.float32))


# ---- tf.nn ---------------------------------------------------------------------------------
def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_and_log_softmax(minitf_device):
    x = _uniform((4, 7), -5.0, 5.0)
    assert_matches(run(minitf_device, tf.nn.softmax, x), _softmax(x.astype(np.float64)), np.float32)
    assert_matches(run(minitf_device, tf.nn.log_softmax, x),
                   np.log(_softmax(x.astype(np.float64))), np.float32)


def test_bias_add(minitf_device):
    x, b = _uniform((2, 3, 4)), _uniform((4,))
    assert_matches(run(minitf_device, tf.nn.bias_add, x, b), x + b)


def test_softmax_cross_entropy(minitf_device):
    logits = _uniform((5, 4), -3.0, 3.0)
    labels = _softmax(_uniform((5, 4)).astype(np.float64)).astype(np.float32)
    got = run(minitf_device, lambda lo, la: tf.nn.softmax_cross_entropy_with_logits(
        labels=la, logits=lo), logits, labels)
    expected = -np.sum(labels * np.log(_softmax(logits.astype(np.float64))), axis=1)
    assert_matches(got, expected, np.float32)


def _conv2d_reference(x, w):
    """VALID convolution, stride 1, NHWC: an explicit loop over output positions."""
    n, h, width, _ = x.shape
    kh, kw, _, out = w.shape
    y = np.zeros((n, h - kh + 1, width - kw + 1, out))
    for i in range(y.shape[1]):
        for j in range(y.shape[2]):
            patch = x[:, i:i + kh, j:j + kw, :]
            y[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return y


def test_conv2d(minitf_device):
    x, w = _uniform((2, 6, 5, 3)), _uniform((3, 2, 3, 4), -0.5, 0.5)
    got = run(minitf_device, lambda a, b: tf.nn.conv2d(a, b, [1, 1, 1, 1], "VALID"), x, w)
    assert_matches(got, _conv2d_reference(x.astype(np.float64), w), np.float32)


def test_max_and_average_pooling(minitf_device):
    x = _uniform((1, 4, 6, 2))
    windows = x.reshape(1, 2, 2, 3, 2, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 2, 3, 2, 4)
    assert_matches(run(minitf_device, lambda t: tf.nn.max_pool(t, [1, 2, 2, 1], [1, 2, 2, 1],
                                                               "VALID"), x), windows.max(-1))
    assert_matches(run(minitf_device, lambda t: tf.nn.avg_pool(t, [1, 2, 2, 1], [1, 2, 2, 1],
                                                               "VALID"), x),
                   windows.astype(np.float64).mean(-1), np.float32)


# ---- gradients -----------------------------------------------------------------------------
def _gradients_on_device(device, loss_fn, *arrays):
    """The gradients of ``loss_fn(*placeholders)`` with respect to each input,
    forward and backward ops both on the device."""
    def build(*placeholders):
        return tf.gradients(loss_fn(*placeholders), list(placeholders))
    return run(device, build, *arrays)


def test_gradient_of_a_dense_layer(minitf_device):
    x, w, b = _uniform((4, 3)), _uniform((3, 2), -1.0, 1.0), _uniform((2,))
    dx, dw, db = _gradients_on_device(
        minitf_device, lambda x_, w_, b_: tf.reduce_sum(tf.tanh(tf.matmul(x_, w_) + b_)), x, w, b)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    dz = 1 - np.tanh(x64 @ w64 + b) ** 2
    assert_matches(dx, dz @ w64.T, np.float32)
    assert_matches(dw, x64.T @ dz, np.float32)
    assert_matches(db, dz.sum(0), np.float32)


def test_gradient_of_softmax_cross_entropy(minitf_device):
    logits = _uniform((3, 5))
    labels = np.eye(5, dtype=np.float32)[[1, 4, 0]]
    (dlogits,) = _gradients_on_device(
        minitf_device, lambda lo: tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            labels=labels, logits=lo)), logits)
    assert_matches(dlogits, (_softmax(logits.astype(np.float64)) - labels) / 3, np.float32)


@pytest.mark.parametrize("fn, derivative", [
    (tf.nn.relu, lambda x: (x > 0).astype(np.float64)),
    (tf.sigmoid, lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    (tf.square, lambda x: 2 * x),
    (tf.exp, np.exp),
    (lambda t: tf.reduce_max(t, axis=1), None),
], ids=["relu", "sigmoid", "square", "exp", "reduce_max"])
def test_elementwise_gradients(minitf_device, fn, derivative):
    x = _uniform((3, 4)) + np.arange(12, dtype=np.float32).reshape(3, 4) * 1e-2
    (dx,) = _gradients_on_device(minitf_device, lambda t: tf.reduce_sum(fn(t)), x)
    if derivative is None:  # the max of each row receives the whole gradient
        expected = (x == x.max(axis=1, keepdims=True)).astype(np.float64)
    else:
        expected = derivative(x.astype(np.float64))
    assert_matches(dx, expected, np.float32)


def test_gradient_through_array_ops(minitf_device):
    x = _uniform((2, 3, 4))
    weights = np.arange(24, dtype=np.float32).reshape(4, 6)
    (dx,) = _gradients_on_device(
        minitf_device,
        lambda t: tf.reduce_sum(tf.reshape(tf.transpose(t, [2, 0, 1]), [4, 6]) * weights), x)
    assert_matches(dx, weights.reshape(4, 2, 3).transpose(1, 2, 0))


# ---- variables and a training step ---------------------------------------------------------
def test_a_training_step_updates_variables_on_the_device(minitf_device):
    x = _uniform((8, 3))
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(minitf_device.name):
            w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
        _require_kernels(minitf_device, graph)
        with tf.Session(graph=graph) as session:
            session.run(init)
            session.run(step)
            w_after = session.run(w)
    expected = -0.1 * (2.0 / 8) * x.astype(np.float64).T @ (-y)
    assert_matches(w_after, expected, np.float32)
