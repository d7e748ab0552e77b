"""Solutions to the exercises of notebook 05, *Estimators: Iris with DNNClassifier*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 5.1
# Exercise 5.1: an input function made of tf.data.
def make_input_fn(x, y, feature_names, batch_size):
    """An Estimator input function: batches of ``({name: column of x}, y)``, in order, once."""
    def input_fn():
        # BEGIN SOLUTION a dict of columns, Dataset.from_tensor_slices((dict, y)), batch, get_next()
        features = {name: x[:, i] for i, name in enumerate(feature_names)}
        dataset = tf.data.Dataset.from_tensor_slices((features, y)).batch(batch_size)
        return dataset.make_one_shot_iterator().get_next()
        # END SOLUTION
    return input_fn

# %% Exercise 5.2
# Exercise 5.2: a hook that stops training when the loss is low enough.
class StopWhenBelow(tf.train.SessionRunHook):
    """Requests a stop after the first ``run`` whose loss is below ``threshold``.

    Like ``LossHistory``, it finds the loss in the ``tf.GraphKeys.LOSSES``
    collection; ``self.runs`` counts the runs it saw.
    """

    def __init__(self, threshold):
        self.threshold = threshold
        self.runs = 0

    def begin(self):
        (self.loss,) = tf.get_collection(tf.GraphKeys.LOSSES)

    def before_run(self, run_context):
        # BEGIN SOLUTION ask for the loss to be fetched in the same run
        return tf.train.SessionRunArgs(self.loss)
        # END SOLUTION

    def after_run(self, run_context, run_values):
        self.runs += 1
        # BEGIN SOLUTION if the loss fetched (run_values.results) is below the threshold, request a stop
        if run_values.results < self.threshold:
            run_context.request_stop()
        # END SOLUTION
