"""Choosing elements by a condition: ``where`` (ops ``Select``, ``SelectV2``, ``Where``).

``tf.where(c, x, y)`` takes each element from ``x`` where ``c`` is true and
from ``y`` elsewhere; with only ``c`` it lists the coordinates of the true
elements.  TF1's ``Select`` allows no broadcasting beyond a scalar or a
row-choosing vector condition; ``SelectV2`` (``tf.where_v2``, TF2's
``tf.where``) broadcasts all three operands like ``add`` does.

The gradient routes ``grad`` the same way the values went: to ``x`` where ``c``
was true, to ``y`` elsewhere, and nothing to the bool condition.  For
``SelectV2`` each part is then summed over the dimensions its operand was
broadcast along.

Mirrors ``where`` in ``tensorflow/python/ops/array_ops.py`` and the
``Select`` gradients of ``math_grad.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops
from minitf.ops.common_shapes import broadcast_shapes
from minitf.ops.gradient_util import broadcast_gradient_args, sum_to_shape
from minitf.ops.math_util import expect_dtype, merge_shapes, op_scope
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


def _select_shape(op):
    """TF1's ``Select`` rule: ``t`` and ``e`` have one shape, and ``condition``
    is a scalar, has that shape too, or is a vector along its first dimension."""
    condition, t, e = (x.shape for x in op.inputs)
    data = merge_shapes(t, e)
    if condition.ndims is None or data.ndims is None or condition.ndims == 0:
        return [data]
    if condition.ndims == 1 and data.ndims > 0:
        merge_shapes(condition, data[:1])
        return [data]
    return [merge_shapes(data, condition)]


def _select_dtype(op):
    expect_dtype(op, 0, (dtypes.bool,))
    return [op.inputs[1].dtype.base_dtype]


def _select_v2_shape(op):
    condition, t, e = (x.shape for x in op.inputs)
    return [broadcast_shapes(broadcast_shapes(condition, t), e)]


def _where_shape(op):
    return [TensorShape([None, op.inputs[0].shape.ndims])]


_select = define_op(
    "Select", inputs=("condition", "t", "e"), shape_fn=_select_shape, dtype_fn=_select_dtype,
    same_dtype_inputs=("t", "e"), doc="t where condition else e; condition may be a batch vector.")
_select_v2 = define_op(
    "SelectV2", inputs=("condition", "t", "e"), shape_fn=_select_v2_shape,
    dtype_fn=_select_dtype, same_dtype_inputs=("t", "e"),
    doc="t where condition else e, all three broadcast together.")
_where = define_op(
    "Where", inputs=("condition",), outputs=("index",), shape_fn=_where_shape,
    type_constraint=dtypes.ALL_TYPES, dtype_fn=lambda op: [dtypes.int64],
    doc="The int64 coordinates [num_true, rank] of the true (non-zero) elements.")
not_differentiable("Where", reason="its output is integer coordinates")


def where(condition, x=None, y=None, name=None):
    """Chooses elements, or finds the true ones (``tf.where``, TF1 semantics).

    With ``x`` and ``y`` (op ``Select``): the elements of ``x`` where
    ``condition`` is true, else of ``y``.  ``x`` and ``y`` must have one shape;
    ``condition`` has that shape, or is a scalar, or is a vector choosing
    whole rows of ``x``.  There is no other broadcasting (see :func:`where_v2`).

    With neither (op ``Where``): the coordinates of the true elements, an
    int64 matrix with one row per true element and one column per dimension.

    Example:
        >>> sess.run(tf.where([True, False], [[1, 2], [3, 4]], [[5, 6], [7, 8]]))
        array([[1, 2],
               [7, 8]], dtype=int32)
        >>> sess.run(tf.where([[True, False], [False, True]]))
        array([[0, 0],
               [1, 1]])

    Raises:
        ValueError: if only one of ``x`` and ``y`` is given, or shapes mismatch.
    """
    if x is None and y is None:
        with op_scope(name, "Where", [condition]) as scope:
            condition = convert_to_tensor(condition, name="condition",
                                          preferred_dtype=dtypes.bool)
            return apply_op(_where, [condition], name=scope)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(_select, [condition, x, y], name=name or "Select")


def where_v2(condition, x=None, y=None, name=None):
    """Like :func:`where`, but ``condition``, ``x`` and ``y`` broadcast together
    (``tf.where_v2``, op ``SelectV2``; TF2's ``tf.where``)."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(_select_v2, [condition, x, y], name=name or "SelectV2")


@gradient("Select")
def _select_grad(op, grad):
    condition, t = op.inputs[0], op.inputs[1]
    zeros = array_ops.zeros_like(t)
    return [None, where(condition, grad, zeros), where(condition, zeros, grad)]


@gradient("SelectV2")
def _select_v2_grad(op, grad):
    """Like Select's, then each part is summed back to its operand's shape."""
    condition, t, e = op.inputs
    zeros = array_ops.zeros([], dtype=grad.dtype.base_dtype)
    output_shape = array_ops.shape(op.outputs[0])
    grads = [None]
    for operand, part in ((t, where_v2(condition, grad, zeros)),
                          (e, where_v2(condition, zeros, grad))):
        shape = array_ops.shape(operand)
        axes, _ = broadcast_gradient_args(shape, output_shape)
        grads.append(sum_to_shape(part, axes, shape))
    return grads
