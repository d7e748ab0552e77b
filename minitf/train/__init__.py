"""``tf.train``: training and keeping models — optimizers, checkpoints, queues.

Each concept lives in its own module; this package re-exports the TF1 names.
"""
