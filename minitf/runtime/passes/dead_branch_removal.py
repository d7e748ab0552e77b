"""Dead-branch removal: a ``tf.cond`` whose predicate is a constant keeps one branch.

``tf.cond(is_training, train_fn, eval_fn)`` with ``is_training =
tf.constant(False)`` builds both branches, and at run time its ``Switch``
ops still route every value and its ``Merge`` ops still pick the live one
(see :mod:`minitf.ops.cond`).  When the predicate is a constant the choice is
known before the step runs, so this pass makes it once (Grappler's
``LoopOptimizer``, its ``RemoveDeadBranches`` step)::

    before                                        after
    x ─ Switch(x, False) ─[1]─ train_fn ─┐
                         └[0]─ eval_fn ──┴ Merge  x ── eval_fn ──

* the readers of the **live** output of each such ``Switch`` read its data
  input instead;
* every op that would see a **dead** value — everything downstream of the
  other output, up to the ``Merge`` ops where the branches meet — would never
  run; a ``Merge`` left with one live input is bypassed, its readers read that
  input, and pruning then drops the dead branch with the ``Switch``.

Nothing changes when a dead op is fetched or a target (TF reports those at
run time), when the dead region reaches a ``while_loop``'s plumbing, or when
a ``Merge``'s ``value_index`` is read.  The predicate counts as a constant
when it is a ``Const`` (seen through ``Identity`` ops) — written so, or made
so by constant folding, which runs first.  With no ``Switch``/``Merge`` left, the step runs
on the straight-line executor.  Switched by ``RewriterConfig(loop_optimization=...)``.
"""

from minitf.runtime.passes.rewiring import constant_value, control_consumers, forward

# Ops whose dead inputs the pass does not reason about (a loop's frame).
_LOOP_OPS = frozenset({"Enter", "Exit", "NextIteration", "LoopCond"})


def remove_dead_branches(step, context):
    """Returns ``step`` with the untaken branch of each constant-predicate ``Switch`` cut off.

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (unused).
    """
    del context
    waiting = control_consumers(step)
    kept = set(step.fetches) | {out for op in step.targets for out in op.outputs}
    for switch in [op for op in step.ops if op.type == "Switch"]:
        pred = _constant_predicate(switch.inputs[1])
        if pred is None or pred.shape != () or switch in waiting:
            continue
        live, dead = (1, 0) if bool(pred) else (0, 1)
        merges = _dead_region_merges(switch.outputs[dead], waiting, kept)
        if merges is None:
            continue
        forward(switch.outputs[live], switch.inputs[0])
        for merge, live_input in merges:
            if merge.outputs[0] not in kept:
                forward(merge.outputs[0], live_input)
    return step


def _constant_predicate(tensor):
    """The value of a predicate that is a ``Const``, seen through ``Identity`` ops
    (a cond's ``pred_id``), else None."""
    while tensor.op.type == "Identity" and not tensor.op.control_inputs:
        tensor = tensor.op.inputs[0]
    return constant_value(tensor)


def _dead_region_merges(dead_output, waiting, kept):
    """The ``(Merge, its one live input)`` pairs where the region ``dead_output``
    makes dead ends, or None when the region may not be cut off."""
    dead_tensors, dead_ops = {dead_output}, set()
    frontier = list(dead_output.consumers())
    merges = {}
    while frontier:
        op = frontier.pop()
        if op in dead_ops:
            continue
        if op.type == "Merge":
            live_inputs = [t for t in op.inputs if t not in dead_tensors]
            if live_inputs:  # where the branches meet: revisited if another input dies
                merges[op] = live_inputs
                continue
            merges.pop(op, None)
        if op.type in _LOOP_OPS or any(out in kept for out in op.outputs):
            return None
        dead_ops.add(op)
        dead_tensors.update(op.outputs)
        for out in op.outputs:
            frontier.extend(out.consumers())
        frontier.extend(waiting.get(op, ()))
    pairs = []
    for merge, live_inputs in merges.items():
        live_inputs = [t for t in live_inputs if t not in dead_tensors]
        if len(live_inputs) != 1 or merge.outputs[1].consumers():
            return None
        pairs.append((merge, live_inputs[0]))
    return pairs
