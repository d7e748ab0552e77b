"""The CPU device: host memory, NumPy arrays as buffers.

The four-method device protocol (:class:`minitf.registry.device.Device`) is
trivial here, which is what makes this backend the reference.
"""

import numpy as np

from minitf.plugin import Device, DeviceFactory


class CPUDevice(Device):
    """A CPU device; its buffers are NumPy arrays."""

    device_type = "CPU"

    def allocate(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def from_host(self, array):
        return np.array(array, copy=True)

    def to_host(self, buffer):
        return buffer


class CPUDeviceFactory(DeviceFactory):
    device_type = "CPU"
    priority = 0
    host_memory = True  # any number of CPUs; /cpu:1, /cpu:2 ... each in a device process

    def count(self):
        return 1

    def create(self, index, name=None, options=None):
        return CPUDevice(index, name)

    def describe(self, index):
        return "CPU:%d (NumPy %s)" % (index, np.__version__)
