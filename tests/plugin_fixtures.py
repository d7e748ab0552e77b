"""A tiny third-party-style plugin used by the tests: registered at run time.

It declares ``CountingIdentity`` (an identity that counts its executions, to
prove pruning) and ``Cube`` (a new op with its kernel), using only the public
hooks.
"""

import time

import numpy as np

from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, hookimpl
from minitf.registry.device import Device, DeviceFactory
from minitf_numpy_cpu.kernels import sendrecv

CALLS = {}

COUNTING = OpDef("CountingIdentity", inputs=("input",), shape_fn=unchanged_shape,
                 attrs={"tag": ""}, stateful=True, doc="Identity that counts its runs.")
CUBE = OpDef("Cube", inputs=("x",), outputs=("y",), shape_fn=unchanged_shape, doc="x ** 3")
SLEEP = OpDef("SleepIdentity", inputs=("input",), shape_fn=unchanged_shape,
              attrs={"seconds": 0.0}, stateful=True, doc="Identity that sleeps first.")


def counting_identity(x, tag):
    return apply_op(COUNTING, [x], attrs={"tag": tag}, name="CountingIdentity")


def sleep_identity(x, seconds):
    return apply_op(SLEEP, [x], attrs={"seconds": seconds}, name="SleepIdentity")


def cube(x, name=None):
    return apply_op(CUBE, [x], name=name or "Cube")


class TestPlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(COUNTING)
        registry.register_op(CUBE)
        registry.register_op(SLEEP)

    @hookimpl
    def minitf_register_kernels(self, registry):
        def count(ctx, x, tag):
            CALLS[tag] = CALLS.get(tag, 0) + 1
            return x
        registry.register_kernel("CountingIdentity", "CPU", count)
        registry.register_kernel("Cube", "CPU", lambda ctx, x: x * x * x,
                                 dtypes=["float32", "float64"])

        def sleep(ctx, x, seconds):
            time.sleep(seconds)
            return x
        registry.register_kernel("SleepIdentity", "CPU", sleep)


class HostMemoryDevice(Device):
    """A test device whose buffers are NumPy arrays, like the CPU's."""

    def allocate(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def from_host(self, array):
        return np.array(array, copy=True)

    def to_host(self, buffer):
        return buffer


class ExtraDevicePlugin:
    """A run-time plugin adding one device of a new type with a few kernels.

    Its kernels hold host arrays, so the CPU's ``_Send``/``_Recv`` serve it.

    Args:
        device_type: e.g. ``"XPU"``.
        priority: placement priority (the CPU has 0; higher is preferred).
        kernels: ``{op type: kernel}`` the device implements; ``Const``,
            ``_Send`` and ``_Recv`` are added.
        ops: extra OpDefs to declare.
    """

    def __init__(self, device_type, priority, kernels, ops=()):
        self.device_type = device_type
        self.priority = priority
        self.kernels = dict(kernels)
        self.ops = ops

    @hookimpl
    def minitf_register_ops(self, registry):
        for op_def in self.ops:
            registry.register_op(op_def)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("Const", self.device_type, lambda ctx, value, dtype: value)
        registry.register_kernel("_Send", self.device_type, sendrecv.send)
        registry.register_kernel("_Recv", self.device_type, sendrecv.recv)
        for op_type, fn in self.kernels.items():
            registry.register_kernel(op_type, self.device_type, fn)

    @hookimpl
    def minitf_register_devices(self, registry):
        registry.register_device(_TestDeviceFactory(self.device_type, self.priority))


class _TestDeviceFactory(DeviceFactory):
    def __init__(self, device_type, priority):
        self.device_type = device_type
        self.priority = priority

    def count(self):
        return 1

    def create(self, index, name=None, options=None):
        device_class = type(self.device_type + "Device", (HostMemoryDevice,),
                            {"device_type": self.device_type})
        return device_class(index, name)

    def describe(self, index):
        return "%s:%d (a test device)" % (self.device_type, index)
