"""Math ops: elementwise arithmetic with broadcasting, reductions, matrices.

Each op is declared with :func:`define_op` next to the Python wrapper that
builds it.  Most wrappers add exactly one op; a few are *composites* built from
other ops inside one name scope, as in TF1 (``truediv`` casts integers to
floats and then divides, ``clip_by_value`` is a ``Minimum`` then a ``Maximum``).
The Tensor operators (``+``, ``*``, ``<`` ...) are installed at the end.

Two TF rules run through the whole module:

* **No silent promotion.**  ``int32 + float32`` is a ``TypeError`` at
  construction.  Python numbers adopt the dtype of the tensor operand
  (``x_float32 + 1`` works) but must fit it exactly (``x_int32 + 1.5`` does not).
* **Shapes are checked while the graph is built.**  ``[2, 3] @ [4, 5]`` is a
  ``ValueError`` ("Dimensions must be equal, but are 3 and 4") before anything
  runs; only what depends on fed values fails at run time.

Several functions here shadow Python built-ins (``abs``, ``pow``, ``round``,
``range``), as in TF; this module uses :mod:`builtins` where it needs those.

Mirrors ``tensorflow/python/ops/math_ops.py`` (and ``linalg_ops.py`` for the
matrix inverse and determinant).
"""

import builtins
import contextlib

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import array_ops
from minitf.ops.common_shapes import (
    broadcast_binary_shape, broadcast_shapes, same_shape_n, unchanged_shape)
from minitf.ops.constant_op import constant
from minitf.ops.op_def_library import apply_op, define_op, graph_of

_SIGNED = dtypes.FLOATING + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
_REAL_INDEX = (dtypes.int32, dtypes.int64)


# ---- helpers shared by the wrappers --------------------------------------------------
@contextlib.contextmanager
def _op_scope(name, default_name, values):
    """Opens the name scope of a composite op in the graph of ``values``.

    Ops created inside are named ``scope/Op``; the composite's last op is
    given the scope's own name, so ``truediv(x, y)`` yields ``truediv/Cast``
    and an op called ``truediv`` (TF's ``ops.name_scope(name, default, values)``).
    """
    graph = graph_of(values)
    with graph.as_default(), graph.name_scope(name or default_name) as scope:
        yield scope


def _tensor_dtype(value):
    """The base dtype of a Tensor or Variable, None for Python and NumPy values."""
    if hasattr(value, "_as_graph_element") and hasattr(value, "dtype"):
        return value.dtype.base_dtype
    return None


def _convert_operands(x, y, names=("x", "y")):
    """Converts the operands of a composite binary op as ``apply_op`` converts
    the inputs of one op: a Python value adopts the Tensor operand's dtype."""
    dtype = _tensor_dtype(x) or _tensor_dtype(y)
    return (convert_to_tensor(x, name=names[0], preferred_dtype=dtype),
            convert_to_tensor(y, name=names[1], preferred_dtype=dtype))


def _deprecated_argument_lookup(new_name, new_value, old_name, old_value):
    """TF1 kept old argument names (``reduction_indices``, ``keep_dims``,
    ``dimension``) beside the new ones; at most one of each pair may be given."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'." % (old_name, new_name))
    return old_value


def _expect_dtype(op, index, allowed):
    """Rejects input ``index`` of ``op`` unless its dtype is in ``allowed``.

    Used by dtype functions for the inputs ``type_constraint`` does not cover
    (``Select``'s condition, a reduction's axes).

    Raises:
        TypeError: with TF's message.
    """
    dtype = op.inputs[index].dtype.base_dtype
    if dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s (op '%s' of type %s)"
                        % (op.op_def.inputs[index], dtype.name,
                           ", ".join(d.name for d in allowed), op.name, op.type))


def _bool_output(op):
    """Comparisons and predicates output ``bool`` whatever their input dtype."""
    return [dtypes.bool]


# ---- shape checks with TF's messages ---------------------------------------------------
def _dims_text(shape):
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


def _with_rank(shape, rank):
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return shape if shape.ndims is not None else unknown_shape(rank)


def _with_rank_at_least(shape, rank):
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def _with_rank_at_most(shape, rank):
    if shape.ndims is not None and shape.ndims > rank:
        raise ValueError("Shape must be at most rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def _merge_dims(a, b):
    """The more specific of two dimensions (ints or None) that must be equal."""
    if a is not None and b is not None and a != b:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (a, b))
    return a if a is not None else b


def _merge_shapes(a, b):
    """The merge of two shapes that must be equal (``Select``'s ``t`` and ``e``)."""
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise ValueError("Shapes must be equal rank, but are %d and %d" % (a.ndims, b.ndims))
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise ValueError("Dimension %d in both shapes must be equal, but are %d and %d. "
                                 "Shapes are %s and %s." % (i, x, y, _dims_text(a), _dims_text(b)))
    return a.merge_with(b)


# ---- elementwise binary arithmetic -------------------------------------------------------
def _binary(name, doc, types=dtypes.NUMERIC, dtype_fn=None):
    return define_op(name, inputs=("x", "y"), outputs=("z",), shape_fn=broadcast_binary_shape,
                     type_constraint=types, same_dtype_inputs=("x", "y"), dtype_fn=dtype_fn,
                     doc=doc, stacklevel=2)


_add = _binary("Add", "x + y, elementwise with broadcasting.")
_sub = _binary("Sub", "x - y, elementwise with broadcasting.")
_mul = _binary("Mul", "x * y, elementwise with broadcasting.")
_real_div = _binary("RealDiv", "x / y for floating-point x and y.", dtypes.FLOATING)
_floor_div = _binary("FloorDiv", "floor(x / y); integer division by zero is an error.")
_floor_mod = _binary("FloorMod", "x - floor(x / y) * y: the remainder has the sign of y.")
_pow = _binary("Pow", "x ** y; integers to negative integer powers are an error.",
               dtypes.FLOATING + _REAL_INDEX)
_maximum = _binary("Maximum", "max(x, y), elementwise with broadcasting.")
_minimum = _binary("Minimum", "min(x, y), elementwise with broadcasting.")
_squared_difference = _binary("SquaredDifference", "(x - y) ** 2, elementwise.",
                              dtypes.FLOATING + _REAL_INDEX)


def add(x, y, name=None):
    """Returns ``x + y`` elementwise, with NumPy broadcasting (``tf.add``).

    Example:
        >>> tf.add(tf.ones([3, 1]), [1.0, 2.0, 3.0, 4.0])   # shapes (3, 1) and (4,)
        Tensor("Add:0", shape=(3, 4), dtype=float32)

    Raises:
        TypeError: if ``x`` and ``y`` have different dtypes.
        ValueError: if their shapes do not broadcast.
    """
    return apply_op(_add, [x, y], name=name or "Add")


def subtract(x, y, name=None):
    """Returns ``x - y`` elementwise, with broadcasting (``tf.subtract``, op ``Sub``)."""
    return apply_op(_sub, [x, y], name=name or "Sub")


def multiply(x, y, name=None):
    """Returns ``x * y`` elementwise, with broadcasting (``tf.multiply``, op ``Mul``)."""
    return apply_op(_mul, [x, y], name=name or "Mul")


def realdiv(x, y, name=None):
    """Returns ``x / y`` for floating-point tensors (``tf.realdiv``)."""
    return apply_op(_real_div, [x, y], name=name or "RealDiv")


# Python 3's ``/`` on integers gives a float.  TF picks the float wide enough to
# hold every value of the integer type exactly.
_TRUEDIV_CASTS = {
    dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32,
    dtypes.uint8: dtypes.float32, dtypes.uint16: dtypes.float32,
    dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64,
}


def truediv(x, y, name=None):
    """Divides with Python 3 semantics: integers are cast to floats first (``tf.truediv``).

    int8, int16, uint8 and uint16 become float32; int32 and int64 become
    float64; floating-point operands are divided as they are.  The ops are a
    ``Cast`` per integer operand and a ``RealDiv``, all in scope ``truediv``.

    Example:
        >>> tf.truediv(tf.constant(7), 2)
        Tensor("truediv:0", shape=(), dtype=float64)

    Raises:
        TypeError: if the dtypes differ, or are not numbers.
    """
    with _op_scope(name, "truediv", [x, y]) as scope:
        x, y = _convert_operands(x, y)
        dtype = x.dtype.base_dtype
        if dtype != y.dtype.base_dtype:
            raise TypeError("x and y must have the same dtype, got %s != %s"
                            % (dtype.name, y.dtype.base_dtype.name))
        if not dtype.is_numeric:
            raise TypeError("Invalid dtype %s in __truediv__" % dtype.name)
        if dtype in _TRUEDIV_CASTS:
            x, y = cast(x, _TRUEDIV_CASTS[dtype]), cast(y, _TRUEDIV_CASTS[dtype])
        return apply_op(_real_div, [x, y], name=scope)


def divide(x, y, name=None):
    """Computes Python-style division ``x / y`` (``tf.divide``): :func:`truediv`."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """Divides with Python 2 semantics (``tf.div``, deprecated in TF1).

    Floats are divided exactly (``RealDiv``); integers are floor-divided
    (``FloorDiv``), so ``tf.div(7, -2)`` is -4, not C's -3.
    """
    with _op_scope(name, "div", [x, y]) as scope:
        x, y = _convert_operands(x, y)
        if x.dtype.base_dtype.is_floating:
            return apply_op(_real_div, [x, y], name=scope)
        return apply_op(_floor_div, [x, y], name=scope)


def floor_div(x, y, name=None):
    """Returns ``floor(x / y)`` elementwise (``tf.floor_div``, op ``FloorDiv``).

    Integer division by zero is an ``InvalidArgumentError`` at run time.
    """
    return apply_op(_floor_div, [x, y], name=name or "FloorDiv")


def floordiv(x, y, name=None):
    """Returns ``floor(x / y)`` elementwise; the ``//`` operator (``tf.floordiv``).

    Example:
        >>> sess.run(tf.floordiv([7, -7], 2))
        array([ 3, -4], dtype=int32)
    """
    with _op_scope(name, "floordiv", [x, y]) as scope:
        return apply_op(_floor_div, [x, y], name=scope)


def floormod(x, y, name=None):
    """Returns the remainder of floor division, with the sign of ``y`` (``tf.floormod``).

    Like Python's ``%`` and ``np.mod``: ``-7 % 2`` is 1 and ``7 % -2`` is -1.
    """
    return apply_op(_floor_mod, [x, y], name=name or "FloorMod")


mod = floormod


def pow(x, y, name=None):  # noqa: A001 - TF's name
    """Returns ``x ** y`` elementwise (``tf.pow``).

    Raises:
        TypeError: for int8/int16/unsigned operands, or mixed dtypes.
    """
    return apply_op(_pow, [x, y], name=name or "Pow")


def maximum(x, y, name=None):
    """Returns the elementwise maximum of ``x`` and ``y`` (``tf.maximum``)."""
    return apply_op(_maximum, [x, y], name=name or "Maximum")


def minimum(x, y, name=None):
    """Returns the elementwise minimum of ``x`` and ``y`` (``tf.minimum``)."""
    return apply_op(_minimum, [x, y], name=name or "Minimum")


def squared_difference(x, y, name=None):
    """Returns ``(x - y) ** 2`` elementwise (``tf.squared_difference``)."""
    return apply_op(_squared_difference, [x, y], name=name or "SquaredDifference")


# ---- comparisons: bool outputs -------------------------------------------------------------
_equal = _binary("Equal", "x == y, elementwise.", dtypes.ALL_TYPES, _bool_output)
_not_equal = _binary("NotEqual", "x != y, elementwise.", dtypes.ALL_TYPES, _bool_output)
_less = _binary("Less", "x < y, elementwise.", dtypes.NUMERIC, _bool_output)
_less_equal = _binary("LessEqual", "x <= y, elementwise.", dtypes.NUMERIC, _bool_output)
_greater = _binary("Greater", "x > y, elementwise.", dtypes.NUMERIC, _bool_output)
_greater_equal = _binary("GreaterEqual", "x >= y, elementwise.", dtypes.NUMERIC, _bool_output)


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
    with _op_scope(name, "LogicalXor", [x, y]) as scope:
        either = logical_or(x, y)
        both = logical_and(x, y)
        return apply_op(_logical_and, [either, logical_not(both)], name=scope)


# ---- elementwise unary ops -------------------------------------------------------------------
def _unary(name, doc, types=dtypes.FLOATING, dtype_fn=None):
    return define_op(name, inputs=("x",), outputs=("y",), shape_fn=unchanged_shape,
                     type_constraint=types, dtype_fn=dtype_fn, doc=doc, stacklevel=2)


_neg = _unary("Neg", "-x, elementwise.", _SIGNED)
_abs = _unary("Abs", "|x|, elementwise.", _SIGNED)
_sign = _unary("Sign", "-1, 0 or 1 by the sign of x.", _SIGNED)
_square = _unary("Square", "x * x, elementwise.", _SIGNED)
_sqrt = _unary("Sqrt", "The square root of x.")
_rsqrt = _unary("Rsqrt", "1 / sqrt(x).")
_reciprocal = _unary("Reciprocal", "1 / x.")
_exp = _unary("Exp", "e ** x.")
_expm1 = _unary("Expm1", "e ** x - 1, accurate for small x.")
_log = _unary("Log", "The natural logarithm of x.")
_log1p = _unary("Log1p", "log(1 + x), accurate for small x.")
_sin = _unary("Sin", "sin(x).")
_cos = _unary("Cos", "cos(x).")
_tan = _unary("Tan", "tan(x).")
_tanh = _unary("Tanh", "The hyperbolic tangent of x.")
_sigmoid = _unary("Sigmoid", "1 / (1 + exp(-x)).")
_floor = _unary("Floor", "The largest integer not greater than x.")
_ceil = _unary("Ceil", "The smallest integer not less than x.")
_round = _unary("Round", "x rounded half to even (banker's rounding).")
_is_nan = _unary("IsNan", "Whether x is NaN.", dtype_fn=_bool_output)
_is_inf = _unary("IsInf", "Whether x is +inf or -inf.", dtype_fn=_bool_output)
_is_finite = _unary("IsFinite", "Whether x is neither infinite nor NaN.", dtype_fn=_bool_output)


def negative(x, name=None):
    """Returns ``-x`` elementwise (``tf.negative``, unary operator ``-``)."""
    return apply_op(_neg, [x], name=name or "Neg")


def abs(x, name=None):  # noqa: A001 - TF's name
    """Returns ``|x|`` elementwise (``tf.abs``, built-in ``abs()``)."""
    return apply_op(_abs, [x], name=name or "Abs")


def sign(x, name=None):
    """Returns -1, 0 or 1 by the sign of each element (``tf.sign``)."""
    return apply_op(_sign, [x], name=name or "Sign")


def square(x, name=None):
    """Returns ``x * x`` elementwise (``tf.square``)."""
    return apply_op(_square, [x], name=name or "Square")


def sqrt(x, name=None):
    """Returns the square root of ``x`` elementwise; floats only (``tf.sqrt``)."""
    return apply_op(_sqrt, [x], name=name or "Sqrt")


def rsqrt(x, name=None):
    """Returns ``1 / sqrt(x)`` elementwise (``tf.rsqrt``)."""
    return apply_op(_rsqrt, [x], name=name or "Rsqrt")


def reciprocal(x, name=None):
    """Returns ``1 / x`` elementwise (``tf.reciprocal``); floats only, as TF has no
    integer kernel."""
    return apply_op(_reciprocal, [x], name=name or "Reciprocal")


def exp(x, name=None):
    """Returns ``e ** x`` elementwise (``tf.exp``)."""
    return apply_op(_exp, [x], name=name or "Exp")


def expm1(x, name=None):
    """Returns ``e ** x - 1`` elementwise, without the cancellation near 0 (``tf.expm1``)."""
    return apply_op(_expm1, [x], name=name or "Expm1")


def log(x, name=None):
    """Returns the natural logarithm of ``x`` elementwise (``tf.log``)."""
    return apply_op(_log, [x], name=name or "Log")


def log1p(x, name=None):
    """Returns ``log(1 + x)`` elementwise, accurate for small ``x`` (``tf.log1p``)."""
    return apply_op(_log1p, [x], name=name or "Log1p")


def sin(x, name=None):
    """Returns ``sin(x)`` elementwise (``tf.sin``)."""
    return apply_op(_sin, [x], name=name or "Sin")


def cos(x, name=None):
    """Returns ``cos(x)`` elementwise (``tf.cos``)."""
    return apply_op(_cos, [x], name=name or "Cos")


def tan(x, name=None):
    """Returns ``tan(x)`` elementwise (``tf.tan``)."""
    return apply_op(_tan, [x], name=name or "Tan")


def tanh(x, name=None):
    """Returns the hyperbolic tangent of ``x`` elementwise (``tf.tanh``)."""
    return apply_op(_tanh, [x], name=name or "Tanh")


def sigmoid(x, name=None):
    """Returns ``1 / (1 + exp(-x))`` elementwise (``tf.sigmoid``).

    The kernel computes it without overflow for large ``|x|``.
    """
    return apply_op(_sigmoid, [x], name=name or "Sigmoid")


def floor(x, name=None):
    """Returns the largest integer not greater than ``x``, as a float (``tf.floor``)."""
    return apply_op(_floor, [x], name=name or "Floor")


def ceil(x, name=None):
    """Returns the smallest integer not less than ``x``, as a float (``tf.ceil``)."""
    return apply_op(_ceil, [x], name=name or "Ceil")


def round(x, name=None):  # noqa: A001 - TF's name
    """Rounds half to even, "banker's rounding" (``tf.round``).

    ``[0.5, 1.5, 2.5, -0.5]`` rounds to ``[0, 2, 2, -0]``.  An integer tensor
    is already round and is returned as it is, without an op.
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype.is_integer:
        return x
    return apply_op(_round, [x], name=name or "Round")


def is_nan(x, name=None):
    """Returns which elements of ``x`` are NaN (``tf.is_nan``)."""
    return apply_op(_is_nan, [x], name=name or "IsNan")


def is_inf(x, name=None):
    """Returns which elements of ``x`` are +inf or -inf (``tf.is_inf``)."""
    return apply_op(_is_inf, [x], name=name or "IsInf")


def is_finite(x, name=None):
    """Returns which elements of ``x`` are finite (``tf.is_finite``)."""
    return apply_op(_is_finite, [x], name=name or "IsFinite")


# ---- Cast: the one explicit way to change a dtype ------------------------------------------
def _cast_dtype(op):
    return [op.get_attr("DstT")]


_cast = define_op("Cast", inputs=("x",), outputs=("y",), attrs={"DstT": None},
                  shape_fn=unchanged_shape, type_constraint=dtypes.ALL_TYPES,
                  dtype_fn=_cast_dtype, doc="x converted to dtype DstT.")


def cast(x, dtype, name=None):
    """Casts ``x`` to ``dtype`` (``tf.cast``).

    Floats become integers by truncation toward zero (``-1.7`` → ``-1``);
    numbers become bools by ``x != 0``; bools become 0 and 1.  Casting a
    Tensor to its own dtype returns it unchanged, without an op.

    Example:
        >>> sess.run(tf.cast([-1.7, 1.7, 2.5], tf.int32))
        array([-1,  1,  2], dtype=int32)
    """
    base_type = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) and x.dtype.base_dtype == base_type:
        return x
    with _op_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == base_type:
            return x
        return apply_op(_cast, [x], attrs={"DstT": base_type}, name=scope)


def to_float(x, name="ToFloat"):
    """Casts ``x`` to float32 (``tf.to_float``, deprecated in TF1 for ``tf.cast``)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    """Casts ``x`` to float64 (``tf.to_double``)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    """Casts ``x`` to int32 (``tf.to_int32``)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    """Casts ``x`` to int64 (``tf.to_int64``)."""
    return cast(x, dtypes.int64, name=name)


# ---- selecting and combining -----------------------------------------------------------------
def _select_shape(op):
    """TF1's ``Select`` rule: ``t`` and ``e`` have one shape, and ``condition``
    is a scalar, has that shape too, or is a vector along its first dimension."""
    condition, t, e = (x.shape for x in op.inputs)
    data = _merge_shapes(t, e)
    if condition.ndims is None or data.ndims is None or condition.ndims == 0:
        return [data]
    if condition.ndims == 1 and data.ndims > 0:
        _merge_shapes(condition, data[:1])
        return [data]
    return [_merge_shapes(data, condition)]


def _select_dtype(op):
    _expect_dtype(op, 0, (dtypes.bool,))
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
        with _op_scope(name, "Where", [condition]) as scope:
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


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips ``t`` to ``[clip_value_min, clip_value_max]`` elementwise (``tf.clip_by_value``).

    As in TF1 it is two ops in scope ``clip_by_value``: a ``Minimum`` with
    the upper bound, then a ``Maximum`` with the lower bound (named after the
    scope).  The bounds may be scalars or broadcast against ``t``, but must
    not make the result larger than ``t``.

    Raises:
        ValueError: if the bounds would broadcast ``t`` to a larger shape.
    """
    with _op_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return t_max


_add_n = define_op("AddN", inputs=("inputs*",), outputs=("sum",), shape_fn=same_shape_n,
                   type_constraint=dtypes.NUMERIC, same_dtype_inputs=("inputs",),
                   doc="The sum of a list of tensors of one shape and dtype.")


def add_n(inputs, name=None):
    """Adds a list of tensors of one shape and dtype elementwise (``tf.add_n``).

    Unlike ``add`` there is no broadcasting.  A single input is returned as it
    is (through an ``Identity`` named ``name`` when a name is given).

    Raises:
        ValueError: if ``inputs`` is empty or the shapes differ.
        TypeError: if the dtypes differ.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    if len(inputs) == 1:
        value = convert_to_tensor(inputs[0])
        return array_ops.identity(value, name=name) if name else value
    return apply_op(_add_n, [list(inputs)], name=name or "AddN")


# ---- reductions --------------------------------------------------------------------------
def _reduced_axes(axes, rank):
    """The set of non-negative axes ``axes`` names in a tensor of ``rank`` dimensions.

    Raises:
        ValueError: for an axis outside ``[-rank, rank)``.
    """
    result = set()
    for axis in np.reshape(axes, -1).tolist():
        if not -rank <= axis < rank:
            raise ValueError("Invalid reduction dimension %d for input with %d dimensions."
                             % (axis, rank))
        result.add(axis % rank)
    return result


def _reduction_shape(op):
    """The input shape with the reduced axes removed (or kept as 1 with keep_dims).

    The axes must be known while the graph is built (a constant); otherwise
    only the rank is known with ``keep_dims``, and nothing without.
    """
    shape = op.inputs[0].shape
    _with_rank_at_most(op.inputs[1].shape, 1)
    keep_dims = op.get_attr("keep_dims")
    axes = constant_value(op.inputs[1])
    if axes is None or shape.ndims is None:
        return [unknown_shape(shape.ndims if keep_dims else None)]
    reduced = _reduced_axes(axes, shape.ndims)
    dims = []
    for i, dim in enumerate(shape.as_list()):
        if i not in reduced:
            dims.append(dim)
        elif keep_dims:
            dims.append(1)
    return [TensorShape(dims)]


def _reduction_dtype(op):
    _expect_dtype(op, 1, _REAL_INDEX)
    return [op.inputs[0].dtype.base_dtype]


def _reduction(name, doc, types=dtypes.NUMERIC):
    return define_op(name, inputs=("input", "reduction_indices"), attrs={"keep_dims": False},
                     shape_fn=_reduction_shape, type_constraint=types,
                     dtype_fn=_reduction_dtype, doc=doc)


_sum = _reduction("Sum", "The sum of the elements along the given axes.")
_mean = _reduction("Mean", "The mean along the given axes (integer means truncate).")
_max = _reduction("Max", "The maximum along the given axes.")
_min = _reduction("Min", "The minimum along the given axes.")
_prod = _reduction("Prod", "The product of the elements along the given axes.")
_any = _reduction("Any", "Whether any element along the given axes is true.", (dtypes.bool,))
_all = _reduction("All", "Whether all elements along the given axes are true.", (dtypes.bool,))


def _all_axes(x):
    """Every axis of ``x``: a constant when its rank is known, else ``range(rank(x))``."""
    if x.shape.ndims is not None:
        return constant(np.arange(x.shape.ndims, dtype=np.int32))
    return range(0, array_ops.rank(x))  # tf.range, defined below


def _reduce(op_def, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    """Adds a reduction op, resolving TF1's deprecated argument names.

    With no axis every dimension is reduced, and the result is a scalar even
    when the input's rank is only known at run time.
    """
    axis = _deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = _deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = builtins.bool(keepdims)
    x = convert_to_tensor(input_tensor)
    axes = _all_axes(x) if axis is None else axis
    result = apply_op(op_def, [x, axes], attrs={"keep_dims": keepdims}, name=name)
    if axis is None and not keepdims:
        result.set_shape([])
    return result


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Sums the elements of ``input_tensor`` along ``axis`` (``tf.reduce_sum``).

    Args:
        input_tensor: the tensor to reduce.
        axis: an int, a list of ints or an int tensor; negative axes count
            from the end.  None (the default) reduces every axis.
        keepdims: keep the reduced axes, with length 1.
        name: op name (default ``Sum``).
        reduction_indices: the deprecated name of ``axis``.
        keep_dims: the deprecated name of ``keepdims``.

    Example:
        >>> x = tf.constant([[1, 1, 1], [1, 1, 1]])
        >>> sess.run([tf.reduce_sum(x), tf.reduce_sum(x, 0), tf.reduce_sum(x, -1, keepdims=True)])
        [6, array([2, 2, 2], dtype=int32), array([[3], [3]], dtype=int32)]

    Raises:
        ValueError: if a constant axis is outside ``[-rank, rank)``.
    """
    return _reduce(_sum, input_tensor, axis, keepdims, name or "Sum", reduction_indices,
                   keep_dims)


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """The mean of the elements along ``axis`` (``tf.reduce_mean``; see :func:`reduce_sum`).

    An integer tensor has an integer mean, truncated toward zero as in C:
    the mean of ``[-1, -2]`` is -1.  Cast to a float first for the exact mean.
    """
    return _reduce(_mean, input_tensor, axis, keepdims, name or "Mean", reduction_indices,
                   keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The maximum along ``axis`` (``tf.reduce_max``); an empty reduction gives the
    dtype's lowest value (``-inf`` for floats)."""
    return _reduce(_max, input_tensor, axis, keepdims, name or "Max", reduction_indices,
                   keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The minimum along ``axis`` (``tf.reduce_min``); an empty reduction gives the
    dtype's highest value (``inf`` for floats)."""
    return _reduce(_min, input_tensor, axis, keepdims, name or "Min", reduction_indices,
                   keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """The product of the elements along ``axis`` (``tf.reduce_prod``)."""
    return _reduce(_prod, input_tensor, axis, keepdims, name or "Prod", reduction_indices,
                   keep_dims)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The logical OR of a bool tensor along ``axis`` (``tf.reduce_any``)."""
    return _reduce(_any, input_tensor, axis, keepdims, name or "Any", reduction_indices,
                   keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """The logical AND of a bool tensor along ``axis`` (``tf.reduce_all``)."""
    return _reduce(_all, input_tensor, axis, keepdims, name or "All", reduction_indices,
                   keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """``log(sum(exp(x)))`` along ``axis``, without overflow (``tf.reduce_logsumexp``).

    ``exp(1000.0)`` overflows, but ``log(sum(exp(x))) = m + log(sum(exp(x - m)))``
    for any ``m``; with ``m = max(x)`` every ``exp`` is at most 1.  As in TF1
    the ops live in scope ``ReduceLogSumExp``; an infinite maximum (all
    ``-inf``) is replaced by 0 so that ``x - m`` is not NaN, and ``m`` is a
    ``stop_gradient``: the result's gradient does not depend on the choice of ``m``.

    Example:
        >>> sess.run(tf.reduce_logsumexp([[0.0, 0.0], [1000.0, 1000.0]], axis=1))
        array([   0.6931472, 1000.6931   ], dtype=float32)
    """
    axis = _deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = _deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    keepdims = builtins.bool(keepdims)
    x = convert_to_tensor(input_tensor)
    with _op_scope(name, "ReduceLogSumExp", [x]) as scope:
        raw_max = reduce_max(x, axis, keepdims=True)
        shift = array_ops.stop_gradient(
            where(is_finite(raw_max), raw_max, array_ops.zeros_like(raw_max)))
        result = log(reduce_sum(exp(subtract(x, shift)), axis, keepdims=keepdims))
        if not keepdims:
            shift = array_ops.reshape(shift, array_ops.shape(result))
        result = add(result, shift, name=scope)
        if axis is None and not keepdims:
            result.set_shape([])
        return result


# ---- ArgMax and ArgMin -----------------------------------------------------------------------
def _arg_shape(op):
    """The input shape without the reduced dimension."""
    shape = op.inputs[0].shape
    _with_rank(op.inputs[1].shape, 0)
    dimension = constant_value(op.inputs[1])
    if shape.ndims is None:
        return [unknown_shape()]
    if dimension is None:
        return [unknown_shape(builtins.max(shape.ndims - 1, 0))]
    dimension = int(dimension)
    if not -shape.ndims <= dimension < shape.ndims:
        raise ValueError("Dimension (%d) must be in the range [%d, %d), where %d is the number "
                         "of dimensions in the input." % (dimension, -shape.ndims, shape.ndims,
                                                          shape.ndims))
    dims = shape.as_list()
    del dims[dimension]
    return [TensorShape(dims)]


def _arg_dtype(op):
    _expect_dtype(op, 1, _REAL_INDEX)
    output_type = op.get_attr("output_type")
    if output_type not in _REAL_INDEX:
        raise TypeError("output_type must be int32 or int64, got %s" % output_type.name)
    return [output_type]


_arg_max = define_op("ArgMax", inputs=("input", "dimension"), attrs={"output_type": dtypes.int64},
                     shape_fn=_arg_shape, type_constraint=dtypes.NUMERIC, dtype_fn=_arg_dtype,
                     doc="The index of the largest value along a dimension (first on ties).")
_arg_min = define_op("ArgMin", inputs=("input", "dimension"), attrs={"output_type": dtypes.int64},
                     shape_fn=_arg_shape, type_constraint=dtypes.NUMERIC, dtype_fn=_arg_dtype,
                     doc="The index of the smallest value along a dimension (first on ties).")


def argmax(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's argument name
           output_type=dtypes.int64):
    """The index of the largest value along ``axis`` (``tf.argmax``).

    Args:
        input: a numeric tensor.
        axis: the dimension to reduce; TF1's default is 0 (not "all").
        name: op name (default ``ArgMax``).
        dimension: the deprecated name of ``axis``.
        output_type: int64 (the default) or int32.

    Example:
        >>> sess.run(tf.argmax([[1, 3, 3], [4, 0, 4]], axis=1))
        array([1, 0])

    Raises:
        ValueError: if a constant axis is out of range.
    """
    axis = _deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op(_arg_max, [input, 0 if axis is None else axis],
                    attrs={"output_type": dtypes.as_dtype(output_type)}, name=name or "ArgMax")


def argmin(input, axis=None, name=None, dimension=None,  # noqa: A002 - TF's argument name
           output_type=dtypes.int64):
    """The index of the smallest value along ``axis`` (``tf.argmin``; see :func:`argmax`)."""
    axis = _deprecated_argument_lookup("axis", axis, "dimension", dimension)
    return apply_op(_arg_min, [input, 0 if axis is None else axis],
                    attrs={"output_type": dtypes.as_dtype(output_type)}, name=name or "ArgMin")


# ---- matrices --------------------------------------------------------------------------------
_MATMUL_TYPES = dtypes.FLOATING + _REAL_INDEX


def _mat_mul_shape(op):
    """``[m, k] x [k, n] -> [m, n]``, reading ``k`` from the transposed side if asked."""
    a = _with_rank(op.inputs[0].shape, 2).as_list()
    b = _with_rank(op.inputs[1].shape, 2).as_list()
    if op.get_attr("transpose_a"):
        a = a[::-1]
    if op.get_attr("transpose_b"):
        b = b[::-1]
    _merge_dims(a[1], b[0])
    return [TensorShape([a[0], b[1]])]


def _batch_mat_mul_shape(op):
    """``[..., m, k] x [..., k, n] -> [..., m, n]``; the batch dimensions broadcast."""
    a = _with_rank_at_least(op.inputs[0].shape, 2)
    b = _with_rank_at_least(op.inputs[1].shape, 2)
    if a.ndims is None or b.ndims is None:
        return [unknown_shape()]
    rows, inner_a = a.as_list()[-2:]
    inner_b, cols = b.as_list()[-2:]
    if op.get_attr("adj_x"):
        rows, inner_a = inner_a, rows
    if op.get_attr("adj_y"):
        inner_b, cols = cols, inner_b
    _merge_dims(inner_a, inner_b)
    batch = broadcast_shapes(a[:-2], b[:-2])
    return [batch.concatenate([rows, cols])]


_mat_mul = define_op(
    "MatMul", inputs=("a", "b"), outputs=("product",),
    attrs={"transpose_a": False, "transpose_b": False}, shape_fn=_mat_mul_shape,
    type_constraint=_MATMUL_TYPES, same_dtype_inputs=("a", "b"),
    doc="The matrix product of two matrices, either transposed first.")
_batch_mat_mul = define_op(
    "BatchMatMulV2", inputs=("x", "y"), attrs={"adj_x": False, "adj_y": False},
    shape_fn=_batch_mat_mul_shape, type_constraint=_MATMUL_TYPES, same_dtype_inputs=("x", "y"),
    doc="Matrix products over the last two dimensions; batch dimensions broadcast.")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """The matrix product ``a @ b`` (``tf.matmul``, operator ``@``).

    Rank-2 operands make a ``MatMul`` op.  Operands of higher (or unknown)
    rank make a ``BatchMatMulV2``, the op TF 1.15 emits: it multiplies the
    last two dimensions and broadcasts the leading "batch" dimensions.
    minitf's dtypes are all real, so an adjoint is a transpose.

    Args:
        a, b: tensors of rank >= 2 and one dtype.
        transpose_a, transpose_b: transpose the operand's last two dimensions first.
        adjoint_a, adjoint_b: the same, for real matrices.
        a_is_sparse, b_is_sparse: TF1 performance hints; minitf multiplies
            densely and accepts them for compatibility.
        name: op name (default ``MatMul``).

    Example:
        >>> tf.matmul(tf.ones([2, 3]), tf.ones([3, 4]))
        Tensor("MatMul:0", shape=(2, 4), dtype=float32)
        >>> tf.matmul(tf.ones([5, 2, 3]), tf.ones([3, 4]))    # batch of 5
        Tensor("MatMul_1:0", shape=(5, 2, 4), dtype=float32)

    Raises:
        ValueError: if a rank is below 2, the inner dimensions differ ("Dimensions
            must be equal, but are 3 and 4"), or both transpose and adjoint are asked.
        TypeError: if the dtypes differ or are not float16/32/64 or int32/64.
    """
    del a_is_sparse, b_is_sparse
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with _op_scope(name, "MatMul", [a, b]) as scope:
        a, b = _convert_operands(a, b, names=("a", "b"))
        ranks = (a.shape.ndims, b.shape.ndims)
        if None in ranks or builtins.max(ranks) > 2:
            attrs = {"adj_x": transpose_a or adjoint_a, "adj_y": transpose_b or adjoint_b}
            return apply_op(_batch_mat_mul, [a, b], attrs=attrs, name=scope)
        attrs = {"transpose_a": transpose_a or adjoint_a, "transpose_b": transpose_b or adjoint_b}
        return apply_op(_mat_mul, [a, b], attrs=attrs, name=scope)


def _square_matrices_shape(shape):
    """Checks ``shape`` is ``[..., n, n]``; returns the batch shape ``[...]``."""
    shape = _with_rank_at_least(shape, 2)
    if shape.ndims is None:
        return unknown_shape()
    _merge_dims(shape[-2].value, shape[-1].value)
    return shape[:-2]


def _matrix_inverse_shape(op):
    shape = op.inputs[0].shape
    _square_matrices_shape(shape)
    return [shape]


def _matrix_determinant_shape(op):
    return [_square_matrices_shape(op.inputs[0].shape)]


_LINALG_TYPES = (dtypes.float32, dtypes.float64)
_matrix_inverse = define_op(
    "MatrixInverse", inputs=("input",), attrs={"adjoint": False},
    shape_fn=_matrix_inverse_shape, type_constraint=_LINALG_TYPES,
    doc="The inverse of each square matrix in [..., n, n]; singular is an error.")
_matrix_determinant = define_op(
    "MatrixDeterminant", inputs=("input",), shape_fn=_matrix_determinant_shape,
    type_constraint=_LINALG_TYPES, doc="The determinant of each square matrix in [..., n, n].")


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002 - TF's argument name
    """The inverse of each square matrix in ``input`` (``tf.matrix_inverse``).

    Args:
        input: float32 or float64, shape ``[..., n, n]``.
        adjoint: invert the (conjugate) transpose instead.
        name: op name (default ``MatrixInverse``).

    Raises:
        ValueError: at construction, if the matrices are not square.
        tf.errors.InvalidArgumentError: at run time, "Input is not invertible."
            when a matrix is singular.
    """
    return apply_op(_matrix_inverse, [input], attrs={"adjoint": adjoint},
                    name=name or "MatrixInverse")


def matrix_determinant(input, name=None):  # noqa: A002 - TF's argument name
    """The determinant of each square matrix in ``input`` (``tf.matrix_determinant``).

    A ``[..., n, n]`` input gives a ``[...]`` output.
    """
    return apply_op(_matrix_determinant, [input], name=name or "MatrixDeterminant")


# ---- Range -------------------------------------------------------------------------------------
_RANGE_TYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range_shape(op):
    """A vector whose length is known when start, limit and delta are constants.

    Raises:
        ValueError: for a non-scalar argument, a zero delta, or a delta that
            steps away from the limit.
    """
    for t in op.inputs:
        _with_rank(t.shape, 0)
    start, limit, delta = (constant_value(t) for t in op.inputs)
    if start is None or limit is None or delta is None:
        return [unknown_shape(1)]
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError("Requires start <= limit when delta > 0: %s/%s" % (start, limit))
    if delta < 0 and start < limit:
        raise ValueError("Requires start >= limit when delta < 0: %s/%s" % (start, limit))
    if op.outputs[0].dtype.is_integer:
        size = -((int(start) - int(limit)) // int(delta))
    else:
        size = int(np.ceil((limit - start) / delta))
    return [TensorShape([size])]


_range = define_op("Range", inputs=("start", "limit", "delta"), shape_fn=_range_shape,
                   type_constraint=_RANGE_TYPES, same_dtype_inputs=("start", "limit", "delta"),
                   doc="The sequence start, start + delta, ... up to but excluding limit.")


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    """The numbers ``start, start + delta, ...`` up to but excluding ``limit`` (``tf.range``).

    Like Python's ``range``: ``tf.range(n)`` counts from 0.  Without
    ``dtype`` the result is int32 for ints and float32 if any argument is a
    float (the integers are cast: ``range/Cast``).

    Example:
        >>> sess.run(tf.range(3, 18, 3))
        array([ 3,  6,  9, 12, 15], dtype=int32)
        >>> sess.run(tf.range(1, 7, 2.5))
        array([1. , 3.5, 6. ], dtype=float32)

    Raises:
        ValueError: at construction, for a constant zero ``delta`` or one that
            steps away from ``limit`` (``tf.range(5, 1)``); the same values
            fed at run time are an InvalidArgumentError.
    """
    if limit is None:
        start, limit = 0, start
    with _op_scope(name, "Range", [start, limit, delta]) as scope:
        args = [convert_to_tensor(value, dtype=dtype, name=arg_name) for value, arg_name
                in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            for t in args:
                if t.dtype.base_dtype not in _RANGE_TYPES:
                    raise TypeError("Range arguments must be int32, int64, float32 or float64, "
                                    "got %s" % t.dtype.base_dtype.name)
            inferred = builtins.max((t.dtype.base_dtype for t in args), key=_RANGE_TYPES.index)
            args = [cast(t, inferred) for t in args]
        return apply_op(_range, args, name=scope)


# ---- the Tensor operators ----------------------------------------------------------------------
def _binary_operator(fn, scope_name):
    """The forward and reflected operator methods for ``fn``.

    The op is named after the Python operator (``a + b`` is op ``add``,
    ``tf.add(a, b)`` is op ``Add``).  In ``1 - x`` Python calls
    ``x.__rsub__(1)``; the constant 1 takes ``x``'s dtype, as it would on the left.
    """
    def forward(x, y):
        return fn(x, y, name=scope_name)

    def reflected(y, x):
        return fn(x, y, name=scope_name)
    return forward, reflected


def _install_operators():
    """Makes Python's operators on Tensors build ops, with TF1's op names.

    The arithmetic and logical operators name their op after the operator
    (``add``, ``truediv``, ``and``); negation, ``abs()`` and the comparisons
    keep the op's own name (``Neg``, ``Abs``, ``Less``), as in TF1.
    ``==`` and ``!=`` are left alone: Tensors compare by identity so that
    they can be dict keys.  Comparisons need no reflected form: Python
    turns ``1 < x`` into ``x > 1``.
    """
    binary = {"add": add, "sub": subtract, "mul": multiply, "truediv": truediv,
              "floordiv": floordiv, "mod": floormod, "pow": pow, "matmul": matmul,
              "and": logical_and, "or": logical_or, "xor": logical_xor}
    for name, fn in binary.items():
        forward, reflected = _binary_operator(fn, name)
        Tensor._override_operator("__%s__" % name, forward)
        Tensor._override_operator("__r%s__" % name, reflected)
    named_after_op = {"__neg__": negative, "__abs__": abs, "__invert__": logical_not,
                      "__lt__": less, "__le__": less_equal, "__gt__": greater,
                      "__ge__": greater_equal}
    for operator, fn in named_after_op.items():
        Tensor._override_operator(operator, fn)


_install_operators()
