"""CPU kernels, one module per op family; importing them fills ``KERNELS``."""

from minitf_numpy_cpu.kernels import (  # noqa: F401 - fill the table
    array, math, nn, random, sendrecv, state)
from minitf_numpy_cpu.kernels.table import KERNELS

__all__ = ["KERNELS"]
