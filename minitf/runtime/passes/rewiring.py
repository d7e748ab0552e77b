"""What the rewrite passes share: who waits on an op, and moving readers to another tensor.

A pass that finds ``y`` computes the same value as ``x`` does not delete the
op of ``y``; it moves every reader of ``y`` onto ``x`` (:func:`forward`), and
the pruning after the pass drops the op nobody reads any more.  Whether that
is allowed is the same question for every pass (:func:`replaceable`): the
op's value is not fetched, nothing waits on it by a control edge, it waits on
nothing itself, and it sits in the same ``cond``/``while_loop`` context as
``x`` and its readers (a value crossing a context goes through
``Switch``/``Enter``, never around them).
"""


def control_consumers(step):
    """Maps each op of ``step`` to the ops with it among their control inputs."""
    waiting = {}
    for op in step.ops:
        for source in op.control_inputs:
            waiting.setdefault(source, []).append(op)
    return waiting


def replaceable(op, by, step, waiting):
    """Whether every reader of ``op``'s outputs may read ``by`` (a Tensor) instead.

    Args:
        op: an op of the step graph with one output.
        by: the tensor that would replace ``op.outputs[0]``.
        step: the :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        waiting: :func:`control_consumers` of ``step``.
    """
    output = op.outputs[0]
    if output in step.fetches or op in step.targets or op in waiting or op.control_inputs:
        return False
    if by.dtype != output.dtype or by.dtype.is_ref:
        return False
    context = op._control_flow_context
    if by.op._control_flow_context is not context:
        return False
    return all(reader._control_flow_context is context for reader in output.consumers())


def forward(tensor, by):
    """Moves every reader of ``tensor`` onto ``by``."""
    for reader in tensor.consumers():
        for index, input_tensor in enumerate(reader.inputs):
            if input_tensor is tensor:
                reader._update_input(index, by)


def constant_value(tensor):
    """The value of ``tensor`` if a ``Const`` op without control inputs computes it, else None."""
    op = tensor.op
    if op.type != "Const" or op.control_inputs:
        return None
    return op.get_attr("value")
