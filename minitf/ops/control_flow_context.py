"""Control-flow contexts: how ops built inside a cond branch or loop body are wired.

While ``true_fn`` or a loop ``body`` runs, the graph's *control-flow context*
is set (``graph._set_control_flow_context``), and every op created is handed
to ``context.add_op(op)``.  The context rewires it, as TF's ``CondContext`` and
``WhileContext`` do:

* an input produced **outside** the context is replaced by a value routed in:
  in a cond branch, ``Switch(x, pred)[branch]`` (so it is dead when the branch
  is not taken); in a loop, a constant ``Enter(x)`` (so every iteration sees
  it — a *loop invariant*);
* an op with **no inputs** (a constant) gets a control input from the
  context's *pivot*, so it runs in the branch's or loop's frame and only when
  the branch is taken / once per iteration;
* a control input from outside a loop cannot stay: an op of the loop's
  frame cannot wait on an op of its parent frame.  As TF does
  (``_RemoveExternalControlEdges`` and what ``_AddOpInternal`` does with
  them), it is replaced by an ``Identity`` of the outside op's output, entered
  into the loop as a loop invariant: the outside op runs before the loop
  starts, and the op waits for it in every iteration.

Mirrors ``ControlFlowContext``, ``CondContext`` and ``WhileContext`` of TF's
``control_flow_ops.py``; :mod:`minitf.ops.cond` and :mod:`minitf.ops.while_loop`
build on them.
"""

import contextlib

from minitf.framework import graph as graph_lib
from minitf.ops import array_ops
from minitf.ops import control_flow_primitives as primitives


class ControlFlowContext:
    """The base of CondContext and WhileContext.

    Attributes:
        outer_context: the enclosing context, or None at top level.
        values: the tensors known inside this context (made in it or routed in).
        external_values: tensor from outside -> its routed-in replacement.
    """

    def __init__(self):
        self.graph = graph_lib.get_default_graph()
        self.outer_context = self.graph._get_control_flow_context()
        self.values = set()
        self.external_values = {}
        self._context_stack = []

    # ---- entering and leaving ------------------------------------------------------
    def enter(self):
        """Makes this the graph's context; :meth:`exit` restores the previous one."""
        self._context_stack.append(self.graph._get_control_flow_context())
        self.graph._set_control_flow_context(self)

    def exit(self):
        self.graph._set_control_flow_context(self._context_stack.pop())

    @contextlib.contextmanager
    def entered(self):
        self.enter()
        try:
            yield self
        finally:
            self.exit()

    @contextlib.contextmanager
    def plumbing(self, context=None):
        """Creates wiring ops (Switch, Enter) in ``context`` (default: the outer one),
        with no control dependencies and without ``add_op`` seeing them."""
        with self.graph.control_dependencies(None):  # (this clears the context too)
            self.graph._set_control_flow_context(context if context is not None
                                                 else self.outer_context)
            yield

    # ---- queries ---------------------------------------------------------------------
    def get_while_context(self):
        """The innermost WhileContext at or around this context, or None."""
        context = self
        while context is not None and not isinstance(context, WhileContext):
            context = context.outer_context
        return context

    def encloses(self, context):
        """Whether ``context`` (None: the top level) is an enclosing context of a
        user's loop (not a gradient loop, whose outside ops are forward ones)."""
        if self.get_while_context().grad_state is not None:
            return False
        outer = self.outer_context
        while outer is not None and outer is not context:
            outer = outer.outer_context
        return context is None or outer is context

    def contains(self, context):
        """Whether ``context`` is this context or nested inside it."""
        while context is not None:
            if context is self:
                return True
            context = context.outer_context
        return False

    def mark_values(self, tensors):
        """Records ``tensors`` as known in this context and every enclosing one."""
        context = self
        while context is not None:
            context.values.update(tensors)
            context = context.outer_context

    # ---- adopting ops -------------------------------------------------------------------
    def add_op(self, op):
        """Rewires a newly created ``op`` (see the module docstring)."""
        if not op.inputs:
            external = self.remove_external_control_edges(op)
            if not any(self.contains(c._control_flow_context) for c in op.control_inputs):
                op._add_control_input(self.control_pivot().op)
        else:
            for index, tensor in enumerate(op.inputs):
                real = self.add_value(tensor)
                if real is not tensor:
                    op._update_input(index, real)
            external = self.remove_external_control_edges(op)
            self.maybe_add_control_dependency(op)
        self.mark_values(op.outputs)
        self.prevent_access(op)
        self.add_external_control_inputs(op, external)

    def prevent_access(self, op):
        """Makes ``op`` unfetchable, as TF does: its value exists once per
        iteration or only in one branch.  Only a top-level loop's Exits stay
        fetchable; a loop's values may not be fed either."""
        if self.outer_context is not None or op.type != "Exit":
            self.graph.prevent_fetching(op)
            if self.get_while_context() is not None:
                for tensor in op.outputs:
                    self.graph.prevent_feeding(tensor)

    def maybe_add_control_dependency(self, op):
        """Hook for WhileContext, which ties an op reading only loop invariants to
        its pivot (so that it runs once per iteration, and is dead when the loop
        exits); a cond branch needs nothing: its inputs are all switched."""

    def remove_external_control_edges(self, op):
        """Drops control inputs from outside the innermost enclosing loop; returns those
        of them that live in a frame enclosing the loop (see add_external_control_inputs)."""
        while_context = self.get_while_context()
        if while_context is None:
            return []
        kept = [c for c in op.control_inputs if while_context.contains(c._control_flow_context)]
        external = [c for c in op.control_inputs if c not in kept
                    and while_context.encloses(c._control_flow_context)]
        op._control_inputs[:] = kept
        return external

    def add_external_control_inputs(self, op, external):
        """Makes ``op`` wait, in every iteration, for the outside ops ``external``:
        through an Identity of each one's first output, entered as a loop
        invariant (an op without outputs cannot be waited for so, as in TF).
        The loop's own wiring, built before its pivot exists, needs none: its
        Enters and their inputs come first anyway."""
        if self.control_pivot() is None:
            return
        for control in external:
            if control.outputs:
                with self.plumbing(context=self):
                    waited = array_ops.identity(control.outputs[0])
                op._add_control_input(waited.op)

    def add_value(self, tensor):
        raise NotImplementedError

    def control_pivot(self):
        raise NotImplementedError


class CondContext(ControlFlowContext):
    """The context of one branch of a ``tf.cond`` (TF's ``CondContext``).

    Args:
        pred: the scalar bool Tensor choosing the branch.
        pivot: a tensor live exactly when this branch is taken
            (``Identity(Switch(pred, pred)[branch])``).
        branch: 1 for the true branch, 0 for the false one.
    """

    def __init__(self, pred, pivot, branch):
        super().__init__()
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.values.update([pred, pivot])

    def control_pivot(self):
        return self.pivot

    def add_value(self, tensor):
        """``tensor`` as seen inside the branch: switched by ``pred`` if it comes from outside."""
        if tensor in self.values:
            return self.external_values.get(tensor, tensor)
        result = tensor
        if self.outer_context is not None:
            result = self.outer_context.add_value(tensor)
        with self.plumbing():
            switched = primitives.switch(result, self.pred, name="Switch")[self.branch]
        switched.op._control_flow_context = self
        self.prevent_access(switched.op)
        self.values.update([tensor, switched])
        self.external_values[tensor] = switched
        return switched


class WhileContext(ControlFlowContext):
    """The context of a ``tf.while_loop`` (TF's ``WhileContext``).

    Args:
        name: the frame name (unique in the graph).
        parallel_iterations: how many iterations may run at once.
        back_prop: whether gradients may flow through the loop.
        grad_state: for the loop built by ``tf.gradients`` to back-propagate
            through another loop, its :class:`~minitf.autodiff.control_flow_state.GradLoopState`.
    """

    def __init__(self, name, parallel_iterations=10, back_prop=True, grad_state=None):
        super().__init__()
        self.name = name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.grad_state = grad_state
        self.pivot = None            # the LoopCond output
        self.pivot_for_pred = None   # the first loop variable's Merge output
        self.pivot_for_body = None   # the first loop variable's Identity in the body
        self.loop_enters = []
        self.loop_exits = []

    def control_pivot(self):
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def maybe_add_control_dependency(self, op):
        if op.control_inputs or op.type == "Enter":
            return
        if all(primitives.is_loop_constant_enter(t.op) for t in op.inputs):
            op._add_control_input(self.control_pivot().op)

    def add_value(self, tensor):
        """``tensor`` as seen inside the loop: a constant ``Enter`` if it comes from outside.

        In a gradient loop, a value of the forward loop is instead fetched from
        the stack where the forward loop saved its history (``GetRealValue``).
        """
        if tensor in self.values:
            return self.external_values.get(tensor, tensor)
        grad_ctxt = self.graph._get_control_flow_context()
        grad_ctxt = grad_ctxt.get_while_context() if grad_ctxt is not None else None
        if grad_ctxt is not None and grad_ctxt.grad_state is not None:
            forward = while_context_of(tensor.op)
            if tensor.op.type == "Exit" and forward is not None:
                forward = forward.outer_context.get_while_context() \
                    if forward.outer_context is not None else None
            if forward is not None and forward is grad_ctxt.grad_state.forward_context:
                real = grad_ctxt.grad_state.get_real_value(tensor)
                self.external_values[tensor] = real
                self.values.add(tensor)
                return real
        result = tensor
        if self.outer_context is not None:
            result = self.outer_context.add_value(tensor)
        with self.plumbing():
            entered = primitives.enter(result, self.name, is_constant=True,
                                       parallel_iterations=self.parallel_iterations)
        entered.op._control_flow_context = self
        self.prevent_access(entered.op)
        self.values.update([tensor, entered])
        self.external_values[tensor] = entered
        return entered


def while_context_of(op):
    """The innermost WhileContext ``op`` was built in, or None."""
    context = op._control_flow_context
    return context.get_while_context() if context is not None else None


# ---- nested structures (TF's ``nest``: lists, tuples, namedtuples and dicts) ----------------
def is_sequence(value):
    return isinstance(value, (list, tuple, dict))


def flatten(structure):
    """The leaves of ``structure``, depth first (dicts by sorted key)."""
    if not is_sequence(structure):
        return [structure]
    children = ([structure[k] for k in sorted(structure)] if isinstance(structure, dict)
                else list(structure))
    return [leaf for child in children for leaf in flatten(child)]


def pack_sequence_as(structure, flat):
    """Rebuilds ``structure`` with its leaves replaced by ``flat``, in order."""
    leaves = iter(flat)

    def pack(node):
        if not is_sequence(node):
            return next(leaves)
        if isinstance(node, dict):
            packed = {k: pack(node[k]) for k in sorted(node)}
            return type(node)((k, packed[k]) for k in node)
        children = [pack(child) for child in node]
        if hasattr(node, "_fields"):
            return type(node)(*children)
        return type(node)(children)
    return pack(structure)


def same_structure(first, second):
    """Whether two structures nest the same way (leaves aside)."""
    if is_sequence(first) != is_sequence(second):
        return False
    if not is_sequence(first):
        return True
    if isinstance(first, dict) != isinstance(second, dict) or len(first) != len(second):
        return False
    if isinstance(first, dict):
        return sorted(first) == sorted(second) and all(
            same_structure(first[k], second[k]) for k in first)
    if type(first) is not type(second) and not (isinstance(first, (list, tuple))
                                                and isinstance(second, (list, tuple))
                                                and not hasattr(first, "_fields")
                                                and not hasattr(second, "_fields")):
        return False
    return all(same_structure(a, b) for a, b in zip(first, second))


__all__ = ["CondContext", "WhileContext", "while_context_of"]
