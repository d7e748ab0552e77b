"""Dependency optimization: a ``NoOp`` that only relays control edges is bypassed.

``tf.group(a, b, c)`` is a ``NoOp`` whose control inputs are ``a``, ``b`` and
``c``.  An optimizer's ``minimize`` groups its variable updates this way and
makes the global step's increment wait for the group::

    before                                       after
    update_w ─┐                                  update_w ─┐
    update_b ─┴─^ update (NoOp) ─^ step += 1     update_b ─┴─^ step += 1

The NoOp computes nothing; it only orders.  Bypassing it (its control inputs
become control inputs of the ops that waited for it) keeps every "runs
after" the graph states.  In a cluster it saves two crossings of the network
per step: ``replica_device_setter`` puts the NoOp on the worker and the
updates and the step on the ps, so the ps would tell the worker that its
updates are done, and the worker would tell the ps back.

This is Grappler's ``DependencyOptimizer``, with its cost rules: a NoOp with
``n`` control inputs and ``m`` control consumers is bypassed only if that does
not add edges (``n * m <= n + m``) nor crossings between devices (counted
with the requested devices: passes run before placement).  Left alone: the
step's targets (a fetched ``train_op``), NoOps with data inputs, and anything
in a ``cond`` or ``while_loop``, where a control edge also carries deadness.
"""

import itertools


def bypass_noops(step, context):
    """Returns ``step`` with its relaying NoOps bypassed (they are pruned after).

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (unused).
    """
    del context
    targets = set(step.targets)
    waiting = {}  # op -> the ops with it among their control inputs
    for op in step.ops:
        for source in op.control_inputs:
            waiting.setdefault(source, []).append(op)
    for op in step.ops:  # producers first: a chain of NoOps collapses in one pass
        if _bypassable(op, waiting.get(op, []), targets):
            _bypass(op, waiting)
    return step


def _bypassable(op, consumers, targets):
    if op.type != "NoOp" or op in targets or op.inputs or not consumers:
        return False
    sources = op.control_inputs
    if any(o._control_flow_context is not None for o in [op] + sources + consumers):
        return False
    n, m = len(sources), len(consumers)
    if n * m > n + m:
        return False
    crossings_before = sum(o.device != op.device for o in sources + consumers)
    crossings_after = sum(s.device != c.device for s, c in itertools.product(sources, consumers))
    return crossings_after <= crossings_before


def _bypass(op, waiting):
    sources = op.control_inputs
    for consumer in waiting.pop(op):
        consumer._remove_control_input(op)
        consumer._add_control_inputs(sources)
        for source in sources:
            if consumer not in waiting[source]:
                waiting[source].append(consumer)
    for source in sources:
        waiting[source].remove(op)
