"""The ``tf.nn`` ops against NumPy references written here, on every device.

The references are deliberately naive (explicit loops over output positions
for convolution and pooling, textbook formulas for the losses) so that they
check the vectorised kernels rather than repeat them.  A few outputs of real
TF1 are pinned to fix the exact ``SAME`` padding.
"""

import warnings

import numpy as np
import pytest

import minitf as tf
from tests.conftest import run_on


def _rng():
    return np.random.default_rng(0)


def _tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


# ---- Activations ------------------------------------------------------------------
def _ref_selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * np.where(x > 0, x, alpha * (np.exp(x) - 1))


ACTIVATIONS = [
    (tf.nn.relu, lambda x: np.where(x > 0, x, 0)),
    (tf.nn.relu6, lambda x: np.minimum(np.where(x > 0, x, 0), 6)),
    (tf.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    (tf.nn.selu, _ref_selu),
    (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda x: tf.nn.leaky_relu(x, alpha=0.01), lambda x: np.where(x > 0, x, 0.01 * x)),
    (tf.nn.softplus, lambda x: np.log(1 + np.exp(x))),
    (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
]
SHAPES = [(), (0,), (7,), (2, 3, 5)]


@pytest.mark.parametrize("fn, ref", ACTIVATIONS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_matches_numpy(device, fn, ref, shape, dtype):
    x = (_rng().standard_normal(shape) * 4).astype(dtype)
    out = run_on(device, fn, x)
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), **_tolerance(dtype))


@pytest.mark.parametrize("fn", [tf.nn.relu, tf.nn.relu6])
def test_relu_accepts_integers(device, fn):
    x = np.array([-3, 0, 4, 9], dtype=np.int32)
    out = run_on(device, fn, x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 0, 4, 9 if fn is tf.nn.relu else 6])


def test_activations_are_stable_at_extremes(device):
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0], dtype=np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        softplus = run_on(device, tf.nn.softplus, x)
        elu = run_on(device, tf.nn.elu, x)
    np.testing.assert_allclose(softplus, [0.0, 9.357623e-14, np.log(2.0), 30.0, 1000.0], rtol=1e-6)
    np.testing.assert_allclose(elu, [-1.0, -1.0, 0.0, 30.0, 1000.0])


def test_activation_op_types_and_names():
    x = tf.placeholder(tf.float32, [2])
    assert tf.nn.relu(x).name == "Relu:0"
    assert tf.nn.leaky_relu(x).op.type == "LeakyRelu"
    assert tf.nn.leaky_relu(x, alpha=0.3).op.get_attr("alpha") == pytest.approx(0.3)
    assert tf.nn.softplus(x, name="sp").name == "sp:0"


@pytest.mark.parametrize("fn", [tf.nn.elu, tf.nn.softplus, tf.nn.softmax, tf.nn.l2_loss])
def test_float_only_ops_reject_integers(fn):
    with pytest.raises(TypeError, match="int32"):
        fn(tf.placeholder(tf.int32, [3]))


# ---- Softmax ----------------------------------------------------------------------
def _ref_softmax(x, axis=-1):
    """The textbook formula, without the kernel's max shift (fine for moderate x)."""
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 3, 4), (0, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax(device, shape, dtype):
    x = (_rng().standard_normal(shape) * 5).astype(dtype)
    probs = run_on(device, tf.nn.softmax, x)
    log_probs = run_on(device, tf.nn.log_softmax, x)
    assert probs.dtype == log_probs.dtype == dtype
    np.testing.assert_allclose(probs, _ref_softmax(x.astype(np.float64)), **_tolerance(dtype))
    np.testing.assert_allclose(log_probs, np.log(_ref_softmax(x.astype(np.float64))),
                               **_tolerance(dtype))


def test_softmax_does_not_overflow(device):
    x = np.array([[1000.0, 0.0, -1000.0]], dtype=np.float32)
    np.testing.assert_allclose(run_on(device, tf.nn.softmax, x), [[1.0, 0.0, 0.0]])
    np.testing.assert_allclose(run_on(device, tf.nn.log_softmax, x), [[0.0, -1000.0, -2000.0]])


def test_softmax_of_minus_infinity_is_quiet(device):
    """A -inf logit gets probability 0; an all -inf row is nan, as in TF, with
    no NumPy RuntimeWarning on the way."""
    x = np.array([[1.0, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf]], dtype=np.float32)
    e = np.exp([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        probs = run_on(device, tf.nn.softmax, x)
        log_probs = run_on(device, tf.nn.log_softmax, x)
        loss = run_on(device, lambda logits: tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.constant([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), logits=logits), x)
    np.testing.assert_allclose(probs[0], [e[0] / e.sum(), e[1] / e.sum(), 0.0], rtol=1e-6)
    assert np.isnan(probs[1]).all()
    assert log_probs[0, 2] == -np.inf
    assert np.isnan(loss[1])


@pytest.mark.parametrize("axis", [0, 1, -2, 2, -1])
def test_softmax_along_an_axis(device, axis):
    x = _rng().standard_normal((2, 3, 4))
    out = run_on(device, lambda t: tf.nn.softmax(t, axis=axis), x)
    np.testing.assert_allclose(out, _ref_softmax(x, axis=axis), rtol=1e-12)
    out = run_on(device, lambda t: tf.nn.log_softmax(t, dim=axis), x)
    np.testing.assert_allclose(out, np.log(_ref_softmax(x, axis=axis)), rtol=1e-12)


def test_softmax_names_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    assert tf.nn.softmax(x).name == "Softmax:0"
    assert tf.nn.log_softmax(x).op.type == "LogSoftmax"
    assert tf.nn.softmax(x, axis=0, name="probs").name == "probs:0"
    assert tf.nn.softmax(x).shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match="at least rank 1"):
        tf.nn.softmax(tf.placeholder(tf.float32, []))
    with pytest.raises(ValueError, match="out of range"):
        tf.nn.softmax(x, axis=2)


# ---- BiasAdd ----------------------------------------------------------------------
@pytest.mark.parametrize("shape, data_format, channel", [
    ((4, 3), "NHWC", 1), ((2, 5, 3), "NHWC", 2), ((2, 4, 5, 3), "NHWC", 3),
    ((2, 3, 4), "NCHW", 1), ((2, 3, 4, 5), "NCHW", 1), ((2, 3, 4, 5, 2), "NCHW", 1),
    ((0, 3), None, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_bias_add(device, shape, data_format, channel, dtype):
    value = (_rng().standard_normal(shape) * 10).astype(dtype)
    bias = np.arange(shape[channel], dtype=dtype) + 1
    out = run_on(device, lambda v, b: tf.nn.bias_add(v, b, data_format=data_format), value, bias)
    expected = value.copy()
    for c in range(shape[channel]):
        index = [slice(None)] * len(shape)
        index[channel] = c
        expected[tuple(index)] += bias[c]
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected)


@pytest.mark.parametrize("value_shape, bias_shape, data_format, message", [
    ([2, 5, 3], [4], "NHWC", "Dimensions must be equal, but are 3 and 4"),
    ([2, 5, 3], [3, 1], "NHWC", "rank 1"),
    ([3], [3], "NHWC", "at least rank 2"),
    ([2, 3], [3], "NCHW", "at least rank 3"),
    ([2, 3, 4, 5], [5], "NCHW", "Dimensions must be equal, but are 3 and 5"),
])
def test_bias_add_shape_errors(value_shape, bias_shape, data_format, message):
    value, bias = tf.placeholder(tf.float32, value_shape), tf.placeholder(tf.float32, bias_shape)
    with pytest.raises(ValueError, match=message) as info:
        tf.nn.bias_add(value, bias, data_format=data_format)
    assert "(op: 'BiasAdd')" in str(info.value)


def test_bias_add_static_shape():
    value = tf.placeholder(tf.float32, [None, 7, None])
    assert tf.nn.bias_add(value, np.zeros(4, np.float32)).shape.as_list() == [None, 7, 4]
    assert tf.nn.bias_add(value, np.zeros(7, np.float32), data_format="NCHW").shape \
        .as_list() == [None, 7, None]


# ---- Losses -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_loss(device, shape, dtype):
    t = _rng().standard_normal(shape).astype(dtype)
    out = run_on(device, tf.nn.l2_loss, t)
    assert out.shape == () and out.dtype == dtype
    np.testing.assert_allclose(out, sum(v * v for v in t.reshape(-1).astype(np.float64)) / 2,
                               **_tolerance(dtype))


def _ref_xent(labels, logits):
    """-sum(labels * log(softmax(logits))) one row at a time, for any rank."""
    flat_labels = labels.reshape(-1, labels.shape[-1])
    flat_logits = logits.reshape(-1, logits.shape[-1])
    loss = [-sum(z * np.log(p) for z, p in zip(row_z, _ref_softmax(row_x)))
            for row_z, row_x in zip(flat_labels, flat_logits)]
    return np.array(loss).reshape(logits.shape[:-1])


def _random_distribution(shape, rng):
    weights = rng.random(shape)
    return weights / weights.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(3,), (4, 5), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_softmax_cross_entropy(device, shape, dtype, version):
    rng = _rng()
    labels = _random_distribution(shape, rng).astype(dtype)
    logits = (rng.standard_normal(shape) * 3).astype(dtype)
    fn = {"v1": tf.nn.softmax_cross_entropy_with_logits,
          "v2": tf.nn.softmax_cross_entropy_with_logits_v2}[version]
    loss = run_on(device, lambda z, x: fn(labels=z, logits=x), labels, logits)
    assert loss.dtype == dtype and loss.shape == shape[:-1]
    expected = _ref_xent(labels.astype(np.float64), logits.astype(np.float64))
    np.testing.assert_allclose(loss, expected, **_tolerance(dtype))


def test_softmax_cross_entropy_backprop_output(device):
    rng = _rng()
    labels, logits = _random_distribution((4, 3), rng), rng.standard_normal((4, 3))
    backprop = run_on(device, lambda z, x: _xent_op(tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=z, logits=x)).outputs[1], labels, logits)
    np.testing.assert_allclose(backprop, _ref_softmax(logits) - labels, rtol=1e-12, atol=1e-15)


def test_softmax_cross_entropy_along_an_axis(device):
    rng = _rng()
    labels, logits = _random_distribution((2, 4, 3), rng), rng.standard_normal((2, 4, 3))
    labels = labels.transpose(0, 2, 1)
    logits = logits.transpose(0, 2, 1)
    loss = run_on(device, lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=z, logits=x, axis=1), labels, logits)
    expected = _ref_xent(labels.transpose(0, 2, 1), logits.transpose(0, 2, 1))
    np.testing.assert_allclose(loss, expected, rtol=1e-12)


def test_softmax_cross_entropy_is_stable(device):
    loss = run_on(device, lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=z, logits=x), np.array([[0.0, 1.0]], np.float32),
        np.array([[1000.0, -1000.0]], np.float32))
    np.testing.assert_allclose(loss, [2000.0])


def _xent_op(loss):
    """The SoftmaxCrossEntropyWithLogits op whose loss the wrapper reshaped (as TF)."""
    assert loss.op.type == "Reshape"
    return loss.op.inputs[0].op


def test_softmax_cross_entropy_names_and_errors():
    labels, logits = tf.placeholder(tf.float32, [2, 4]), tf.placeholder(tf.float32, [None, 3])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 0.0, 1.0]], logits=logits)
    # TF's graph: the op takes the name scope's name, and its loss is reshaped in the scope.
    assert loss.name == "softmax_cross_entropy_with_logits/Reshape_2:0"
    assert _xent_op(loss).name == "softmax_cross_entropy_with_logits"
    assert _xent_op(loss).type == "SoftmaxCrossEntropyWithLogits"
    assert loss.shape.as_list() == [None]
    assert _xent_op(loss).outputs[1].shape.as_list() == [1, 3]
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0, 0.0]], logits=logits)
    assert v1.name == "softmax_cross_entropy_with_logits_sg/Reshape_2:0"
    assert _xent_op(v1).name == "softmax_cross_entropy_with_logits_sg"
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(labels, logits)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_softmax_cross_entropy_flattens_labels_and_logits_separately(sess, version):
    # TF's _flatten_outer_dims on each: [?, 7] labels fit [1, ?, 7] logits and the
    # reverse; the loss has the logits' shape without the class axis.
    fn = {"v1": tf.nn.softmax_cross_entropy_with_logits,
          "v2": tf.nn.softmax_cross_entropy_with_logits_v2}[version]
    rng = _rng()
    flat = tf.placeholder(tf.float32, [None, 7])
    nested = tf.placeholder(tf.float32, [1, None, 7])
    labels_value = np.eye(7, dtype=np.float32)[[3, 0, 6]]
    logits_value = rng.standard_normal((3, 7)).astype(np.float32)
    nested_logits = fn(labels=flat, logits=nested)
    flat_logits = fn(labels=nested, logits=flat)
    assert nested_logits.shape.as_list() == [1, None]
    assert flat_logits.shape.as_list() == [None]
    expected = _ref_xent(labels_value.astype(np.float64), logits_value.astype(np.float64))
    got = sess.run(nested_logits, {flat: labels_value, nested: logits_value[None]})
    np.testing.assert_allclose(got, expected[None], rtol=1e-5)
    got = sess.run(flat_logits, {nested: labels_value[None], flat: logits_value})
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        fn(labels=tf.zeros([2, 3]), logits=tf.zeros([2, 4]))


def test_softmax_cross_entropy_casts_the_labels(sess):
    # One-hot labels from tf.one_hot(..., dtype=tf.int32), or ints: cast to the logits' dtype.
    logits_value = np.array([[1.0, 2.0, 0.5]])
    for labels in ([[0, 1, 0]], tf.constant([[0, 1, 0]], tf.int32)):
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels,
                                                          logits=tf.constant(logits_value))
        assert loss.dtype == tf.float64
        np.testing.assert_allclose(sess.run(loss),
                                   _ref_xent(np.array([[0.0, 1.0, 0.0]]), logits_value))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant([[0, 1, 0]]),
                                                 logits=tf.constant(logits_value))
    assert v1.dtype == tf.float64


def test_softmax_cross_entropy_of_a_vector(sess):
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[0.0, 1.0], logits=[2.0, 1.0])
    assert loss.shape.as_list() == []
    np.testing.assert_allclose(sess.run(loss), _ref_xent(np.array([0.0, 1.0]),
                                                         np.array([2.0, 1.0])), rtol=1e-6)


def _ref_sparse_xent(labels, logits):
    flat_labels, flat_logits = labels.reshape(-1), logits.reshape(-1, logits.shape[-1])
    loss = [-np.log(_ref_softmax(row)[k]) for k, row in zip(flat_labels, flat_logits)]
    return np.array(loss).reshape(labels.shape)


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_softmax_cross_entropy(device, shape, dtype, label_dtype):
    rng = _rng()
    logits = (rng.standard_normal(shape) * 3).astype(dtype)
    labels = rng.integers(0, shape[-1], size=shape[:-1]).astype(label_dtype)
    loss, backprop = run_on(device, lambda z, x: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=z, logits=x).op.outputs, labels, logits)
    assert loss.dtype == dtype and loss.shape == shape[:-1]
    np.testing.assert_allclose(loss, _ref_sparse_xent(labels, logits.astype(np.float64)),
                               **_tolerance(dtype))
    one_hot = np.eye(shape[-1])[labels]
    np.testing.assert_allclose(backprop, _ref_softmax(logits.astype(np.float64)) - one_hot,
                               **_tolerance(dtype))


@pytest.mark.parametrize("bad_label", [3, 5, -1])
def test_sparse_softmax_cross_entropy_rejects_labels_out_of_range(device, bad_label):
    """On CPU TF raises; on GPU its kernel gives NaN instead (TF's documentation of
    ``labels``: "Other values will raise an exception when this op is run on CPU, and
    return NaN for corresponding loss and gradient rows on GPU")."""
    def build(z, x):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x)
    arrays = np.array([0, bad_label], np.int32), np.zeros((2, 3), np.float32)
    if tf.DeviceSpec.from_string(device).device_type == "GPU":
        loss = run_on(device, build, *arrays)
        np.testing.assert_allclose(loss[0], np.log(3.0), rtol=1e-6)
        assert np.isnan(loss[1])
        return
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run_on(device, build, *arrays)
    message = str(info.value)
    assert ("Received a label value of %d which is outside the valid range of [0, 3)"
            % bad_label) in message
    assert "Label values: 0 %d" % bad_label in message
    assert "SparseSoftmaxCrossEntropyWithLogits" in message
    assert info.value.op.type == "SparseSoftmaxCrossEntropyWithLogits"


@pytest.mark.parametrize("labels_shape, logits_shape, message", [
    ([2, 3], [2, 3], "Rank mismatch: Rank of labels \\(received 2\\) should equal rank of "
                     "logits minus 1 \\(received 2\\)"),
    ([3], [2, 3], "Shape mismatch"),
    ([], [], "Logits cannot be scalars"),
])
def test_sparse_softmax_cross_entropy_shape_errors(labels_shape, logits_shape, message):
    labels = tf.placeholder(tf.int32, labels_shape)
    logits = tf.placeholder(tf.float32, logits_shape)
    with pytest.raises(ValueError, match=message):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def test_sparse_softmax_cross_entropy_names_and_type_errors():
    logits = tf.placeholder(tf.float32, [None, 3])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2], logits=logits)
    assert loss.name == "SparseSoftmaxCrossEntropyWithLogits:0"
    assert loss.shape.as_list() == [2]
    with pytest.raises(TypeError, match="int32, int64"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0.0, 1.0], logits=logits)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.sparse_softmax_cross_entropy_with_logits([0, 2], logits)


@pytest.mark.parametrize("shape", [(), (6,), (3, 4), (0, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_cross_entropy(device, shape, dtype):
    rng = _rng()
    labels = rng.random(shape).astype(dtype)
    logits = (rng.standard_normal(shape) * 3).astype(dtype)
    loss = run_on(device, lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=z, logits=x), labels, logits)
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    sigmoid = 1 / (1 + np.exp(-x))
    assert loss.dtype == dtype and loss.shape == shape
    np.testing.assert_allclose(loss, -z * np.log(sigmoid) - (1 - z) * np.log(1 - sigmoid),
                               **_tolerance(dtype))


def test_sigmoid_cross_entropy_is_stable(device):
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0], np.float32)
    z = np.array([1.0, 0.0, 0.5, 1.0, 0.0], np.float32)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        loss = run_on(device, lambda a, b: tf.nn.sigmoid_cross_entropy_with_logits(
            labels=a, logits=b), z, x)
    np.testing.assert_allclose(loss, [1000.0, 0.0, np.log(2.0), 0.0, 1000.0], atol=1e-6)


def test_sigmoid_cross_entropy_names_and_errors():
    logits = tf.placeholder(tf.float32, [2, 3])
    assert tf.nn.sigmoid_cross_entropy_with_logits(labels=logits, logits=logits).name \
        == "logistic_loss:0"
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.sigmoid_cross_entropy_with_logits(logits, logits)
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.placeholder(tf.float32, [2, 4]),
                                                logits=logits)


# ---- Convolution and pooling ------------------------------------------------------
def _ref_padding(size, window, stride, dilation, padding):
    """TF's padding rule, spelled out: (output size, padding before)."""
    span = dilation * (window - 1) + 1
    if padding == "VALID":
        return int(np.ceil((size - span + 1) / stride)), 0
    out = int(np.ceil(size / stride))
    return out, max((out - 1) * stride + span - size, 0) // 2


def _ref_windows(x, window, stride, dilation, padding):
    """The output size, and for every output position (i, j) the input rows
    and columns its window reads as (tap, index) pairs, padding left out."""
    (kh, kw), (sh, sw), (dh, dw) = window, stride, dilation
    out_h, top = _ref_padding(x.shape[1], kh, sh, dh, padding)
    out_w, left = _ref_padding(x.shape[2], kw, sw, dw, padding)
    windows = []
    for i in range(out_h):
        for j in range(out_w):
            rows = [(a, i * sh - top + a * dh) for a in range(kh)]
            cols = [(b, j * sw - left + b * dw) for b in range(kw)]
            windows.append((i, j, [(a, r) for a, r in rows if 0 <= r < x.shape[1]],
                            [(b, c) for b, c in cols if 0 <= c < x.shape[2]]))
    return (out_h, out_w), windows


def _ref_conv2d(x, w, stride, padding, dilation=(1, 1)):
    (out_h, out_w), windows = _ref_windows(x, w.shape[:2], stride, dilation, padding)
    out = np.zeros((x.shape[0], out_h, out_w, w.shape[3]))
    for i, j, rows, cols in windows:
        for a, r in rows:
            for b, c in cols:
                out[:, i, j, :] += x[:, r, c, :] @ w[a, b]
    return out


CONV_CASES = [
    # input NHWC, filter HWIO, strides, padding, dilations
    ((1, 5, 5, 1), (3, 3, 1, 1), (1, 1), "SAME", (1, 1)),
    ((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "VALID", (1, 1)),
    ((2, 7, 6, 2), (3, 2, 2, 3), (2, 2), "SAME", (1, 1)),
    ((2, 7, 6, 2), (3, 2, 2, 3), (2, 2), "VALID", (1, 1)),
    ((3, 6, 6, 2), (2, 2, 2, 2), (2, 1), "SAME", (1, 1)),
    ((1, 4, 4, 1), (4, 4, 1, 1), (3, 3), "SAME", (1, 1)),
    ((2, 9, 8, 3), (3, 3, 3, 2), (1, 1), "SAME", (2, 2)),
    ((2, 9, 8, 3), (2, 3, 3, 2), (1, 1), "VALID", (2, 3)),
    ((1, 8, 8, 1), (3, 3, 1, 1), (2, 2), "SAME", (2, 2)),
    ((0, 5, 5, 2), (3, 3, 2, 3), (2, 2), "SAME", (1, 1)),
]


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_matches_loops(device, x_shape, w_shape, strides, padding, dilations, dtype):
    rng = _rng()
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    out = run_on(device, lambda a, b: tf.nn.conv2d(a, b, strides=list(strides), padding=padding,
                                                   dilations=list(dilations)), x, w)
    assert out.dtype == dtype
    expected = _ref_conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding,
                           dilations)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-12)


def test_conv2d_integer(device):
    x = np.arange(2 * 4 * 4 * 2, dtype=np.int32).reshape(2, 4, 4, 2)
    w = np.arange(2 * 2 * 2 * 3, dtype=np.int32).reshape(2, 2, 2, 3) - 5
    out = run_on(device, lambda a, b: tf.nn.conv2d(a, b, strides=1, padding="SAME"), x, w)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, _ref_conv2d(x, w, (1, 1), "SAME"))


# Outputs of TensorFlow 1.x itself: SAME puts the odd padding row/column after.
_X16 = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
_X36 = np.arange(36, dtype=np.float32).reshape(1, 6, 6, 1)


@pytest.mark.parametrize("x, window, kwargs, expected", [
    (_X16, 2, {"strides": 1}, [[14, 18, 22, 12], [30, 34, 38, 20], [46, 50, 54, 28],
                               [27, 29, 31, 16]]),
    (_X36, 3, {"strides": 2}, [[63, 81, 63], [171, 189, 135], [168, 180, 126]]),
    (_X36, 2, {"strides": 1, "dilations": 2}, [
        [7, 14, 16, 18, 20, 10], [14, 28, 32, 36, 40, 20], [26, 52, 56, 60, 64, 32],
        [38, 76, 80, 84, 88, 44], [50, 100, 104, 108, 112, 56], [25, 50, 52, 54, 56, 28]]),
])
def test_conv2d_same_padding_matches_tensorflow(device, x, window, kwargs, expected):
    w = np.ones((window, window, 1, 1), np.float32)
    out = run_on(device, lambda a, b: tf.nn.conv2d(a, b, padding="SAME", **kwargs), x, w)
    np.testing.assert_array_equal(out[0, :, :, 0], expected)


def test_conv2d_static_shapes_and_names():
    x = tf.placeholder(tf.float32, [None, 28, 27, 3])
    w = tf.placeholder(tf.float32, [5, 5, 3, 8])
    y = tf.nn.conv2d(x, w, strides=[1, 2, 2, 1], padding="SAME")
    assert y.name == "Conv2D:0" and y.shape.as_list() == [None, 14, 14, 8]
    assert tf.nn.conv2d(x, w, strides=2, padding="VALID").shape.as_list() == [None, 12, 12, 8]
    assert tf.nn.conv2d(x, filters=w, strides=[1, 3], padding="VALID").shape.as_list() \
        == [None, 24, 8, 8]
    assert tf.nn.conv2d(x, w, 1, "VALID", dilations=2).shape.as_list() == [None, 20, 19, 8]
    unknown = tf.nn.conv2d(tf.placeholder(tf.float32), w, 1, "SAME")
    assert unknown.shape.as_list() == [None, None, None, 8]
    assert y.op.get_attr("strides") == [1, 2, 2, 1]


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", [
    ([2, 5, 5, 3], [3, 3, 4, 2], {}, "Dimensions must be equal, but are 3 and 4"),
    ([5, 5, 3], [3, 3, 3, 2], {}, "must be rank 4 but is rank 3"),
    ([2, 5, 5, 3], [7, 3, 3, 2], {"padding": "VALID"},
     "Negative dimension size caused by subtracting 7 from 5"),
    ([2, 5, 5, 3], [3, 3, 3, 2], {"strides": [1, 1, 1]}, "strides should be of length 1, 2 or 4"),
    ([2, 5, 5, 3], [3, 3, 3, 2], {"strides": [2, 1, 1, 1]}, "batch and depth"),
    ([2, 5, 5, 3], [3, 3, 3, 2], {"padding": "FULL"}, "padding"),
    ([2, 3, 5, 5], [3, 3, 3, 2], {"data_format": "NCHW"}, "NHWC"),
])
def test_conv2d_construction_errors(x_shape, w_shape, kwargs, message):
    args = {"strides": 1, "padding": "SAME", **kwargs}
    with pytest.raises(ValueError, match=message):
        tf.nn.conv2d(tf.placeholder(tf.float32, x_shape), tf.placeholder(tf.float32, w_shape),
                     **args)


def test_conv2d_rejects_mixed_dtypes():
    with pytest.raises(TypeError):
        tf.nn.conv2d(tf.placeholder(tf.float32, [1, 3, 3, 1]),
                     tf.placeholder(tf.float64, [1, 1, 1, 1]), 1, "SAME")


def _ref_pool(x, window, stride, padding, reduce):
    (out_h, out_w), windows = _ref_windows(x, window, stride, (1, 1), padding)
    out = np.zeros((x.shape[0], out_h, out_w, x.shape[3]), dtype=np.float64)
    for i, j, rows, cols in windows:
        values = np.stack([x[:, r, c, :] for _, r in rows for _, c in cols])
        out[:, i, j, :] = reduce(values, axis=0)
    return out


POOL_CASES = [
    # input NHWC, window, strides, padding
    ((1, 4, 4, 1), (2, 2), (2, 2), "VALID"),
    ((2, 5, 5, 3), (2, 2), (2, 2), "SAME"),
    ((2, 5, 7, 2), (3, 3), (2, 2), "SAME"),
    ((2, 5, 7, 2), (3, 2), (1, 2), "VALID"),
    ((1, 6, 6, 1), (3, 3), (1, 1), "SAME"),
    ((3, 3, 3, 4), (3, 3), (3, 3), "SAME"),
    ((0, 4, 4, 2), (2, 2), (2, 2), "SAME"),
]


@pytest.mark.parametrize("x_shape, window, strides, padding", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pool, reduce", [(tf.nn.max_pool, np.max), (tf.nn.avg_pool, np.mean)])
def test_pooling_matches_loops(device, x_shape, window, strides, padding, dtype, pool, reduce):
    # Negative inputs: a max pool that let padded zeros win would be caught.
    x = (-np.abs(_rng().standard_normal(x_shape)) - 1).astype(dtype)
    out = run_on(device, lambda a: pool(a, ksize=list(window), strides=list(strides),
                                        padding=padding), x)
    expected = _ref_pool(x.astype(np.float64), window, strides, padding, reduce)
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, **_tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_max_pool_integers(device, dtype):
    x = _rng().integers(0, 100, size=(2, 5, 5, 2)).astype(dtype)
    out = run_on(device, lambda a: tf.nn.max_pool(a, 3, 2, "SAME"), x)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, _ref_pool(x, (3, 3), (2, 2), "SAME", np.max))


def test_avg_pool_same_matches_tensorflow(device):
    x = np.arange(25, dtype=np.float32).reshape(1, 5, 5, 1)
    out = run_on(device, lambda a: tf.nn.avg_pool(a, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), x)
    np.testing.assert_array_equal(out[0, :, :, 0], [[3, 4.5, 6], [10.5, 12, 13.5],
                                                    [18, 19.5, 21]])
    out = run_on(device, lambda a: tf.nn.avg_pool(a, 2, 1, "SAME"), _X16)
    np.testing.assert_array_equal(out[0, :, :, 0], [
        [3.5, 4.5, 5.5, 6], [7.5, 8.5, 9.5, 10], [11.5, 12.5, 13.5, 14], [13.5, 14.5, 15.5, 16]])


def test_pooling_static_shapes_names_and_errors():
    x = tf.placeholder(tf.float32, [None, 9, 8, 3])
    y = tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    assert y.name == "MaxPool:0" and y.shape.as_list() == [None, 5, 4, 3]
    z = tf.nn.avg_pool(x, ksize=3, strides=2, padding="VALID")
    assert z.name == "AvgPool:0" and z.shape.as_list() == [None, 4, 3, 3]
    assert tf.nn.max_pool(input=x, ksize=2, strides=1, padding="VALID", value=None).shape \
        .as_list() == [None, 8, 7, 3]
    with pytest.raises(ValueError, match="ksize must be"):
        tf.nn.max_pool(x, [2, 2, 2, 1], [1, 2, 2, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tf.nn.avg_pool(x, [1, 10, 2, 1], 1, "VALID")
    with pytest.raises(ValueError, match="must be rank 4"):
        tf.nn.max_pool(tf.placeholder(tf.float32, [9, 8, 3]), 2, 2, "SAME")
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.avg_pool(x, 2, 2, "SAME", data_format="NCHW")
    with pytest.raises(TypeError):
        tf.nn.avg_pool(tf.placeholder(tf.int32, [1, 4, 4, 1]), 2, 2, "SAME")


@pytest.mark.parametrize("build", [
    lambda x, w: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 0, 2, 1], "VALID"),
    lambda x, w: tf.nn.avg_pool(x, 2, [1, 2, -1, 1], "SAME"),
    lambda x, w: tf.nn.max_pool(x, [1, 0, 2, 1], 1, "VALID"),
    lambda x, w: tf.nn.avg_pool(x, [1, 2, -3, 1], 1, "SAME"),
    lambda x, w: tf.nn.conv2d(x, w, [1, 0, 1, 1], "SAME"),
    lambda x, w: tf.nn.conv2d(x, w, -2, "VALID"),
    lambda x, w: tf.nn.conv2d(x, w, 1, "SAME", dilations=[1, 0, 1, 1]),
    lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 8, 8, 3], [1, 0, 1, 1]),
])
@pytest.mark.parametrize("known_shape", [True, False])
def test_zero_or_negative_stride_window_or_dilation_is_a_value_error_at_build(build,
                                                                               known_shape):
    """Not a ZeroDivisionError when the step runs: a ValueError naming the op,
    even when the input's shape is unknown."""
    x = tf.placeholder(tf.float32, [1, 8, 8, 3] if known_shape else None)
    w = tf.placeholder(tf.float32, [3, 3, 3, 3])
    with pytest.raises(ValueError, match=r"(Stride|ksize|Dilation rate) must be .*, but got "
                                         r"-?\d+ .* for '.*' \(op: '"):
        build(x, w)


def test_max_pool_grad_with_a_zero_stride_is_a_value_error_at_build():
    from minitf.ops import pooling_ops
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    with pytest.raises(ValueError, match="Stride must be > 0, but got 0"):
        pooling_ops.max_pool_grad(x, x, x, [1, 1, 1, 1], [1, 0, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Stride must be > 0, but got 0"):
        pooling_ops.avg_pool_grad(tf.constant([1, 4, 4, 1]), x, [1, 1, 1, 1], [1, 0, 1, 1],
                                  "SAME")


# ---- The tf.nn namespace ----------------------------------------------------------
def test_tf_nn_exports_the_tf1_names():
    for name in ["relu", "relu6", "elu", "selu", "leaky_relu", "softplus", "softsign",
                 "sigmoid", "tanh", "softmax", "log_softmax", "bias_add",
                 "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
                 "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
                 "l2_loss", "conv2d", "max_pool", "avg_pool", "dropout", "moments",
                 "batch_normalization", "l2_normalize", "xw_plus_b"]:
        assert callable(getattr(tf.nn, name)), name
    assert tf.nn.sigmoid is tf.sigmoid and tf.nn.tanh is tf.tanh


# ---- Dropout ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs, keep", [({"keep_prob": 0.5}, 0.5), ({"rate": 0.75}, 0.25)])
def test_dropout_keeps_and_scales(device, dtype, kwargs, keep):
    x = np.full((40, 50), 3.0, dtype=dtype)
    out = run_on(device, lambda t: tf.nn.dropout(t, seed=1, **kwargs), x)
    assert out.dtype == dtype and out.shape == x.shape
    kept = out != 0
    np.testing.assert_allclose(out[kept], 3.0 / keep, rtol=1e-6)
    assert abs(kept.mean() - keep) < 0.05


def test_dropout_keep_prob_placeholder(device):
    x = _rng().standard_normal((10, 20)).astype(np.float32)
    with tf.device(device):
        t = tf.placeholder(tf.float32, x.shape)
        keep_prob = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(t, keep_prob)
    with tf.Session() as sess:
        kept_all = sess.run(y, {t: x, keep_prob: 1.0})
        dropped = sess.run(y, {t: x, keep_prob: 0.25})
    np.testing.assert_array_equal(kept_all, x)
    nonzero = dropped != 0
    assert 0 < nonzero.sum() < x.size
    np.testing.assert_allclose(dropped[nonzero], 4 * x[nonzero], rtol=1e-6)


def test_dropout_rate_tensor(device):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    out = run_on(device, lambda t, r: tf.nn.dropout(t, rate=r), x, np.array(0.0))
    np.testing.assert_array_equal(out, x)


def test_dropout_noise_shape_drops_whole_rows(device):
    x = np.ones((200, 6), np.float64)
    out = run_on(device, lambda t: tf.nn.dropout(t, keep_prob=0.5, noise_shape=[200, 1]), x)
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert (out == out[:, :1]).all()
    assert 0 < (out[:, 0] != 0).sum() < 200


def test_dropout_is_reproducible_with_seeds(device):
    def build(t):
        tf.set_random_seed(7)
        return tf.nn.dropout(t, keep_prob=0.5, seed=3)

    x = np.ones((8, 8), np.float32)
    np.testing.assert_array_equal(run_on(device, build, x), run_on(device, build, x))


def test_dropout_graph_and_errors():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.nn.dropout(x, keep_prob=0.5)
    assert y.name == "dropout/mul:0" and y.shape.as_list() == [None, 4]
    assert tf.nn.dropout(x, keep_prob=1.0) is x
    for kwargs in [{"keep_prob": 0.0}, {"keep_prob": 1.5}, {"keep_prob": -0.1},
                   {"rate": 1.0}, {"keep_prob": 0.5, "rate": 0.5}, {}]:
        with pytest.raises(ValueError):
            tf.nn.dropout(x, **kwargs)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.placeholder(tf.int32, [3]), keep_prob=0.5)
    with pytest.raises(ValueError, match="scalar"):
        tf.nn.dropout(x, keep_prob=tf.placeholder(tf.float32, [4]))


# ---- Formulas over other ops: moments, batch_normalization, ... -------------------
@pytest.mark.parametrize("shape, axes", [((6, 3), [0]), ((2, 4, 5, 3), [0, 1, 2]),
                                         ((3, 5), [1])])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_moments(device, shape, axes, keep_dims):
    x = _rng().standard_normal(shape) * 3 + 1
    mean, variance = run_on(device, lambda t: tf.nn.moments(t, axes, keep_dims=keep_dims), x)
    np.testing.assert_allclose(mean, x.mean(axis=tuple(axes), keepdims=keep_dims), rtol=1e-12)
    np.testing.assert_allclose(variance, x.var(axis=tuple(axes), keepdims=keep_dims),
                               rtol=1e-12)


@pytest.mark.parametrize("with_offset_and_scale", [True, False])
def test_batch_normalization(device, with_offset_and_scale):
    rng = _rng()
    x = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    mean, variance = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    offset, scale = np.array([0.5, -1.0], np.float32), np.array([2.0, 0.5], np.float32)
    if with_offset_and_scale:
        out = run_on(device, lambda *a: tf.nn.batch_normalization(*a, variance_epsilon=1e-3),
                     x, mean, variance, offset, scale)
        expected = scale * (x - mean) / np.sqrt(variance + 1e-3) + offset
    else:
        out = run_on(device, lambda *a: tf.nn.batch_normalization(*a, None, None, 1e-3),
                     x, mean, variance)
        expected = (x - mean) / np.sqrt(variance + 1e-3)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_l2_normalize(device):
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]])
    np.testing.assert_allclose(run_on(device, lambda t: tf.nn.l2_normalize(t, axis=1), x),
                               [[0.6, 0.8], [0.0, 0.0], [2 ** -0.5, -(2 ** -0.5)]])


def test_xw_plus_b(device):
    rng = _rng()
    x, w, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    out = run_on(device, tf.nn.xw_plus_b, x, w, b)
    np.testing.assert_allclose(out, x @ w + b, rtol=1e-12)
    assert tf.nn.xw_plus_b(x, w, b).name == "xw_plus_b:0"


# ---- local response normalization and conv1d (values against TF: test_image_nn_sparse_refs.py)
def _lrn_by_hand(x, depth_radius, bias, alpha, beta):
    """TF's documented LRN formula, one channel at a time."""
    out = np.empty_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        window = x[..., max(0, d - depth_radius):min(depth, d + depth_radius + 1)]
        out[..., d] = x[..., d] / (bias + alpha * np.sum(window ** 2, axis=-1)) ** beta
    return out


@pytest.mark.parametrize("depth_radius", [0, 1, 5])
def test_lrn_follows_the_formula(sess, depth_radius):
    x = np.random.default_rng(3).standard_normal((2, 2, 2, 6)).astype(np.float32)
    y = tf.nn.local_response_normalization(x, depth_radius, bias=2.0, alpha=0.2, beta=0.6)
    assert y.op.type == "LRN" and y.name == "LRN:0" and tf.nn.lrn is \
        tf.nn.local_response_normalization
    np.testing.assert_allclose(sess.run(y), _lrn_by_hand(x, depth_radius, 2.0, 0.2, 0.6),
                               rtol=1e-5)


def test_lrn_defaults_and_errors():
    y = tf.nn.lrn(tf.placeholder(tf.float32, [1, 2, 2, 3]))
    assert [y.op.get_attr(a) for a in ("depth_radius", "bias", "alpha", "beta")] == \
        [5, 1.0, 1.0, 0.5]
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.lrn(tf.placeholder(tf.float32, [2, 3, 4]))
    with pytest.raises(TypeError):
        tf.nn.lrn(tf.placeholder(tf.float64, [1, 2, 2, 3]))  # TF: half, bfloat16, float only
    (grad,) = tf.gradients(y, y.op.inputs[0])
    assert tf.gradients(grad, y.op.inputs[0]) == [None]  # LRNGrad: not differentiable


def test_conv1d_builds_tf_ops_under_tf_names(sess):
    x = tf.placeholder(tf.float32, [2, 5, 3])
    w = tf.placeholder(tf.float32, [2, 3, 4])
    y = tf.nn.conv1d(x, w, stride=2, padding="SAME")
    assert y.name == "conv1d/Squeeze:0" and y.shape.as_list() == [2, 3, 4]
    assert tf.get_default_graph().get_operation_by_name("conv1d").type == "Conv2D"
    assert y.op.inputs[0].op.get_attr("strides") == [1, 1, 2, 1]
    x_value = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    w_value = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    padded = np.pad(x_value, [(0, 0), (0, 1), (0, 0)])  # SAME: 1 zero after, as TF
    expected = np.stack([np.einsum("bkc,kco->bo", padded[:, i:i + 2], w_value)
                         for i in range(0, 5, 2)], axis=1)
    np.testing.assert_allclose(sess.run(y, {x: x_value, w: w_value}), expected, rtol=1e-5)
    ncw = tf.nn.conv1d(tf.placeholder(tf.float32, [2, 3, 5]), w, stride=[1, 1, 1],
                       padding="VALID", data_format="NCW")
    assert ncw.shape.as_list() == [2, 4, 4]


def test_conv1d_errors():
    x = tf.placeholder(tf.float32, [2, 5, 3])
    w = tf.placeholder(tf.float32, [2, 3, 4])
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.conv1d(x, w, 1, "SAME", data_format="NHCW")
    with pytest.raises(ValueError, match="stride should be of length 1, 1 or 3"):
        tf.nn.conv1d(x, w, [1, 1], "SAME")
    with pytest.raises(ValueError):
        tf.nn.conv1d(x, tf.placeholder(tf.float32, [2, 2, 4]), 1, "SAME")  # in_channels differ
