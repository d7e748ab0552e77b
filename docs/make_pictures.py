"""Draws the pictures the concept pages show, with :mod:`minitf.draw`.

Run ``python docs/make_pictures.py`` (it needs Graphviz's ``dot``) after
changing :mod:`minitf.draw` or one of the programs below; it writes
``docs/pictures/<name>.svg``.  The SVG files are checked in, so the docs build
needs no Graphviz; ``tests/test_draw.py`` fails while a checked-in picture no
longer shows the nodes and boxes its program draws today.

Each picture is one small program from its concept page — and from the
course notebook that draws the same picture:

* ``pruning``: ``sess.run(hidden, feed_dict={total: 41.0})`` on the graph of
  *Graphs and sessions*: what pruning skips is grey (notebook 01);
* ``gradients``: a forward computation and the ``gradients/`` ops that
  ``tf.gradients`` added below it (*Automatic differentiation*, notebook 02);
* ``cond`` and ``while_loop``: the primitives of a ``tf.cond`` and of a
  ``tf.while_loop``, branches and frame boxed (*Control flow*, notebook 08);
* ``data_parallel``: the partitions of a data-parallel step on three CPU
  devices, Send/Recv pairs joined (*Devices*, notebook 06).
"""

import pathlib
import sys

import numpy as np

import minitf as tf
from minitf import draw

PICTURES = pathlib.Path(__file__).resolve().parent / "pictures"


def pruning():
    """Graphs and sessions: feeding ``total`` cuts ``a`` and ``b`` off; ``scaled`` is unrelated."""
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, shape=[], name="a")
        b = tf.constant(2.0, name="b")
        total = a + b
        with tf.name_scope("layer"):
            hidden = tf.add(total, 1.0)
        unrelated = tf.placeholder(tf.float32, name="unrelated")
        unrelated + 100.0
    return draw.draw_graph(graph, fetches=hidden, feed_dict={total: 41.0},
                           title="sess.run(hidden, feed_dict={total: 41.0}): grey ops do not run")


def gradients():
    """Automatic differentiation: ``y = sum(tanh(x * w))`` and its gradient with respect to x."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, shape=[3], name="x")
        w = tf.constant([1.0, -2.0, 0.5], dtype=tf.float64, name="w")
        y = tf.reduce_sum(tf.tanh(x * w), name="y")
        tf.gradients(y, [x])
    return draw.draw_graph(graph, title="tf.gradients(y, [x]) adds the boxed ops")


def cond():
    """Control flow: ``tf.cond(x > 0, square, neg)``, both branches boxed."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        tf.cond(x > 0, lambda: tf.square(x, name="square"), lambda: tf.negative(x, name="neg"),
                name="cond")
    return draw.draw_graph(graph, show_shapes=False, title="y = tf.cond(x > 0, square, neg)")


def while_loop():
    """Control flow: a loop summing squares, ``i < n``; its frame boxed."""
    graph = tf.Graph()
    with graph.as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * i),
                      (tf.constant(0), tf.constant(0)), name="loop")
    return draw.draw_graph(graph, show_shapes=False,
                           title="i, total = tf.while_loop(i < n, (i + 1, s + i * i), (0, 0))")


def data_parallel_partitions():
    """Devices: two replicas on /cpu:1 and /cpu:2, the parameters on /cpu:0 (notebook 06)."""
    rng = np.random.RandomState(0)
    batch = rng.randint(-3, 4, size=(8, 5)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, batch.shape, name="x")
        with tf.device("/cpu:0"):
            w = tf.Variable(rng.randint(-3, 4, size=(5, 3)).astype(np.float32), name="w")
            b = tf.Variable(np.array([1.0, -1.0, 0.5], np.float32), name="b")
            shards = tf.split(x, 2, axis=0, name="shards")
        predictions, losses = [], []
        for i, (worker, shard) in enumerate(zip(["/cpu:1", "/cpu:2"], shards)):
            with tf.device(worker), tf.name_scope("replica_%d" % i):
                y = tf.nn.relu(tf.matmul(shard, w) + b)
                predictions.append(y)
                losses.append(tf.reduce_sum(y * y))
        with tf.device("/cpu:0"):
            fetches = (tf.concat(predictions, axis=0), tf.add_n(losses))
    config = tf.ConfigProto(device_count={"CPU": 3}, device_processes=False)
    with tf.Session(graph=graph, config=config) as sess:
        return sess.partition_graphs(fetches, {x: batch})


def data_parallel():
    return draw.draw_graph(data_parallel_partitions(), show_shapes=False,
                           title="data parallelism: two replicas")


# Each picture (docs/pictures/<name>.svg) and the function drawing it.
DRAWINGS = {"pruning": pruning, "gradients": gradients, "cond": cond,
            "while_loop": while_loop, "data_parallel": data_parallel}


def main(names=None):
    draw.require_dot()
    PICTURES.mkdir(exist_ok=True)
    for name in names or DRAWINGS:
        path = PICTURES / (name + ".svg")
        path.write_text(DRAWINGS[name]().pipe(format="svg").decode())
        print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1:])
