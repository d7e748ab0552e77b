"""Writes frozen GraphDefs *with minitf* and checks, *with TensorFlow*, that TF
imports and runs them with minitf's results.

Run once, from the repository root, with minitf's Python; it then runs itself
with TensorFlow's Python (``--check``) on the files it wrote::

    .venv/bin/python tests/data/make_minitf_frozen_graphs.py /path/to/tf-venv/bin/python

It writes, into ``tests/data/``:

* ``minitf_mlp_frozen.pb`` — a 4-8-3 MLP (``MatMul``, ``Add``, ``Relu``,
  ``Softmax``), frozen with minitf's ``convert_variables_to_constants``;
* ``minitf_cnn_frozen.pb`` — a CNN on 8x8x1 images (``Conv2D`` SAME,
  ``BiasAdd``, ``Relu``, ``MaxPool`` 2x2, ``Reshape``, ``MatMul``, ``Softmax``);
* ``minitf_{mlp,cnn}_input.npy`` and ``minitf_{mlp,cnn}_output.npy`` — a batch
  fed to ``x:0`` and what minitf computed for ``probs:0``.

``tests/test_tf_graph_interop.py`` freezes the same models again
(:func:`frozen_graph_def`) and checks that every node equals the checked-in
one, so a change to minitf's GraphDef writer that TF might not read fails
without TensorFlow at hand.

What it printed (minitf, then TensorFlow 2.21 on the files as checked in)::

    minitf wrote minitf_mlp_frozen.pb: 15 nodes
    minitf wrote minitf_cnn_frozen.pb: 18 nodes
    TensorFlow 2.21.0 imports minitf_mlp_frozen.pb: 15 nodes, probs:0 (None, 3), max |TF - minitf| = 2.98e-08
    TensorFlow 2.21.0 imports minitf_cnn_frozen.pb: 18 nodes, probs:0 (None, 3), max |TF - minitf| = 4.47e-07
"""

import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("mlp", "cnn")


def path(name):
    return os.path.join(HERE, name)


# ---- the models (built with minitf) --------------------------------------------------------------
def mlp(tf, rng):
    """x[?,4] -> relu(x w1 + b1) -> softmax(h w2 + b2), TF1 style."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w1 = tf.Variable(rng.randn(4, 8).astype(np.float32), name="w1")
    b1 = tf.Variable(rng.randn(8).astype(np.float32), name="b1")
    w2 = tf.Variable(rng.randn(8, 3).astype(np.float32), name="w2")
    b2 = tf.Variable(rng.randn(3).astype(np.float32), name="b2")
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
    return x, tf.nn.softmax(tf.matmul(hidden, w2) + b2, name="probs")


def cnn(tf, rng):
    """x[?,8,8,1] -> conv 3x3x4 SAME -> relu -> max pool 2x2 -> dense 64x3 -> softmax."""
    x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="x")
    kernel = tf.Variable(rng.randn(3, 3, 1, 4).astype(np.float32), name="conv/kernel")
    conv_bias = tf.Variable(rng.randn(4).astype(np.float32), name="conv/bias")
    w = tf.Variable(rng.randn(64, 3).astype(np.float32) * 0.3, name="dense/w")
    b = tf.Variable(rng.randn(3).astype(np.float32), name="dense/b")
    conv = tf.nn.conv2d(x, kernel, strides=[1, 1, 1, 1], padding="SAME")
    hidden = tf.nn.relu(tf.nn.bias_add(conv, conv_bias))
    pooled = tf.nn.max_pool(hidden, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    flat = tf.reshape(pooled, [-1, 64])
    return x, tf.nn.softmax(tf.nn.bias_add(tf.matmul(flat, w), b), name="probs")


def batch(name):
    """The input batch of model ``name`` (seeded)."""
    rng = np.random.RandomState(1)
    shape = (5, 4) if name == "mlp" else (2, 8, 8, 1)
    return rng.randn(*shape).astype(np.float32)


def frozen_graph_def(name, input_batch=None):
    """Builds model ``name`` in minitf and freezes it.

    Returns:
        ``(frozen GraphDef, probs for input_batch or None)``.
    """
    import minitf as tf
    rng = np.random.RandomState(len(name))
    with tf.Graph().as_default() as graph:
        x, probs = globals()[name](tf, rng)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs"])
            output = None if input_batch is None else sess.run(probs, {x: input_batch})
    return frozen, output


def write_files():
    for name in MODELS:
        frozen, output = frozen_graph_def(name, batch(name))
        with open(path("minitf_%s_frozen.pb" % name), "wb") as f:
            f.write(frozen.SerializeToString(deterministic=True))
        np.save(path("minitf_%s_input.npy" % name), batch(name))
        np.save(path("minitf_%s_output.npy" % name), output)
        print("minitf wrote minitf_%s_frozen.pb: %d nodes" % (name, len(frozen.node)))


# ---- the check (run with TensorFlow) ----------------------------------------------------------
def check_with_tensorflow():
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    for name in MODELS:
        with open(path("minitf_%s_frozen.pb" % name), "rb") as f:
            graph_def = tf1.GraphDef.FromString(f.read())
        with tf1.Graph().as_default():
            (probs,) = tf1.import_graph_def(graph_def, return_elements=["probs:0"], name="")
            with tf1.Session() as sess:
                got = sess.run(probs, {"x:0": np.load(path("minitf_%s_input.npy" % name))})
        expected = np.load(path("minitf_%s_output.npy" % name))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        print("TensorFlow %s imports minitf_%s_frozen.pb: %d nodes, probs:0 %s, "
              "max |TF - minitf| = %.3g" % (tf.__version__, name, len(graph_def.node),
                                            probs.shape, np.abs(got - expected).max()))


def main(argv):
    if argv[1:] == ["--check"]:
        check_with_tensorflow()
        return
    write_files()
    if len(argv) > 1:
        subprocess.run([argv[1], os.path.abspath(__file__), "--check"], check=True)


if __name__ == "__main__":
    main(sys.argv)
