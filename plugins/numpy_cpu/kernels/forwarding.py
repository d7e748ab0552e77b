"""Computing an op's output in the buffer of an input nobody needs any more.

A training step allocates an array for every intermediate value: the
activations, their gradients, the scaled gradient of each update.  TF's
kernels avoid many of those allocations with ``forward_input_or_allocate_output``:
when an input's buffer is referenced by this op alone, the output is written
into it.  minitf does the same in two halves:

* the executor decides *whether* a call may reuse its input: the op must be the
  input's last reader and nothing but the step may hold the value (see
  :mod:`minitf.runtime.executors.generated`); it then passes a context with
  ``ctx.forward_input`` set;
* the kernel declares *which* input it can take over (:func:`forwards_input`)
  and checks what only NumPy knows (:func:`reusable`): an array that owns its
  memory, is writeable and has the output's shape and dtype.

Example:
    >>> @kernel("Relu")
    ... @forwards_input(0)
    ... def relu(ctx, features):
    ...     out = features if reusable(ctx, features) else None
    ...     return np.maximum(features, 0, out=out)
"""

import numpy as np

from minitf.plugin import FORWARDING_MIN_ELEMENTS


def forwards_input(index):
    """Declares that the decorated kernel may write its output into input ``index``."""
    def declare(fn):
        fn.forwardable_input = index
        return fn
    return declare


def reusable(ctx, array, shape=None, dtype=None):
    """Whether the kernel may write its output, of ``shape`` and ``dtype``, into ``array``.

    Args:
        ctx: the kernel's context; only a forwarding context allows it.
        array: the input the kernel declared forwardable.
        shape: the output's shape (default: ``array``'s).
        dtype: the output's dtype (default: ``array``'s).
    """
    return (ctx.forward_input and type(array) is np.ndarray and array.size >= FORWARDING_MIN_ELEMENTS
            and array.base is None
            and array.flags.writeable and (shape is None or array.shape == shape)
            and (dtype is None or array.dtype == dtype))
