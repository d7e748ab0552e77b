"""Train a recurrent network whose time loop is a ``tf.while_loop`` — TF1's dynamic RNN, by hand.

The task is synthetic: each example is a sequence of ``--seq-len`` numbers in
[-1, 1] and the target is their mean.  An Elman RNN reads one number per step::

    h_t = tanh(x_t U + h_{t-1} W + b)        y = h_T V + c

The time loop is *in the graph*: the sequence is unstacked into a
``tf.TensorArray``, a ``tf.while_loop`` steps through it (the loop bound is a
tensor, so any length works at run time), and ``tf.gradients`` builds the
backward loop that runs the steps in reverse, popping the hidden states the
forward loop saved (back-propagation through time).  Gradient descent then
fits the weights; the loss on a held-out batch falls.

Run it::

    .venv/bin/python examples/rnn_while_loop.py
    .venv/bin/python examples/rnn_while_loop.py --steps 300 --seq-len 12 --hidden 16
"""

import argparse

import numpy as np

import minitf as tf


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps (default 300)")
    parser.add_argument("--seq-len", type=int, default=8, help="sequence length (default 8)")
    parser.add_argument("--hidden", type=int, default=8, help="hidden units (default 8)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=50)
    return parser.parse_args(argv)


def make_batch(rng, batch_size, seq_len):
    """Sequences of shape [batch, time, 1] and their means, shape [batch, 1]."""
    x = rng.uniform(-1.0, 1.0, size=(batch_size, seq_len, 1)).astype(np.float32)
    return x, x.mean(axis=1)


def rnn(inputs, hidden):
    """The RNN's prediction for ``inputs`` ([batch, time, 1]), its time loop a while_loop."""
    with tf.variable_scope("rnn"):
        u = tf.get_variable("U", [1, hidden], initializer=tf.glorot_uniform_initializer())
        w = tf.get_variable("W", [hidden, hidden], initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("b", [hidden], initializer=tf.zeros_initializer())
        v = tf.get_variable("V", [hidden, 1], initializer=tf.glorot_uniform_initializer())
        c = tf.get_variable("c", [1], initializer=tf.zeros_initializer())
    time_major = tf.transpose(inputs, [1, 0, 2])           # [time, batch, 1]
    steps = tf.shape(time_major)[0]
    sequence = tf.TensorArray(tf.float32, size=steps).unstack(time_major)

    def step(t, h):
        x_t = sequence.read(t)                              # [batch, 1]
        return t + 1, tf.tanh(tf.matmul(x_t, u) + tf.matmul(h, w) + b)

    h0 = tf.zeros(tf.stack([tf.shape(inputs)[0], hidden]))
    _, h_last = tf.while_loop(lambda t, h: t < steps, step, (0, h0),
                              shape_invariants=(tf.TensorShape([]),
                                                tf.TensorShape([None, hidden])))
    return tf.matmul(h_last, v) + c


def main(argv=None):
    args = parse_args(argv)
    rng = np.random.RandomState(args.seed)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        inputs = tf.placeholder(tf.float32, [None, None, 1], name="inputs")
        targets = tf.placeholder(tf.float32, [None, 1], name="targets")
        loss = tf.reduce_mean(tf.square(rnn(inputs, args.hidden) - targets))
        train_op = tf.train.GradientDescentOptimizer(args.learning_rate).minimize(loss)
        init = tf.global_variables_initializer()
    held_out = make_batch(rng, 256, args.seq_len)
    losses = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        losses.append(float(sess.run(loss, {inputs: held_out[0], targets: held_out[1]})))
        print("step %4d  held-out loss %.5f" % (0, losses[0]))
        for step in range(1, args.steps + 1):
            x, y = make_batch(rng, args.batch_size, args.seq_len)
            sess.run(train_op, {inputs: x, targets: y})
            if step % args.log_every == 0 or step == args.steps:
                losses.append(float(sess.run(loss, {inputs: held_out[0],
                                                    targets: held_out[1]})))
                print("step %4d  held-out loss %.5f" % (step, losses[-1]))
    print("Loss went from %.5f to %.5f" % (losses[0], losses[-1]))
    return losses


if __name__ == "__main__":
    main()
