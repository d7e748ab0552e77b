"""Constant folding: small pure subgraphs of constants become constants.

A value that cannot change between steps need not be computed in every step.
The typical case is the start of every gradient, ``Fill(Shape(loss), 1.0)``
reshaped to the loss's shape: its inputs are constants, so its result is too.
This pass computes such values once, when the step is planned, and replaces
the op by a ``Const`` holding the result (Grappler's ``ConstantFolding``)::

    before                                    after
    Const [2,3] ─┐                            ConstantFolding/ones = Const 2.0 (2x3)
    Const 2.0  ──┴─ Fill ── Reshape ── Add    ─────────────────────────────── Add
                                      x ─┘                             x ─┘

An op is folded when it is one of the pure ops of :data:`FOLDABLE_OPS`, all
its inputs are constants (originally or by folding), it has no control
inputs, none of its outputs is fetched, and its results are known to be small
(a folded value lives as long as the step; a large one is left to run).  It
is evaluated with the host CPU's kernel; an op that fails is left to fail in
the step, where its error is raised as TF raises it.
"""

import numpy as np

from minitf.runtime.executors.kernel_checks import kernel_of
from minitf.runtime.kernel_context import KernelContext
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.resources import ResourceManager

# Pure ops that are folded when all their inputs are constants.
FOLDABLE_OPS = frozenset({"Cast", "ExpandDims", "Fill", "Pack", "Rank", "Reshape", "Shape",
                          "Size", "Squeeze",
                          # comparisons: a cond's predicate (dead_branch_removal)
                          "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual",
                          "LogicalAnd", "LogicalOr", "LogicalNot"})
# The largest result (in elements) kept as a constant.
FOLDING_MAX_ELEMENTS = 1 << 16


def fold_constants(step, context):
    """Returns ``step`` with its foldable ops replaced by ``Const`` ops.

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (its host
            device evaluates the folded ops).
    """
    if context.host_device is None:
        return step
    fetched = set(step.fetches)
    constants = {}  # tensor of the step graph -> its value
    for op in step.ops:
        if op.type == "Const" and not op.control_inputs:  # a cond's Const: dead with its branch
            constants[op.outputs[0]] = op.get_attr("value")
        elif _foldable(op, constants, fetched, context):
            values = _evaluate(op, constants, context)
            if values is not None:
                constants.update(_replace_by_constants(op, values))
    return step


def _foldable(op, constants, fetched, context):
    if op.type not in FOLDABLE_OPS or op.control_inputs:
        return False
    if any(t not in constants or t.dtype.is_ref for t in op.inputs):
        return False
    if any(t in fetched for t in op.outputs):
        return False
    sizes = [t.shape.num_elements() for t in op.outputs]
    if not all(size is not None and size <= FOLDING_MAX_ELEMENTS for size in sizes):
        return False
    return context.registry.has_kernel(op.type, "CPU", kernel_dtypes(op))


def _evaluate(op, constants, context):
    """The outputs of ``op`` computed by the host's kernel, or None if it fails."""
    kernel = context.registry.kernel(op.type, "CPU", kernel_dtypes(op), node=op)
    ctx = KernelContext(op, context.host_device, ResourceManager())
    attrs = {name: op._attrs.get(name, default) for name, default in op.op_def.attrs.items()}
    try:
        outputs = kernel_of(kernel, op)(ctx, *[constants[t] for t in op.inputs], **attrs)
    except Exception:  # pylint: disable=broad-except
        return None  # left to the step, which raises it as TF would
    return [outputs] if len(op.outputs) == 1 else list(outputs)


def _replace_by_constants(op, values):
    """Adds a ``Const`` per output of ``op`` and moves the op's consumers onto it."""
    replaced = {}
    for tensor, value in zip(op.outputs, values):
        value = np.asarray(value, dtype=tensor.dtype.as_numpy_dtype)
        const = op.graph.create_op(
            "Const", [], dtypes=[tensor.dtype], name="ConstantFolding/%s_%d/" % (
                op.name, tensor.value_index),
            attrs={"value": value, "dtype": tensor.dtype}, compute_shapes=False)
        const._set_device(op.device)
        const._colocation_groups = list(op._colocation_groups)
        const._control_flow_context = op._control_flow_context
        const._traceback = op._traceback
        const._original_op = getattr(op, "_original_op", op)
        const.outputs[0]._shape = tensor.shape
        for consumer in list(tensor.consumers()):
            for index, input_tensor in enumerate(consumer.inputs):
                if input_tensor is tensor:
                    consumer._update_input(index, const.outputs[0])
        replaced[const.outputs[0]] = value
    return replaced
