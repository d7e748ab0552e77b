"""``tf.layers``: TF1's variable and op names, shapes, collections, reuse, and the
layers' outputs against NumPy computed from the layers' own variable values.

The expected names were read off TensorFlow 1.x graphs (``tf.compat.v1.layers``
with non-resource variables) and are written out by hand here.
"""

import numpy as np
import pytest

import minitf as tf

RNG = np.random.RandomState(0)


def names(variables):
    return [v.name for v in variables]


def collection(key):
    return tf.get_default_graph().get_collection(key)


def initialized_session():
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    return sess


# ---- NumPy references ------------------------------------------------------------------------
def same_padding(size, window, stride):
    """TF's SAME padding: (output size, padding before)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return out, total // 2


def conv2d_ref(x, w, strides=(1, 1), padding="valid", dilation=(1, 1)):
    """Cross-correlation of NHWC ``x`` with HWIO ``w``."""
    kh, kw, _, out_channels = w.shape
    ekh, ekw = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    n, h, wd, _ = x.shape
    if padding == "same":
        oh, top = same_padding(h, ekh, strides[0])
        ow, left = same_padding(wd, ekw, strides[1])
        padded = np.zeros((n, h + 2 * ekh, wd + 2 * ekw, x.shape[3]), x.dtype)
        padded[:, top:top + h, left:left + wd] = x
        x = padded
    else:
        oh, ow = (h - ekh) // strides[0] + 1, (wd - ekw) // strides[1] + 1
    out = np.zeros((n, oh, ow, out_channels))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * strides[0]:i * strides[0] + ekh:dilation[0],
                      j * strides[1]:j * strides[1] + ekw:dilation[1]]
            out[:, i, j] = np.tensordot(patch, w, axes=[[1, 2, 3], [0, 1, 2]])
    return out


def pool_ref(x, size, strides, padding, fn):
    """Max or mean over windows of NHWC ``x``; SAME padding is never counted."""
    n, h, w, c = x.shape
    if padding == "same":
        oh, top = same_padding(h, size[0], strides[0])
        ow, left = same_padding(w, size[1], strides[1])
    else:
        oh, ow, top, left = ((h - size[0]) // strides[0] + 1, (w - size[1]) // strides[1] + 1,
                             0, 0)
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0] - top, j * strides[1] - left
            window = x[:, max(r0, 0):r0 + size[0], max(c0, 0):c0 + size[1]]
            out[:, i, j] = fn(window, axis=(1, 2))
    return out


# ---- dense: names and shapes ----------------------------------------------------------------
def test_dense_variable_and_op_names_follow_tf1():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu)
    y2 = tf.layers.dense(x, 4)
    y3 = tf.layers.dense(x, 4, name="fc1")
    assert (y.name, y2.name, y3.name) == ("dense/Relu:0", "dense_1/BiasAdd:0", "fc1/BiasAdd:0")
    assert y.shape.as_list() == [None, 4]
    assert names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
        "fc1/kernel:0", "fc1/bias:0"]
    assert names(tf.trainable_variables()) == names(tf.global_variables())
    kernel, bias = tf.global_variables()[:2]
    assert kernel.shape.as_list() == [3, 4] and bias.shape.as_list() == [4]
    graph = tf.get_default_graph()
    assert graph.get_operation_by_name("dense/MatMul").type == "MatMul"
    assert graph.get_operation_by_name("dense/BiasAdd").type == "BiasAdd"
    assert [t.name for t in graph.get_operation_by_name("dense/MatMul").inputs] == [
        "Placeholder:0", "dense/kernel/read:0"]


def test_dense_without_bias_and_activation_by_name():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 2, use_bias=False, activation="tanh")
    assert names(tf.global_variables()) == ["dense/kernel:0"]
    assert y.op.type == "Tanh"
    with pytest.raises(ValueError, match="Unknown activation"):
        tf.layers.dense(x, 2, activation="nope")


def test_dense_output_matches_numpy():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.dense(x, 4, activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.1))
    xv = RNG.randn(5, 3).astype(np.float32)
    with initialized_session() as sess:
        out, (w, b) = sess.run([y, tf.global_variables()], {x: xv})
    np.testing.assert_allclose(out, np.maximum(xv @ w + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, np.full(4, 0.1, np.float32))


def test_dense_default_initializers_are_glorot_uniform_and_zeros():
    x = tf.placeholder(tf.float32, [None, 200])
    tf.layers.dense(x, 100)
    with initialized_session() as sess:
        w, b = sess.run(tf.global_variables())
    limit = np.sqrt(6.0 / (200 + 100))
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.9 * limit
    assert abs(w.std() - limit / np.sqrt(3)) < 0.05 * limit
    assert not b.any()


@pytest.mark.parametrize("shape", [[None, 5, 3], [None, None, 3], [2, 4, 5, 3]])
def test_dense_on_higher_rank_inputs_contracts_the_last_axis(shape):
    x = tf.placeholder(tf.float32, shape)
    y = tf.layers.dense(x, 2, bias_initializer=tf.ones_initializer())
    assert y.shape.as_list() == shape[:-1] + [2]
    assert y.op.inputs[0].name == "dense/Tensordot:0"
    xv = RNG.randn(*[d or 4 for d in shape]).astype(np.float32)
    with initialized_session() as sess:
        out, w, b = sess.run([y] + tf.global_variables(), {x: xv})
    np.testing.assert_allclose(out, np.tensordot(xv, w, [[-1], [0]]) + b, rtol=1e-5, atol=1e-5)


def test_dense_input_errors():
    with pytest.raises(ValueError, match="last dimension of the inputs to a Dense layer"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 3)
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        tf.layers.dense(tf.placeholder(tf.float32, [3]), 3)
    layer = tf.layers.Dense(3)
    layer(tf.placeholder(tf.float32, [None, 4]))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(tf.placeholder(tf.float32, [None, 5]))


def test_dense_dtype_follows_the_input():
    y = tf.layers.dense(tf.placeholder(tf.float64, [None, 3]), 2)
    assert y.dtype == tf.float64
    assert all(v.dtype.base_dtype == tf.float64 for v in tf.global_variables())


# ---- reuse ----------------------------------------------------------------------------------
def test_functional_reuse_by_name():
    x = tf.placeholder(tf.float32, [None, 3])
    y1 = tf.layers.dense(x, 4, name="fc1")
    y2 = tf.layers.dense(x, 4, name="fc1", reuse=True)
    y3 = tf.layers.dense(x, 4, name="fc1", reuse=tf.AUTO_REUSE)
    assert names(tf.global_variables()) == ["fc1/kernel:0", "fc1/bias:0"]
    assert (y1.name, y2.name, y3.name) == (
        "fc1/BiasAdd:0", "fc1_1/BiasAdd:0", "fc1_2/BiasAdd:0")
    assert y2.op.inputs[0].op.inputs[1].name == "fc1/kernel/read:0"
    with initialized_session() as sess:
        a, b = sess.run([y1, y2], {x: RNG.randn(2, 3)})
    np.testing.assert_array_equal(a, b)


def test_functional_reuse_errors_follow_tf1():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 4, name="fc1")
    with pytest.raises(ValueError, match="Variable fc1/kernel already exists"):
        tf.layers.dense(x, 4, name="fc1")
    with pytest.raises(ValueError, match="Variable fc2/kernel does not exist"):
        tf.layers.dense(x, 4, name="fc2", reuse=True)
    with pytest.raises(ValueError, match="Trying to share variable fc1/kernel"):
        tf.layers.dense(x, 5, name="fc1", reuse=True)


def test_reuse_through_reopened_variable_scope():
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.variable_scope("model"):
        tf.layers.dense(x, 4)
        tf.layers.dense(x, 4)
    with tf.variable_scope("model", reuse=True):
        tf.layers.dense(x, 4)
        tf.layers.dense(x, 4)
    assert names(tf.global_variables()) == [
        "model/dense/kernel:0", "model/dense/bias:0",
        "model/dense_1/kernel:0", "model/dense_1/bias:0"]


# ---- the Layer objects ------------------------------------------------------------------------
def test_layer_object_reuses_its_variables_on_every_call():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(4)
    assert layer.name == "dense_1" and not layer.built and layer.variables == []
    with pytest.raises(AttributeError):
        layer.kernel  # noqa: B018 - not built yet
    a = layer(x)
    b = layer.apply(x)
    # TF1 quirk: the layer is named dense_1 but its variable scope is dense.
    assert layer.name == "dense_1" and layer.scope_name == "dense"
    assert (a.name, b.name) == ("dense/BiasAdd:0", "dense/BiasAdd_1:0")
    assert names(tf.global_variables()) == ["dense/kernel:0", "dense/bias:0"]
    assert layer.kernel.name == "dense/kernel:0" and layer.bias.name == "dense/bias:0"
    assert names(layer.trainable_weights) == ["dense/kernel:0", "dense/bias:0"]
    assert layer.non_trainable_weights == []
    assert names(layer.variables) == names(layer.weights) == names(layer.trainable_variables)
    assert layer.dtype == "float32"


def test_layer_names_and_scopes():
    x = tf.placeholder(tf.float32, [None, 3])
    first, second = tf.layers.Dense(4), tf.layers.Dense(4)
    first(x)
    second(x)
    mine, mine_again = tf.layers.Dense(2, name="mine"), tf.layers.Dense(2, name="mine")
    mine(x)
    mine_again(x)
    with tf.variable_scope("outer"):
        inner = tf.layers.dense(x, 2)
    assert (first.name, second.name, mine.name) == ("dense_1", "dense_2", "mine")
    assert second.kernel.name == "dense_1/kernel:0"
    assert (mine.kernel.name, mine_again.kernel.name) == ("mine/kernel:0", "mine_1/kernel:0")
    assert inner.name == "outer/dense/BiasAdd:0"


def test_explicit_build_then_call():
    layer = tf.layers.Dense(3, name="dd")
    layer.build(tf.TensorShape([None, 5]))
    assert layer.built and names(layer.variables) == ["dd/kernel:0", "dd/bias:0"]
    y = layer(tf.placeholder(tf.float32, [None, 5]))
    assert y.name == "dd/BiasAdd:0" and len(tf.global_variables()) == 2


def test_non_trainable_layer():
    layer = tf.layers.Dense(2, trainable=False)
    layer(tf.placeholder(tf.float32, [None, 3]))
    assert tf.trainable_variables() == []
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2


def test_unknown_constructor_argument_is_a_type_error():
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        tf.layers.Dense(2, kernel_size=3)


# ---- conv2d -----------------------------------------------------------------------------------
def test_conv2d_names_and_shapes_follow_tf1():
    img = tf.placeholder(tf.float32, [None, 8, 8, 3])
    c1 = tf.layers.conv2d(img, 5, 3, padding="SAME", activation=tf.nn.relu)
    c2 = tf.layers.conv2d(img, 5, (3, 2), strides=2)
    assert (c1.name, c2.name) == ("conv2d/Relu:0", "conv2d_1/BiasAdd:0")
    assert c1.shape.as_list() == [None, 8, 8, 5] and c2.shape.as_list() == [None, 3, 4, 5]
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("conv2d/kernel:0", [3, 3, 3, 5]), ("conv2d/bias:0", [5]),
        ("conv2d_1/kernel:0", [3, 2, 3, 5]), ("conv2d_1/bias:0", [5])]
    assert tf.get_default_graph().get_operation_by_name("conv2d/Conv2D").type == "Conv2D"


@pytest.mark.parametrize("strides,padding,dilation", [
    ((1, 1), "valid", (1, 1)), ((2, 2), "same", (1, 1)), ((2, 1), "Valid", (1, 1)),
    ((1, 1), "same", (2, 2))])
def test_conv2d_matches_numpy(strides, padding, dilation):
    img = tf.placeholder(tf.float32, [None, 7, 6, 2])
    layer = tf.layers.Conv2D(4, (3, 2), strides=strides, padding=padding,
                             dilation_rate=dilation, bias_initializer=tf.constant_initializer(0.5))
    out = layer(img)
    xv = RNG.randn(2, 7, 6, 2).astype(np.float32)
    with initialized_session() as sess:
        result, w, b = sess.run([out, layer.kernel, layer.bias], {img: xv})
    expected = conv2d_ref(xv, w, strides, padding.lower(), dilation) + b
    assert result.shape == expected.shape and out.shape.as_list()[1:] == list(expected.shape[1:])
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_conv2d_channels_first_agrees_with_channels_last():
    xv = RNG.randn(2, 6, 6, 3).astype(np.float32)
    nhwc = tf.placeholder(tf.float32, [None, 6, 6, 3])
    nchw = tf.placeholder(tf.float32, [None, 3, 6, 6])
    last = tf.layers.Conv2D(4, 3, padding="same", bias_initializer=tf.ones_initializer())
    first = tf.layers.Conv2D(4, 3, padding="same", data_format="channels_first",
                             bias_initializer=tf.ones_initializer())
    out_last, out_first = last(nhwc), first(nchw)
    assert first.kernel.shape.as_list() == [3, 3, 3, 4]
    assert out_first.shape.as_list() == [None, 4, 6, 6]
    with initialized_session() as sess:
        sess.run(first.kernel.assign(last.kernel))
        a, b = sess.run([out_last, out_first], {nhwc: xv, nchw: xv.transpose(0, 3, 1, 2)})
    np.testing.assert_allclose(b, a.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)


def conv2d_transpose_ref(x, w, strides, padding):
    """Each input pixel adds ``x[b, i, j, c] * w[:, :, :, c]`` at ``(i*sh, j*sw)``,
    minus the padding SAME puts before (w is [kh, kw, out, in])."""
    kh, kw, out_channels, _ = w.shape
    n, h, wd, _ = x.shape
    if padding == "same":
        oh, ow = h * strides[0], wd * strides[1]
        top = max((h - 1) * strides[0] + kh - oh, 0) // 2
        left = max((wd - 1) * strides[1] + kw - ow, 0) // 2
    else:
        oh, ow = h * strides[0] + max(kh - strides[0], 0), wd * strides[1] + max(kw - strides[1], 0)
        top = left = 0
    full = np.zeros((n, oh + kh + top, ow + kw + left, out_channels))
    for i in range(h):
        for j in range(wd):
            contribution = np.tensordot(x[:, i, j], w, axes=[[1], [3]])  # [n, kh, kw, out]
            full[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw] += \
                contribution
    return full[:, top:top + oh, left:left + ow]


@pytest.mark.parametrize("strides,padding", [((2, 2), "same"), ((2, 1), "valid"),
                                             ((1, 1), "same"), ((3, 3), "valid")])
def test_conv2d_transpose_matches_numpy(strides, padding):
    codes = tf.placeholder(tf.float32, [None, 4, 3, 2])
    layer = tf.layers.Conv2DTranspose(5, (3, 2), strides=strides, padding=padding,
                                      bias_initializer=tf.constant_initializer(0.25))
    out = layer(codes)
    assert layer.kernel.shape.as_list() == [3, 2, 5, 2]  # [kh, kw, filters, in]
    xv = RNG.randn(2, 4, 3, 2).astype(np.float32)
    with initialized_session() as sess:
        result, w, b = sess.run([out, layer.kernel, layer.bias], {codes: xv})
    expected = conv2d_transpose_ref(xv, w, strides, padding) + b
    assert result.shape == expected.shape and out.shape.as_list()[1:] == list(expected.shape[1:])
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_names_shapes_and_channels_first():
    codes = tf.placeholder(tf.float32, [None, 7, 7, 16])
    up = tf.layers.conv2d_transpose(codes, 8, 3, strides=2, padding="same",
                                    activation=tf.nn.relu)
    assert up.name == "conv2d_transpose/Relu:0" and up.shape.as_list() == [None, 14, 14, 8]
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("conv2d_transpose/kernel:0", [3, 3, 8, 16]), ("conv2d_transpose/bias:0", [8])]
    unknown = tf.placeholder(tf.float32, [None, None, 5, 16])
    assert tf.layers.conv2d_transpose(unknown, 2, 3, strides=2).shape.as_list() == [
        None, None, 11, 2]
    xv = RNG.randn(2, 3, 3, 4).astype(np.float32)
    nhwc = tf.placeholder(tf.float32, [None, 3, 3, 4])
    nchw = tf.placeholder(tf.float32, [None, 4, 3, 3])
    last = tf.layers.Conv2DTranspose(2, 3, strides=2, padding="same")
    first = tf.layers.Conv2DTranspose(2, 3, strides=2, padding="same",
                                      data_format="channels_first")
    out_last, out_first = last(nhwc), first(nchw)
    assert out_first.shape.as_list() == [None, 2, 6, 6]
    with initialized_session() as sess:
        sess.run(first.kernel.assign(last.kernel))
        a, b = sess.run([out_last, out_first], {nhwc: xv, nchw: xv.transpose(0, 3, 1, 2)})
    np.testing.assert_allclose(b, a.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)


def test_gradients_flow_through_conv2d_transpose():
    codes = tf.placeholder(tf.float32, [None, 2, 2, 3])
    out = tf.layers.conv2d_transpose(codes, 1, 2, strides=2)
    grads = tf.gradients(tf.reduce_sum(out), [codes] + tf.trainable_variables())
    assert all(g is not None for g in grads)
    with initialized_session() as sess:
        d_codes, d_kernel, d_bias = sess.run(grads, {codes: np.ones([1, 2, 2, 3])})
    assert d_bias.tolist() == [16.0]  # one per output pixel (4 x 4)
    np.testing.assert_allclose(d_kernel, np.full([2, 2, 1, 3], 4.0))  # each tap sees 4 pixels
    assert d_codes.shape == (1, 2, 2, 3)


def test_conv2d_argument_errors():
    img = tf.placeholder(tf.float32, [None, 8, 8, 3])
    with pytest.raises(ValueError, match="`padding` argument must be one of"):
        tf.layers.conv2d(img, 2, 3, padding="full")
    with pytest.raises(ValueError, match="`kernel_size` argument must be a tuple of 2"):
        tf.layers.conv2d(img, 2, (3, 3, 3))
    with pytest.raises(ValueError, match="`data_format` argument"):
        tf.layers.conv2d(img, 2, 3, data_format="NHWC")
    with pytest.raises(ValueError, match="dilation_rate"):
        tf.layers.conv2d(img, 2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=3"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 8, 3]), 2, 3)
    with pytest.raises(ValueError, match="channel dimension of the inputs should be defined"):
        tf.layers.conv2d(tf.placeholder(tf.float32, [None, 8, 8, None]), 2, 3)


# ---- pooling ----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["max", "average"])
@pytest.mark.parametrize("size,strides,padding", [
    (2, 2, "valid"), (3, 2, "same"), ((2, 3), (1, 2), "VALID"), (3, 1, "Same")])
def test_pooling_matches_numpy(kind, size, strides, padding):
    img = tf.placeholder(tf.float32, [None, 7, 6, 2])
    function = tf.layers.max_pooling2d if kind == "max" else tf.layers.average_pooling2d
    out = function(img, size, strides, padding=padding)
    op_name = {"max": "max_pooling2d/MaxPool", "average": "average_pooling2d/AvgPool"}[kind]
    assert out.op.name == op_name
    xv = RNG.randn(3, 7, 6, 2).astype(np.float32)
    with tf.Session() as sess:
        result = sess.run(out, {img: xv})
    size2 = size if isinstance(size, tuple) else (size, size)
    strides2 = strides if isinstance(strides, tuple) else (strides, strides)
    expected = pool_ref(xv, size2, strides2, padding.lower(),
                        np.max if kind == "max" else np.mean)
    assert out.shape.as_list() == [None] + list(expected.shape[1:])
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)


def test_pooling_layer_objects_and_channels_first():
    img = tf.placeholder(tf.float32, [None, 3, 4, 4])
    layer = tf.layers.MaxPooling2D(2, 2, data_format="channels_first")
    out = layer(img)
    assert layer.name == "max_pooling2d_1" and out.shape.as_list() == [None, 3, 2, 2]
    assert tf.layers.AveragePooling2D(2, 2).name == "average_pooling2d_1"
    xv = RNG.randn(2, 3, 4, 4).astype(np.float32)
    with tf.Session() as sess:
        result = sess.run(out, {img: xv})
    expected = pool_ref(xv.transpose(0, 2, 3, 1), (2, 2), (2, 2), "valid", np.max)
    np.testing.assert_allclose(result, expected.transpose(0, 3, 1, 2))
    assert tf.global_variables() == []


# ---- flatten ----------------------------------------------------------------------------------
def test_flatten_known_and_unknown_shapes():
    known = tf.layers.flatten(tf.placeholder(tf.float32, [None, 8, 8, 3]))
    partial = tf.layers.flatten(tf.placeholder(tf.float32, [None, None, 3]))
    static = tf.layers.flatten(tf.placeholder(tf.float32, [2, 3, 4]))
    assert known.name == "flatten/Reshape:0" and known.shape.as_list() == [None, 192]
    assert partial.name == "flatten_1/Reshape:0" and partial.shape.as_list() == [None, None]
    assert static.shape.as_list() == [2, 12]
    with tf.Session() as sess:
        xv = RNG.randn(5, 4, 3).astype(np.float32)
        np.testing.assert_array_equal(
            sess.run(partial, {partial.op.inputs[0]: xv}), xv.reshape(5, 12))


def test_flatten_channels_first_lists_values_as_channels_last():
    x = tf.placeholder(tf.float32, [None, 3, 2, 2])
    out = tf.layers.Flatten(data_format="channels_first")(x)
    xv = RNG.randn(2, 3, 2, 2).astype(np.float32)
    with tf.Session() as sess:
        result = sess.run(out, {x: xv})
    np.testing.assert_array_equal(result, xv.transpose(0, 2, 3, 1).reshape(2, 12))


# ---- dropout ----------------------------------------------------------------------------------
def test_dropout_inference_is_identity():
    x = tf.placeholder(tf.float32, [None, 3])
    out = tf.layers.dropout(x, 0.3)
    assert out.name == "dropout/Identity:0"
    xv = RNG.randn(4, 3).astype(np.float32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: xv}), xv)


def check_dropout_statistics(values, inputs, rate):
    dropped = values == 0
    assert abs(dropped.mean() - rate) < 0.02
    np.testing.assert_allclose(values[~dropped], inputs[~dropped] / (1 - rate), rtol=1e-5)


@pytest.mark.parametrize("rate", [0.3, 0.75])
def test_dropout_training_drops_rate_and_rescales(rate):
    xv = (RNG.rand(100, 100) + 1.0).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 100])
    out = tf.layers.dropout(x, rate=rate, training=True)
    assert out.shape.as_list() == [None, 100]
    with tf.Session() as sess:
        check_dropout_statistics(sess.run(out, {x: xv}), xv, rate)


def test_dropout_with_a_bool_tensor():
    xv = (RNG.rand(100, 100) + 1.0).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 100])
    training = tf.placeholder_with_default(False, [])
    out = tf.layers.dropout(x, rate=0.4, training=training)
    assert tf.layers.dropout(x, training=tf.constant(False)).op.type == "Identity"
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {x: xv}), xv)
        check_dropout_statistics(sess.run(out, {x: xv, training: True}), xv, 0.4)


def test_dropout_noise_shape_drops_whole_rows():
    x = tf.placeholder(tf.float32, [None, 50])
    layer = tf.layers.Dropout(0.5, noise_shape=[None, 1])
    out = layer(x, training=True)
    with tf.Session() as sess:
        result = sess.run(out, {x: np.ones((400, 50), np.float32)})
    rows_zero = (result == 0).all(axis=1)
    assert ((result == 0).any(axis=1) == rows_zero).all()
    assert 0.4 < rows_zero.mean() < 0.6 and layer.name == "dropout_1"


# ---- batch normalization ------------------------------------------------------------------------
def test_batch_normalization_variables_follow_tf1():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.layers.batch_normalization(x, training=True)
    assert y.name == "batch_normalization/batchnorm/add_1:0"
    assert [(v.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("batch_normalization/gamma:0", [3]), ("batch_normalization/beta:0", [3]),
        ("batch_normalization/moving_mean:0", [3]),
        ("batch_normalization/moving_variance:0", [3])]
    assert names(tf.trainable_variables()) == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0"]
    updates = collection(tf.GraphKeys.UPDATE_OPS)
    assert [u.op.name for u in updates] == [
        "batch_normalization/AssignMovingAvg", "batch_normalization/AssignMovingAvg_1"]
    assert all(u.op.type == "AssignSub" for u in updates)
    decay = tf.get_default_graph().get_tensor_by_name("batch_normalization/AssignMovingAvg/decay:0")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(decay), 0.01, rtol=1e-6)


def test_batch_normalization_training_math_and_moving_averages():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.BatchNormalization(momentum=0.9, epsilon=1e-3,
                                         gamma_initializer=tf.constant_initializer(2.0),
                                         beta_initializer=tf.constant_initializer(0.5))
    y = layer(x, training=True)
    assert names(layer.non_trainable_weights) == [
        "batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    assert len(layer.updates) == 2
    xv = (RNG.randn(16, 3) * [1.0, 2.0, 3.0] + [0.0, 1.0, -2.0]).astype(np.float32)
    mean, var = xv.mean(0), xv.var(0)
    with initialized_session() as sess:
        out = sess.run(y, {x: xv})
        np.testing.assert_allclose(out, 2.0 * (xv - mean) / np.sqrt(var + 1e-3) + 0.5,
                                   rtol=1e-4, atol=1e-4)
        sess.run(collection(tf.GraphKeys.UPDATE_OPS), {x: xv})
        moving_mean, moving_var = sess.run([layer.moving_mean, layer.moving_variance])
        np.testing.assert_allclose(moving_mean, 0.1 * mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(moving_var, 0.9 + 0.1 * var, rtol=1e-5)
        sess.run(layer.updates, {x: xv})
        np.testing.assert_allclose(sess.run(layer.moving_mean), 0.19 * mean, rtol=1e-5,
                                   atol=1e-6)


def test_batch_normalization_inference_uses_moving_statistics():
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.layers.batch_normalization(x, moving_mean_initializer=tf.constant_initializer(1.0),
                                      moving_variance_initializer=tf.constant_initializer(4.0),
                                      epsilon=0.0)
    assert collection(tf.GraphKeys.UPDATE_OPS) == []
    xv = RNG.randn(5, 2).astype(np.float32)
    with initialized_session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: xv}), (xv - 1.0) / 2.0, rtol=1e-5, atol=1e-6)


def test_batch_normalization_with_a_bool_tensor():
    x = tf.placeholder(tf.float32, [None, 2])
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.5, epsilon=0.0)
    y = layer(x, training=training)
    xv = (RNG.randn(8, 2) * 3 + 1).astype(np.float32)
    mean, var = xv.mean(0), xv.var(0)
    updates = collection(tf.GraphKeys.UPDATE_OPS)
    with initialized_session() as sess:
        out, _ = sess.run([y, updates], {x: xv, training: False})
        np.testing.assert_allclose(out, xv, rtol=1e-6)  # moving stats: mean 0, variance 1
        np.testing.assert_array_equal(sess.run(layer.moving_mean), [0, 0])
        np.testing.assert_array_equal(sess.run(layer.moving_variance), [1, 1])
        out, _ = sess.run([y, updates], {x: xv, training: True})
        np.testing.assert_allclose(out, (xv - mean) / np.sqrt(var), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(sess.run(layer.moving_mean), 0.5 * mean, rtol=1e-5)
        np.testing.assert_allclose(sess.run(layer.moving_variance), 0.5 + 0.5 * var, rtol=1e-5)


@pytest.mark.parametrize("fused,corrected", [(None, True), (False, False)])
def test_batch_normalization_4d_moving_variance_as_tf1(fused, corrected):
    # TF1 fuses 4-D batch norm by default, and its fused kernel updates the moving
    # variance with the unbiased (n / (n - 1)) batch variance; fused=False does not.
    x = tf.placeholder(tf.float32, [2, 2, 2, 3])
    layer = tf.layers.BatchNormalization(momentum=0.5, fused=fused)
    y = layer(x, training=True)
    xv = RNG.randn(2, 2, 2, 3).astype(np.float32)
    batch_var = xv.reshape(-1, 3).var(0, ddof=1 if corrected else 0)
    with initialized_session() as sess:
        out, _ = sess.run([y, layer.updates], {x: xv})
        np.testing.assert_allclose(sess.run(layer.moving_variance), 0.5 + 0.5 * batch_var,
                                   rtol=1e-5)
    flat = xv.reshape(-1, 3)
    expected = (flat - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-3)
    np.testing.assert_allclose(out.reshape(-1, 3), expected, rtol=1e-4, atol=1e-4)


def test_batch_normalization_channels_first_axis():
    x = tf.placeholder(tf.float32, [None, 3, 2, 2])
    layer = tf.layers.BatchNormalization(axis=1, epsilon=0.0, fused=False)
    y = layer(x, training=True)
    assert layer.gamma.shape.as_list() == [3]
    xv = RNG.randn(4, 3, 2, 2).astype(np.float32)
    mean = xv.mean((0, 2, 3), keepdims=True)
    var = xv.var((0, 2, 3), keepdims=True)
    with initialized_session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: xv}), (xv - mean) / np.sqrt(var),
                                   rtol=1e-4, atol=1e-4)


def test_batch_normalization_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match="Invalid axis: 5"):
        tf.layers.batch_normalization(x, axis=5)
    with pytest.raises(ValueError, match="undefined `axis` dimension"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="fused=True"):
        tf.layers.batch_normalization(x, fused=True)
    with pytest.raises(NotImplementedError):
        tf.layers.batch_normalization(x, renorm=True)


def test_batch_normalization_reuse_by_name():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.batch_normalization(x, training=True, name="bn")
    tf.layers.batch_normalization(x, training=False, name="bn", reuse=True)
    assert len(tf.global_variables()) == 4
    assert len(collection(tf.GraphKeys.UPDATE_OPS)) == 2


# ---- regularizers -----------------------------------------------------------------------------
def test_weight_regularizers_add_regularization_losses():
    x = tf.placeholder(tf.float32, [None, 3])
    tf.layers.dense(x, 4, name="fc1", kernel_regularizer=lambda w: 0.01 * tf.nn.l2_loss(w),
                    bias_regularizer=tf.reduce_sum, bias_initializer=tf.ones_initializer())
    tf.layers.dense(x, 4, name="fc1", reuse=True,
                    kernel_regularizer=lambda w: 0.01 * tf.nn.l2_loss(w))
    losses = collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [loss.op.name for loss in losses] == ["fc1/kernel/Regularizer/mul",
                                                 "fc1/bias/Regularizer/Sum"]
    with initialized_session() as sess:
        kernel_loss, bias_loss, w = sess.run(losses + [tf.global_variables()[0]])
    np.testing.assert_allclose(kernel_loss, 0.01 * np.sum(w ** 2) / 2, rtol=1e-5)
    assert bias_loss == 4.0


def test_activity_regularizer_is_averaged_over_the_batch():
    x = tf.placeholder(tf.float32, [None, 3])
    layer = tf.layers.Dense(2, activity_regularizer=tf.reduce_sum)
    y = layer(x)
    (loss,) = collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.op.name == "dense/ActivityRegularizer/truediv" and layer.losses == [loss]
    with initialized_session() as sess:
        out, value = sess.run([y, loss], {x: RNG.randn(4, 3)})
    np.testing.assert_allclose(value, out.sum() / 4, rtol=1e-5)


def test_conv_and_batch_norm_regularizers():
    img = tf.placeholder(tf.float32, [None, 4, 4, 1])
    h = tf.layers.conv2d(img, 2, 3, kernel_regularizer=tf.nn.l2_loss)
    tf.layers.batch_normalization(h, gamma_regularizer=tf.nn.l2_loss)
    losses = collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [loss.op.name for loss in losses] == ["conv2d/kernel/Regularizer/L2Loss",
                                                 "batch_normalization/gamma/Regularizer/L2Loss"]


# ---- a small network, with gradients -----------------------------------------------------------
def test_gradients_flow_through_a_small_cnn():
    img = tf.placeholder(tf.float32, [None, 6, 6, 1])
    h = tf.layers.conv2d(img, 2, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.batch_normalization(h, training=True)
    h = tf.layers.dropout(tf.layers.flatten(h), 0.5, training=True)
    loss = tf.reduce_mean(tf.layers.dense(h, 3))
    grads = tf.gradients(loss, tf.trainable_variables())
    assert names(tf.trainable_variables()) == [
        "conv2d/kernel:0", "conv2d/bias:0", "batch_normalization/gamma:0",
        "batch_normalization/beta:0", "dense/kernel:0", "dense/bias:0"]
    assert all(g is not None for g in grads)
    with initialized_session() as sess:
        values = sess.run(grads, {img: RNG.randn(4, 6, 6, 1)})
    assert [v.shape for v in values] == [(3, 3, 1, 2), (2,), (2,), (2,), (18, 3), (3,)]
    np.testing.assert_allclose(values[-1], np.full(3, 1.0 / 3), rtol=1e-5)


def test_gradients_through_tensor_valued_training():
    x = tf.placeholder(tf.float32, [None, 4])
    training = tf.placeholder(tf.bool, [])
    h = tf.layers.dense(x, 4, use_bias=False)
    h = tf.layers.batch_normalization(h, training=training, center=False, scale=False)
    loss = tf.reduce_sum(tf.layers.dropout(h, 0.5, training=training))
    (grad,) = tf.gradients(loss, [tf.trainable_variables()[0]])
    xv = RNG.randn(6, 4).astype(np.float32)
    with initialized_session() as sess:
        # Inference: BN uses moving mean 0 and variance 1, dropout is the identity,
        # so loss = sum(x @ W) / sqrt(1 + eps) and dL/dW = x.sum(0)[:, None] / sqrt(1 + eps).
        value = sess.run(grad, {x: xv, training: False})
        expected = np.repeat(xv.sum(0)[:, None], 4, axis=1) / np.sqrt(1 + 1e-3)
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)
        assert np.isfinite(sess.run(grad, {x: xv, training: True})).all()


# ---- 1-D layers ------------------------------------------------------------------------------
def _numpy_conv1d(x, kernel, bias, stride=1, dilation=1, same=False):
    """``out[b, i, f] = sum_{k, c} x[b, i*stride + k*dilation, c] * kernel[k, c, f] + bias[f]``."""
    width, taps = x.shape[1], kernel.shape[0]
    span = (taps - 1) * dilation + 1
    if same:
        out_width = -(-width // stride)
        pad = max((out_width - 1) * stride + span - width, 0)
        x = np.pad(x, [(0, 0), (pad // 2, pad - pad // 2), (0, 0)])
    else:
        out_width = -(-(width - span + 1) // stride)
    out = np.zeros((x.shape[0], out_width, kernel.shape[2]))
    for i in range(out_width):
        for k in range(taps):
            out[:, i, :] += x[:, i * stride + k * dilation, :] @ kernel[k]
    return out + bias


def test_conv1d_matches_numpy_and_names_its_variables():
    x = np.random.RandomState(0).randn(2, 7, 3).astype(np.float32)
    kernel = np.linspace(-1, 1, 3 * 3 * 4).reshape(3, 3, 4).astype(np.float32)
    bias = np.array([0.5, -0.5, 0.0, 1.0], np.float32)
    inputs = tf.constant(x)
    init = dict(kernel_initializer=tf.constant_initializer(kernel),
                bias_initializer=tf.constant_initializer(bias))
    valid = tf.layers.conv1d(inputs, 4, 3, **init)
    same = tf.layers.conv1d(inputs, 4, 3, strides=2, padding="same", activation=tf.nn.relu,
                            **init)
    dilated = tf.layers.conv1d(inputs, 4, 3, dilation_rate=2, name="dilated", **init)
    first = tf.layers.conv1d(tf.transpose(inputs, [0, 2, 1]), 4, 3,
                             data_format="channels_first", **init)
    assert names(tf.global_variables()) == [
        "conv1d/kernel:0", "conv1d/bias:0", "conv1d_1/kernel:0", "conv1d_1/bias:0",
        "dilated/kernel:0", "dilated/bias:0", "conv1d_2/kernel:0", "conv1d_2/bias:0"]
    assert tf.global_variables()[0].shape.as_list() == [3, 3, 4]
    assert valid.shape.as_list() == [2, 5, 4] and same.shape.as_list() == [2, 4, 4]
    assert dilated.shape.as_list() == [2, 3, 4] and first.shape.as_list() == [2, 4, 5]
    reused = tf.layers.conv1d(inputs, 4, 3, dilation_rate=2, name="dilated", reuse=True)
    assert len(tf.global_variables()) == 8
    with pytest.raises(ValueError, match="expected ndim=3"):
        tf.layers.conv1d(tf.zeros([2, 3]), 1, 1)
    with initialized_session() as sess:
        got = sess.run([valid, same, dilated, first, reused])
    np.testing.assert_allclose(got[0], _numpy_conv1d(x, kernel, bias), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], np.maximum(_numpy_conv1d(x, kernel, bias, stride=2,
                                                                 same=True), 0),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[2], _numpy_conv1d(x, kernel, bias, dilation=2),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[3], got[0].transpose(0, 2, 1), rtol=1e-6)
    np.testing.assert_allclose(got[4], got[2], rtol=1e-6)


def test_pooling1d_matches_numpy():
    x = np.random.RandomState(1).randn(2, 7, 3).astype(np.float32)
    inputs = tf.constant(x)
    max_valid = tf.layers.max_pooling1d(inputs, 2, 2)
    avg_same = tf.layers.average_pooling1d(inputs, 3, 2, padding="same")
    max_first = tf.layers.max_pooling1d(tf.transpose(inputs, [0, 2, 1]), 2, 2,
                                        data_format="channels_first")
    assert max_valid.op.name.startswith("max_pooling1d/")
    assert avg_same.op.name.startswith("average_pooling1d/")
    assert max_valid.shape.as_list() == [2, 3, 3] and avg_same.shape.as_list() == [2, 4, 3]
    with tf.Session() as sess:
        got_max, got_avg, got_first = sess.run([max_valid, avg_same, max_first])
    expected_max = np.stack([x[:, 2 * i:2 * i + 2].max(axis=1) for i in range(3)], axis=1)
    # "same" with window 3, stride 2 on width 7: 4 windows, one padding column on each
    # side; the padding is not counted in the mean.
    padded = [x[:, max(2 * i - 1, 0):2 * i + 2] for i in range(4)]
    expected_avg = np.stack([w.mean(axis=1) for w in padded], axis=1)
    np.testing.assert_allclose(got_max, expected_max, rtol=1e-6)
    np.testing.assert_allclose(got_avg, expected_avg, rtol=1e-5)
    np.testing.assert_allclose(got_first, expected_max.transpose(0, 2, 1), rtol=1e-6)
