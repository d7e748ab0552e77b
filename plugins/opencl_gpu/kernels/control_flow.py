"""GPU kernels of the control-flow primitives: ``Switch``, ``Merge``, ``Enter``,
``Exit``, ``NextIteration``, ``LoopCond``, ``ControlTrigger``, and the stacks
a loop's gradient keeps its forward values in.

They route values, never compute on them, so a tensor passes through on the
device.  The predicates are the exception: ``Switch`` and ``LoopCond`` need
their boolean on the host (TF's GPU kernels declare it ``HostMemory``), so a
predicate computed on the device is downloaded — the one wait on the device
a data-dependent branch or loop cannot avoid.
"""

import numpy as np

from minitf_opencl_gpu.kernels.table import KERNELS, cpu_kernel

ALL = ("float", "int", "bool", "resource")


def switch(ctx, data, pred):
    """Output 1 carries ``data`` when ``pred`` holds, output 0 otherwise; the other is dead."""
    return (None, data) if bool(ctx.device.to_host(pred)) else (data, None)


def merge(ctx, *inputs):
    """The first live input and its index (dead inputs arrive as ``None``)."""
    for index, value in enumerate(inputs):
        if value is not None:
            return value, np.int32(index)
    raise ctx.invalid_argument("Merge ran with no live input")


def forward(ctx, data, **attrs):
    """Frame moves are bookkeeping for the executor: the value passes unchanged."""
    return data


def loop_cond(ctx, pred):
    return ctx.device.to_host(pred)


def control_trigger(ctx):
    return None


def stack_kernel(ctx, *inputs, **attrs):
    """``StackV2``/``StackPushV2``/``StackPopV2`` (the accumulators of a loop's
    gradient): the stack is a Python list of the device's tensors, so the CPU
    kernel, which only appends and pops, serves the GPU as it is."""
    return cpu_kernel(ctx)(ctx, *inputs, **attrs)


# Dead inputs (None) and host predicates are normal here: no host dispatch.
for _ops, _fn, _groups in ((("Switch",), switch, ALL), (("Merge",), merge, ALL),
                           (("Enter", "Exit", "NextIteration"), forward, ALL),
                           (("LoopCond",), loop_cond, ("bool",)),
                           (("ControlTrigger",), control_trigger, ()),
                           (("StackV2",), stack_kernel, ("int",)),
                           (("StackPushV2",), stack_kernel, ALL),
                           (("StackPopV2",), stack_kernel, ("resource",))):
    for _op in _ops:
        KERNELS.append((_op, _fn, _groups))
