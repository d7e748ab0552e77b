"""Solutions to the exercises of notebook 04, *Training an MLP on MNIST*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 4.1
# Exercise 4.1: the confusion matrix.
def confusion_matrix(labels, predictions, num_classes=10):
    """``counts[i, j]``: how many examples of class ``i`` were predicted as ``j`` (int64)."""
    counts = np.zeros((num_classes, num_classes), dtype=np.int64)
    # BEGIN SOLUTION one count per (label, prediction) pair; np.add.at adds repeated indices
    np.add.at(counts, (labels, predictions), 1)
    # END SOLUTION
    return counts

# %% Exercise 4.2
# Exercise 4.2: softmax cross-entropy from simpler ops.
def mean_cross_entropy(logits, labels):
    """The mean over the batch of ``-log softmax(logits)[label]``, built from tf ops.

    ``logits`` is float ``[batch, classes]`` (classes known statically), ``labels``
    int64 ``[batch]``.  Large logits (500) must not overflow: use
    ``tf.reduce_logsumexp``, which subtracts the maximum first.
    """
    # BEGIN SOLUTION log softmax = logits - logsumexp(logits); pick each row's label with one_hot
    log_probabilities = logits - tf.reduce_logsumexp(logits, axis=1, keepdims=True)
    picked = tf.reduce_sum(log_probabilities * tf.one_hot(labels, int(logits.shape[1]),
                                                          dtype=logits.dtype), axis=1)
    return -tf.reduce_mean(picked)
    # END SOLUTION
