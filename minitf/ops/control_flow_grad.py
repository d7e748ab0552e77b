"""Gradients of the control-flow primitives (TF's ``control_flow_grad.py``).

Back-propagation runs the forward control flow in reverse:

* through a **cond**, the gradient of ``Merge`` is ``Switch``-ed by the same
  predicate, so it flows only into the branch that was taken; the gradient of
  a branch's input ``Switch`` is the ``Merge`` of the two branch gradients
  (the untaken one is dead, or zeros built in the other branch);
* through a **while loop**, ``tf.gradients`` builds a second loop that runs
  as many iterations as the forward one did, backwards
  (:mod:`minitf.autodiff.control_flow_state`).  ``Exit`` becomes an ``Enter``
  into that loop, ``NextIteration`` an identity, the loop ``Merge`` a
  ``Switch`` on the gradient loop's predicate, the loop ``Switch`` a
  ``Merge`` whose back edge is closed on its second visit, and ``Enter``
  an ``Exit`` — or, for a loop invariant, a loop summing the gradient of
  every iteration.

The gradient functions find the loop they are in through the graph's current
control-flow context, set by ``tf.gradients`` around each call.
"""

from minitf.framework import graph as graph_lib
from minitf.ops import array_ops, comparison_ops
from minitf.ops import control_flow_context as cfc
from minitf.ops import control_flow_primitives as primitives
from minitf.ops.op_def_library import gradient, not_differentiable


def output_context(op):
    """The context an op's *outputs* live in: an Exit's is outside its loop."""
    context = op._control_flow_context
    if primitives.is_loop_exit(op) and context is not None:
        context = context.outer_context
    return context


@gradient("Switch")
def _switch_grad(op, *grad):
    graph = graph_lib.get_default_graph()
    op_ctxt = op._control_flow_context
    grad_ctxt = graph._get_control_flow_context()
    if isinstance(op_ctxt, cfc.WhileContext):
        grad_state = grad_ctxt.grad_state
        merge_grad = grad_state.switch_map.get(op)
        if merge_grad is not None:
            # Second visit, from the body (output 1): close the gradient loop's back edge.
            if grad[1] is not None:
                primitives.add_next_and_back_edge(merge_grad, grad[1])
            return None, None
        if grad[0] is not None:
            # First visit, from the Exit (output 0): the gradient loop's Merge,
            # its second input fixed on the second visit.
            merge_grad = primitives.merge([grad[0], grad[0]], name="b_switch")[0]
            grad_state.switch_map[op] = merge_grad
            return merge_grad, None
        return None, None
    if isinstance(op_ctxt, cfc.CondContext):
        if grad[1 - op_ctxt.branch] is None:
            return None, None
        return primitives.merge(list(grad), name="cond_grad")[0], None
    false_grad = primitives.switch(grad[0], op.inputs[1])[0] if grad[0] is not None else None
    true_grad = primitives.switch(grad[1], op.inputs[1])[1] if grad[1] is not None else None
    live = [g for g in (false_grad, true_grad) if g is not None]
    return (primitives.merge(live)[0] if live else None), None


@gradient("Merge")
def _merge_grad(op, grad, _):
    graph = graph_lib.get_default_graph()
    op_ctxt = output_context(op.inputs[0].op)
    grad_ctxt = graph._get_control_flow_context()
    if isinstance(op_ctxt, cfc.WhileContext):
        # Gradient loop: the predicate of the *gradient* loop routes it.
        return list(primitives.switch(grad, grad_ctxt.pivot))
    if isinstance(op_ctxt, cfc.CondContext):
        pred = op_ctxt.pred
        while_ctxt = grad_ctxt.get_while_context() if grad_ctxt is not None else None
        if while_ctxt is not None and while_ctxt.grad_state is not None:
            pred = while_ctxt.grad_state.accumulated_pred(pred)
        return list(primitives.switch(grad, pred, name="cond_grad"))
    return [primitives.switch(grad, comparison_ops.equal(op.outputs[1], i))[1]
            for i in range(len(op.inputs))]


@gradient("Exit")
def _exit_grad(op, grad):
    graph = graph_lib.get_default_graph()
    grad_ctxt = graph._get_control_flow_context()
    if not op._control_flow_context.back_prop:
        return None
    if op._control_flow_context.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    with grad_ctxt.plumbing():
        result = primitives.enter(grad, grad_ctxt.name, is_constant=False,
                                  parallel_iterations=grad_ctxt.parallel_iterations,
                                  name="b_exit")
    result.op._control_flow_context = grad_ctxt
    grad_ctxt.mark_values([grad, result])
    grad_ctxt.loop_enters.append(result)
    return result


@gradient("NextIteration")
def _next_iteration_grad(op, grad):
    return grad


@gradient("Enter")
def _enter_grad(op, grad):
    graph = graph_lib.get_default_graph()
    grad_ctxt = graph._get_control_flow_context()
    grad_ctxt = grad_ctxt.get_while_context() if grad_ctxt is not None else None
    if grad_ctxt is None or grad_ctxt.grad_state is None or not grad_ctxt.back_prop:
        return grad
    if op.get_attr("is_constant"):
        return grad_ctxt.grad_state.add_backprop_accumulator(op, grad)
    result = primitives.exit(grad, name="b_exit")
    grad_ctxt.loop_exits.append(result)
    return result


@gradient("LoopCond")
def _loop_cond_grad(op, grad):
    return None


not_differentiable("ControlTrigger")


def zeros_like_switch_output(op, index):
    """Zeros for a missing gradient of a cond ``Switch`` output: live exactly when
    that output is (TF's ``ZerosLikeOutsideLoop``)."""
    value = op.outputs[index]
    pivot = array_ops.identity(value)
    with value.graph.control_dependencies([pivot]):
        return array_ops.zeros_like(value)
