"""Solutions to the exercises of notebook 03, *Linear regression with an optimizer*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 3.1
# Exercise 3.1: fit a parabola on mini-batches fed through placeholders.
def fit_parabola(x_data, y_data, steps=400, batch_size=20, seed=0):
    """Fits ``y = a x² + b x + c`` by mini-batch gradient descent; returns ``[a, b, c]``.

    Each step feeds ``batch_size`` examples drawn with ``rng`` to the placeholders
    ``x`` and ``y``.
    """
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.placeholder(tf.float32, [None], name="y")
        a, b, c = (tf.Variable(0.0, name=name) for name in "abc")
        # BEGIN SOLUTION the prediction, its mean squared error, a train op; then run it on batches
        prediction = a * x * x + b * x + c
        loss = tf.reduce_mean(tf.square(prediction - y))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                batch = rng.randint(0, len(x_data), batch_size)
                sess.run(train, {x: x_data[batch], y: y_data[batch]})
            return sess.run([a, b, c])
        # END SOLUTION

# %% Exercise 3.2
# Exercise 3.2: train without growing the graph.
def train_without_growing(steps):
    """Minimizes ``(w - 3)²`` from ``w = 0`` by ``steps`` steps of gradient descent (rate 0.1).

    Returns ``(ops before the loop, ops after the loop, final w)``: the graph must
    not grow while training.
    """
    with tf.Graph().as_default() as graph:
        w = tf.Variable(0.0, name="w")
        # BEGIN SOLUTION build the loss and the train op here, once, before the loop
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w - 3.0))
        # END SOLUTION
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = len(graph.get_operations())
            for _ in range(steps):
                # BEGIN SOLUTION one step: run what you built above, and build nothing here
                sess.run(train)
                # END SOLUTION
            return before, len(graph.get_operations()), sess.run(w)
