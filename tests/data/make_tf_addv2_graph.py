"""Writes the TF 2 graph with ``AddV2`` that tests/test_tf_graph_interop.py reads,
*with TensorFlow*.

TensorFlow 2 writes ``AddV2`` (TF1: ``Add``) for every ``a + b`` and
``tf.add``, its own gradients included: the gradient of ``reduce_mean`` adds
int32 shape values with it.  Most graphs TF 2 writes therefore hold it.

Run once, from the repository root, with a Python that has TensorFlow (2.x,
used through ``tf.compat.v1`` in graph mode)::

    /path/to/tf-venv/bin/python tests/data/make_tf_addv2_graph.py

It writes, into ``tests/data/``:

* ``tf_addv2_frozen.pb`` — a linear model ``prediction = tf.add(x @ w, b)``,
  its loss ``reduce_mean(square(prediction - y))`` and the loss's gradients
  ``grad_w`` and ``grad_b`` built by ``tf.gradients``, frozen with TF's
  ``convert_variables_to_constants``;
* ``tf_addv2_inputs.npz`` — the batch fed to ``x:0`` and ``y:0``;
* ``tf_addv2_outputs.npz`` — what TF computed for ``prediction:0``,
  ``loss:0``, ``grad_w:0`` and ``grad_b:0``, keyed by those op names.

Weights and data come from NumPy (seeded), so the files are the same on every
run.  What it printed (TensorFlow 2.21)::

    44 nodes frozen (AddV2 BroadcastGradientArgs Cast Const Fill FloorMod GatherV2 Identity
    MatMul Mean Mul Placeholder Prod RealDiv Reshape Shape Square Sub Sum Tile)
    AddV2 nodes: prediction (float32), gradients/loss_grad/add (int32)
"""

import os

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUTS = ["prediction", "loss", "grad_w", "grad_b"]


def path(name):
    return os.path.join(HERE, name)


def linear_model_and_gradients(rng):
    """The model, its loss and the loss's gradients; returns the placeholders."""
    x = tf1.placeholder(tf.float32, [None, 3], name="x")
    y = tf1.placeholder(tf.float32, [None, 1], name="y")
    w = tf1.Variable(rng.randn(3, 1).astype(np.float32), name="w")
    b = tf1.Variable(rng.randn(1).astype(np.float32), name="b")
    prediction = tf.add(tf1.matmul(x, w), b, name="prediction")
    loss = tf1.reduce_mean(tf1.square(prediction - y), name="loss")
    grad_w, grad_b = tf1.gradients(loss, [w, b])
    tf1.identity(grad_w, name="grad_w")
    tf1.identity(grad_b, name="grad_b")
    return x, y


def main():
    tf1.disable_eager_execution()
    rng = np.random.RandomState(2)
    with tf1.Graph().as_default() as graph:
        x, y = linear_model_and_gradients(rng)
        feeds = {x: rng.randn(4, 3).astype(np.float32), y: rng.randn(4, 1).astype(np.float32)}
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), OUTPUTS)
            outputs = sess.run([name + ":0" for name in OUTPUTS], feeds)
    with open(path("tf_addv2_frozen.pb"), "wb") as f:
        f.write(frozen.SerializeToString(deterministic=True))
    np.savez(path("tf_addv2_inputs.npz"), x=feeds[x], y=feeds[y])
    np.savez(path("tf_addv2_outputs.npz"), **dict(zip(OUTPUTS, outputs)))
    add_v2 = [(n.name, tf.as_dtype(n.attr["T"].type).name) for n in frozen.node
              if n.op == "AddV2"]
    print("%d nodes frozen (%s)" % (len(frozen.node), " ".join(sorted({n.op for n in frozen.node}))))
    print("AddV2 nodes: %s" % ", ".join("%s (%s)" % pair for pair in add_v2))


if __name__ == "__main__":
    main()
