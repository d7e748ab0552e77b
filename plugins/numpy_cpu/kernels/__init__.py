"""CPU kernels, one module per op family; importing them fills ``KERNELS``."""

from minitf_numpy_cpu.kernels import (  # noqa: F401 - fill the table
    array, io, linalg, math, nn, random, reduction, sendrecv, state)
from minitf_numpy_cpu.kernels import data_flow, dataset, iterator, parsing  # noqa: F401
from minitf_numpy_cpu.kernels import readers, sparse  # noqa: F401 - file readers, SparseToDense
from minitf_numpy_cpu.kernels import accumulators  # noqa: F401 - gradient accumulators
from minitf_numpy_cpu.kernels import control_flow, tensor_array  # noqa: F401 - tf.cond, loops
from minitf_numpy_cpu.kernels import training  # noqa: F401 - optimizers' (Sparse)Apply* ops
from minitf_numpy_cpu.kernels import scatter  # noqa: F401 - ScatterAdd/Sub/Update
from minitf_numpy_cpu.kernels import summary  # noqa: F401 - tf.summary's ops
from minitf_numpy_cpu.kernels import logging  # noqa: F401 - Print, Assert
from minitf_numpy_cpu.kernels import file_io, image, strings  # noqa: F401 - files, tf.image, tf.strings
from minitf_numpy_cpu.kernels import script, unique  # noqa: F401 - tf.py_func, tf.unique
from minitf_numpy_cpu.kernels import candidate_sampling  # noqa: F401 - tf.nn's samplers
from minitf_numpy_cpu.kernels.table import KERNELS

__all__ = ["KERNELS"]
