"""The GPU kernels, for minitf's OpenCL device; registered only where pyopencl exists.

They use only the OpenCL plugin's public module for kernel authors,
:mod:`minitf_opencl_gpu.api` (it ships with minitf and imports no pyopencl):
allocate the output, get the kernel of ``swish.cl`` (built once per device
and cached), launch it on the device's in-order queue — and return without
waiting.
"""

import importlib.resources

import numpy as np
from minitf_opencl_gpu import api

SOURCE = "minitf_swish.swish"  # the name swish.cl is known by
api.register_source(SOURCE, importlib.resources.files(__package__).joinpath("swish.cl")
                    .read_text())


def available():
    """True when pyopencl can be imported (whether a GPU exists is the device plugin's call)."""
    return api.available()


def swish_gpu(ctx, x, beta):
    y = api.allocate(ctx, x.shape, x.dtype)
    if x.size:
        api.launch(ctx, api.kernel(ctx, SOURCE, "swish", x.dtype), (x.size,),
                   x, y, np.float32(beta), np.int32(x.size))
    return y


def swish_grad_gpu(ctx, dy, x, beta):
    dx = api.allocate(ctx, x.shape, x.dtype)
    if x.size:
        api.launch(ctx, api.kernel(ctx, SOURCE, "swish_grad", x.dtype), (x.size,),
                   dy, x, dx, np.float32(beta), np.int32(x.size))
    return dx
