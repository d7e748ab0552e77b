"""In-graph replication: one client, one tower per worker, gradients averaged.

The other way TF1 spreads training over a cluster (the TF paper, §4.4): instead
of every worker running its own client (``examples/between_graph_sgd.py``),
*one* client builds one graph holding a copy of the model — a **tower** — per
worker task, each fed its own share of the batch.  The towers' gradients are
averaged and applied once to the variables on ``/job:ps``, so every step is
synchronous by construction::

    .venv/bin/python -m minitf.cluster --ps 1 --workers 2 -- \\
        .venv/bin/python examples/in_graph_replication.py --steps 200

Every task runs this script (``TF_CONFIG`` tells it which it is): the ps and
the workers other than 0 only serve; worker 0 is the client.  The model is a
linear regression ``y = x·w + b`` on a fixed synthetic data set, so the
learned ``w`` and ``b`` can be checked against the true ones.
"""

import argparse

import numpy as np

import minitf as tf
from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config

FEATURES = 4
TRUE_W = np.array([[1.0], [-2.0], [0.5], [3.0]], dtype=np.float32)
TRUE_B = 0.25


def build_towers(num_workers, learning_rate):
    """The variables on the ps, a tower per worker, the averaged update."""
    with tf.device("/job:ps/task:0"):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.zeros([FEATURES, 1]), name="w")
        b = tf.Variable(0.0, name="b")
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    inputs, tower_grads, losses = [], [], []
    for i in range(num_workers):
        with tf.device("/job:worker/task:%d" % i), tf.name_scope("tower_%d" % i):
            x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            tower_grads.append(optimizer.compute_gradients(loss, [w, b]))
            inputs.append((x, y))
            losses.append(loss)
    with tf.device("/job:ps/task:0"):
        averaged = [(tf.add_n([grads[v][0] for grads in tower_grads]) / num_workers, var)
                    for v, var in enumerate([w, b])]
        train_op = optimizer.apply_gradients(averaged, global_step=global_step)
        loss = tf.add_n(losses) / num_workers
    return {"inputs": inputs, "train_op": train_op, "loss": loss, "w": w, "b": b}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64, help="per tower")
    parser.add_argument("--learning-rate", type=float, default=0.1)
    args = parser.parse_args()

    resolver = TFConfigClusterResolver()
    server = server_from_tf_config()
    if resolver.task_type != "worker" or resolver.task_id != 0:
        server.join()  # only serve: worker 0's client runs their towers
    num_workers = resolver.cluster_spec().num_tasks("worker")
    model = build_towers(num_workers, args.learning_rate)

    rng = np.random.default_rng(0)
    x_all = rng.normal(size=(4096, FEATURES)).astype(np.float32)
    y_all = x_all @ TRUE_W + TRUE_B + rng.normal(scale=0.01, size=(4096, 1)).astype(np.float32)
    with tf.Session(server.target) as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(args.steps):
            # Each tower gets its own share of the examples, as each GPU or
            # machine would read its own part of the input.
            index = rng.choice(len(x_all), size=(num_workers, args.batch_size))
            feed = {}
            for (x, y), rows in zip(model["inputs"], index):
                feed[x], feed[y] = x_all[rows], y_all[rows]
            _, loss = sess.run([model["train_op"], model["loss"]], feed)
            if step % 50 == 0:
                print("step %d: loss %.6f" % (step, loss), flush=True)
        w, b = sess.run([model["w"], model["b"]])
    print("towers %d, final loss %.6f, |w - true w| %.4f, b %.4f (true %.2f)"
          % (num_workers, loss, np.abs(w - TRUE_W).max(), b, TRUE_B), flush=True)


if __name__ == "__main__":
    main()
