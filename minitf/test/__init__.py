"""``tf.test``: numerical gradient checking and the pytest plugin for labs.

* :func:`compute_gradient` / :func:`compute_gradient_error` — TF1's
  Jacobian-based checker (``tf.test.compute_gradient``).
* :func:`check_gradients` — the friendlier assertion the labs use: its
  failure names the input, the worst element, both values and the tolerance.
* :func:`gradgradcheck` — the same check of the second derivatives.
* :func:`opcheck` — one call that checks an op's shape function, kernels on
  every device and dtype, gradients and GraphDef form against each other.
* :mod:`minitf.test.conformance` — the op suite a device plugin runs on its
  own device (``pytest_plugins = ["minitf.test.conformance"]``).
* :mod:`minitf.test.pytest_plugin` — fixtures (``tf_graph``, ``tf_session``,
  ``gradcheck``, ``gradgradcheck``) registered with pytest when minitf is installed.
"""

from minitf.test.gradient_checker import (
    check_gradients, compute_gradient, compute_gradient_error, gradgradcheck)
from minitf.test.opcheck import OpCheckReport, opcheck

__all__ = ["check_gradients", "compute_gradient", "compute_gradient_error", "gradgradcheck",
           "opcheck", "OpCheckReport",
           "is_gpu_available", "gpu_device_name"]


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when some plugin offers a device of type GPU."""
    del min_cuda_compute_capability
    if cuda_only:
        return False
    from minitf.registry import get_registry
    factory = get_registry().device_factory("GPU")
    return factory is not None and factory.count() > 0


def gpu_device_name():
    """``"/device:GPU:0"`` when a GPU device exists, else ``""``."""
    return "/device:GPU:0" if is_gpu_available() else ""
