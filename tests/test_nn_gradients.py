"""Gradients of the ``tf.nn`` ops: one table, checked by finite differences and by hand.

``CASES`` lists every differentiable nn op (and each backprop op the
gradients build) with a builder and the domain its inputs are drawn from.
The table drives two Hypothesis properties on random small shapes, float32
and float64, on every device:

* first order: ``tf.test.check_gradients`` of the op's output against
  central differences, with respect to every floating input;
* second order: the same check applied to the *gradients* ``tf.gradients``
  builds (a function of the inputs and of ``grad_ys``), which exercises the
  backprop ops' own gradients.

Inputs avoid the points where an op is not differentiable: activations stay
0.1 away from their kinks and max pooling sees distinct values.  Below the
table, exact tests pin derivatives computed by hand (and a few of real TF1).
``tests/test_gradient_coverage.py`` checks that every op with a gradient has
a row in one of the gradient tables.
"""

import dataclasses
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minitf as tf
from minitf.ops import conv_ops, image_ops, nn_ops, pooling_ops
from minitf.ops.op_def_library import OP_DEFS
from minitf.registry import get_registry
from tests.conftest import device_config

FLOATS = [np.float32, np.float64]
NN_MODULES = ("nn_ops.py", "softmax_ops.py", "conv_ops.py", "pooling_ops.py")
NN_OP_TYPES = {d.name for d in OP_DEFS
               if d.site.split(":")[0].endswith(tuple("/" + m for m in NN_MODULES))}

# Hypothesis runs each example inside one function call, so the per-test
# fixtures (the device parameter, the fresh default graph) are shared by the
# examples on purpose: every example builds its own graph.
hypothesis_settings = settings(max_examples=15, deadline=None,
                               suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---- Input domains ----------------------------------------------------------------
def _normal(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _spread_apart(rng, shape, dtype):
    """Values at least 0.3 apart, so no finite-difference step reorders them (top_k)."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.5 + rng.uniform(-0.1, 0.1, size)).reshape(shape).astype(dtype)


def _away_from(*kinks, low=-3.0, high=3.0, margin=0.1):
    """Uniform values in ``[low, high)`` at least ``margin`` from every kink."""
    def sample(rng, shape, dtype):
        x = rng.uniform(low, high, shape)
        for kink in kinks:
            near = np.abs(x - kink) < margin
            x = np.where(near, kink + np.where(x >= kink, margin, -margin), x)
        return x.astype(dtype)
    return sample


def _distinct(rng, shape, dtype):
    """Values 0.1 apart in random order: no ties within a max-pooling window."""
    size = int(np.prod(shape))
    return (rng.permutation(size).reshape(shape) * 0.1 - size * 0.05).astype(dtype)


def _probabilities(rng, shape, dtype):
    weights = rng.random(shape) + 0.1
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(dtype)


def _uniform01(rng, shape, dtype):
    return rng.random(shape).astype(dtype)


def _shape(draw, min_rank=0, max_rank=3, max_dim=3):
    rank = draw(st.integers(min_rank, max_rank))
    return tuple(draw(st.integers(1, max_dim)) for _ in range(rank))


# ---- Drawing the inputs of each kind of op ----------------------------------------
# A draw function takes (draw, rng, dtype) and returns (values, attrs): the
# arrays fed to the builder's placeholders and keyword arguments for it.
def elementwise(*domains, min_rank=0):
    """Inputs of one drawn shape, one per domain."""
    def draw_inputs(draw, rng, dtype):
        shape = _shape(draw, min_rank=min_rank)
        return [domain(rng, shape, dtype) for domain in domains], {}
    return draw_inputs


def draw_softmax_xent(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    return [_normal(rng, shape, dtype), _probabilities(rng, shape, dtype)], {}


def draw_sparse_xent(draw, rng, dtype):
    shape = _shape(draw, min_rank=1)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(np.int32)
    return [_normal(rng, shape, dtype), labels], {}


def draw_bias_add(draw, rng, dtype):
    data_format = draw(st.sampled_from(["NHWC", "NCHW"]))
    shape = _shape(draw, min_rank=2 if data_format == "NHWC" else 3, max_rank=4)
    channels = shape[1] if data_format == "NCHW" else shape[-1]
    return ([_normal(rng, shape, dtype), _normal(rng, (channels,), dtype)],
            {"data_format": data_format})


def _window(draw, dilated):
    """A random 2-D window geometry and an input size that fits it."""
    padding = draw(st.sampled_from(["SAME", "VALID"]))
    window = [draw(st.integers(1, 3)) for _ in range(2)]
    strides = [draw(st.integers(1, 2)) for _ in range(2)]
    dilations = [draw(st.integers(1, 2)) if dilated else 1 for _ in range(2)]
    effective = [(k - 1) * d + 1 for k, d in zip(window, dilations)]
    sizes = [draw(st.integers(e if padding == "VALID" else 1, max(e, 4))) for e in effective]
    out = [conv_ops.get_windowed_output_size(n, k, s, d, padding)[0]
           for n, k, s, d in zip(sizes, window, strides, dilations)]
    batch = draw(st.integers(1, 2))
    return batch, sizes, window, out, {"strides": strides, "padding": padding,
                                       "dilations": dilations}


def draw_conv2d(draw, rng, dtype):
    batch, (h, w), (kh, kw), _, attrs = _window(draw, dilated=True)
    c_in, c_out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    return [_normal(rng, (batch, h, w, c_in), dtype),
            _normal(rng, (kh, kw, c_in, c_out), dtype)], attrs


def draw_conv2d_backprop_input(draw, rng, dtype):
    batch, (h, w), (kh, kw), (oh, ow), attrs = _window(draw, dilated=True)
    c_in, c_out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    attrs["input_sizes"] = [batch, h, w, c_in]
    return [_normal(rng, (kh, kw, c_in, c_out), dtype),
            _normal(rng, (batch, oh, ow, c_out), dtype)], attrs


def draw_conv2d_backprop_filter(draw, rng, dtype):
    batch, (h, w), (kh, kw), (oh, ow), attrs = _window(draw, dilated=True)
    c_in, c_out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    attrs["filter_sizes"] = [kh, kw, c_in, c_out]
    return [_normal(rng, (batch, h, w, c_in), dtype),
            _normal(rng, (batch, oh, ow, c_out), dtype)], attrs


def pooling(*which):
    """Inputs of a pooling op or its backprop ops: ``which`` names each input."""
    def draw_inputs(draw, rng, dtype):
        batch, (h, w), window, (oh, ow), attrs = _window(draw, dilated=False)
        del attrs["dilations"]
        channels = draw(st.integers(1, 2))
        attrs.update(ksize=window, input_sizes=[batch, h, w, channels])
        shapes = {"input": (batch, h, w, channels), "output": (batch, oh, ow, channels)}
        values = [_distinct(rng, shapes["input"], dtype) if kind == "input"
                  else _normal(rng, shapes[kind.split("_")[0]], dtype) for kind in which]
        return values, attrs
    return draw_inputs


def resize(*which, float32=False):
    """Inputs of a resize op or its backprop: ``which`` names each, "images" or "resized".

    ``float32``: draw float32 whatever the dtype (ResizeBilinear's output is
    float32 for every input, so float64 differences would see float32 noise).
    """
    def draw_inputs(draw, rng, dtype):
        batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        in_size = [draw(st.integers(1, 4)) for _ in range(2)]
        out_size = [draw(st.integers(1, 5)) for _ in range(2)]
        align_corners = draw(st.booleans())
        half_pixel_centers = not align_corners and draw(st.booleans())
        shapes = {"images": (batch, *in_size, channels), "resized": (batch, *out_size, channels)}
        attrs = {"size": out_size, "image_size": in_size, "align_corners": align_corners,
                 "half_pixel_centers": half_pixel_centers}
        return [_normal(rng, shapes[kind], np.float32 if float32 else dtype)
                for kind in which], attrs
    return draw_inputs


def draw_lrn(draw, rng, dtype):
    """A 4-D float32 input (LRN has no float64 kernel in TF) and random LRN attrs."""
    del dtype
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2)),
             draw(st.integers(1, 6)))
    attrs = {"depth_radius": draw(st.integers(0, 2)), "bias": draw(st.sampled_from([1.0, 2.0])),
             "alpha": draw(st.sampled_from([0.1, 0.5])), "beta": draw(st.sampled_from([0.5, 0.75]))}
    return [_normal(rng, shape, np.float32)], attrs


def draw_rgb(draw, rng, dtype):
    """RGB pixels whose three channels are distinct values in [0.1, 0.9], 0.1 apart
    or more (no ties between the largest and smallest, where HSV has kinks)."""
    pixels = draw(st.integers(1, 4))
    levels = np.array([0.15, 0.35, 0.55, 0.75, 0.9])
    rgb = np.stack([rng.choice(levels, 3, replace=False) for _ in range(pixels)])
    rgb += rng.uniform(-0.04, 0.04, rgb.shape)
    return [rgb.reshape(1, pixels, 3).astype(dtype)], {}


def draw_sparse_matmul(draw, rng, dtype):
    """The values of a random sparse ``[m, k]`` matrix and a dense operand; the
    indices (unsorted, as the op allows) and the adjoints are attrs."""
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    adjoint_a, adjoint_b = draw(st.booleans()), draw(st.booleans())
    nnz = draw(st.integers(1, m * k))
    positions = rng.permutation(m * k)[:nnz]
    indices = np.stack([positions // k, positions % k], axis=1)
    b_shape = (n, k) if adjoint_b else (k, n)
    if adjoint_a:  # the sparse matrix is [k, m]: swap its coordinates
        indices, shape = indices[:, ::-1], [k, m]
    else:
        shape = [m, k]
    return ([_normal(rng, (nnz,), dtype), _normal(rng, b_shape, dtype)],
            {"indices": indices, "shape": shape, "adjoint_a": adjoint_a, "adjoint_b": adjoint_b})


def draw_sparse_reduce(draw, rng, dtype):
    """The values of a random sparse tensor of rank 1 to 3; the rest are attrs."""
    shape = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 3)))]
    size = int(np.prod(shape))
    positions = np.sort(rng.permutation(size)[:draw(st.integers(1, size))])
    indices = np.stack(np.unravel_index(positions, shape), axis=1)
    axis = draw(st.sampled_from([None] + [[a] for a in range(-len(shape), len(shape))]))
    return ([_normal(rng, (len(positions),), dtype)],
            {"indices": indices, "shape": shape, "axis": axis, "keepdims": draw(st.booleans())})


def _sparse_matmul(values, b, indices, shape, **adjoints):
    return tf.sparse_tensor_dense_matmul(tf.SparseTensor(indices, values, shape), b, **adjoints)


def _sparse_reduce_sum(values, indices, shape, **axis):
    return tf.sparse_reduce_sum(tf.SparseTensor(indices, values, shape), **axis)


def _pool_attrs(attrs):
    return {name: attrs[name] for name in ("ksize", "strides", "padding")}


# ---- The table --------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    """One differentiable nn op: ``build(*placeholders, **attrs)`` and its inputs."""

    name: str
    build: Callable
    draw: Callable
    second_order: bool = True  # False where TF registers no gradient for the backprop op

    def __str__(self):
        return self.name


def _backprop(loss):
    """The second output of a softmax cross-entropy op: softmax - labels.  (The dense
    loss is that op's first output reshaped to the logits' shape, as in TF.)"""
    op = loss.op
    while not op.type.endswith("CrossEntropyWithLogits"):
        op = op.inputs[0].op
    return op.outputs[1]


AROUND_ZERO = _away_from(0.0)
CASES = [
    # Activations and their backprop ops (features drawn away from the kinks).
    Case("Relu", tf.nn.relu, elementwise(AROUND_ZERO)),
    Case("Relu6", tf.nn.relu6, elementwise(_away_from(0.0, 6.0, low=-2.0, high=8.0))),
    Case("Elu", tf.nn.elu, elementwise(AROUND_ZERO)),
    Case("Selu", tf.nn.selu, elementwise(AROUND_ZERO)),
    Case("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.3), elementwise(AROUND_ZERO)),
    Case("Softplus", tf.nn.softplus, elementwise(_normal)),
    Case("Softsign", tf.nn.softsign, elementwise(AROUND_ZERO)),
    Case("ReluGrad", nn_ops.relu_grad, elementwise(_normal, AROUND_ZERO)),
    Case("Relu6Grad", nn_ops.relu6_grad,
         elementwise(_normal, _away_from(0.0, 6.0, low=-2.0, high=8.0))),
    Case("EluGrad", lambda g, x: nn_ops.elu_grad(g, tf.nn.elu(x)),
         elementwise(_normal, AROUND_ZERO)),
    Case("SeluGrad", lambda g, x: nn_ops.selu_grad(g, tf.nn.selu(x)),
         elementwise(_normal, AROUND_ZERO)),
    Case("LeakyReluGrad", lambda g, x: nn_ops.leaky_relu_grad(g, x, alpha=0.3),
         elementwise(_normal, AROUND_ZERO)),
    Case("SoftplusGrad", nn_ops.softplus_grad, elementwise(_normal, _normal)),
    Case("SoftsignGrad", nn_ops.softsign_grad, elementwise(_normal, AROUND_ZERO)),
    # Softmax: the ops work on the last axis; other axes go through Transpose.
    Case("Softmax", tf.nn.softmax, elementwise(_normal, min_rank=1)),
    Case("LogSoftmax", tf.nn.log_softmax, elementwise(_normal, min_rank=1)),
    Case("Softmax(axis=0)", lambda x: tf.nn.softmax(x, axis=0),
         elementwise(_normal, min_rank=2)),
    Case("LogSoftmax(axis=0)", lambda x: tf.nn.log_softmax(x, axis=0),
         elementwise(_normal, min_rank=2)),
    # BiasAdd (the bias broadcasts along every non-channel axis) and its backprop.
    Case("BiasAdd", tf.nn.bias_add, draw_bias_add),
    Case("BiasAddGrad", lambda g, _, data_format: nn_ops.bias_add_grad(g, data_format),
         draw_bias_add),
    # Losses.
    Case("L2Loss", tf.nn.l2_loss, elementwise(_normal)),
    Case("TopKV2", lambda x: tf.nn.top_k(x, k=1)[0], elementwise(_spread_apart, min_rank=1)),
    # Debugging ops that pass their input through (logging_ops.py).
    Case("Print", lambda x: tf.Print(x, [x], first_n=0), elementwise(_normal)),
    Case("SoftmaxCrossEntropyWithLogits",
         lambda x, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
         draw_softmax_xent),
    Case("SoftmaxCrossEntropyWithLogits:1",
         lambda x, z: _backprop(tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x)),
         draw_softmax_xent),
    Case("SparseSoftmaxCrossEntropyWithLogits",
         lambda x, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x),
         draw_sparse_xent),
    Case("SparseSoftmaxCrossEntropyWithLogits:1",
         lambda x, z: _backprop(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=z,
                                                                                logits=x)),
         draw_sparse_xent),
    Case("SigmoidCrossEntropyWithLogits",
         lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
         elementwise(_normal, _uniform01)),
    # Convolution (any padding, strides and dilations) and its backprop ops.
    Case("Conv2D", tf.nn.conv2d, draw_conv2d),
    Case("Conv2DBackpropInput",
         lambda f, dy, input_sizes, **a: conv_ops.conv2d_backprop_input(input_sizes, f, dy, **a),
         draw_conv2d_backprop_input),
    Case("Conv2DBackpropFilter",
         lambda x, dy, filter_sizes, **a: conv_ops.conv2d_backprop_filter(x, filter_sizes, dy, **a),
         draw_conv2d_backprop_filter),
    # Pooling (distinct values: no ties) and its backprop ops.
    Case("MaxPool", lambda x, **a: tf.nn.max_pool(x, **_pool_attrs(a)), pooling("input")),
    Case("AvgPool", lambda x, **a: tf.nn.avg_pool(x, **_pool_attrs(a)), pooling("input")),
    Case("MaxPoolGrad",
         lambda x, g, **a: pooling_ops.max_pool_grad(x, tf.nn.max_pool(x, **_pool_attrs(a)), g,
                                                **_pool_attrs(a)),
         pooling("input", "output")),
    Case("MaxPoolGradGrad",
         lambda x, g, **a: pooling_ops.max_pool_grad_grad(x, tf.nn.max_pool(x, **_pool_attrs(a)), g,
                                                     **_pool_attrs(a)),
         pooling("input", "input_grad")),
    Case("AvgPoolGrad",
         lambda g, **a: pooling_ops.avg_pool_grad(a["input_sizes"], g, **_pool_attrs(a)),
         pooling("output")),
    # Image resizing (tf.image, image_ops.py) and its backprop ops; any sampling convention.
    Case("ResizeBilinear",
         lambda x, size, image_size, **a: tf.image.resize_bilinear(x, size, **a),
         resize("images", float32=True)),
    Case("ResizeBilinearGrad",
         lambda g, x, size, image_size, **a: image_ops.resize_bilinear_grad(g, x, **a),
         resize("resized", "images", float32=True)),
    Case("ResizeNearestNeighbor",
         lambda x, size, image_size, **a: tf.image.resize_nearest_neighbor(x, size, **a),
         resize("images")),
    Case("ResizeNearestNeighborGrad",
         lambda g, size, image_size, **a: image_ops.resize_nearest_neighbor_grad(g, image_size,
                                                                                 **a),
         resize("resized")),
    # Local response normalization: LRNGrad has no gradient in TF.
    Case("LRN", lambda x, **a: tf.nn.lrn(x, **a), draw_lrn, second_order=False),
    # Colour (color_ops.py): RGBToHSV has TF's piecewise gradient.
    Case("RGBToHSV", tf.image.rgb_to_hsv, draw_rgb),
    # Sparse (sparse_ops.py): gradients for the values and the dense operand.
    Case("SparseTensorDenseMatMul", _sparse_matmul, draw_sparse_matmul),
    Case("SparseReduceSum", _sparse_reduce_sum, draw_sparse_reduce),
]


def _build(case, device, data, dtype):
    """Draws the case's inputs and builds it in a new graph.

    Returns:
        ``(graph, y, xs, x_values, extra_feed, rng)``: the floating inputs
        are the xs checked; integer ones (sparse labels) are only fed.
    """
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    values, attrs = case.draw(data.draw, rng, dtype)
    graph = tf.Graph()
    with graph.as_default():
        tensors = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in values]
        with tf.device(device):
            y = case.build(*tensors, **attrs)
    xs = [t for t, v in zip(tensors, values) if v.dtype.kind == "f"]
    x_values = [v for v in values if v.dtype.kind == "f"]
    extra_feed = {t: v for t, v in zip(tensors, values) if v.dtype.kind != "f"}
    return graph, y, xs, x_values, extra_feed, rng


def _check(y, xs, x_values, extra_feed, session):
    tf.test.check_gradients(y, xs, x_values if len(xs) > 1 else x_values[0],
                            extra_feed_dict=extra_feed, session=session)


@pytest.mark.parametrize("case", CASES, ids=str)
@given(data=st.data(), dtype=st.sampled_from(FLOATS))
@hypothesis_settings
def test_gradient_matches_finite_differences(device, case, data, dtype):
    graph, y, xs, x_values, extra_feed, _ = _build(case, device, data, dtype)
    with graph.as_default(), tf.Session(graph=graph, config=device_config(device)) as session:
        _check(y, xs, x_values, extra_feed, session)


@pytest.mark.parametrize("case", [c for c in CASES if c.second_order], ids=str)
@given(data=st.data(), dtype=st.sampled_from(FLOATS))
@hypothesis_settings
def test_second_order_gradient_matches_finite_differences(device, case, data, dtype):
    """The gradients of the case, as functions of its inputs and of grad_ys, are checked."""
    graph, y, xs, x_values, extra_feed, rng = _build(case, device, data, dtype)
    with graph.as_default(), tf.Session(graph=graph, config=device_config(device)) as session:
        grad_y = tf.placeholder(y.dtype, y.shape, name="grad_y")
        grad_y_value = _normal(rng, y.shape.as_list(), dtype)
        for dx in tf.gradients(y, xs, grad_ys=grad_y):
            if dx is not None:
                _check(dx, xs + [grad_y], x_values + [grad_y_value], extra_feed, session)


# Backprop ops for which TF registers no gradient (so neither does minitf).
TF_WITHOUT_GRADIENT = {"LRNGrad"}


def test_every_nn_op_has_a_gradient_and_a_row():
    """TF gives these ops a gradient: each needs a gradient and a row."""
    covered = {case.name.split("(")[0].split(":")[0] for case in CASES}
    for op_type in NN_OP_TYPES - TF_WITHOUT_GRADIENT:
        fn = get_registry().gradient(op_type)  # LookupError: no gradient at all
        assert fn is not None, "%s is declared not differentiable" % op_type
        assert op_type in covered, "%s has a gradient but no row in CASES" % op_type


# ---- Exact derivatives ------------------------------------------------------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# (activation, its derivative, its second derivative), away from the kinks.
ACTIVATION_DERIVATIVES = [
    (tf.nn.relu, lambda x: (x > 0) * 1.0, lambda x: 0 * x),
    (tf.nn.relu6, lambda x: ((x > 0) & (x < 6)) * 1.0, lambda x: 0 * x),
    (tf.nn.elu, lambda x: np.where(x > 0, 1, np.exp(x)), lambda x: np.where(x > 0, 0, np.exp(x))),
    (tf.nn.selu, lambda x: _SELU_SCALE * np.where(x > 0, 1, _SELU_ALPHA * np.exp(x)),
     lambda x: _SELU_SCALE * np.where(x > 0, 0, _SELU_ALPHA * np.exp(x))),
    (lambda x: tf.nn.leaky_relu(x, alpha=0.3), lambda x: np.where(x > 0, 1, 0.3),
     lambda x: 0 * x),
    (tf.nn.softplus, _sigmoid, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
    (tf.nn.softsign, lambda x: 1 / (1 + np.abs(x)) ** 2,
     lambda x: -2 * np.sign(x) / (1 + np.abs(x)) ** 3),
]


@pytest.mark.parametrize("fn, first, second", ACTIVATION_DERIVATIVES)
def test_activation_derivatives_at_known_points(device, sess, fn, first, second):
    x_value = np.array([-7.0, -2.0, -0.5, 0.25, 1.0, 5.5, 6.5, 30.0])
    x = tf.constant(x_value)
    with tf.device(device):
        y = fn(x)
    # Explicit grad_ys keep the default ones (Fill of Shape(y)) off the second pass.
    (dx,) = tf.gradients(y, x, grad_ys=np.ones_like(x_value))
    (d2x,) = tf.gradients(dx, x, grad_ys=np.ones_like(x_value))
    got_first, got_second = sess.run([dx, d2x])
    np.testing.assert_allclose(got_first, first(x_value), rtol=1e-12)
    np.testing.assert_allclose(got_second, second(x_value), rtol=1e-12, atol=1e-15)


def test_activation_gradients_build_tf_backprop_ops():
    x = tf.placeholder(tf.float32, [3])
    for fn, op_type in [(tf.nn.relu, "ReluGrad"), (tf.nn.relu6, "Relu6Grad"),
                        (tf.nn.elu, "EluGrad"), (tf.nn.selu, "SeluGrad"),
                        (tf.nn.leaky_relu, "LeakyReluGrad"), (tf.nn.softplus, "SoftplusGrad"),
                        (tf.nn.softsign, "SoftsignGrad")]:
        (dx,) = tf.gradients(fn(x), x)
        assert dx.op.type == op_type
    (dx,) = tf.gradients(tf.nn.leaky_relu(x, alpha=0.05), x)
    assert dx.op.get_attr("alpha") == pytest.approx(0.05)


def test_relu_gradient_is_zero_at_zero(sess):
    # TF's convention: the subgradient at the kink is 0.
    x = tf.constant([0.0, 0.0])
    for fn in (tf.nn.relu, tf.nn.relu6, tf.nn.elu):
        (dx,) = tf.gradients(fn(x), x)
        expected = [1.0, 1.0] if fn is tf.nn.elu else [0.0, 0.0]
        np.testing.assert_array_equal(sess.run(dx), expected)


def test_softplus_gradient_is_stable_at_extremes(sess):
    x = tf.constant([-1000.0, 0.0, 1000.0])
    (dx,) = tf.gradients(tf.nn.softplus(x), x)
    with np.errstate(over="raise", invalid="raise"):
        np.testing.assert_allclose(sess.run(dx), [0.0, 0.5, 1.0])


def test_softmax_cross_entropy_gradients_are_softmax_minus_labels(device, sess):
    rng = np.random.default_rng(0)
    logits_value, labels_value = rng.standard_normal((3, 4)), _probabilities(rng, (3, 4), float)
    grad_loss = np.array([1.0, 2.0, -0.5])
    logits, labels = tf.constant(logits_value), tf.constant(labels_value)
    with tf.device(device):
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    d_logits, d_labels = tf.gradients(loss, [logits, labels], grad_ys=grad_loss)
    softmax = np.exp(logits_value) / np.exp(logits_value).sum(-1, keepdims=True)
    got_logits, got_labels = sess.run([d_logits, d_labels])
    np.testing.assert_allclose(got_logits, grad_loss[:, None] * (softmax - labels_value),
                               rtol=1e-12)
    np.testing.assert_allclose(got_labels, grad_loss[:, None] * -np.log(softmax), rtol=1e-12)
    # The deprecated v1 stops the gradient to the labels.
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert tf.gradients(v1, labels) == [None]


def test_sparse_softmax_cross_entropy_gradient(device, sess):
    logits_value = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    logits, labels = tf.constant(logits_value), tf.constant([2, 0])
    with tf.device(device):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    d_logits, d_labels = tf.gradients(loss, [logits, labels])
    assert d_labels is None
    softmax = np.exp(logits_value) / np.exp(logits_value).sum(-1, keepdims=True)
    np.testing.assert_allclose(sess.run(d_logits), softmax - np.eye(3)[[2, 0]], rtol=1e-12)


def test_cross_entropy_gradient_skips_softmax_ops_for_the_loss_alone():
    logits = tf.placeholder(tf.float32, [2, 3])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.ones([2, 3]), logits=logits)
    tf.gradients(loss, logits)
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert "Softmax" not in types  # the op's backprop output is reused


def test_sigmoid_cross_entropy_gradients(device, sess):
    x_value, z_value = np.array([-2.0, 0.0, 3.0]), np.array([0.0, 0.5, 1.0])
    x, z = tf.constant(x_value), tf.constant(z_value)
    with tf.device(device):
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)
    d_x, d_z = sess.run(tf.gradients(loss, [x, z]))
    np.testing.assert_allclose(d_x, _sigmoid(x_value) - z_value, rtol=1e-12)
    np.testing.assert_allclose(d_z, -x_value)


@pytest.mark.parametrize("shape, data_format, axes", [
    ((4, 3), "NHWC", (0,)), ((2, 3, 4, 5), "NHWC", (0, 1, 2)),
    ((2, 3, 4), "NCHW", (0, 2)), ((2, 3, 4, 5), "NCHW", (0, 2, 3))])
def test_bias_add_gradients_sum_over_the_other_axes(device, sess, shape, data_format, axes):
    rng = np.random.default_rng(0)
    grad = rng.standard_normal(shape)
    channels = shape[1] if data_format == "NCHW" else shape[-1]
    value, bias = tf.constant(rng.standard_normal(shape)), tf.constant(np.zeros(channels))
    with tf.device(device):
        out = tf.nn.bias_add(value, bias, data_format=data_format)
    d_value, d_bias = tf.gradients(out, [value, bias], grad_ys=grad)
    assert d_bias.op.type == "BiasAddGrad" and d_bias.shape.as_list() == [channels]
    got_value, got_bias = sess.run([d_value, d_bias])
    np.testing.assert_array_equal(got_value, grad)
    np.testing.assert_allclose(got_bias, grad.sum(axis=axes), rtol=1e-12)


def test_l2_loss_gradient_is_the_input(sess):
    t = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    (dt,) = tf.gradients(tf.nn.l2_loss(t), t, grad_ys=2.0)
    np.testing.assert_allclose(sess.run(dt), 2.0 * np.array([[1.0, -2.0], [3.0, 0.5]]))


# ---- Convolution ------------------------------------------------------------------
def test_conv2d_gradients_of_a_1x1_filter(device, sess):
    """A 1x1 convolution is a matmul per pixel: dW = sum of x * dy, dx = dy W^T."""
    rng = np.random.default_rng(0)
    x_value, w_value = rng.standard_normal((2, 3, 4, 3)), rng.standard_normal((1, 1, 3, 2))
    grad = rng.standard_normal((2, 3, 4, 2))
    x, w = tf.constant(x_value), tf.constant(w_value)
    with tf.device(device):
        y = tf.nn.conv2d(x, w, strides=1, padding="VALID")
    dx, dw = tf.gradients(y, [x, w], grad_ys=grad)
    assert (dx.op.type, dw.op.type) == ("Conv2DBackpropInput", "Conv2DBackpropFilter")
    got_dx, got_dw = sess.run([dx, dw])
    np.testing.assert_allclose(got_dw[0, 0], np.einsum("bhwc,bhwo->co", x_value, grad),
                               rtol=1e-12)
    np.testing.assert_allclose(got_dx, grad @ w_value[0, 0].T, rtol=1e-12)


def _ref_conv2d_gradients(x, w, grad, strides, padding, dilations):
    """Loops over output pixels: each sends grad * W back to its window (and x * grad to W)."""
    (_, h, wd, _), (kh, kw, _, _) = x.shape, w.shape
    _, top = conv_ops.get_windowed_output_size(h, kh, strides[0], dilations[0], padding)
    _, left = conv_ops.get_windowed_output_size(wd, kw, strides[1], dilations[1], padding)
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for b, i, j in np.ndindex(*grad.shape[:3]):
        for di, dj in np.ndindex(kh, kw):
            r = i * strides[0] + di * dilations[0] - top
            c = j * strides[1] + dj * dilations[1] - left
            if 0 <= r < h and 0 <= c < wd:
                dx[b, r, c] += w[di, dj] @ grad[b, i, j]
                dw[di, dj] += np.outer(x[b, r, c], grad[b, i, j])
    return dx, dw


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilations", [
    ((1, 5, 5, 1), (3, 3, 1, 1), (2, 2), "SAME", (1, 1)),
    ((2, 6, 7, 2), (3, 2, 2, 3), (2, 1), "SAME", (1, 1)),
    ((1, 7, 6, 2), (3, 3, 2, 2), (2, 2), "VALID", (1, 1)),
    ((1, 7, 7, 1), (2, 3, 1, 2), (1, 1), "SAME", (2, 2)),
    ((1, 8, 9, 2), (3, 3, 2, 1), (1, 2), "VALID", (2, 1)),
    ((1, 4, 5, 1), (4, 4, 1, 1), (3, 3), "SAME", (1, 1)),
])
def test_conv2d_gradients_match_loops(device, sess, x_shape, w_shape, strides, padding,
                                      dilations):
    rng = np.random.default_rng(0)
    x_value, w_value = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    x, w = tf.constant(x_value), tf.constant(w_value)
    with tf.device(device):
        y = tf.nn.conv2d(x, w, strides=strides, padding=padding, dilations=dilations)
    grad = rng.standard_normal(y.shape.as_list())
    got_dx, got_dw = sess.run(tf.gradients(y, [x, w], grad_ys=grad))
    ref_dx, ref_dw = _ref_conv2d_gradients(x_value, w_value, grad, strides, padding, dilations)
    np.testing.assert_allclose(got_dx, ref_dx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_dw, ref_dw, rtol=1e-12, atol=1e-12)


def test_conv2d_second_order_builds_the_other_backprop_ops():
    x = tf.placeholder(tf.float32, [1, 4, 4, 2])
    w = tf.placeholder(tf.float32, [3, 3, 2, 2])
    grad = tf.placeholder(tf.float32, [1, 2, 2, 2])
    y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    dx, dw = tf.gradients(y, [x, w], grad_ys=grad)
    ddw, ddgrad, ddx = tf.gradients(dx, [w, grad, x], grad_ys=tf.ones([1, 4, 4, 2]))
    assert (ddw.op.type, ddgrad.op.type, ddx) == ("Conv2DBackpropFilter", "Conv2D", None)
    ddx, ddgrad, ddw = tf.gradients(dw, [x, grad, w], grad_ys=tf.ones([3, 3, 2, 2]))
    assert (ddx.op.type, ddgrad.op.type, ddw) == ("Conv2DBackpropInput", "Conv2D", None)


def test_conv2d_transpose_is_conv2d_backprop_input(device, sess):
    rng = np.random.default_rng(0)
    value, w = rng.standard_normal((1, 2, 2, 3)), rng.standard_normal((3, 3, 1, 3))
    with tf.device(device):
        up = conv_ops.conv2d_transpose(tf.constant(value), tf.constant(w), [1, 4, 4, 1], strides=2)
        direct = conv_ops.conv2d_backprop_input([1, 4, 4, 1], tf.constant(w), tf.constant(value),
                                              strides=2, padding="SAME")
    assert up.op.type == "Conv2DBackpropInput" and up.shape.as_list() == [1, 4, 4, 1]
    np.testing.assert_array_equal(*sess.run([up, direct]))


def test_conv2d_backprop_ops_check_their_arguments():
    w = tf.placeholder(tf.float32, [3, 3, 2, 4])
    dy = tf.placeholder(tf.float32, [1, 3, 3, 4])
    with pytest.raises(ValueError, match="out_backprop has shape") as info:
        conv_ops.conv2d_backprop_input([1, 5, 5, 2], w, dy, strides=1, padding="SAME")
    assert "(op: 'Conv2DBackpropInput')" in str(info.value)
    with pytest.raises(TypeError, match="input_sizes.*int32"):
        conv_ops.conv2d_backprop_input(tf.constant([1.0, 5, 5, 2]), w, dy, strides=2,
                                     padding="SAME")
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        conv_ops.conv2d_backprop_filter(tf.placeholder(tf.float32, [1, 5, 5, 3]), [3, 3, 2, 4],
                                      dy, strides=2, padding="SAME")
    with pytest.raises(ValueError, match="supports only data_format='NHWC'"):
        conv_ops.conv2d_backprop_input([1, 5, 5, 2], w, dy, strides=2, padding="SAME",
                                     data_format="NCHW")
    dx = conv_ops.conv2d_backprop_input([1, 5, 5, 2], w, dy, strides=2, padding="SAME")
    assert dx.shape.as_list() == [1, 5, 5, 2] and dx.dtype == tf.float32


def test_conv2d_backprop_input_checks_sizes_when_run(sess):
    sizes = tf.placeholder(tf.int32, [4])
    dx = conv_ops.conv2d_backprop_input(sizes, tf.zeros([3, 3, 1, 1]), tf.zeros([1, 3, 3, 1]),
                                      strides=2, padding="SAME")
    assert dx.shape.as_list() == [None, None, None, 1]
    assert sess.run(dx, {sizes: [1, 6, 5, 1]}).shape == (1, 6, 5, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Size of out_backprop"):
        sess.run(dx, {sizes: [1, 7, 7, 1]})


# ---- Pooling ----------------------------------------------------------------------
@pytest.mark.parametrize("padding, strides, expected", [
    # Pinned from TF 1.x (tf.compat.v1, CPU): a tie goes to the window's first
    # maximum in row-major order; overlapping windows add up.
    ("VALID", 1, [[0, 2, 0], [1, 0, 1], [0, 0, 0]]),
    ("SAME", 2, [[0, 1, 1], [0, 0, 0], [1, 0, 1]]),
])
def test_max_pool_routes_to_the_first_maximum(device, sess, padding, strides, expected):
    x = tf.constant(np.array([[1.0, 2, 2], [2, 1, 2], [0, 0, 0]]).reshape(1, 3, 3, 1))
    with tf.device(device):
        y = tf.nn.max_pool(x, ksize=2, strides=strides, padding=padding)
    (dx,) = tf.gradients(y, x)
    assert dx.op.type == "MaxPoolGrad"
    np.testing.assert_array_equal(sess.run(dx)[0, :, :, 0], expected)


def test_max_pool_gradient_of_equal_values(device, sess):
    x = tf.ones([1, 3, 3, 1])
    with tf.device(device):
        y = tf.nn.max_pool(x, ksize=2, strides=1, padding="VALID")
    (dx,) = tf.gradients(y, x)
    np.testing.assert_array_equal(sess.run(dx)[0, :, :, 0], [[1, 1, 0], [1, 1, 0], [0, 0, 0]])


def test_avg_pool_gradient_divides_by_the_covered_entries(device, sess):
    # A 3x3 input, 2x2 windows, stride 2, SAME: windows cover 4, 2, 2 and 1 entries.
    x = tf.zeros([1, 3, 3, 1])
    with tf.device(device):
        y = tf.nn.avg_pool(x, ksize=2, strides=2, padding="SAME")
    (dx,) = tf.gradients(y, x, grad_ys=np.array([4.0, 2.0, 2.0, 1.0]).reshape(1, 2, 2, 1))
    assert dx.op.type == "AvgPoolGrad"
    np.testing.assert_array_equal(sess.run(dx)[0, :, :, 0], np.ones((3, 3)))


def test_pooling_second_order_ops():
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    grad = tf.placeholder(tf.float32, [1, 2, 2, 1])
    ones = tf.ones([1, 4, 4, 1])
    (dx,) = tf.gradients(tf.nn.max_pool(x, 2, 2, "VALID"), x, grad_ys=grad)
    assert tf.gradients(dx, grad, grad_ys=ones)[0].op.type == "MaxPoolGradGrad"
    (dx,) = tf.gradients(tf.nn.avg_pool(x, 2, 2, "VALID"), x, grad_ys=grad)
    (d_grad, d_x) = tf.gradients(dx, [grad, x], grad_ys=ones)
    assert d_grad.op.type == "AvgPool" and d_x is None


def test_pooling_backprop_ops_shapes():
    x = tf.placeholder(tf.float32, [2, 5, 5, 3])
    y = tf.nn.max_pool(x, 3, 2, "SAME")
    assert pooling_ops.max_pool_grad(x, y, y, 3, 2, "SAME").shape.as_list() == [2, 5, 5, 3]
    assert pooling_ops.max_pool_grad_grad(x, y, x, 3, 2, "SAME").shape.as_list() == [2, 3, 3, 3]
    assert pooling_ops.avg_pool_grad([2, 5, 5, 3], y, 3, 2, "SAME").shape.as_list() == [2, 5, 5, 3]
    with pytest.raises(ValueError, match="orig_input's shape"):
        pooling_ops.max_pool_grad_grad(x, y, y, 3, 2, "SAME")


# ---- Second order through math ops, and the nn functions built from them ----------
def test_softmax_cross_entropy_mixed_second_derivative(sess):
    """d/dlabels of d loss/d logits is -I per row (TF's own gradient drops this term)."""
    logits, labels = tf.constant([[0.5, -1.0, 2.0]]), tf.constant([[0.2, 0.3, 0.5]])
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    (d_logits,) = tf.gradients(loss, logits)
    (mixed,) = tf.gradients(d_logits, labels, grad_ys=np.array([[1.0, 0.0, 0.0]]))
    np.testing.assert_allclose(sess.run(mixed), [[-1.0, 0.0, 0.0]], atol=1e-7)


COMPOSITIONS = [
    ("moments", lambda x: tf.add_n(list(tf.nn.moments(x, axes=[0]))), (4, 3)),
    ("batch_normalization",
     lambda x: tf.nn.batch_normalization(x, tf.reduce_mean(x, 0), np.array([1.0, 2.0, 0.5]),
                                         np.array([0.1, 0.0, -0.2]), np.array([1.0, 2.0, 3.0]),
                                         1e-3), (4, 3)),
    ("l2_normalize", lambda x: tf.nn.l2_normalize(x, axis=1), (2, 3)),
    ("xw_plus_b", lambda x: tf.nn.xw_plus_b(x, np.ones((3, 2)), np.array([1.0, 2.0])), (4, 3)),
]


@pytest.mark.parametrize("name, fn, shape", COMPOSITIONS, ids=[c[0] for c in COMPOSITIONS])
def test_nn_functions_differentiate_through_their_ops(device, sess, name, fn, shape):
    x = tf.placeholder(tf.float64, shape)
    with tf.device(device):
        y = fn(x)
    tf.test.check_gradients(y, x, np.random.default_rng(0).standard_normal(shape))


def test_dropout_gradient_is_the_mask(device, sess):
    x_value = np.arange(1.0, 201.0).reshape(10, 20)
    x = tf.constant(x_value)
    with tf.device(device):
        y = tf.nn.dropout(x, keep_prob=0.5, seed=1)
    (dx,) = tf.gradients(y, x)
    # One run computes both: the kept entries have gradient 1 / keep_prob.
    got_y, got_dx = sess.run([y, dx])
    np.testing.assert_allclose(got_dx, np.where(got_y != 0, 2.0, 0.0))
