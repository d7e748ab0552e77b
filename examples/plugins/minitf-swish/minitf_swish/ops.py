"""The ops ``Swish`` and ``SwishGrad``: declarations, wrappers and gradients."""

import minitf as tf
from minitf.plugin import OpDef, TensorShape, apply_op


def _same_shape(op):
    """The output has the shape of input 0.  ``SwishGrad``'s two inputs must agree:
    what is known of both shapes is merged, and a conflict is a ValueError."""
    shape = TensorShape(op.inputs[0].shape)
    for other in op.inputs[1:]:
        shape = shape.merge_with(other.shape)
    return [shape]


SWISH = OpDef("Swish", inputs=("x",), outputs=("y",),
              attrs=("beta: float = 1.0", "T: {float32, float64}"),
              shape_fn=_same_shape, doc="x * sigmoid(beta * x), elementwise.")

SWISH_GRAD = OpDef("SwishGrad", inputs=("dy", "x"), outputs=("dx",),
                   attrs=("beta: float = 1.0", "T: {float32, float64}"),
                   same_dtype_inputs=("dy", "x"), shape_fn=_same_shape,
                   doc="The gradient of Swish: dy * d swish(x) / dx.")


def swish(x, beta=1.0, name=None):
    """Returns ``x * sigmoid(beta * x)`` elementwise (``tf.nn.swish`` with a slope).

    Args:
        x: a float32 or float64 Tensor.
        beta: the slope of the sigmoid (1.0: SiLU).
        name: the op's name (default ``"Swish"``).
    """
    return apply_op(SWISH, [x], attrs={"beta": beta}, name=name or "Swish")


def swish_grad(dy, x, beta=1.0, name=None):
    """The gradient of :func:`swish` at ``x``, times ``dy`` (one fused op)."""
    return apply_op(SWISH_GRAD, [dy, x], attrs={"beta": beta}, name=name or "SwishGrad")


def swish_gradient(op, grad):
    """Swish's gradient: one ``SwishGrad`` op."""
    return [swish_grad(grad, op.inputs[0], beta=op.get_attr("beta"))]


def swish_grad_gradient(op, grad):
    """SwishGrad's own gradient, of ordinary ops (for second derivatives).

    With ``s = sigmoid(beta x)`` and ``f'(x) = s + beta x s (1 - s)``:
    d dx / d dy = f'(x), and d dx / d x = dy * f''(x), where
    ``f''(x) = beta s (1 - s) (2 + beta x (1 - 2 s))``.
    """
    dy, x = op.inputs
    beta = op.get_attr("beta")
    s = tf.sigmoid(beta * x)
    second = beta * s * (1.0 - s) * (2.0 + beta * x * (1.0 - 2.0 * s))
    return [swish_grad(grad, x, beta=beta), grad * dy * second]
