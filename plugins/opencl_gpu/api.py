"""The OpenCL plugin's public surface for kernel authors: ``minitf_opencl_gpu.api``.

A third-party op package that adds a GPU kernel for minitf's OpenCL device
(``/gpu:0``) imports this module and nothing else of the plugin: the
device's classes, its buffer pool and its program cache are private and may
change.  It is what ``torch.utils.cpp_extension`` and TF's
``OpKernelContext::allocate_output`` are to a custom kernel.

A kernel is a function ``kernel(ctx, *inputs, **attrs)`` registered for
device type ``"GPU"``; on this device a tensor is a :class:`DeviceArray`
(``shape``, ``dtype``, ``size``).  A kernel allocates its output, enqueues
its work on the device's in-order queue and returns without waiting::

    from minitf_opencl_gpu import api

    api.register_source("my_ops", my_ops_cl_text)          # once, at import

    def scale_gpu(ctx, x, factor):
        y = api.allocate(ctx, x.shape, x.dtype)
        if x.size:
            kernel = api.kernel(ctx, "my_ops", "scale", x.dtype)
            api.launch(ctx, kernel, (x.size,), x, y, np.float32(factor), np.int32(x.size))
        return y

Launching through :func:`launch` matters beyond convenience: the device
compiles a partition into a replay of its launches
(:mod:`~minitf_opencl_gpu.compiled_step`), and only launches made through
it are recorded — a kernel that enqueued its work itself would silently be
skipped by the replay.

Importing this module does not import ``pyopencl``; :func:`available` says
whether it can be.  Its surface is versioned by :data:`API_VERSION`.
"""

import importlib.util

from minitf_opencl_gpu import programs
from minitf_opencl_gpu.memory import DeviceArray

#: The version of this surface: a name removed or changed raises it.
API_VERSION = 1

__all__ = ["API_VERSION", "DeviceArray", "allocate", "available", "buffer", "kernel",
           "launch", "queue", "register_source"]


def available():
    """True when ``pyopencl`` can be imported (whether an OpenCL device exists
    is the plugin's call: ``python -m minitf plugins`` says)."""
    return importlib.util.find_spec("pyopencl") is not None


def register_source(name, text):
    """Makes ``text`` (OpenCL C) the program source called ``name``; call it
    once, when the package is imported.  Re-registering the same text is
    harmless.

    Raises:
        KeyError: if ``name`` is already registered with another text (pick a
            name prefixed by your package's).
    """
    programs.register_source(name, text)


def allocate(ctx, shape, dtype):
    """A new, uninitialised :class:`DeviceArray` of ``shape`` and ``dtype`` on
    the kernel's device (from the device's buffer pool: usually no driver call)."""
    return ctx.device.allocate(shape, dtype)


def buffer(tensor):
    """The ``pyopencl.Buffer`` holding ``tensor`` (None for an empty tensor)."""
    return tensor.data


def queue(ctx):
    """The device's in-order ``pyopencl.CommandQueue``: work enqueued on it
    runs after everything the step enqueued before."""
    return ctx.device.queue


def kernel(ctx, source_name, kernel_name, dtype, **defines):
    """The ``__kernel`` ``kernel_name`` of source ``source_name``, built for the
    kernel's device and cached.

    The program is built with ``-D T=<the OpenCL type of dtype>`` (``float``
    for float32, ``double`` for float64, ``int`` ...) plus ``defines``
    (``-D NAME=value``), so one source serves every dtype; once per (device,
    source, dtype, defines) in a process.

    Raises:
        errors.InternalError: with the compiler's build log, if the source
            does not compile.
        TypeError: for a dtype the OpenCL device has no C type for.
    """
    return programs.get_kernel(ctx.device.target, source_name, kernel_name, dtype, **defines)


def launch(ctx, cl_kernel, global_size, *args, local_size=None):
    """Enqueues ``cl_kernel(*args)`` over ``global_size`` work items; does not wait.

    ``args`` are :class:`DeviceArray` s (passed as their buffers) and NumPy
    scalars of the exact C types the kernel declares (``np.float32(beta)``,
    ``np.int32(n)``: a Python ``float`` has no fixed width).  A kernel object
    is shared by every thread of the process: :func:`launch` sets its
    arguments and enqueues it in one critical section.
    """
    values = [buffer(arg) if isinstance(arg, DeviceArray) else arg for arg in args]
    return programs.launch(queue(ctx), cl_kernel, tuple(global_size), values, local_size)
