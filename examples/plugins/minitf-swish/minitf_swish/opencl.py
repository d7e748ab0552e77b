"""The GPU kernels, for minitf's OpenCL device; registered only where pyopencl exists.

On the OpenCL device a tensor is a device buffer: ``ctx.device.allocate(shape,
dtype)`` makes one, its ``.data`` is the ``pyopencl.Buffer`` (None when
empty), and ``ctx.device.queue`` is the device's in-order queue — so a kernel
enqueues its work and returns without waiting.
"""

import importlib.resources
import importlib.util
import threading

import numpy as np

_lock = threading.Lock()
_programs = {}  # OpenCL context -> the built program of swish.cl


def available():
    """True when pyopencl can be imported (whether a GPU exists is the device plugin's call)."""
    return importlib.util.find_spec("pyopencl") is not None


def _kernel(device, name):
    import pyopencl as cl
    context = device.queue.context
    with _lock:
        if context not in _programs:
            source = importlib.resources.files(__package__).joinpath("swish.cl").read_text()
            _programs[context] = cl.Program(context, source).build()
    return cl.Kernel(_programs[context], name)  # a new one per call: kernels are not thread-safe


def swish_gpu(ctx, x, beta):
    y = ctx.device.allocate(x.shape, x.dtype)
    if x.size:
        _kernel(ctx.device, "swish")(ctx.device.queue, (x.size,), None, x.data, y.data,
                                     np.float32(beta), np.int32(x.size))
    return y


def swish_grad_gpu(ctx, dy, x, beta):
    dx = ctx.device.allocate(x.shape, x.dtype)
    if x.size:
        _kernel(ctx.device, "swish_grad")(ctx.device.queue, (x.size,), None, dy.data, x.data,
                                          dx.data, np.float32(beta), np.int32(x.size))
    return dx
