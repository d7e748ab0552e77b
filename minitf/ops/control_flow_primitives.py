"""The six dataflow primitives of dynamic control flow (Yu et al., EuroSys 2018, §3).

``tf.cond`` and ``tf.while_loop`` are not Python control flow around
``Session.run``: they add these ops to the graph, and the executor gives them
their meaning (see :mod:`minitf.runtime.executors.control_flow`).

* ``Switch(data, pred)`` forwards ``data`` to output 1 when ``pred`` is true,
  to output 0 otherwise; the other output is *dead*.  Dead values propagate
  through ordinary ops, which then do not run — that is how only the taken
  branch of a cond executes.
* ``Merge(inputs)`` forwards the first *live* input it receives, and its index.
* ``Enter(data, frame_name)`` moves a value into a child *frame* (the body of a
  loop); with ``is_constant`` the value is available to every iteration.
* ``NextIteration(data)`` moves a value to the next iteration of its frame.
* ``Exit(data)`` moves a value from a frame back to its parent frame.
* ``LoopCond(pred)`` marks the loop predicate (a ``Switch`` input).

Every value at run time is tagged with its frame and iteration, so the ops of
many iterations can be in flight at once (bounded by ``parallel_iterations``).

``switch`` and ``merge`` also take ``IndexedSlices`` (a sparse gradient
flowing back through a ``tf.cond``): each of its tensors is switched or
merged, and a dense tensor merged with slices becomes slices of all its rows,
as in TF.

Mirrors ``control_flow_ops.switch``/``merge``/``_Enter``/``exit``/
``_NextIteration`` and ``loop_cond`` in TF's ``control_flow_ops.py``; the
gradients of these ops are in :mod:`minitf.ops.control_flow_grad`.
"""

from minitf.framework import dtypes
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import array_ops, math_ops, unary_ops
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op, define_op

def _switch_shape(op):
    return [op.inputs[0].shape, op.inputs[0].shape]


def _switch_dtypes(op):
    return [op.inputs[0].dtype] * 2  # a variable's reference stays one (TF's RefSwitch)


def _input_dtype(op):
    return [op.inputs[0].dtype]


def _merge_shape(op):
    """The most specific shape every input is compatible with."""
    shapes = [t.shape for t in op.inputs]
    result = shapes[0]
    for shape in shapes[1:]:
        if result.ndims is None or shape.ndims is None or result.ndims != shape.ndims:
            return [unknown_shape(), TensorShape([])]
        result = TensorShape([a if a == b else None
                              for a, b in zip(result.as_list(), shape.as_list())])
    return [result, TensorShape([])]


def _merge_dtypes(op):
    return [op.inputs[0].dtype.base_dtype, dtypes.int32]


_switch = define_op(
    "Switch", inputs=("data", "pred"), outputs=("output_false", "output_true"),
    shape_fn=_switch_shape, dtype_fn=_switch_dtypes, ref_inputs=(0,),
    doc="Forwards data to output_true if pred, else to output_false; the other is dead.")
_merge = define_op(
    "Merge", inputs=("inputs*",), outputs=("output", "value_index"), shape_fn=_merge_shape,
    dtype_fn=_merge_dtypes, same_dtype_inputs=("inputs",),
    doc="Forwards the first live input and its index.")
_enter = define_op(
    "Enter", inputs=("data",), attrs={"frame_name": None, "is_constant": False,
                                      "parallel_iterations": 10},
    shape_fn=unchanged_shape, dtype_fn=_input_dtype, ref_inputs=(0,),
    doc="Moves data into the child frame frame_name.")
_exit = define_op("Exit", inputs=("data",), shape_fn=unchanged_shape,
                  doc="Moves data from a frame to its parent frame.")
_next_iteration = define_op("NextIteration", inputs=("data",), shape_fn=unchanged_shape,
                            doc="Moves data to the next iteration of its frame.")
_loop_cond = define_op("LoopCond", inputs=("input",), shape_fn=unchanged_shape,
                       type_constraint=(dtypes.bool,), doc="The predicate of a while loop.")

_control_trigger = define_op(
    "ControlTrigger", outputs=(), shape_fn=lambda op: [],
    doc="Does nothing, and is never dead: orders ops across the iterations of a loop.")


def check_pred(pred, what):
    """``pred`` as a scalar bool Tensor.

    Raises:
        TypeError: if it is not a bool.
        ValueError: if it is not a scalar.
    """
    pred = convert_to_tensor(pred, name="pred")
    if pred.dtype.base_dtype != dtypes.bool:
        raise TypeError("%s: pred must be a bool tensor, got %s of dtype %s"
                        % (what, pred.name, pred.dtype.base_dtype.name))
    if pred.shape.ndims not in (None, 0):
        raise ValueError("%s: pred must be a scalar, got %s of shape %s"
                         % (what, pred.name, pred.shape))
    return pred


def switch(data, pred, name=None):
    """Forwards ``data`` to the output chosen by ``pred`` (TF's ``control_flow_ops.switch``).

    Returns:
        ``(output_false, output_true)``: at run time exactly one is live.

    Example:
        >>> f, t = switch(tf.constant(1.0), tf.constant(True))   # t is live, f is dead
    """
    pred = check_pred(pred, "switch")
    if isinstance(data, IndexedSlices):
        values = apply_op(_switch, [data.values, pred], name=name or "Switch")
        indices = apply_op(_switch, [data.indices, pred], name="indices")
        dense_shape = ((None, None) if data.dense_shape is None else
                       apply_op(_switch, [data.dense_shape, pred], name="dense_shape"))
        return tuple(IndexedSlices(values[i], indices[i], dense_shape[i]) for i in (0, 1))
    output_false, output_true = apply_op(_switch, [data, pred], name=name or "Switch")
    return output_false, output_true


def merge(inputs, name=None):
    """Forwards the first live value of ``inputs`` (TF's ``control_flow_ops.merge``).

    Returns:
        ``(output, value_index)``: the value and which input delivered it.
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("merge needs at least one input")
    if any(isinstance(x, IndexedSlices) for x in inputs):
        return _merge_slices([_as_indexed_slices(x) for x in inputs], name)
    output, value_index = apply_op(_merge, [inputs], name=name or "Merge")
    return output, value_index


def _merge_slices(inputs, name):
    """Merges the values, the indices and the dense shapes of IndexedSlices."""
    if any(x.indices.dtype == dtypes.int64 for x in inputs):
        inputs = [IndexedSlices(x.values, unary_ops.cast(x.indices, dtypes.int64), x.dense_shape)
                  for x in inputs]
    values = apply_op(_merge, [[x.values for x in inputs]], name=name or "Merge")[0]
    indices, value_index = apply_op(_merge, [[x.indices for x in inputs]], name="indices")
    if any(x.dense_shape is None for x in inputs):
        if not all(x.dense_shape is None for x in inputs):
            raise ValueError("Either all merged IndexedSlices must have a dense_shape, or none "
                             "must have a dense_shape.")
        return IndexedSlices(values, indices), value_index
    dense_shape = apply_op(_merge, [[x.dense_shape for x in inputs]], name="dense_shape")[0]
    return IndexedSlices(values, indices, dense_shape), value_index


def _as_indexed_slices(x):
    """``x`` as IndexedSlices: itself, or all the rows of a dense tensor.

    The shape is a ``ShapeN`` op even when it is known while building: it
    must be dead exactly when ``x`` is, where a constant would always be live.
    """
    if isinstance(x, IndexedSlices):
        return x
    x = convert_to_tensor(x)
    shape = array_ops.shape_n([x])[0]
    return IndexedSlices(x, math_ops.range(0, shape[0]), shape)


def enter(data, frame_name, is_constant=False, parallel_iterations=10, name=None):
    """Makes ``data`` available in the child frame ``frame_name`` (TF's ``_Enter``)."""
    return apply_op(_enter, [data], name=name or "Enter",
                    attrs={"frame_name": frame_name, "is_constant": bool(is_constant),
                           "parallel_iterations": int(parallel_iterations)})


def exit(data, name=None):  # noqa: A001 - TF's name
    """Makes ``data`` available in the parent frame (TF's ``control_flow_ops.exit``)."""
    return apply_op(_exit, [data], name=name or "Exit")


def next_iteration(data, name=None):
    """Makes ``data`` available to the next iteration (TF's ``_NextIteration``)."""
    return apply_op(_next_iteration, [data], name=name or "NextIteration")


def add_next_and_back_edge(merge, value, name=None):
    """Closes a loop: ``NextIteration(value)`` becomes input 1 of ``merge``
    (TF's ``_AddNextAndBackEdge``).

    The NextIteration is colocated with the Merge, so a loop's back edge
    never crosses devices (the value of iteration *k* must arrive in
    iteration *k + 1* of the same frame).

    Returns:
        The NextIteration's output.
    """
    with merge.graph.colocate_with(merge.op):
        next_value = next_iteration(value, name=name)
    merge.op._update_input(1, next_value)
    return next_value


def loop_cond(pred, name=None):
    """Marks ``pred`` as the predicate of a loop (TF's ``gen_control_flow_ops.loop_cond``)."""
    return apply_op(_loop_cond, [pred], name=name or "LoopCond")


def control_trigger(name=None):
    """An op that is never dead, for control edges only (TF's ``control_trigger``).

    Unlike a NoOp, it runs even when a control input is dead, so the gradient
    of a loop can order its stack pops after pops guarded by a cond.
    """
    return apply_op(_control_trigger, [], name=name or "ControlTrigger")


def is_switch(op):
    return op.type == "Switch"


def is_merge(op):
    return op.type == "Merge"


def is_loop_exit(op):
    return op.type == "Exit"


def is_loop_switch(op):
    """Whether ``op`` is the Switch of a while loop (its predicate is a LoopCond)."""
    return op.type == "Switch" and op.inputs[1].op.type == "LoopCond"


def is_loop_constant_enter(op):
    return op.type == "Enter" and op.get_attr("is_constant")


__all__ = ["switch", "merge", "enter", "exit", "next_iteration", "loop_cond", "control_trigger"]
