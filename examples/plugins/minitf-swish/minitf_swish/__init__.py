"""minitf-swish: an example op package adding ``Swish`` and its fused gradient ``SwishGrad``.

minitf imports this module through the entry point ``swish = "minitf_swish"``
(group ``minitf``) and calls its hooks in the order ops → kernels → gradients.
It imports only the stable plugin API (:mod:`minitf.plugin`) and public minitf.
"""

from minitf.plugin import hookimpl

from minitf_swish import kernels, opencl
from minitf_swish.ops import (
    SWISH, SWISH_GRAD, swish, swish_grad, swish_grad_gradient, swish_gradient)

__all__ = ["swish", "swish_grad"]


@hookimpl
def minitf_register_ops(registry):
    registry.register_op(SWISH)
    registry.register_op(SWISH_GRAD)


@hookimpl
def minitf_register_kernels(registry):
    registry.register_kernel("Swish", "CPU", kernels.swish_cpu, dtypes=["float32", "float64"])
    registry.register_kernel("SwishGrad", "CPU", kernels.swish_grad_cpu,
                             dtypes=["float32", "float64"])
    if opencl.available():
        registry.register_kernel("Swish", "GPU", opencl.swish_gpu, dtypes=["float32"])
        registry.register_kernel("SwishGrad", "GPU", opencl.swish_grad_gpu, dtypes=["float32"])


@hookimpl
def minitf_register_gradients(registry):
    registry.register_gradient("Swish", swish_gradient)
    registry.register_gradient("SwishGrad", swish_grad_gradient)
