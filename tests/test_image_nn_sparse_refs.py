"""The colour, LRN, conv1d and sparse ops against results TensorFlow computed.

``tests/data/make_tf_image_nn_sparse_refs.py`` ran each op in TF 2.21's
``tf.compat.v1`` on inputs made from a fixed seed and stored the results in
``tests/data/tf_image_nn_sparse_refs.npz``; here minitf runs the same
programs on the same inputs (rebuilt by the script's :func:`inputs`, without
TensorFlow) and must agree: values, and gradients where TF has them.
"""

import pathlib

import numpy as np
import pytest

import minitf as tf
from tests.data import make_tf_image_nn_sparse_refs as refs

TF = np.load(pathlib.Path(__file__).parent / "data" / "tf_image_nn_sparse_refs.npz",
             allow_pickle=False)
X = refs.inputs()


def close(got, key, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got, TF[key], rtol=rtol, atol=atol, err_msg=key)


# ---- colour ----------------------------------------------------------------------------------
def test_hsv_conversions_and_the_rgb_to_hsv_gradient(sess):
    rgb = tf.constant(X["rgb"])
    hsv = tf.image.rgb_to_hsv(rgb)
    (grad,) = tf.gradients(hsv * X["hsv_weights"], rgb)
    got_hsv, got_grad, back = sess.run([hsv, grad, tf.image.hsv_to_rgb(X["hsv"])])
    close(got_hsv, "rgb_to_hsv")
    close(got_grad, "rgb_to_hsv_grad", rtol=1e-4, atol=1e-5)
    close(back, "hsv_to_rgb")


@pytest.mark.parametrize("delta", refs.HUE_DELTAS)
def test_adjust_hue(sess, delta):
    close(sess.run(tf.image.adjust_hue(X["rgb"], delta)), "adjust_hue_%g" % delta)


@pytest.mark.parametrize("scale", refs.SATURATIONS)
def test_adjust_saturation(sess, scale):
    close(sess.run(tf.image.adjust_saturation(X["rgb"], scale)), "adjust_saturation_%g" % scale)


def test_integer_images_go_through_float32(sess):
    hue = sess.run(tf.image.adjust_hue(X["rgb_uint8"], 0.3))
    assert hue.dtype == np.uint8
    np.testing.assert_array_equal(hue, TF["adjust_hue_uint8"])
    gray = sess.run(tf.image.rgb_to_grayscale(X["rgb_uint8"]))
    np.testing.assert_array_equal(gray, TF["rgb_to_grayscale_uint8"])
    gamma = sess.run(tf.image.adjust_gamma(X["rgb_uint8"], 0.5, 1.2))
    np.testing.assert_array_equal(gamma, TF["adjust_gamma_uint8"])


def test_grayscale_and_gamma(sess):
    close(sess.run(tf.image.rgb_to_grayscale(X["rgb"])), "rgb_to_grayscale")
    close(sess.run(tf.image.adjust_gamma(X["rgb"], 2.2, 0.9)), "adjust_gamma")


# ---- LRN and conv1d --------------------------------------------------------------------------
def test_lrn_and_its_gradient(sess):
    x = tf.constant(X["lrn_input"])
    y = tf.nn.lrn(x, **refs.LRN_ATTRS)
    (grad,) = tf.gradients(y * X["lrn_weights"], x)
    assert grad.op.type == "LRNGrad"
    got, got_grad = sess.run([y, grad])
    close(got, "lrn")
    close(got_grad, "lrn_grad", rtol=1e-4, atol=1e-5)


def test_conv1d(sess):
    nwc = tf.nn.conv1d(X["conv1d_input"], X["conv1d_filters"], stride=2, padding="SAME")
    ncw = tf.nn.conv1d(np.transpose(X["conv1d_input"], [0, 2, 1]), X["conv1d_filters"],
                       stride=1, padding="VALID", data_format="NCW")
    close(sess.run(nwc), "conv1d_nwc", rtol=1e-5, atol=1e-5)
    close(sess.run(ncw), "conv1d_ncw", rtol=1e-5, atol=1e-5)


# ---- sparse ----------------------------------------------------------------------------------
@pytest.mark.parametrize("adjoint_a", [False, True])
@pytest.mark.parametrize("adjoint_b", [False, True])
def test_sparse_tensor_dense_matmul_and_its_gradients(sess, adjoint_a, adjoint_b):
    key = "spmm_%d%d" % (adjoint_a, adjoint_b)
    values = tf.constant(X["sp_values"])
    b = tf.constant(refs.spmm_b(X, adjoint_a, adjoint_b))
    sp = tf.SparseTensor(refs.SP_INDICES, values, refs.SP_SHAPE)
    product = tf.sparse_tensor_dense_matmul(sp, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
    weights = np.arange(1.0, 1.0 + np.prod(product.shape.as_list())).reshape(
        product.shape.as_list())
    d_values, d_b = tf.gradients(product * weights, [values, b])
    got = sess.run([product, d_values, d_b])
    for value, suffix in zip(got, ("", "_dvalues", "_db")):
        close(value, key + suffix, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key", sorted(refs.REDUCE_AXES))
def test_sparse_reduce_sum(sess, key):
    sp = tf.SparseTensor(refs.REDUCE_INDICES, X["reduce_values"], refs.REDUCE_SHAPE)
    total = tf.sparse_reduce_sum(sp, refs.REDUCE_AXES[key])
    got = sess.run(total)
    assert total.shape.as_list() == list(got.shape)
    close(got, "sparse_reduce_sum_" + key, rtol=1e-12)


def test_sparse_reduce_sum_gradient(sess):
    values = tf.constant(X["reduce_values"])
    sp = tf.SparseTensor(refs.REDUCE_INDICES, values, refs.REDUCE_SHAPE)
    total = tf.sparse_reduce_sum(sp, [1], keepdims=True)
    (grad,) = tf.gradients(total * np.array([[[1.0, 2.0]], [[3.0, 4.0]]]), values)
    close(sess.run(grad), "sparse_reduce_sum_grad", rtol=1e-12)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse(sess, combiner, weighted):
    params = [tf.constant(X["els_params0"]), tf.constant(X["els_params1"])]
    sp_ids = tf.SparseTensor(refs.ELS_INDICES, refs.ELS_IDS, refs.ELS_SHAPE)
    sp_weights = tf.SparseTensor(refs.ELS_INDICES, X["els_weights"], refs.ELS_SHAPE)
    result = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights if weighted else None,
                                           partition_strategy="div", combiner=combiner)
    assert result.name == "embedding_lookup_sparse:0"
    close(sess.run(result), "els_%s_%d" % (combiner, weighted), rtol=1e-12)


def test_embedding_lookup_sparse_gradient_reaches_the_shards(sess):
    params = [tf.constant(X["els_params0"]), tf.constant(X["els_params1"])]
    sp_ids = tf.SparseTensor(refs.ELS_INDICES, refs.ELS_IDS, refs.ELS_SHAPE)
    sp_weights = tf.SparseTensor(refs.ELS_INDICES, X["els_weights"], refs.ELS_SHAPE)
    mean = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="div",
                                         combiner="mean")
    (grad,) = tf.gradients(tf.reduce_sum(mean * mean), params[0])
    assert isinstance(grad, tf.IndexedSlices)
    close(sess.run(tf.convert_to_tensor(grad)), "els_mean_grad", rtol=1e-12)
