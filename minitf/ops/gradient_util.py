"""What gradient functions share: undoing broadcasting, and summing a gradient.

Binary ops *broadcast*: ``x + b`` with ``x`` of shape ``[32, 10]`` and ``b``
of shape ``[10]`` adds ``b`` to every row, as if ``b`` had been copied 32
times.  The gradient flows back through every copy, so ``b`` receives the
*sum* of the 32 rows of the output's gradient.  In general, the gradient of an
operand is the output's gradient summed over the axes along which that operand
was stretched, then reshaped to the operand's shape.  That is *unbroadcasting*
(:func:`unbroadcast`), and every broadcasting op's gradient ends with it.

Which axes?  Pad both shapes on the left with 1s to a common rank; an operand
was stretched along each axis where its dimension is 1 and the other's is
not::

    x: [32, 10]  ->  [32, 10]    summed over: none
    b:     [10]  ->  [ 1, 10]    summed over: axis 0 (the padding)

When the static shapes settle it — always for fully defined shapes, and for
the usual ``matmul(x, w) + b`` with a batch of unknown size — the axes are
Python constants, as in TF2's ``SmartBroadcastGradientArgs``.  Otherwise the
op ``BroadcastGradientArgs`` computes them from the run-time shapes, as TF1's
``math_grad.py`` always does (:func:`broadcast_gradient_args`).

**Why ``Sum`` is named, not imported.**  Summing is the ``Sum`` op of
:mod:`~minitf.ops.reduction_ops`.  But the reductions' own gradients are built
from ``Tile`` and the math ops (``Maximum``, ``FloorDiv`` ...), whose gradients
sum with this module: importing reduction_ops here would close a loop.  So
:func:`sum_over` builds the op from its declaration, found in the registry by
type name — as TF1's generated ``gen_math_ops._sum`` does — and the op modules
stay a chain: array_ops ← this module ← math_ops ← reduction_ops.

Mirrors ``BroadcastGradientArgs`` and the ``reshape(reduce_sum(grad, rx), sx)``
pattern of ``tensorflow/python/ops/math_grad.py``.
"""

from minitf.framework.tensor_shape import unknown_shape
from minitf.ops import array_ops
from minitf.ops.math_util import REAL_INDEX, with_rank
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


# ---- unbroadcasting the gradients of a binary op ---------------------------------------
def unbroadcast(op, grad_x, grad_y):
    """The gradients of the inputs ``x, y`` of a broadcasting binary op.

    Args:
        op: the op, whose ``inputs`` are ``x`` and ``y``.
        grad_x: the gradient reaching ``x``, still of the op's output shape.
        grad_y: the same for ``y``.

    Returns:
        ``[grad_x, grad_y]``, each summed over the axes its input was
        broadcast along and shaped like that input.

    Example: for ``z = x * y`` with ``x`` of shape ``[3, 1]`` and ``y`` of
    shape ``[4]``, ``unbroadcast(op, grad * y, x * grad)`` sums the first over
    axis 1 (keeping it) and the second over axis 0.
    """
    x, y = op.inputs
    static = _static_reduction_axes(x.shape, y.shape)
    if static is not None:
        rank = max(x.shape.ndims, y.shape.ndims)
        return [_sum_to_rank(grad_x, static[0], x.shape.ndims, rank),
                _sum_to_rank(grad_y, static[1], y.shape.ndims, rank)]
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx, ry = broadcast_gradient_args(sx, sy)
    return [sum_to_shape(grad_x, rx, sx), sum_to_shape(grad_y, ry, sy)]


def _static_reduction_axes(x_shape, y_shape):
    """The axes each gradient is summed over, if the static shapes settle them.

    With both shapes padded on the left with 1s to a common rank, an operand
    was broadcast along an axis where its own dimension is 1 and the other's
    is not (summing over an axis of length 1 would change nothing anyway).
    Where one dimension is unknown and the other is not 1, only the run-time
    shapes can tell: ``[?, 3] + [1, 3]`` settles it, ``[?, 3] + [4, 3]`` does not.

    Returns:
        ``(axes_x, axes_y)``, lists of axes, or None.
    """
    if x_shape.ndims is None or y_shape.ndims is None:
        return None
    rank = max(x_shape.ndims, y_shape.ndims)
    padded_x = [1] * (rank - x_shape.ndims) + x_shape.as_list()
    padded_y = [1] * (rank - y_shape.ndims) + y_shape.as_list()
    axes_x = list(range(rank - x_shape.ndims))   # the padding is always summed away
    axes_y = list(range(rank - y_shape.ndims))
    for axis in range(rank - min(x_shape.ndims, y_shape.ndims), rank):
        a, b = padded_x[axis], padded_y[axis]
        if a == b and a is not None:
            continue
        if a == 1:
            axes_x.append(axis)
        elif b == 1:
            axes_y.append(axis)
        elif a is None or b is None:
            return None
    return axes_x, axes_y


def _sum_to_rank(grad, axes, ndims, rank):
    """``grad`` (of rank ``rank``) summed over ``axes``, to an operand of rank ``ndims``."""
    if not axes:
        return grad
    lead = rank - ndims
    if all(axis < lead for axis in axes):
        return sum_over(grad, axes)   # only the padding: dropping it fits
    summed = sum_over(grad, axes, keepdims=True)
    return array_ops.squeeze(summed, list(range(lead))) if lead else summed


# ---- the axes, at run time: BroadcastGradientArgs ----------------------------------------
def _broadcast_gradient_args_shape(op):
    for t in op.inputs:
        with_rank(t.shape, 1)
    return [unknown_shape(1), unknown_shape(1)]


_broadcast_gradient_args = define_op(
    "BroadcastGradientArgs", inputs=("s0", "s1"), outputs=("r0", "r1"),
    shape_fn=_broadcast_gradient_args_shape, type_constraint=REAL_INDEX,
    same_dtype_inputs=("s0", "s1"),
    doc="The axes to sum the gradients of two broadcast operands over.")
not_differentiable("BroadcastGradientArgs",
                   reason="integer shape arithmetic, used only inside gradients")


def broadcast_gradient_args(s0, s1, name=None):
    """The axes along which operands of shapes ``s0`` and ``s1`` were broadcast.

    Both shapes are padded on the left with 1s to the rank of their
    broadcast; ``r0`` lists the axes where the padded ``s0`` is 1, ``r1`` those
    where the padded ``s1`` is 1 (nothing at all when the shapes are equal).
    Summing the gradient of ``x + y`` over ``r0`` and reshaping to ``s0``
    gives the gradient of ``x``.  Mirrors TF's ``gen_array_ops.broadcast_gradient_args``.

    Example:
        >>> sess.run(broadcast_gradient_args([3, 1], [1, 4]))
        [array([1], dtype=int32), array([0], dtype=int32)]
        >>> sess.run(broadcast_gradient_args([2, 3, 4], [4]))
        [array([], dtype=int32), array([0, 1], dtype=int32)]

    Raises:
        tf.errors.InvalidArgumentError: at run time, if the shapes do not broadcast.
    """
    return apply_op(_broadcast_gradient_args, [s0, s1], name=name or "BroadcastGradientArgs")


# ---- summing a gradient ------------------------------------------------------------------
def sum_to_shape(grad, axes, shape):
    """``grad`` summed over ``axes`` and reshaped to ``shape`` (a shape tensor):
    the gradient of an operand broadcast along ``axes`` to ``grad``'s shape."""
    return array_ops.reshape(sum_over(grad, axes), shape)


def sum_over(grad, axes, keepdims=False):
    """``grad`` summed over ``axes``: the ``Sum`` op ``tf.reduce_sum(grad, axes)`` adds.

    The op is named by its type (see the module docstring for why).

    Args:
        grad: a tensor.
        axes: a list of axes or an int tensor of them.
        keepdims: keep the summed axes, with length 1.
    """
    return apply_op("Sum", [grad, axes], attrs={"keep_dims": bool(keepdims)})
