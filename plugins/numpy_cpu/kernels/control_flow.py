"""CPU kernels of the control-flow primitives.

They are tiny because the executor does the real work (frames, iterations,
dead values; :mod:`minitf.runtime.executors.control_flow`).  As in TF, an output
a kernel leaves unset — here: returns as ``None`` — is *dead*.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


@kernel("Switch")
def switch(ctx, data, pred):
    """Output 1 carries ``data`` when ``pred`` holds, output 0 otherwise; the other is dead."""
    return (None, data) if bool(pred) else (data, None)


@kernel("Merge")
def merge(ctx, *inputs):
    """The first live input and its index (the executor passes dead inputs as ``None``)."""
    for index, value in enumerate(inputs):
        if value is not None:
            return value, np.int32(index)
    raise ctx.invalid_argument("Merge ran with no live input")


@kernel("Enter", "Exit", "NextIteration")
def forward(ctx, data, **attrs):
    """Frame moves are bookkeeping for the executor: the value passes unchanged."""
    return data


@kernel("ControlTrigger")
def control_trigger(ctx):
    return None


@kernel("LoopCond")
def loop_cond(ctx, pred):
    return pred


class _Stack(list):
    """The value of a stack handle: the stack itself (it lives as long as the handle)."""

    def __init__(self, name, max_size):
        super().__init__()
        self.name = name
        self.max_size = max_size


@kernel("StackV2")
def stack(ctx, max_size, elem_type, stack_name):
    return _Stack(stack_name or ctx.op.name, int(max_size))


@kernel("StackPushV2")
def stack_push(ctx, handle, elem, swap_memory):
    if 0 <= handle.max_size <= len(handle):
        raise ctx.invalid_argument("Stack %s is full (max_size %d)" % (handle.name,
                                                                      handle.max_size))
    handle.append(elem)
    return elem


@kernel("StackPopV2")
def stack_pop(ctx, handle, elem_type):
    if not handle:
        raise ctx.invalid_argument("Stack %s is empty." % handle.name)
    return handle.pop()
