"""Running sums and products along an axis: ``tf.cumsum`` and ``tf.cumprod``.

``cumsum([a, b, c]) = [a, a + b, a + b + c]``; ``exclusive=True`` shifts the
result by one (``[0, a, a + b]``) and ``reverse=True`` scans from the end
(``[a + b + c, b + c, c]``).  The gradient of a cumulative sum is the
cumulative sum of the gradient *in the other direction*: each input feeds
every output at or after it.

Mirrors ``tf.cumsum``/``tf.cumprod`` and their gradients in TF's ``math_grad.py``.
"""

from minitf.framework import dtypes
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op, define_op, gradient


def _scan(name, doc):
    return define_op(name, inputs=("x", "axis"), attrs={"exclusive": False, "reverse": False},
                     shape_fn=unchanged_shape, type_constraint=dtypes.NUMERIC, stacklevel=2,
                     doc=doc)


_cumsum = _scan("Cumsum", "The running sum of x along axis.")
_cumprod = _scan("Cumprod", "The running product of x along axis.")


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """The running sum of ``x`` along ``axis`` (``tf.cumsum``).

    Example:
        >>> sess.run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True))
        array([5, 3, 0], dtype=int32)
    """
    return apply_op(_cumsum, [x, axis], attrs={"exclusive": bool(exclusive),
                                               "reverse": bool(reverse)}, name=name or "Cumsum")


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """The running product of ``x`` along ``axis`` (``tf.cumprod``; ``exclusive`` starts at 1)."""
    return apply_op(_cumprod, [x, axis], attrs={"exclusive": bool(exclusive),
                                                "reverse": bool(reverse)}, name=name or "Cumprod")


@gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                   reverse=not op.get_attr("reverse")), None]


@gradient("Cumprod")
def _cumprod_grad(op, grad):
    """TF's formula ``cumsum(prod * grad, reversed) / x`` (undefined where ``x`` is 0)."""
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [out / x, None]


__all__ = ["cumprod", "cumsum"]
