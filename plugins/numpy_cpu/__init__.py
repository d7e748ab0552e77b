"""The NumPy CPU backend: minitf's reference kernels, device type ``CPU``.

This package is an ordinary minitf plugin, found through its entry point
(``numpy_cpu = "minitf_numpy_cpu"`` in group ``minitf``); the core never
imports it.  Its kernels are the *specification* other backends are tested
against: small, flat, one NumPy expression where possible.
"""

from minitf.plugin import hookimpl
from minitf_numpy_cpu import kernels
from minitf_numpy_cpu.device import CPUDeviceFactory


@hookimpl
def minitf_register_kernels(registry):
    for op_type, fn, dtypes in kernels.KERNELS:
        registry.register_kernel(op_type, "CPU", fn, dtypes=dtypes)


@hookimpl
def minitf_register_devices(registry):
    registry.register_device(CPUDeviceFactory())
