"""GPU kernels, one module per op family; importing them fills ``KERNELS``."""

from minitf_opencl_gpu.kernels import (  # noqa: F401 - fill the table
    array, control_flow, conv, elementwise, fusion, linalg, nn, random, reduction, state,
    training)
from minitf_opencl_gpu.kernels.table import KERNELS, expand_groups

__all__ = ["KERNELS", "expand_groups"]
