"""Model pruning: an ``Identity`` that only passes a value on is bypassed.

``tf.identity`` computes nothing: its readers could read its input.  Graphs
are full of them (``y = tf.identity(x, name="output")`` to give a value a
name, the ``read`` of every variable, the ``Identity`` ops ``tf.gradients``
inserts), and in a step each costs a dispatch.  This pass moves the readers
of such an ``Identity`` onto its input; pruning then drops it (Grappler's
``ModelPruner``)::

    before                                  after
    x ── Identity ── Identity ── Square     x ──────────────────────── Square

An ``Identity`` stays when it is fetched, a target or waited on by a control
edge, when it has control inputs (it orders its readers after them), when it
reads a variable's *reference* (its value is the snapshot its readers
see), when it is requested on another device than its input (it is the copy
between them), or when it sits in a ``cond`` or ``while_loop`` (where
identities carry a branch's pivot and deadness).  Switched off by
``RewriterConfig(disable_model_pruning=True)``.
"""

from minitf.runtime.passes.rewiring import control_consumers, forward, replaceable


def prune_identities(step, context):
    """Returns ``step`` with its pass-through ``Identity`` ops bypassed.

    Args:
        step: a :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        context: the :class:`~minitf.runtime.passes.PassContext` (unused).
    """
    del context
    waiting = control_consumers(step)
    for op in step.ops:  # producers first: a chain collapses onto its start in one pass
        if op.type != "Identity" or op._control_flow_context is not None:
            continue
        source = op.inputs[0]
        if source.op.device == op.device and replaceable(op, source, step, waiting):
            forward(op.outputs[0], source)
    return step
