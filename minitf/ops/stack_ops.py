"""Stacks: where a while loop keeps the values its gradient loop needs, one per iteration.

To back-propagate through a loop, the gradient of iteration *k* needs the
forward values of iteration *k*; the backward loop visits the iterations in
reverse.  TF1 saves each such value on a stack: the forward loop pushes it
every iteration, the gradient loop pops it every iteration (Yu et al. 2018,
§5.1).  ``tf.gradients`` adds these ops by itself
(:mod:`minitf.autodiff.control_flow_state`); users rarely build them.

The stack handle is a ``resource`` value created afresh each time ``StackV2``
runs, so a stack lives for one step (or one iteration of an outer loop).

Mirrors ``StackV2``/``StackPushV2``/``StackPopV2`` of TF's ``data_flow_ops``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _handle_shape(op):
    return [TensorShape([])]


def _handle_dtype(op):
    return [dtypes.resource]


def _elem_shape(op):
    return [op.inputs[1].shape]


def _pop_shape(op):
    return [unknown_shape()]


def _pop_dtype(op):
    return [dtypes.as_dtype(op.get_attr("elem_type"))]


def _push_dtype(op):
    return [op.inputs[1].dtype.base_dtype]


_stack = define_op(
    "StackV2", inputs=("max_size",), outputs=("handle",),
    attrs={"elem_type": None, "stack_name": ""}, shape_fn=_handle_shape,
    dtype_fn=_handle_dtype, stateful=True, doc="A new, empty stack; outputs its handle.")
_stack_push = define_op(
    "StackPushV2", inputs=("handle", "elem"), outputs=("output",),
    attrs={"swap_memory": False}, shape_fn=_elem_shape, dtype_fn=_push_dtype, stateful=True,
    doc="Pushes elem onto the stack; outputs elem.")
_stack_pop = define_op(
    "StackPopV2", inputs=("handle",), outputs=("elem",), attrs={"elem_type": None},
    shape_fn=_pop_shape, dtype_fn=_pop_dtype, stateful=True,
    doc="Pops the top of the stack.")
not_differentiable("StackV2", "StackPushV2", "StackPopV2")


def stack(elem_type, max_size=-1, name="Stack"):
    """A new stack of ``elem_type`` values (TF's ``gen_data_flow_ops.stack_v2``)."""
    return apply_op(_stack, [max_size], name=name,
                    attrs={"elem_type": dtypes.as_dtype(elem_type).base_dtype,
                           "stack_name": name})


def stack_push(handle, elem, name="StackPush"):
    """Pushes ``elem``; returns it (TF's ``stack_push_v2``)."""
    return apply_op(_stack_push, [handle, elem], name=name)


def stack_pop(handle, elem_type, name="StackPop"):
    """Pops and returns the top element (TF's ``stack_pop_v2``)."""
    return apply_op(_stack_pop, [handle], name=name,
                    attrs={"elem_type": dtypes.as_dtype(elem_type).base_dtype})


__all__ = ["stack", "stack_push", "stack_pop"]
