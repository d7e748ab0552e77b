"""Computes, *with TensorFlow*, reference results for the colour, LRN, conv1d and sparse ops.

Run once, from the repository root, with a Python that has TensorFlow
(``tf.compat.v1`` graph mode; TF 2.21 made the checked-in file)::

    /path/to/tf-venv/bin/python tests/data/make_tf_image_nn_sparse_refs.py

It writes ``tests/data/tf_image_nn_sparse_refs.npz`` (plain arrays,
``np.savez``, no pickle).  The inputs are made by :func:`inputs` from a
fixed seed, so ``tests/test_image_nn_sparse_refs.py`` rebuilds them without
TensorFlow and compares minitf's results with the arrays stored under each
name below:

* ``rgb_to_hsv``, ``hsv_to_rgb``, ``adjust_hue_<d>``, ``adjust_saturation_<s>``,
  ``rgb_to_grayscale``, ``rgb_to_grayscale_uint8``, ``adjust_gamma``,
  ``adjust_gamma_uint8``, ``adjust_hue_uint8``, and ``rgb_to_hsv_grad``
  (the gradient of ``sum(hsv * hsv_weights)``);
* ``lrn`` and ``lrn_grad`` (of ``sum(lrn * lrn_weights)``);
* ``conv1d_nwc``, ``conv1d_ncw``;
* ``spmm_<aa><ab>`` and its gradients ``spmm_<aa><ab>_dvalues``/``_db`` for
  the four adjoint combinations;
* ``sparse_reduce_sum_<axis>`` and ``sparse_reduce_sum_grad``;
* ``els_<combiner>_<weighted>`` for ``tf.nn.embedding_lookup_sparse`` over
  two shards (``"div"``), and ``els_mean_grad`` (the dense gradient of the
  first shard).
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tf_image_nn_sparse_refs.npz")

HUE_DELTAS = (0.2, -0.7)
SATURATIONS = (0.4, 1.7)
LRN_ATTRS = dict(depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)
SP_INDICES = np.array([[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]], np.int64)
SP_SHAPE = np.array([3, 4], np.int64)
REDUCE_INDICES = np.array([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 2, 1]], np.int64)
REDUCE_SHAPE = np.array([2, 3, 2], np.int64)
REDUCE_AXES = {"0": [0], "1": [1], "m1": [-1], "02": [0, 2]}
ELS_INDICES = np.array([[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]], np.int64)
ELS_IDS = np.array([1, 4, 1, 0, 3, 2], np.int64)
ELS_SHAPE = np.array([4, 3], np.int64)


def inputs():
    """The inputs, from a fixed seed: the same arrays in TF and in the tests."""
    rng = np.random.default_rng(20240915)
    rgb = rng.random((2, 3, 4, 3)).astype(np.float32)
    # Pixels with ties (gray, two equal channels) and black: the kernels' edge cases.
    rgb[0, 0, 0] = [0.5, 0.5, 0.5]
    rgb[0, 0, 1] = [0.0, 0.0, 0.0]
    rgb[0, 0, 2] = [0.8, 0.8, 0.2]
    rgb[0, 0, 3] = [0.1, 0.6, 0.6]
    return {
        "rgb": rgb,
        "rgb_uint8": (rgb * 255).astype(np.uint8),
        "hsv": rng.random((2, 5, 3)).astype(np.float32),
        "hsv_weights": rng.standard_normal((2, 3, 4, 3)).astype(np.float32),
        "lrn_input": rng.standard_normal((2, 2, 3, 7)).astype(np.float32),
        "lrn_weights": rng.standard_normal((2, 2, 3, 7)).astype(np.float32),
        "conv1d_input": rng.standard_normal((2, 7, 3)).astype(np.float32),
        "conv1d_filters": rng.standard_normal((3, 3, 4)).astype(np.float32),
        "sp_values": rng.standard_normal(5).astype(np.float64),
        "b": rng.standard_normal((4, 2)).astype(np.float64),
        "b_t": rng.standard_normal((2, 4)).astype(np.float64),
        "b_adj_a": rng.standard_normal((3, 2)).astype(np.float64),
        "b_adj_a_t": rng.standard_normal((2, 3)).astype(np.float64),
        "reduce_values": rng.standard_normal(4).astype(np.float64),
        "els_params0": rng.standard_normal((3, 2)).astype(np.float64),
        "els_params1": rng.standard_normal((2, 2)).astype(np.float64),
        "els_weights": rng.random(6).astype(np.float64) + 0.5,
    }


def spmm_b(x, adjoint_a, adjoint_b):
    """The dense operand of each adjoint combination."""
    return x[("b_adj_a" if adjoint_a else "b") + ("_t" if adjoint_b else "")]


def main():
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    x = inputs()
    out = {}
    with tf1.Session() as sess:
        rgb = tf1.constant(x["rgb"])
        hsv = tf1.image.rgb_to_hsv(rgb)
        out["rgb_to_hsv"] = sess.run(hsv)
        out["rgb_to_hsv_grad"] = sess.run(tf1.gradients(hsv * x["hsv_weights"], rgb)[0])
        out["hsv_to_rgb"] = sess.run(tf1.image.hsv_to_rgb(x["hsv"]))
        for delta in HUE_DELTAS:
            out["adjust_hue_%g" % delta] = sess.run(tf1.image.adjust_hue(rgb, delta))
        out["adjust_hue_uint8"] = sess.run(tf1.image.adjust_hue(x["rgb_uint8"], 0.3))
        for scale in SATURATIONS:
            out["adjust_saturation_%g" % scale] = sess.run(
                tf1.image.adjust_saturation(rgb, scale))
        out["rgb_to_grayscale"] = sess.run(tf1.image.rgb_to_grayscale(rgb))
        out["rgb_to_grayscale_uint8"] = sess.run(tf1.image.rgb_to_grayscale(x["rgb_uint8"]))
        out["adjust_gamma"] = sess.run(tf1.image.adjust_gamma(rgb, 2.2, 0.9))
        out["adjust_gamma_uint8"] = sess.run(tf1.image.adjust_gamma(x["rgb_uint8"], 0.5, 1.2))

        lrn_in = tf1.constant(x["lrn_input"])
        lrn = tf1.nn.lrn(lrn_in, **LRN_ATTRS)
        out["lrn"] = sess.run(lrn)
        out["lrn_grad"] = sess.run(tf1.gradients(lrn * x["lrn_weights"], lrn_in)[0])

        out["conv1d_nwc"] = sess.run(tf1.nn.conv1d(x["conv1d_input"], x["conv1d_filters"],
                                                   stride=2, padding="SAME"))
        # NCW: TF's CPU Conv2D has no NCHW kernel, so transpose around an NWC run.
        ncw = np.transpose(x["conv1d_input"], [0, 2, 1])
        nwc_valid = tf1.nn.conv1d(np.transpose(ncw, [0, 2, 1]), x["conv1d_filters"],
                                  stride=1, padding="VALID")
        out["conv1d_ncw"] = sess.run(tf1.transpose(nwc_valid, [0, 2, 1]))

        values = tf1.constant(x["sp_values"])
        sp = tf1.SparseTensor(SP_INDICES, values, SP_SHAPE)
        for adjoint_a in (False, True):
            for adjoint_b in (False, True):
                key = "spmm_%d%d" % (adjoint_a, adjoint_b)
                b = tf1.constant(spmm_b(x, adjoint_a, adjoint_b))
                product = tf1.sparse_tensor_dense_matmul(sp, b, adjoint_a=adjoint_a,
                                                         adjoint_b=adjoint_b)
                weights = np.arange(1.0, 1.0 + np.prod(product.shape)).reshape(product.shape)
                d_values, d_b = tf1.gradients(product * weights, [values, b])
                out[key], out[key + "_dvalues"], out[key + "_db"] = sess.run(
                    [product, d_values, d_b])

        reduce_values = tf1.constant(x["reduce_values"])
        sp3 = tf1.SparseTensor(REDUCE_INDICES, reduce_values, REDUCE_SHAPE)
        for key, axes in REDUCE_AXES.items():
            out["sparse_reduce_sum_" + key] = sess.run(tf1.sparse_reduce_sum(sp3, axes))
        total = tf1.sparse_reduce_sum(sp3, [1], keepdims=True)
        out["sparse_reduce_sum_grad"] = sess.run(
            tf1.gradients(total * np.array([[[1.0, 2.0]], [[3.0, 4.0]]]), reduce_values)[0])

        params = [tf1.constant(x["els_params0"]), tf1.constant(x["els_params1"])]
        sp_ids = tf1.SparseTensor(ELS_INDICES, ELS_IDS, ELS_SHAPE)
        sp_weights = tf1.SparseTensor(ELS_INDICES, x["els_weights"], ELS_SHAPE)
        for combiner in ("sum", "mean", "sqrtn"):
            for weighted in (False, True):
                result = tf1.nn.embedding_lookup_sparse(
                    params, sp_ids, sp_weights if weighted else None,
                    partition_strategy="div", combiner=combiner)
                out["els_%s_%d" % (combiner, weighted)] = sess.run(result)
        mean = tf1.nn.embedding_lookup_sparse(params, sp_ids, sp_weights,
                                              partition_strategy="div", combiner="mean")
        grad = tf1.gradients(tf1.reduce_sum(mean * mean), params[0])[0]
        out["els_mean_grad"] = sess.run(tf1.convert_to_tensor(grad))
    np.savez(OUT, **out)
    print("wrote", OUT, sorted(out))


if __name__ == "__main__":
    main()
