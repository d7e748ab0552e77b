"""Solutions to the exercises of notebook 09, *Input pipelines, layers and checkpoints*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 9.1
# Exercise 9.1: a tf.data pipeline for two epochs.
def two_epochs(x, y, batch_size, seed):
    """A ``tf.data.Dataset`` of ``(x, y)`` batches: each epoch shuffles all the examples
    (``shuffle`` with a buffer as large as the data and ``seed``), in batches of
    ``batch_size``, and there are two epochs."""
    # BEGIN SOLUTION from_tensor_slices, shuffle, batch, repeat
    return (tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(len(x), seed=seed)
            .batch(batch_size)
            .repeat(2))
    # END SOLUTION

# %% Exercise 9.2
# Exercise 9.2: save a variable, restore it in a new graph.
def save_and_restore(value, directory):
    """Saves a variable named ``"weights"`` holding ``value`` to a checkpoint in
    ``directory``, then restores it into a *new* graph and session; returns the restored
    value."""
    with tf.Graph().as_default():
        weights = tf.Variable(value, name="weights")
        # BEGIN SOLUTION a tf.train.Saver; initialize, then saver.save(sess, path)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(weights.initializer)
            path = saver.save(sess, directory + "/model.ckpt")
        # END SOLUTION
    with tf.Graph().as_default():
        weights = tf.Variable(np.zeros_like(value), name="weights")
        # BEGIN SOLUTION a new Saver restores into this graph's "weights" (no initializer run)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            return sess.run(weights)
        # END SOLUTION
