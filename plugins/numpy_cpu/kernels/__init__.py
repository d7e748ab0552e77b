"""CPU kernels, one module per op family; importing them fills ``KERNELS``."""

from minitf_numpy_cpu.kernels import array, math, state  # noqa: F401 - fill the table
from minitf_numpy_cpu.kernels.table import KERNELS

__all__ = ["KERNELS"]
