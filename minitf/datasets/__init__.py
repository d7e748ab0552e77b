"""Small datasets for the course: Iris (shipped) and MNIST (IDX files, cached downloads).

Each loader returns NumPy arrays, ready to feed into a placeholder or a
``tf.data.Dataset``.  Nothing is read or downloaded at import time.
"""

from minitf.datasets.idx import read_idx, write_idx
from minitf.datasets.iris import load_iris
from minitf.datasets.mnist import load_mnist
from minitf.datasets.splits import train_test_split

__all__ = ["load_iris", "load_mnist", "read_idx", "train_test_split", "write_idx"]
