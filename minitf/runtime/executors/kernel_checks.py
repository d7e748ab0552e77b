"""``MINITF_CHECK_KERNELS=1``: every kernel's results checked against its op's declaration.

A kernel must return what the graph promised when it was built: for each
output, an array of the output's dtype (``ctx.output_dtypes[i]``) whose
shape fits the output's static shape (the shape function's answer, possibly
partial).  A kernel that returns float64 for a float32 op, or a ``[3, 1]``
array where ``[3]`` was inferred, breaks its consumers in ways that surface
far away, or only on another device.  In this debug mode such a result is an
``InternalError`` naming the kernel (its ``file:line``), the op and the
plugin, raised by the op that produced it.

The check is one dtype and one shape comparison per output, added where
every executor gets its kernels: :func:`~minitf.runtime.executors.plan.build_plan`
wraps each kernel with :func:`kernel_of` (as does constant folding, which
runs kernels before any executor).  The test suite turns the mode on
(``tests/conftest.py``).  Values that are not arrays (a variable's
reference, a control-flow dead value, a resource handle) are not checked,
nor are outputs of ``resource`` or ``variant`` dtype.
"""

import functools
import os

import numpy as np

from minitf.framework import dtypes
from minitf.framework import errors
from minitf.runtime.executors.located_errors import user_op

#: The environment variable that turns the checks on (any value but "" and "0").
ENV_VAR = "MINITF_CHECK_KERNELS"

_UNCHECKED_DTYPES = (dtypes.resource, dtypes.variant)


def enabled():
    """True when ``MINITF_CHECK_KERNELS`` is set (read when a plan is built)."""
    return os.environ.get(ENV_VAR, "") not in ("", "0")


def kernel_of(kernel_def, op):
    """The function to call for ``op``'s kernel: ``kernel_def.fn``, checked when enabled.

    The wrapper keeps a ``quiet_body`` (see :mod:`~minitf.runtime.executors.generated`),
    checked as well.
    """
    fn = kernel_def.fn
    if not enabled():
        return fn
    expected = [(t.dtype.base_dtype, t.shape) for t in op.outputs]
    checked = _checked(fn, kernel_def, op, expected)
    quiet = getattr(fn, "quiet_body", None)
    if quiet is not None:
        checked.quiet_body = _checked(quiet, kernel_def, op, expected)
    return checked


def _checked(fn, kernel_def, op, expected):
    @functools.wraps(fn)
    def run(ctx, *inputs, **attrs):
        outputs = fn(ctx, *inputs, **attrs)
        if not expected:
            return outputs
        values = (outputs,) if len(expected) == 1 else outputs
        for index, ((dtype, shape), value) in enumerate(zip(expected, values)):
            problem = _mismatch(dtype, shape, value)
            if problem is not None:
                raise errors.InternalError(None, None, _message(kernel_def, op, index, problem))
        return outputs
    return run


def _mismatch(dtype, shape, value):
    """What is wrong with ``value`` as an output of ``dtype`` and static ``shape``, or None."""
    value_dtype = getattr(value, "dtype", None)
    value_shape = getattr(value, "shape", None)
    if not isinstance(value_dtype, np.dtype) or not isinstance(value_shape, tuple):
        return None  # not an array: a reference, a dead value, a handle
    if dtype in _UNCHECKED_DTYPES:
        return None
    if not _same_dtype(dtype, value_dtype):
        return "dtype %s, but the op's output is %s" % (value_dtype.name, dtype.name)
    if not shape.is_compatible_with(value_shape):
        return "shape %s, but the op's output was inferred as %s" % (_shape_text(value_shape),
                                                                      shape)
    return None


def _shape_text(shape):
    """A NumPy shape written as TensorShape writes a static one: ``(2, 3)``, ``(5,)``."""
    return str(tuple(int(d) for d in shape))


def _same_dtype(dtype, value_dtype):
    if dtype == dtypes.string:  # bytes, str or Python objects: all are TF strings
        return value_dtype.kind in "OSU"
    return value_dtype == np.dtype(dtype.as_numpy_dtype)


def _message(kernel_def, op, index, problem):
    op = user_op(op)
    return ("Kernel %s of plugin '%s' (%s, %s kernel) returned %s for output %d of op '%s' "
            "of type %s (MINITF_CHECK_KERNELS is set)"
            % (getattr(kernel_def.fn, "__qualname__", kernel_def.fn), kernel_def.plugin,
               kernel_def.site, kernel_def.device_type, problem, index, op.name, op.type))
