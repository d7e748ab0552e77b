"""The OpenCL GPU backend: device type ``GPU``, kernels from ``opencl_kernels/*.cl``.

This package is an ordinary minitf plugin, found only through its entry point
(``opencl_gpu = "minitf_opencl_gpu"`` in group ``minitf``); install it with
``pip install 'minitf[opencl]'`` (pyopencl) plus an OpenCL driver — PoCL
(``apt install pocl-opencl-icd``) runs on any CPU, vendor ICDs drive real GPUs.

With no usable OpenCL device it registers nothing and records why
(``registry.note_unavailable``), which ``python -m minitf plugins`` prints.
Its kernels are tested against the NumPy CPU plugin, the specification.
"""

from minitf.plugin import hookimpl

from minitf_opencl_gpu.device import make_factory


@hookimpl
def minitf_register_kernels(registry):
    factory, _ = make_factory()
    if factory is None:
        return
    from minitf_opencl_gpu.kernels import KERNELS, expand_groups
    has_fp64 = all(t.has_fp64 for t in factory.targets)
    for op_type, fn, groups in KERNELS:
        registry.register_kernel(op_type, "GPU", fn, dtypes=expand_groups(groups, has_fp64))


@hookimpl
def minitf_register_devices(registry):
    factory, reason = make_factory()
    if factory is None:
        registry.note_unavailable("GPU", reason)
        return
    registry.register_device(factory)
