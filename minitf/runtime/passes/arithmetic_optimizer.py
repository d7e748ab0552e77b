"""Arithmetic simplification: operations that give back their input are bypassed.

Generated and composed code computes things it need not: ``x * 1`` from a
scale of 1, ``x + 0`` from a zero bias, ``-(-x)``, a transpose undone by the
next one, a reshape of a reshape.  This pass moves the readers of such an op
onto the value it gives back, or lets the outer reshape of a chain read the
chain's start; pruning then drops what nobody reads (Grappler's
``ArithmeticOptimizer``, ``RewriterConfig.arithmetic_optimization``)::

    before                                          after
    x ── Mul(·, 1) ── Neg ── Neg ── Square          x ─────────────────────── Square
    x ── Transpose [1,0] ── Transpose [1,0] ── f    x ──────────────────────── f
    x ── Reshape [6] ── Reshape [3,2] ── f          x ── Reshape [3,2] ── f

A rule applies only where it is exact for every value the step can see,
judged from the static shapes and the constants alone:

* ``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0`` (``Mul``, ``Add``,
  ``AddV2``, ``Sub`` of numbers, the constant all ones or zeros): only when
  broadcasting the constant cannot change ``x``'s shape, i.e. the constant
  has no more dimensions than ``x`` and each is 1 or ``x``'s (known) size.
  As in TF, ``-0.0 + 0`` gives ``-0.0`` afterwards (IEEE gives ``+0.0``).
* ``Neg(Neg(x))``: always.
* ``Transpose(Transpose(x, p), q)`` with ``p[q[i]] == i``: when ``x``'s rank
  is known and ``p``, ``q`` are constant permutations of it.
* ``Reshape(Reshape(x, s), t)`` → ``Reshape(x, t)``, and ``Reshape(x, s)`` of
  ``x``'s own shape → ``x``: when the shapes involved are fully known, so
  the inner reshape cannot fail (a failing op is left to fail in the step).

Ops fetched, targeted, waited on by control edges or with control inputs of
their own are left alone, as are ops in another ``cond``/``while_loop``
context than their inputs.
"""

import numpy as np

from minitf.runtime.passes.rewiring import (
    constant_value, control_consumers, forward, replaceable)

# op type -> (identity constant, operand positions the constant may take)
NEUTRAL_OPERANDS = {"Mul": (1, (0, 1)), "Add": (0, (0, 1)), "AddV2": (0, (0, 1)),
                    "Sub": (0, (1,))}


def simplify_arithmetic(step, context):
    """Returns ``step`` with its no-op arithmetic bypassed.

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (unused).
    """
    del context
    waiting = control_consumers(step)
    for op in step.ops:  # producers first: -(-(-(-x))) collapses in one pass
        if op.type == "Reshape":
            _shorten_reshape_chain(op)
        result = _given_back(op)
        if result is not None and replaceable(op, result, step, waiting):
            forward(op.outputs[0], result)
    return step


def _given_back(op):
    """The input tensor ``op`` gives back unchanged, or None."""
    if op.type in NEUTRAL_OPERANDS:
        return _neutral_operand(op)
    if op.type == "Neg" and op.inputs[0].op.type == "Neg":
        return op.inputs[0].op.inputs[0]
    if op.type == "Transpose" and op.inputs[0].op.type == "Transpose":
        return _inverse_transposes(op)
    if op.type == "Reshape":
        source, shape = op.inputs[0].shape, op.outputs[0].shape
        if source.is_fully_defined() and shape.is_fully_defined() and source == shape:
            return op.inputs[0]
    return None


def _neutral_operand(op):
    """``x`` of ``x * 1``, ``x + 0`` ...: when the constant is neutral and cannot broadcast."""
    neutral, positions = NEUTRAL_OPERANDS[op.type]
    if not np.issubdtype(op.outputs[0].dtype.as_numpy_dtype, np.number):  # no strings, bools
        return None
    for position in positions:
        value = constant_value(op.inputs[position])
        x = op.inputs[1 - position]
        if value is not None and np.all(value == neutral) and _keeps_shape(x.shape, value.shape):
            return x
    return None


def _keeps_shape(shape, constant_shape):
    """Whether broadcasting a constant of ``constant_shape`` against ``shape`` gives ``shape``."""
    if shape.rank is None or len(constant_shape) > shape.rank:
        return False
    sizes = shape.as_list()[shape.rank - len(constant_shape):]
    return all(c == 1 or c == s for c, s in zip(constant_shape, sizes))


def _inverse_transposes(op):
    """``x`` of ``Transpose(Transpose(x, p), q)`` when ``q`` undoes ``p``, else None."""
    inner = op.inputs[0].op
    x = inner.inputs[0]
    if inner.control_inputs or x.shape.rank is None:
        return None
    p, q = constant_value(inner.inputs[1]), constant_value(op.inputs[1])
    if p is None or q is None:
        return None
    identity = list(range(x.shape.rank))
    if sorted(p.tolist()) != identity or sorted(q.tolist()) != identity:
        return None
    return x if [p[i] for i in q] == identity else None


def _shorten_reshape_chain(op):
    """Lets ``Reshape(Reshape(x, s), t)`` read ``x`` when the inner reshape cannot fail."""
    inner = op.inputs[0].op
    if inner.type != "Reshape" or inner.control_inputs:
        return
    x = inner.inputs[0]
    if x.dtype.is_ref or inner._control_flow_context is not op._control_flow_context:
        return
    if x.op._control_flow_context is not op._control_flow_context:
        return
    if x.shape.is_fully_defined() and inner.outputs[0].shape.is_fully_defined():
        op._update_input(0, x)
