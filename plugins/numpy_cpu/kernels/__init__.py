"""CPU kernels, one module per op family; importing them fills ``KERNELS``."""

from minitf_numpy_cpu.kernels import (  # noqa: F401 - fill the table
    array, io, linalg, math, nn, random, reduction, sendrecv, state)
from minitf_numpy_cpu.kernels import data_flow, dataset  # noqa: F401 - queues, tf.data
from minitf_numpy_cpu.kernels import control_flow  # noqa: F401 - Switch, Merge, Enter, ...
from minitf_numpy_cpu.kernels import training  # noqa: F401 - optimizers' Apply* ops
from minitf_numpy_cpu.kernels.table import KERNELS

__all__ = ["KERNELS"]
