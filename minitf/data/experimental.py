"""``tf.data.experimental``: the transformations TF1 kept outside ``Dataset``.

Each is a function returning a *transformation* — a function from a dataset
to a dataset — applied with :meth:`Dataset.apply
<minitf.data.dataset.Dataset.apply>`::

    rows = batches.apply(tf.data.experimental.unbatch())
    epochs = dataset.apply(tf.data.experimental.shuffle_and_repeat(1000, count=10))

Mirrors ``tensorflow/python/data/experimental/ops/`` (TF 1.x).
"""

from minitf.data.dataset import AUTOTUNE

__all__ = ["AUTOTUNE", "shuffle_and_repeat", "unbatch"]


def unbatch():
    """Splits each element into its rows (``tf.data.experimental.unbatch``):
    the inverse of ``batch``.  Every component must have the same first
    dimension, checked at run time."""
    return lambda dataset: dataset.unbatch()


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed).repeat(count)``, each epoch in a new order
    (``tf.data.experimental.shuffle_and_repeat``; TF fuses the two ops)."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)
