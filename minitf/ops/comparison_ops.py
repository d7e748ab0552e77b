"""Comparisons, logic and predicates: ops whose outputs are ``bool``.

``less``, ``equal`` ... compare two tensors elementwise, with broadcasting;
``logical_and``, ``logical_or``, ``logical_not`` (and the composite
``logical_xor``) combine bool tensors; ``is_nan``, ``is_inf``, ``is_finite``
test each element.  Their outputs are conditions for
:func:`~minitf.ops.select_ops.where` and masks for gradients (``Maximum``'s
gradient asks ``x >= y``).

None of them is differentiable: a bool has no gradient, and a comparison is a
step function of its inputs.  They are declared so (``not_differentiable``),
and ``tf.gradients`` passes None to their inputs, as TF does.

Mirrors the comparison part of ``tensorflow/python/ops/math_ops.py``.
"""

from minitf.framework import dtypes
from minitf.ops.common_shapes import broadcast_binary_shape, unchanged_shape
from minitf.ops.math_util import bool_output, op_scope
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _binary(name, doc, types):
    return define_op(name, inputs=("x", "y"), outputs=("z",), shape_fn=broadcast_binary_shape,
                     type_constraint=types, same_dtype_inputs=("x", "y"), dtype_fn=bool_output,
                     doc=doc, stacklevel=2)


def _unary(name, doc):
    return define_op(name, inputs=("x",), outputs=("y",), shape_fn=unchanged_shape,
                     type_constraint=dtypes.FLOATING, dtype_fn=bool_output, doc=doc,
                     stacklevel=2)


# ---- comparisons ------------------------------------------------------------------------------
# As in TF, (in)equality also compares strings (e.g. a CSV column against class names).
_equal = _binary("Equal", "x == y, elementwise.", dtypes.ALL_TYPES + (dtypes.string,))
_not_equal = _binary("NotEqual", "x != y, elementwise.", dtypes.ALL_TYPES + (dtypes.string,))
_less = _binary("Less", "x < y, elementwise.", dtypes.NUMERIC)
_less_equal = _binary("LessEqual", "x <= y, elementwise.", dtypes.NUMERIC)
_greater = _binary("Greater", "x > y, elementwise.", dtypes.NUMERIC)
_greater_equal = _binary("GreaterEqual", "x >= y, elementwise.", dtypes.NUMERIC)
not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                   reason="a bool result: a step function of the inputs")


def equal(x, y, name=None):
    """Returns the truth value of ``x == y`` elementwise (``tf.equal``).

    The ``==`` operator is *not* this op: on Tensors it stays Python identity,
    so that Tensors can be dict keys (feed dicts, for one).
    """
    return apply_op(_equal, [x, y], name=name or "Equal")


def not_equal(x, y, name=None):
    """Returns the truth value of ``x != y`` elementwise (``tf.not_equal``)."""
    return apply_op(_not_equal, [x, y], name=name or "NotEqual")


def less(x, y, name=None):
    """Returns the truth value of ``x < y`` elementwise (``tf.less``, operator ``<``)."""
    return apply_op(_less, [x, y], name=name or "Less")


def less_equal(x, y, name=None):
    """Returns the truth value of ``x <= y`` elementwise (``tf.less_equal``)."""
    return apply_op(_less_equal, [x, y], name=name or "LessEqual")


def greater(x, y, name=None):
    """Returns the truth value of ``x > y`` elementwise (``tf.greater``)."""
    return apply_op(_greater, [x, y], name=name or "Greater")


def greater_equal(x, y, name=None):
    """Returns the truth value of ``x >= y`` elementwise (``tf.greater_equal``)."""
    return apply_op(_greater_equal, [x, y], name=name or "GreaterEqual")


# ---- logical ops: bool only ----------------------------------------------------------------
_logical_and = _binary("LogicalAnd", "x AND y, elementwise.", (dtypes.bool,))
_logical_or = _binary("LogicalOr", "x OR y, elementwise.", (dtypes.bool,))
_logical_not = define_op("LogicalNot", inputs=("x",), outputs=("y",), shape_fn=unchanged_shape,
                         type_constraint=(dtypes.bool,), doc="NOT x, elementwise.")
not_differentiable("LogicalAnd", "LogicalOr", "LogicalNot", reason="bool inputs and output")


def logical_and(x, y, name=None):
    """Returns ``x AND y`` elementwise for bool tensors (``tf.logical_and``, operator ``&``)."""
    return apply_op(_logical_and, [x, y], name=name or "LogicalAnd")


def logical_or(x, y, name=None):
    """Returns ``x OR y`` elementwise for bool tensors (``tf.logical_or``, operator ``|``)."""
    return apply_op(_logical_or, [x, y], name=name or "LogicalOr")


def logical_not(x, name=None):
    """Returns ``NOT x`` elementwise for a bool tensor (``tf.logical_not``, operator ``~``)."""
    return apply_op(_logical_not, [x], name=name or "LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    """Returns ``x XOR y`` elementwise (``tf.logical_xor``, operator ``^``).

    TF has no XOR op: it is ``(x OR y) AND NOT (x AND y)``.
    """
    with op_scope(name, "LogicalXor", [x, y]) as scope:
        either = logical_or(x, y)
        both = logical_and(x, y)
        return apply_op(_logical_and, [either, logical_not(both)], name=scope)


# ---- predicates ----------------------------------------------------------------------------
_is_nan = _unary("IsNan", "Whether x is NaN.")
_is_inf = _unary("IsInf", "Whether x is +inf or -inf.")
_is_finite = _unary("IsFinite", "Whether x is neither infinite nor NaN.")
not_differentiable("IsNan", "IsInf", "IsFinite", reason="a bool result")


def is_nan(x, name=None):
    """Returns which elements of ``x`` are NaN (``tf.is_nan``)."""
    return apply_op(_is_nan, [x], name=name or "IsNan")


def is_inf(x, name=None):
    """Returns which elements of ``x`` are +inf or -inf (``tf.is_inf``)."""
    return apply_op(_is_inf, [x], name=name or "IsInf")


def is_finite(x, name=None):
    """Returns which elements of ``x`` are finite (``tf.is_finite``)."""
    return apply_op(_is_finite, [x], name=name or "IsFinite")
