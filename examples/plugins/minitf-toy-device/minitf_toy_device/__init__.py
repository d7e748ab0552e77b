"""minitf-toy-device: an example device package adding the device type ``TOY``.

A device plugin registers a :class:`~minitf.plugin.DeviceFactory` and the
kernels its devices run.  ``TOY`` keeps its tensors in host memory, as
read-only NumPy arrays; it has its own ``MatMul`` kernel and its own
``_Send``/``_Recv`` (which every device needs: they move tensors between
devices), and reuses the CPU plugin's kernels for every other op, read from the
registry — the CPU plugin (entry point ``numpy_cpu``) is loaded before this one
(``toy``), since plugins load in name order.
"""

import os

import numpy as np

from minitf.plugin import (
    Device, DeviceFactory, hookimpl, receive_from_rendezvous, send_to_rendezvous)

DEVICE_TYPE = "TOY"
COUNT_VARIABLE = "MINITF_TOY_DEVICES"

#: How many times the TOY kernel of MatMul ran (tests read it: the op ran here).
MATMUL_CALLS = [0]


class ToyDevice(Device):
    """One TOY device: host memory, read-only NumPy arrays as buffers."""

    device_type = DEVICE_TYPE
    memory_limit_bytes = 1 << 30

    def allocate(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def from_host(self, array):
        buffer = np.array(array, copy=True)
        buffer.flags.writeable = False  # kernels must not write into their inputs
        return buffer

    def to_host(self, buffer):
        return buffer


class ToyDeviceFactory(DeviceFactory):
    device_type = DEVICE_TYPE
    priority = -10  # below the CPU's 0: TOY runs only what is pinned to it

    def count(self):
        return int(os.environ.get(COUNT_VARIABLE, "1"))

    def create(self, index, name=None, options=None):
        return ToyDevice(index, name, options)

    def describe(self, index):
        return "TOY:%d (a toy device in host memory, from minitf-toy-device)" % index


# ---- kernels of its own ---------------------------------------------------------------
def matmul(ctx, a, b, transpose_a=False, transpose_b=False):
    MATMUL_CALLS[0] += 1
    a = a.T if transpose_a else a
    b = b.T if transpose_b else b
    return np.einsum("ij,jk->ik", a, b).astype(ctx.output_dtypes[0], copy=False)


def send(ctx, tensor, **attrs):
    send_to_rendezvous(ctx, tensor)


def recv(ctx, **attrs):
    return receive_from_rendezvous(ctx)


OWN_KERNELS = {"MatMul": matmul, "_Send": send, "_Recv": recv}


@hookimpl
def minitf_register_kernels(registry):
    for op_type, fn in OWN_KERNELS.items():
        registry.register_kernel(op_type, DEVICE_TYPE, fn)
    for op_type in registry.op_types():
        if op_type in OWN_KERNELS:
            continue
        for kernel in registry.kernel_defs(op_type):
            if kernel.device_type == "CPU":
                registry.register_kernel(op_type, DEVICE_TYPE, kernel.fn, dtypes=kernel.dtypes)


@hookimpl
def minitf_register_devices(registry):
    registry.register_device(ToyDeviceFactory())
