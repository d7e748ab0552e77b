"""Functions of one tensor, elementwise: ``exp``, ``log``, ``sin``, ``tanh``, ``sigmoid``,
``abs``, rounding ... and ``cast``, the one explicit way to change a dtype.

Each op is declared with :func:`define_op`, followed by its Python wrapper and
its gradient.  A gradient is ``grad`` times the derivative, built from ordinary
ops so that it can be differentiated again.  Where TF computes the product in
one fused op — ``TanhGrad(y, dy) = dy * (1 - y²)`` — so does minitf, and that
op has a gradient of its own (second derivatives of ``tanh`` go through it).

The derivatives are written in terms of the op's *output* where that is
cheaper (``d exp(x) = exp(x)``, ``d tanh(x) = 1 - tanh(x)²``), as TF does.

Mirrors the unary part of ``tensorflow/python/ops/math_ops.py`` and ``math_grad.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops
from minitf.ops.common_shapes import same_shape_n, unchanged_shape
from minitf.ops.math_util import SIGNED, op_scope
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


def _unary(name, doc, types=dtypes.FLOATING):
    return define_op(name, inputs=("x",), outputs=("y",), shape_fn=unchanged_shape,
                     type_constraint=types, doc=doc, stacklevel=2)


def _unary_grad_op(name, doc):
    """A fused gradient op ``(y, dy) -> dy * f'(x)``, written with ``y = f(x)``."""
    return define_op(name, inputs=("y", "dy"), outputs=("z",), shape_fn=same_shape_n,
                     type_constraint=dtypes.FLOATING, same_dtype_inputs=("y", "dy"), doc=doc,
                     stacklevel=2)


# ---- sign and magnitude ------------------------------------------------------------------
_neg = _unary("Neg", "-x, elementwise.", SIGNED)


def negative(x, name=None):
    """Returns ``-x`` elementwise (``tf.negative``, unary operator ``-``)."""
    return apply_op(_neg, [x], name=name or "Neg")


@gradient("Neg")
def _neg_grad(op, grad):
    return [-grad]


_abs = _unary("Abs", "|x|, elementwise.", SIGNED)


def abs(x, name=None):  # noqa: A001 - TF's name
    """Returns ``|x|`` elementwise (``tf.abs``, built-in ``abs()``)."""
    return apply_op(_abs, [x], name=name or "Abs")


@gradient("Abs")
def _abs_grad(op, grad):
    """``sign(x)``: at 0 the gradient is 0, as in TF."""
    return [grad * sign(op.inputs[0])]


_sign = _unary("Sign", "-1, 0 or 1 by the sign of x.", SIGNED)


def sign(x, name=None):
    """Returns -1, 0 or 1 by the sign of each element (``tf.sign``)."""
    return apply_op(_sign, [x], name=name or "Sign")


@gradient("Sign")
def _sign_grad(op, grad):
    """Zero everywhere (TF returns zeros, not None: the input stays connected)."""
    return [array_ops.zeros_like(op.inputs[0])]


_square = _unary("Square", "x * x, elementwise.", SIGNED)


def square(x, name=None):
    """Returns ``x * x`` elementwise (``tf.square``)."""
    return apply_op(_square, [x], name=name or "Square")


@gradient("Square")
def _square_grad(op, grad):
    return [grad * (2 * op.inputs[0])]


# ---- roots and reciprocals, with TF's fused gradient ops ------------------------------------
_sqrt = _unary("Sqrt", "The square root of x.")
_sqrt_grad = _unary_grad_op("SqrtGrad", "The gradient of Sqrt: dy * 0.5 / y.")


def sqrt(x, name=None):
    """Returns the square root of ``x`` elementwise; floats only (``tf.sqrt``)."""
    return apply_op(_sqrt, [x], name=name or "Sqrt")


def sqrt_grad(y, dy, name=None):
    """``dy * 0.5 / y`` where ``y = sqrt(x)`` (TF's ``gen_math_ops.sqrt_grad``)."""
    return apply_op(_sqrt_grad, [y, dy], name=name or "SqrtGrad")


@gradient("Sqrt")
def _sqrt_grad_fn(op, grad):
    return [sqrt_grad(op.outputs[0], grad)]


@gradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    """z = 0.5 dy / y: dz/dy = -z / y and dz/d(dy) = 0.5 / y."""
    y = op.inputs[0]
    grad_over_y = grad / y
    return [-grad_over_y * op.outputs[0], 0.5 * grad_over_y]


_rsqrt = _unary("Rsqrt", "1 / sqrt(x).")
_rsqrt_grad = _unary_grad_op("RsqrtGrad", "The gradient of Rsqrt: dy * -0.5 * y^3.")


def rsqrt(x, name=None):
    """Returns ``1 / sqrt(x)`` elementwise (``tf.rsqrt``)."""
    return apply_op(_rsqrt, [x], name=name or "Rsqrt")


def rsqrt_grad(y, dy, name=None):
    """``dy * -0.5 * y³`` where ``y = rsqrt(x)`` (TF's ``gen_math_ops.rsqrt_grad``)."""
    return apply_op(_rsqrt_grad, [y, dy], name=name or "RsqrtGrad")


@gradient("Rsqrt")
def _rsqrt_grad_fn(op, grad):
    return [rsqrt_grad(op.outputs[0], grad)]


@gradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    """z = -0.5 dy y³: dz/dy = -1.5 dy y² and dz/d(dy) = -0.5 y³."""
    y, dy = op.inputs
    return [-1.5 * grad * dy * square(y), rsqrt_grad(y, grad)]


_reciprocal = _unary("Reciprocal", "1 / x.")
_reciprocal_grad = _unary_grad_op("ReciprocalGrad", "The gradient of Reciprocal: -dy * y^2.")


def reciprocal(x, name=None):
    """Returns ``1 / x`` elementwise (``tf.reciprocal``); floats only, as TF has no
    integer kernel."""
    return apply_op(_reciprocal, [x], name=name or "Reciprocal")


def reciprocal_grad(y, dy, name=None):
    """``-dy * y²`` where ``y = 1 / x`` (TF's ``gen_math_ops.reciprocal_grad``)."""
    return apply_op(_reciprocal_grad, [y, dy], name=name or "ReciprocalGrad")


@gradient("Reciprocal")
def _reciprocal_grad_fn(op, grad):
    return [reciprocal_grad(op.outputs[0], grad)]


@gradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    """z = -dy y²: dz/dy = -2 dy y and dz/d(dy) = -y²."""
    y, dy = op.inputs
    return [-2.0 * grad * dy * y, reciprocal_grad(y, grad)]


# ---- exponentials and logarithms -------------------------------------------------------------
_exp = _unary("Exp", "e ** x.")


def exp(x, name=None):
    """Returns ``e ** x`` elementwise (``tf.exp``)."""
    return apply_op(_exp, [x], name=name or "Exp")


@gradient("Exp")
def _exp_grad(op, grad):
    return [grad * op.outputs[0]]


_expm1 = _unary("Expm1", "e ** x - 1, accurate for small x.")


def expm1(x, name=None):
    """Returns ``e ** x - 1`` elementwise, without the cancellation near 0 (``tf.expm1``)."""
    return apply_op(_expm1, [x], name=name or "Expm1")


@gradient("Expm1")
def _expm1_grad(op, grad):
    return [grad * exp(op.inputs[0])]


_log = _unary("Log", "The natural logarithm of x.")


def log(x, name=None):
    """Returns the natural logarithm of ``x`` elementwise (``tf.log``)."""
    return apply_op(_log, [x], name=name or "Log")


@gradient("Log")
def _log_grad(op, grad):
    return [grad * reciprocal(op.inputs[0])]


_log1p = _unary("Log1p", "log(1 + x), accurate for small x.")


def log1p(x, name=None):
    """Returns ``log(1 + x)`` elementwise, accurate for small ``x`` (``tf.log1p``)."""
    return apply_op(_log1p, [x], name=name or "Log1p")


@gradient("Log1p")
def _log1p_grad(op, grad):
    return [grad * reciprocal(1 + op.inputs[0])]


# ---- trigonometric and hyperbolic ------------------------------------------------------------
_sin = _unary("Sin", "sin(x).")


def sin(x, name=None):
    """Returns ``sin(x)`` elementwise (``tf.sin``)."""
    return apply_op(_sin, [x], name=name or "Sin")


@gradient("Sin")
def _sin_grad(op, grad):
    return [grad * cos(op.inputs[0])]


_cos = _unary("Cos", "cos(x).")


def cos(x, name=None):
    """Returns ``cos(x)`` elementwise (``tf.cos``)."""
    return apply_op(_cos, [x], name=name or "Cos")


@gradient("Cos")
def _cos_grad(op, grad):
    return [-grad * sin(op.inputs[0])]


_tan = _unary("Tan", "tan(x).")


def tan(x, name=None):
    """Returns ``tan(x)`` elementwise (``tf.tan``)."""
    return apply_op(_tan, [x], name=name or "Tan")


@gradient("Tan")
def _tan_grad(op, grad):
    """sec²(x) = 1 / cos²(x)."""
    return [grad * square(reciprocal(cos(op.inputs[0])))]


_tanh = _unary("Tanh", "The hyperbolic tangent of x.")
_tanh_grad = _unary_grad_op("TanhGrad", "The gradient of Tanh: dy * (1 - y^2).")


def tanh(x, name=None):
    """Returns the hyperbolic tangent of ``x`` elementwise (``tf.tanh``)."""
    return apply_op(_tanh, [x], name=name or "Tanh")


def tanh_grad(y, dy, name=None):
    """``dy * (1 - y²)`` where ``y = tanh(x)`` (TF's ``gen_math_ops.tanh_grad``)."""
    return apply_op(_tanh_grad, [y, dy], name=name or "TanhGrad")


@gradient("Tanh")
def _tanh_grad_fn(op, grad):
    return [tanh_grad(op.outputs[0], grad)]


@gradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    """z = dy (1 - y²): dz/dy = -2 dy y and dz/d(dy) = 1 - y²."""
    y, dy = op.inputs
    return [grad * -2.0 * dy * y, tanh_grad(y, grad)]


_sigmoid = _unary("Sigmoid", "1 / (1 + exp(-x)).")
_sigmoid_grad = _unary_grad_op("SigmoidGrad", "The gradient of Sigmoid: dy * y * (1 - y).")


def sigmoid(x, name=None):
    """Returns ``1 / (1 + exp(-x))`` elementwise (``tf.sigmoid``).

    The kernel computes it without overflow for large ``|x|``.
    """
    return apply_op(_sigmoid, [x], name=name or "Sigmoid")


def sigmoid_grad(y, dy, name=None):
    """``dy * y * (1 - y)`` where ``y = sigmoid(x)`` (TF's ``gen_math_ops.sigmoid_grad``)."""
    return apply_op(_sigmoid_grad, [y, dy], name=name or "SigmoidGrad")


@gradient("Sigmoid")
def _sigmoid_grad_fn(op, grad):
    return [sigmoid_grad(op.outputs[0], grad)]


@gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    """z = dy y (1 - y): dz/dy = dy (1 - 2y) and dz/d(dy) = y (1 - y)."""
    y, dy = op.inputs
    return [grad * dy * (1 - 2 * y), sigmoid_grad(y, grad)]


# ---- rounding: step functions, no gradient (TF returns None) -----------------------------------
_floor = _unary("Floor", "The largest integer not greater than x.")
_ceil = _unary("Ceil", "The smallest integer not less than x.")
_round = _unary("Round", "x rounded half to even (banker's rounding).")
not_differentiable("Floor", "Ceil", "Round", reason="step functions, as in TF")


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
    with op_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == base_type:
            return x
        return apply_op(_cast, [x], attrs={"DstT": base_type}, name=scope)


@gradient("Cast")
def _cast_grad(op, grad):
    """Between floating dtypes the gradient is cast back; to or from integers
    and bools there is none (TF's rule)."""
    source = op.inputs[0].dtype.base_dtype
    if source.is_floating and grad.dtype.base_dtype.is_floating:
        return [cast(grad, source)]
    return [None]


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
