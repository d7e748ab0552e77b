"""Back-propagation through while loops: the gradient loop and the forward history.

When ``tf.gradients`` meets the ``Exit`` of a while loop, it builds a second
while loop — the *gradient loop* — that runs the forward loop backwards
(Yu et al., EuroSys 2018, §5; TF's ``control_flow_state.py``):

1. A counter is added to the forward loop (``f_count``): after the loop it
   holds *n*, the number of iterations that ran.
2. The gradient loop counts from *n* down to 1 (``b_count``); its predicate
   steers the gradient loop's Switches.
3. Whenever a gradient op needs a forward value computed inside the loop,
   that value is *saved per iteration*: the forward loop pushes it onto a
   stack (``f_acc``), the gradient loop pops it — so iteration *k* of the
   gradient loop sees the value of forward iteration *n - k*.
   ``get_real_value`` does this lazily, the first time a value is used;
   constants are cloned and loop invariants read directly instead.
4. The gradient of a loop invariant (a constant ``Enter``) is summed over
   the iterations by an accumulator loop variable (``b_acc``).

Nested loops nest their states: an inner loop's iteration count is itself
saved per outer iteration, so each run of the inner gradient loop knows how
far to count.  All stacks are created at the top level and entered into the
loops; pushes and pops are kept in iteration order by control edges (the
forward counter waits for the pushes, ``b_sync`` for the pops).

:class:`ControlFlowState` maps every forward loop on the path of a
``gradients()`` call to its :class:`GradLoopState`.
"""

import contextlib

from minitf.framework import tensor_util
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, comparison_ops, constant_op, math_ops, stack_ops
from minitf.ops import control_flow_context as cfc
from minitf.ops import control_flow_primitives as primitives
from minitf.ops.control_flow_grad import output_context


@contextlib.contextmanager
def _in_context(graph, context):
    """Sets the graph's control-flow context (None: top level) for the block."""
    saved = graph._get_control_flow_context()
    graph._set_control_flow_context(context)
    try:
        yield
    finally:
        graph._set_control_flow_context(saved)


def _add_loop_variable(context, initial, name):
    """Enter + Merge of a new loop variable of ``context`` (its back edge left open)."""
    with context.plumbing():
        entered = primitives.enter(initial, context.name, is_constant=False,
                                   parallel_iterations=context.parallel_iterations, name=name)
    entered.op._control_flow_context = context
    context.mark_values([initial, entered])
    context.loop_enters.append(entered)
    return primitives.merge([entered, entered], name=name)[0]


def _loop_constant_enter(value):
    """The constant Enter ``value`` is read from, through Identity/Switch, or None."""
    op = value.op
    while op.type in ("Identity", "Switch"):
        op = op.inputs[0].op
    return op if primitives.is_loop_constant_enter(op) else None


class GradLoopState:
    """The state of back-propagating through one forward loop (TF's ``_GradLoopState``).

    Attributes:
        forward_context: the forward loop's WhileContext.
        grad_context: the gradient loop's WhileContext.
        outer_grad_state: the state of the enclosing loop, for nested loops.
        forward_index: the forward counter's NextIteration (pushes precede it).
        grad_index: the gradient counter's NextIteration (pops precede it).
        history_map: forward tensor -> its value inside the gradient loop.
        switch_map: forward loop Switch -> the gradient loop's Merge.
    """

    def __init__(self, forward_ctxt, outer_grad_state):
        graph = forward_ctxt.graph
        self.forward_context = forward_ctxt
        self.outer_grad_state = outer_grad_state
        self.history_map = {}
        self.switch_map = {}
        self.unused_exits = []
        self.deferred_exits = []
        self.forward_loop_exits = list(forward_ctxt.loop_exits)
        self.pending_exits_count = len(forward_ctxt.loop_exits)
        self._forward_sync = None
        self._grad_sync = None
        outer_forward_ctxt = (outer_grad_state.forward_context if outer_grad_state
                              else forward_ctxt.outer_context)
        with _in_context(graph, outer_forward_ctxt):
            count, self.forward_index = self._add_forward_loop_counter()
        grad_name = graph.unique_name(forward_ctxt.name + "_grad")
        if outer_grad_state is not None:
            # Nested: remember how many iterations each run of this loop took.
            history_count = outer_grad_state.add_forward_accumulator(count)
            with _in_context(graph, outer_grad_state.grad_context):
                self.grad_context = cfc.WhileContext(
                    grad_name, forward_ctxt.parallel_iterations, forward_ctxt.back_prop,
                    grad_state=self)
                real_count = outer_grad_state.add_backprop_accumulated_value(history_count,
                                                                             count)
                self.grad_index = self._add_backprop_loop_counter(real_count)
        else:
            with _in_context(graph, outer_forward_ctxt):
                self.grad_context = cfc.WhileContext(
                    grad_name, forward_ctxt.parallel_iterations, forward_ctxt.back_prop,
                    grad_state=self)
                self.grad_index = self._add_backprop_loop_counter(count)

    # ---- the two counters -------------------------------------------------------------
    def _add_forward_loop_counter(self):
        """``n = 0; while (pivot) n++`` inside the forward loop; returns (n after the loop,
        the counter's NextIteration)."""
        context = self.forward_context
        n = constant_op.constant(0, name="f_count")
        if self.outer_grad_state is not None:
            n.op._add_control_input(self.outer_grad_state.forward_index.op.inputs[0].op)
        with context.entered():
            merge_n = _add_loop_variable(context, n, "f_count")
            switch_n = primitives.switch(merge_n, context.pivot)
            index = math_ops.add(switch_n[1], 1)
            next_n = primitives.add_next_and_back_edge(merge_n, index)
            total = primitives.exit(switch_n[0], name="f_count")
        context.loop_exits.append(total)
        return total, next_n

    def _add_backprop_loop_counter(self, count):
        """``while (n >= 1) n--`` as the gradient loop's own control; returns its NextIteration."""
        context = self.grad_context
        one = constant_op.constant(1, name="b_count")
        with context.entered():
            merge_count = _add_loop_variable(context, count, "b_count")
            context.pivot_for_pred = merge_count
            pred = comparison_ops.greater_equal(merge_count, one)
            context.pivot = primitives.loop_cond(pred, name="b_count")
            switch_count = primitives.switch(merge_count, context.pivot)
            index = math_ops.subtract(switch_count[1], one)
            context.pivot_for_body = index
            next_count = primitives.add_next_and_back_edge(merge_count, index)
            final_zero = primitives.exit(switch_count[0], name="b_count")
        context.loop_exits.append(final_zero)
        if self.outer_grad_state is not None:
            self.outer_grad_state.grad_sync._add_control_input(final_zero.op)
        return next_count

    @property
    def forward_sync(self):
        """A NoOp in the forward loop that the next iteration waits for (orders pushes in conds)."""
        if self._forward_sync is None:
            with self.forward_context.graph.control_dependencies(None), \
                    self.forward_context.entered():
                self._forward_sync = primitives.control_trigger(name="f_sync")
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self):
        """A NoOp in the gradient loop after this iteration's pops; the next iteration waits."""
        if self._grad_sync is None:
            with self.grad_context.graph.control_dependencies(None), self.grad_context.entered():
                self._grad_sync = primitives.control_trigger(name="b_sync")
            self.grad_index.op._add_control_input(self._grad_sync)
        return self._grad_sync

    # ---- saving forward values ------------------------------------------------------------
    def add_forward_accumulator(self, value, dead_branch=False):
        """A stack (at top level) onto which the forward loop pushes ``value`` every iteration."""
        graph = value.graph
        with graph.control_dependencies(None), _in_context(graph, None):
            acc = stack_ops.stack(value.dtype.base_dtype, name="f_acc")
        with _in_context(graph, self.forward_context.outer_context):
            entered_acc = self.forward_context.add_value(acc)
        value_ctxt = output_context(value.op)
        if value_ctxt is self.forward_context:
            with self.forward_context.entered():
                push = stack_ops.stack_push(entered_acc, value)
            self.forward_index.op._add_control_input(push.op)
        else:
            if not isinstance(value_ctxt, cfc.CondContext):
                raise TypeError("Cannot save %s for the gradient: it is neither in the loop nor "
                                "in a cond inside it" % value.name)
            with (value_ctxt.outer_context if dead_branch else value_ctxt).entered():
                push = stack_ops.stack_push(entered_acc, value)
            if dead_branch:
                push.op._control_flow_context = value_ctxt
            self.forward_sync._add_control_input(push.op)
        # Push after this iteration's counter increment, before the next iteration's.
        push.op._add_control_input(self.forward_index.op.inputs[0].op)
        return acc

    def add_backprop_accumulated_value(self, history_value, value, dead_branch=False):
        """Pops ``value``'s history inside the gradient loop (switched if it lives in a cond)."""
        history_ctxt = history_value.op._control_flow_context
        cond_ctxt = None
        value_ctxt = value.op._control_flow_context
        while value_ctxt is not None and value_ctxt is not history_ctxt:
            if isinstance(value_ctxt, cfc.CondContext):
                cond_ctxt = value_ctxt
                break
            value_ctxt = value_ctxt.outer_context
        graph = value.graph
        with graph.control_dependencies(None), self.grad_context.entered():
            if cond_ctxt is not None:
                pred = self.accumulated_pred_lookup(cond_ctxt.pred)
                branch = (1 - cond_ctxt.branch) if dead_branch else cond_ctxt.branch
                history_value = primitives.switch(history_value, pred)[branch]
            pop = stack_ops.stack_pop(history_value, value.dtype.base_dtype)
            pop.set_shape(value.shape)
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def accumulated_pred_lookup(self, pred):
        state = self
        while state is not None:
            if pred in state.history_map:
                return state.history_map[pred]
            state = state.outer_grad_state
        return pred

    def accumulated_pred(self, pred):
        """The per-iteration value of a cond predicate inside the loop, for the gradient."""
        real = self.history_map.get(pred)
        if real is None:
            grad_ctxt = self.grad_context
            grad_ctxt.exit()
            history = self.add_forward_accumulator(pred)
            grad_ctxt.enter()
            real = self.add_backprop_accumulated_value(history, pred)
            self.history_map[pred] = real
        return real

    def get_real_value(self, value):
        """``value`` (a forward-loop tensor) as the gradient loop sees it (TF's ``GetRealValue``)."""
        real = self.history_map.get(value)
        if real is not None:
            return real
        graph = value.graph
        current, state, history = value, self, None
        while True:
            enter_op = _loop_constant_enter(current)
            if enter_op is not None:
                # A loop invariant: read it from outside instead of saving it.
                current = enter_op.inputs[0]
                state = state.outer_grad_state
                if state is None:
                    real = self.grad_context.add_value(current)
                    break
            elif current.op.type == "Const":
                real = constant_op.constant(tensor_util.constant_value(current),
                                            dtype=current.dtype)
                break
            else:
                with _in_context(graph, None):
                    history = state.add_forward_accumulator(current)
                break
        if real is None:
            real = state.add_backprop_accumulated_value(history, current)
            if state is not self:
                real = self.grad_context.add_value(real)
        self.history_map[value] = real
        return real

    # ---- loop invariants ---------------------------------------------------------------
    def add_backprop_accumulator(self, op, grad):
        """The gradient of a loop invariant: the sum over iterations (``b_acc``).

        An IndexedSlices (a ``tf.gather`` of the invariant in the body) is
        densified in the gradient loop and summed densely; TF's
        ``AddBackpropIndexedSlicesAccumulator`` would concatenate the slices.
        """
        context = self.grad_context
        grad = convert_to_tensor(grad)
        graph = grad.graph
        context.exit()
        try:
            with _in_context(graph, context.outer_context):
                if grad.shape.is_fully_defined():
                    acc = array_ops.zeros(grad.shape.as_list(), grad.dtype.base_dtype,
                                          name="b_acc")
                elif self.outer_grad_state is not None:
                    acc = self._zeros_for_outer(op.inputs[0], grad.dtype.base_dtype)
                else:
                    acc = array_ops.zeros(array_ops.shape(op.inputs[0]), grad.dtype.base_dtype,
                                          name="b_acc")
        finally:
            context.enter()
        merge_acc = _add_loop_variable(context, acc, "b_acc")
        switch_false, switch_true = primitives.switch(merge_acc, context.pivot)
        primitives.add_next_and_back_edge(merge_acc, math_ops.add(switch_true, grad))
        result = primitives.exit(switch_false, name="b_acc")
        context.loop_exits.append(result)
        return result

    def _zeros_for_outer(self, value, dtype):
        """Zeros shaped like ``value`` (of the outer forward loop), in the outer gradient loop."""
        outer = self.outer_grad_state
        with _in_context(value.graph, self.forward_context.outer_context):
            shape = array_ops.shape(value)
        with _in_context(value.graph, None):
            history = outer.add_forward_accumulator(shape)
        with outer.grad_context.entered():
            real_shape = outer.add_backprop_accumulated_value(history, shape)
            return array_ops.zeros(real_shape, dtype)


class ControlFlowState:
    """The :class:`GradLoopState` of every loop a ``gradients()`` call goes through."""

    def __init__(self):
        self.states = {}  # forward WhileContext -> GradLoopState

    def get_grad_state(self, op, before):
        """The state of the loop ``op`` is in (for an Exit, before its gradient: the outer one)."""
        if before and primitives.is_loop_exit(op):
            forward = op._control_flow_context.outer_context
            forward = forward.get_while_context() if forward is not None else None
        else:
            forward = cfc.while_context_of(op)
        return self.states.get(forward) if forward is not None else None

    @contextlib.contextmanager
    def grad_context_for(self, op, before):
        """Enters the gradient loop of ``op``'s loop (if any) for the block."""
        state = self.get_grad_state(op, before)
        if state is None:
            yield
            return
        with state.grad_context.entered():
            yield

    def add_while_context(self, op, between_list, between):
        """Creates the state of ``op``'s loop (``op`` is an Exit); adds all its Exits to ``between``."""
        forward = cfc.while_context_of(op)
        state = self.states.get(forward)
        if state is None:
            outer_forward = forward.outer_context
            outer_forward = outer_forward.get_while_context() if outer_forward else None
            outer_state = self.states.get(outer_forward) if outer_forward is not None else None
            if outer_forward is not None and outer_state is None:
                raise ValueError("Cannot differentiate through loop %s: the gradient must also "
                                 "pass through its enclosing loop %s"
                                 % (forward.name, outer_forward.name))
            state = GradLoopState(forward, outer_state)
            self.states[forward] = state
            for loop_exit in state.forward_loop_exits:
                if loop_exit.op not in between:
                    between.add(loop_exit.op)
                    between_list.append(loop_exit.op)

    def process_unused_loop_exits(self, pending, to_ops):
        """Exits with no gradient coming; returns those to seed with zeros now."""
        loop_exits = []
        for state in self.states.values():
            for y in state.forward_loop_exits:
                if pending[y.op] == 0:
                    state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        loop_exits.extend(state.unused_exits)
            for y in state.forward_context.loop_enters:
                if pending[y.op] == 0:
                    pending[y.op] = 1
        return loop_exits

    def zeros_like_for_exit(self, value):
        """A zero gradient for a loop Exit whose result no y depends on."""
        forward = value.op._control_flow_context
        outer_forward = forward.outer_context
        outer_forward = outer_forward.get_while_context() if outer_forward else None
        outer_state = self.states.get(outer_forward) if outer_forward is not None else None
        if outer_state is not None:
            if value.shape.is_fully_defined():
                with outer_state.grad_context.entered():
                    return array_ops.zeros(value.shape.as_list(), value.dtype.base_dtype)
            with _in_context(value.graph, forward.outer_context):
                shape = array_ops.shape(value)
            history = outer_state.add_forward_accumulator(shape)
            with outer_state.grad_context.entered():
                real_shape = outer_state.add_backprop_accumulated_value(history, shape)
                return array_ops.zeros(real_shape, value.dtype.base_dtype)
        if value.shape.is_fully_defined():
            return array_ops.zeros(value.shape.as_list(), value.dtype.base_dtype)
        return array_ops.zeros_like(value)

    def zeros_like_in_loop(self, op, index):
        """Zeros for a missing gradient of ``op.outputs[index]`` inside a gradient loop.

        For the Switch of a cond inside the loop they must be live only in the
        iterations that took the *other* branch: they are switched by the
        saved predicate (TF's ``ZerosLikeV1WhileLoop``).
        """
        if primitives.is_loop_switch(op):
            return None
        value = op.outputs[index]
        op_ctxt = op._control_flow_context
        state = self.states.get(cfc.while_context_of(op))
        if primitives.is_switch(op) and isinstance(op_ctxt, cfc.CondContext) and state:
            pred = state.accumulated_pred(op_ctxt.pred)
            if value.shape.is_fully_defined():
                zeros = array_ops.zeros(value.shape.as_list(), value.dtype.base_dtype)
            else:
                zeros = array_ops.zeros_like(op.inputs[0])
            return primitives.switch(zeros, pred)[1 - op_ctxt.branch]
        if value.shape.is_fully_defined():
            return array_ops.zeros(value.shape.as_list(), value.dtype.base_dtype)
        return array_ops.zeros_like(value)

    def post_processing(self):
        """Closes gradient loops whose variable does not depend on itself (zero back edge)."""
        for state in self.states.values():
            for b_merge in state.switch_map.values():
                if b_merge.op.inputs[0] is b_merge.op.inputs[1]:
                    entered = b_merge.op.inputs[0]
                    with state.grad_context.entered():
                        zeros = array_ops.zeros_like(entered)
                        primitives.add_next_and_back_edge(b_merge, zeros)


def maybe_create_control_flow_state(between_list, between):
    """A ControlFlowState when the ops between xs and ys include loop Exits, else None.

    ``between_list`` and ``between`` gain the Exits of every loop involved.
    """
    exits = [op for op in between_list if primitives.is_loop_exit(op)]
    if not exits:
        return None
    state = ControlFlowState()
    # Outer loops first: an inner loop's state refers to its outer loop's.
    for op in sorted(exits, key=lambda o: _depth(o._control_flow_context)):
        state.add_while_context(op, between_list, between)
    return state


def _depth(context):
    depth = 0
    while context is not None:
        depth += 1
        context = context.outer_context
    return depth


__all__ = ["ControlFlowState", "GradLoopState", "maybe_create_control_flow_state"]
