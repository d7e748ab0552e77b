"""Writes the GraphDefs, arrays and checkpoint that tests/test_tf_graph_interop.py
reads, *with TensorFlow*, so that the tests check minitf against TF's own files.

Run once, from the repository root, with a Python that has TensorFlow (2.x,
used through ``tf.compat.v1`` in graph mode)::

    /path/to/tf-venv/bin/python tests/data/make_tf_frozen_graphs.py

It writes, into ``tests/data/``:

* ``tf_mlp_frozen.pb`` — a 4-8-3 MLP (``MatMul``, ``BiasAdd``, ``Relu``,
  ``Softmax``) with *resource* variables (TF 2's default: ``VarHandleOp`` and
  ``ReadVariableOp``), frozen with TF's ``convert_variables_to_constants``;
  ``tf_mlp_graph.pb`` is the same graph before freezing and
  ``tf_mlp_variables.npz`` the values TF's session gave its variables, keyed
  by the tensor that ``convert_variables_to_constants`` fetched;
* ``tf_cnn_frozen.pb`` — a CNN on 8x8x1 images (``Conv2D`` SAME, ``BiasAdd``,
  ``Relu``, ``MaxPool`` 2x2, ``Reshape``, ``MatMul``, ``Softmax``) with
  TF1's *ref* variables (``VariableV2``), frozen the same way;
* ``tf_{mlp,cnn}_input.npy`` and ``tf_{mlp,cnn}_output.npy`` — a batch fed to
  ``x:0`` and what TF computed for ``probs:0``;
* ``tf_saver_model.ckpt.meta`` / ``.index`` / ``.data-00000-of-00001`` — a
  linear model and its loss, with ``prediction`` and ``loss`` collections,
  saved by ``tf.train.Saver`` (the ``checkpoint`` state file, which holds this
  machine's absolute paths, is deleted), and ``tf_saver_variables.npz`` its
  saved variable values.

Weights come from NumPy (seeded), not from TF's random ops, so the files are
the same on every run.  The outputs only need to match to float32 rounding.
What it printed (TensorFlow 2.21)::

    mlp: 15 nodes frozen (BiasAdd Const Identity MatMul Placeholder Relu Softmax)
    cnn: 18 nodes frozen (BiasAdd Const Conv2D Identity MatMul MaxPool Placeholder Relu Reshape Softmax)
    saved tf_saver_model.ckpt
"""

import os

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def mlp(rng):
    """x[?,4] -> relu(x w1 + b1) -> softmax(h w2 + b2), resource variables."""
    x = tf1.placeholder(tf.float32, [None, 4], name="x")
    w1 = tf1.Variable(rng.randn(4, 8).astype(np.float32), name="w1", use_resource=True)
    b1 = tf1.Variable(rng.randn(8).astype(np.float32), name="b1", use_resource=True)
    w2 = tf1.Variable(rng.randn(8, 3).astype(np.float32), name="w2", use_resource=True)
    b2 = tf1.Variable(rng.randn(3).astype(np.float32), name="b2", use_resource=True)
    hidden = tf1.nn.relu(tf1.nn.bias_add(tf1.matmul(x, w1), b1), name="hidden")
    return x, tf1.nn.softmax(tf1.nn.bias_add(tf1.matmul(hidden, w2), b2), name="probs")


def cnn(rng):
    """x[?,8,8,1] -> conv 3x3x4 SAME -> relu -> max pool 2x2 -> dense 64x3 -> softmax."""
    x = tf1.placeholder(tf.float32, [None, 8, 8, 1], name="x")
    kernel = tf1.Variable(rng.randn(3, 3, 1, 4).astype(np.float32), name="conv/kernel",
                          use_resource=False)
    conv_bias = tf1.Variable(rng.randn(4).astype(np.float32), name="conv/bias",
                             use_resource=False)
    w = tf1.Variable(rng.randn(64, 3).astype(np.float32) * 0.3, name="dense/w",
                     use_resource=False)
    b = tf1.Variable(rng.randn(3).astype(np.float32), name="dense/b", use_resource=False)
    conv = tf1.nn.conv2d(x, kernel, strides=[1, 1, 1, 1], padding="SAME")
    hidden = tf1.nn.relu(tf1.nn.bias_add(conv, conv_bias))
    pooled = tf1.nn.max_pool(hidden, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    flat = tf1.reshape(pooled, [-1, 64])
    return x, tf1.nn.softmax(tf1.nn.bias_add(tf1.matmul(flat, w), b), name="probs")


def freeze(name, build, batch):
    """Builds a model, freezes it, and writes the .pb and the arrays."""
    rng = np.random.RandomState(len(name))
    with tf1.Graph().as_default() as graph:
        x, probs = build(rng)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            graph_def = graph.as_graph_def()
            frozen = tf1.graph_util.convert_variables_to_constants(sess, graph_def, ["probs"])
            output = sess.run(probs, {x: batch})
            if name == "mlp":  # what convert_variables_to_constants fetched, for the test
                fetches = [n.name + "/Read/ReadVariableOp:0" for n in graph_def.node
                           if n.op == "VarHandleOp"]
                np.savez(path("tf_mlp_variables.npz"),
                         **dict(zip(fetches, sess.run(fetches))))
                write(path("tf_mlp_graph.pb"), graph_def)
    write(path("tf_%s_frozen.pb" % name), frozen)
    np.save(path("tf_%s_input.npy" % name), batch)
    np.save(path("tf_%s_output.npy" % name), output)
    print("%s: %d nodes frozen (%s)" % (name, len(frozen.node),
                                        " ".join(sorted({n.op for n in frozen.node}))))


def write(filename, message):
    with open(filename, "wb") as f:
        f.write(message.SerializeToString(deterministic=True))


def save_model():
    """A linear model and its loss, saved with tf.train.Saver (ref variables).

    No train op: TF 2's gradients of ``reduce_mean`` hold ``AddV2``, which
    minitf did not have when these files were written (TF 2's gradients are
    checked with ``make_tf_addv2_graph.py``'s graph).
    """
    rng = np.random.RandomState(7)
    with tf1.Graph().as_default():
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        y = tf1.placeholder(tf.float32, [None, 1], name="y")
        w = tf1.Variable(rng.randn(3, 1).astype(np.float32), name="w", use_resource=False)
        b = tf1.Variable(np.zeros(1, np.float32), name="b", use_resource=False)
        prediction = tf1.nn.bias_add(tf1.matmul(x, w), b, name="prediction")
        loss = tf1.reduce_mean(tf1.square(prediction - y), name="loss")
        tf1.add_to_collection("prediction", prediction)
        tf1.add_to_collection("loss", loss)
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            prefix = saver.save(sess, path("tf_saver_model.ckpt"))
            np.savez(path("tf_saver_variables.npz"), w=sess.run(w), b=sess.run(b))
    os.remove(path("checkpoint"))
    print("saved", os.path.basename(prefix))


def main():
    tf1.disable_eager_execution()
    rng = np.random.RandomState(0)
    freeze("mlp", mlp, rng.randn(5, 4).astype(np.float32))
    freeze("cnn", cnn, rng.randn(2, 8, 8, 1).astype(np.float32))
    save_model()


if __name__ == "__main__":
    main()
