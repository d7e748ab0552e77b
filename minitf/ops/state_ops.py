"""Variable ops: ``VariableV2`` and the assignments that write through its reference.

In TF1 a variable is an op whose output is a *reference* (dtype
``float32_ref``): it names storage in the session rather than carrying a
value.  ``Assign``, ``AssignAdd`` and ``AssignSub`` take that reference as
input 0 and write through it; any other op reading it sees the current value.
The storage itself lives in the session's resource manager, so values survive
across ``Session.run`` calls and vanish with ``close()``.

Mirrors ``tensorflow/python/ops/state_ops.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import as_shape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _variable_shape(op):
    return [as_shape(op.get_attr("shape"))]


def _ref_dtype(op):
    return [dtypes.as_dtype(op.get_attr("dtype"))._as_ref]


_variable = define_op(
    "VariableV2", outputs=("ref",), attrs={"shape": None, "dtype": None, "shared_name": ""},
    shape_fn=_variable_shape, dtype_fn=_ref_dtype, stateful=True,
    doc="Storage that persists across steps; outputs a reference to it.")
not_differentiable("VariableV2")


def variable_op(shape, dtype, name="Variable", shared_name=""):
    """Adds a ``VariableV2`` op; returns its reference tensor."""
    return apply_op(_variable, [], attrs={"shape": as_shape(shape), "dtype": dtypes.as_dtype(dtype),
                                          "shared_name": shared_name}, name=name)


def _assign_shape(op):
    if op.get_attr("validate_shape"):
        return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]
    return [op.inputs[1].shape]


def _ref_of_input(op):
    return [op.inputs[0].dtype]


def _update_shape(op):
    return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]


_assign = define_op(
    "Assign", inputs=("ref", "value"), outputs=("output_ref",),
    attrs={"validate_shape": True, "use_locking": True},
    shape_fn=_assign_shape, dtype_fn=_ref_of_input, same_dtype_inputs=("ref", "value"),
    stateful=True, ref_inputs=(0,), doc="ref = value; outputs the reference.")
_assign_add = define_op(
    "AssignAdd", inputs=("ref", "value"), outputs=("output_ref",), attrs={"use_locking": False},
    shape_fn=_update_shape, dtype_fn=_ref_of_input, same_dtype_inputs=("ref", "value"),
    type_constraint=dtypes.NUMERIC, stateful=True, ref_inputs=(0,),
    doc="ref += value; outputs the reference.")
_assign_sub = define_op(
    "AssignSub", inputs=("ref", "value"), outputs=("output_ref",), attrs={"use_locking": False},
    shape_fn=_update_shape, dtype_fn=_ref_of_input, same_dtype_inputs=("ref", "value"),
    type_constraint=dtypes.NUMERIC, stateful=True, ref_inputs=(0,),
    doc="ref -= value; outputs the reference.")
not_differentiable("Assign", "AssignAdd", "AssignSub")


def _scalar_shape(op):
    op.inputs[0].shape.assert_is_compatible_with(as_shape([]))
    return [as_shape([])]


def _base_of_ref(op):
    return [op.inputs[0].dtype.base_dtype]


_count_up_to = define_op(
    "CountUpTo", inputs=("ref",), outputs=("output",), attrs={"limit": None},
    shape_fn=_scalar_shape, dtype_fn=_base_of_ref, type_constraint=(dtypes.int32, dtypes.int64),
    stateful=True, ref_inputs=(0,),
    doc="Increments a scalar int variable until it reaches limit; outputs its old value.")
not_differentiable("CountUpTo")


def _check_ref(ref, what):
    if not ref.dtype.is_ref:
        raise TypeError("'%s' needs a variable reference as its first input, got %r. (Resource "
                        "variables are not supported; use tf.Variable.)" % (what, ref))


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """Writes ``value`` into the variable ``ref``; returns the reference (``tf.assign``).

    Raises:
        ValueError: if ``validate_shape`` and the shapes are incompatible.
        TypeError: if ``value`` is a Tensor of another dtype.
    """
    ref = _as_ref(ref)
    _check_ref(ref, "Assign")
    return apply_op(_assign, [ref, value],
                    attrs={"validate_shape": True if validate_shape is None else validate_shape,
                           "use_locking": True if use_locking is None else use_locking},
                    name=name or "Assign")


def assign_add(ref, value, use_locking=None, name=None):
    """``ref += value``; returns the reference (``tf.assign_add``)."""
    ref = _as_ref(ref)
    _check_ref(ref, "AssignAdd")
    return apply_op(_assign_add, [ref, value], attrs={"use_locking": bool(use_locking)},
                    name=name or "AssignAdd")


def assign_sub(ref, value, use_locking=None, name=None):
    """``ref -= value``; returns the reference (``tf.assign_sub``)."""
    ref = _as_ref(ref)
    _check_ref(ref, "AssignSub")
    return apply_op(_assign_sub, [ref, value], attrs={"use_locking": bool(use_locking)},
                    name=name or "AssignSub")


def count_up_to(ref, limit, name=None):
    """Increments the int32/int64 scalar variable ``ref`` until it reaches
    ``limit``; returns its value before the increment (``tf.count_up_to``).

    Running it when the variable already holds ``limit`` raises
    ``OutOfRangeError`` ("Reached limit of ..."); ``tf.train.limit_epochs``
    turns that into the end of an input pipeline.

    Example:
        >>> counter = tf.Variable(0)
        >>> step = counter.count_up_to(2)
        >>> sess.run(step), sess.run(step)       # then OutOfRangeError
        (0, 1)
    """
    ref = _as_ref(ref)
    _check_ref(ref, "CountUpTo")
    return apply_op(_count_up_to, [ref], attrs={"limit": int(limit)}, name=name or "CountUpTo")


def _as_ref(ref):
    """A Variable's reference tensor (``ref`` itself when it already is one)."""
    return ref._ref() if hasattr(ref, "_ref") else ref
