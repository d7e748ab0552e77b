"""Small datasets for the course: Iris (shipped), MNIST (IDX files, cached downloads) and
synthetic MNIST-shaped digits (drawn on the spot, for when MNIST is not at hand).

Each loader returns NumPy arrays, ready to feed into a placeholder or a
``tf.data.Dataset``.  Nothing is read or downloaded at import time.
"""

from minitf.datasets.idx import read_idx, write_idx
from minitf.datasets.iris import load_iris
from minitf.datasets.mnist import load_mnist
from minitf.datasets.splits import train_test_split
from minitf.datasets.synthetic_digits import load_synthetic_digits, render_digits

__all__ = ["load_iris", "load_mnist", "load_synthetic_digits", "read_idx", "render_digits",
           "train_test_split", "write_idx"]
