"""Common-subexpression elimination: identical pure ops are computed once.

Two ops of the same type, with the same inputs, attrs, requested device,
control inputs and control-flow context compute the same values, so the
second one's readers may read the first one's outputs.  Graphs built by
layers and by ``tf.gradients`` repeat themselves often (the same
``Shape(x)``, the same constant, the same ``transpose`` of a weight)::

    before                                   after
    x ─┬─ Square ── Add ─┐                   x ── Square ─┬─ Add ─┐
       └─ Square ── Mul ─┴─ ...                           └─ Mul ─┴─ ...

Ops are visited producers first, so once two ``Square`` are one, two ``Add``
reading them become one too.  This is Grappler's
``common_subgraph_elimination`` (``RewriterConfig.common_subgraph_elimination``).

Only pure ops are merged: not stateful ones (random numbers, variables,
queues, ``Print``), not ``Placeholder`` (an unfed one must fail as itself),
not the control-flow primitives, and not ops reading references or
resources, whose value depends on when they run.  The op kept is the first in
the step's order; a duplicate that is fetched, a target or waited on by a
control edge stays as it is.
"""

import numpy as np

from minitf.runtime.passes.rewiring import control_consumers, forward

# Ops never merged although not declared stateful.
KEEP_OPS = frozenset({"Placeholder", "PlaceholderWithDefault", "Enter", "RefEnter", "Exit",
                      "Switch", "RefSwitch", "Merge", "RefMerge", "NextIteration", "LoopCond",
                      "ControlTrigger", "NoOp"})
# The largest constant (in elements) compared by value.
MAX_CONSTANT_ELEMENTS = 1 << 12


def eliminate_common_subgraphs(step, context):
    """Returns ``step`` with each duplicate pure op's readers moved onto its first copy.

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (unused).
    """
    del context
    waiting = control_consumers(step)
    kept = set(step.targets) | set(waiting) | {t.op for t in step.fetches}
    first = {}  # signature -> the first op with it
    for op in step.ops:
        signature = _signature(op)
        if signature is None:
            continue
        original = first.setdefault(signature, op)
        if original is not op and op not in kept:
            for duplicate, output in zip(op.outputs, original.outputs):
                forward(duplicate, output)
    return step


def _signature(op):
    """What makes two ops compute the same values, hashable; None for an op never merged."""
    if op.op_def.stateful or op.type in KEEP_OPS:
        return None
    if any(_has_state(t.dtype) for t in list(op.inputs) + list(op.outputs)):
        return None
    try:
        attrs = tuple(sorted((name, _attr_key(value)) for name, value in op._attrs.items()))
        signature = (op.type, tuple(op.inputs), attrs, op.device,
                     frozenset(op.control_inputs), id(op._control_flow_context))
        hash(signature)
    except (TypeError, _TooLarge):
        return None
    return signature


def _has_state(dtype):
    return dtype.is_ref or dtype.name in ("resource", "variant")


class _TooLarge(Exception):
    """A constant too large to compare."""


def _attr_key(value):
    """A hashable stand-in for an attr value (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.generic):  # hashes -0.0 as 0.0: compared by its bytes instead
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.size > MAX_CONSTANT_ELEMENTS or value.dtype == object:
            raise _TooLarge()
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_attr_key(v) for v in value)
    if hasattr(value, "as_list") and hasattr(value, "rank"):  # a TensorShape
        return ("shape", None if value.rank is None else tuple(value.as_list()))
    return value
