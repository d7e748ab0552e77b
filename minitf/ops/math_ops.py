"""Arithmetic ops: ``+ - * / // % **``, max/min, ``add_n``, ``clip_by_value``, ``range``.

Each op is declared with :func:`define_op` next to the Python wrapper that
builds it and the gradient that differentiates it.  Most wrappers add exactly
one op; a few are *composites* built from other ops inside one name scope, as
in TF1 (``truediv`` casts integers to floats and then divides,
``clip_by_value`` is a ``Minimum`` then a ``Maximum``).

Two TF rules run through the whole module:

* **No silent promotion.**  ``int32 + float32`` is a ``TypeError`` at
  construction.  Python numbers adopt the dtype of the tensor operand
  (``x_float32 + 1`` works) but must fit it exactly (``x_int32 + 1.5`` does not).
* **Shapes are checked while the graph is built.**  Only what depends on fed
  values fails at run time.

The binary ops *broadcast* (``[3, 1] + [4]`` is ``[3, 4]``), so their
gradients must undo it: the gradient with respect to ``x`` is summed over the
dimensions along which ``x`` was stretched, then reshaped back to ``x``'s
shape.  Each gradient below ends with :func:`~minitf.ops.gradient_util.unbroadcast`,
which does that for all of them.

``pow`` and ``range`` shadow Python built-ins, as in TF.  The other math
families live beside this module: :mod:`~minitf.ops.unary_ops`,
:mod:`~minitf.ops.comparison_ops`, :mod:`~minitf.ops.select_ops`,
:mod:`~minitf.ops.reduction_ops`, :mod:`~minitf.ops.linalg_ops` (``tf.matmul``); Python's
operators on Tensors are installed by :mod:`~minitf.ops.operators`.

Mirrors ``tensorflow/python/ops/math_ops.py`` and ``math_grad.py``.
"""

import builtins

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import array_ops, comparison_ops, select_ops, unary_ops
from minitf.ops.common_shapes import broadcast_binary_shape, same_shape_n
from minitf.ops.gradient_util import unbroadcast
from minitf.ops.math_util import REAL_INDEX, convert_operands, op_scope, with_rank
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


# ---- elementwise binary arithmetic -------------------------------------------------------
def _binary(name, doc, types=dtypes.NUMERIC):
    return define_op(name, inputs=("x", "y"), outputs=("z",), shape_fn=broadcast_binary_shape,
                     type_constraint=types, same_dtype_inputs=("x", "y"), doc=doc, stacklevel=2)


# TF1's Add also concatenates strings (``tf.constant("a") + "b"``); AddV2 does not.
_add = _binary("Add", "x + y, elementwise with broadcasting.", dtypes.NUMERIC + (dtypes.string,))


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


# TF 2 writes ``AddV2`` for every ``a + b``, so its GraphDefs are full of it;
# minitf's ``+`` stays TF1's ``Add``.  The same sum, for numbers only.
_add_v2 = _binary("AddV2", "x + y, elementwise with broadcasting (TF 2's Add, no strings).")


def add_v2(x, y, name=None):
    """Returns ``x + y`` as one ``AddV2`` op (TF's ``gen_math_ops.add_v2``).

    Not a ``tf.*`` name in TF1: it is here for graphs that TensorFlow 2
    wrote, which ``tf.import_graph_def`` rebuilds op by op.

    Raises:
        TypeError: if ``x`` and ``y`` have different dtypes, or are strings.
        ValueError: if their shapes do not broadcast.
    """
    return apply_op(_add_v2, [x, y], name=name or "AddV2")


@gradient("Add")
@gradient("AddV2")
def _add_grad(op, grad):
    """Both sums pass ``grad`` on to both inputs, reduced where they broadcast."""
    return unbroadcast(op, grad, grad)


_sub = _binary("Sub", "x - y, elementwise with broadcasting.")


def subtract(x, y, name=None):
    """Returns ``x - y`` elementwise, with broadcasting (``tf.subtract``, op ``Sub``)."""
    return apply_op(_sub, [x, y], name=name or "Sub")


@gradient("Sub")
def _sub_grad(op, grad):
    return unbroadcast(op, grad, unary_ops.negative(grad))


_mul = _binary("Mul", "x * y, elementwise with broadcasting.")


def multiply(x, y, name=None):
    """Returns ``x * y`` elementwise, with broadcasting (``tf.multiply``, op ``Mul``)."""
    return apply_op(_mul, [x, y], name=name or "Mul")


def scalar_mul(scalar, x, name=None):
    """Multiplies ``x`` by a scalar (``tf.scalar_mul``): one ``Mul`` op.

    Raises:
        ValueError: if ``scalar`` is not a 0-d value, as in TF.
    """
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims not in (None, 0):
        raise ValueError("Only scalar multiply works, got shape %s" % (scalar.shape,))
    return multiply(scalar, x, name=name or "scalar_mul")


@gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(op, multiply(grad, y), multiply(x, grad))


_real_div = _binary("RealDiv", "x / y for floating-point x and y.", dtypes.FLOATING)


def realdiv(x, y, name=None):
    """Returns ``x / y`` for floating-point tensors (``tf.realdiv``)."""
    return apply_op(_real_div, [x, y], name=name or "RealDiv")


@gradient("RealDiv")
def _real_div_grad(op, grad):
    """d(x/y)/dx = 1/y and d(x/y)/dy = -x/y²."""
    x, y = op.inputs
    return unbroadcast(op, realdiv(grad, y),
                        multiply(grad, realdiv(realdiv(unary_ops.negative(x), y), y)))


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
    with op_scope(name, "truediv", [x, y]) as scope:
        x, y = convert_operands(x, y)
        dtype = x.dtype.base_dtype
        if dtype != y.dtype.base_dtype:
            raise TypeError("x and y must have the same dtype, got %s != %s"
                            % (dtype.name, y.dtype.base_dtype.name))
        if not dtype.is_numeric:
            raise TypeError("Invalid dtype %s in __truediv__" % dtype.name)
        if dtype in _TRUEDIV_CASTS:
            x = unary_ops.cast(x, _TRUEDIV_CASTS[dtype])
            y = unary_ops.cast(y, _TRUEDIV_CASTS[dtype])
        return apply_op(_real_div, [x, y], name=scope)


def divide(x, y, name=None):
    """Computes Python-style division ``x / y`` (``tf.divide``): :func:`truediv`."""
    return truediv(x, y, name=name)


def div(x, y, name=None):
    """Divides with Python 2 semantics (``tf.div``, deprecated in TF1).

    Floats are divided exactly (``RealDiv``); integers are floor-divided
    (``FloorDiv``), so ``tf.div(7, -2)`` is -4, not C's -3.
    """
    with op_scope(name, "div", [x, y]) as scope:
        x, y = convert_operands(x, y)
        if x.dtype.base_dtype.is_floating:
            return apply_op(_real_div, [x, y], name=scope)
        return apply_op(_floor_div, [x, y], name=scope)


_floor_div = _binary("FloorDiv", "floor(x / y); integer division by zero is an error.")
not_differentiable("FloorDiv", reason="a step function of both inputs, as in TF")


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
    with op_scope(name, "floordiv", [x, y]) as scope:
        return apply_op(_floor_div, [x, y], name=scope)


_floor_mod = _binary("FloorMod", "x - floor(x / y) * y: the remainder has the sign of y.")


def floormod(x, y, name=None):
    """Returns the remainder of floor division, with the sign of ``y`` (``tf.floormod``).

    Like Python's ``%`` and ``np.mod``: ``-7 % 2`` is 1 and ``7 % -2`` is -1.
    """
    return apply_op(_floor_mod, [x, y], name=name or "FloorMod")


mod = floormod


@gradient("FloorMod")
def _floor_mod_grad(op, grad):
    """x mod y = x - floor(x / y) * y, with the floor's derivative taken as 0."""
    x, y = op.inputs
    return unbroadcast(op, grad, multiply(grad, unary_ops.negative(floor_div(x, y))))


_pow = _binary("Pow", "x ** y; integers to negative integer powers are an error.",
               dtypes.FLOATING + REAL_INDEX)


def pow(x, y, name=None):  # noqa: A001 - TF's name
    """Returns ``x ** y`` elementwise (``tf.pow``).

    Raises:
        TypeError: for int8/int16/unsigned operands, or mixed dtypes.
    """
    return apply_op(_pow, [x, y], name=name or "Pow")


@gradient("Pow")
def _pow_grad(op, grad):
    """d(x^y)/dx = y x^(y-1) and d(x^y)/dy = x^y log(x).

    ``log(x)`` is not real for ``x <= 0``; there TF takes the ``y``-gradient
    to be 0, computing the log of a harmless 1 instead so that no NaN leaks
    into the second derivative through the branch ``where`` discards.
    """
    x, y = op.inputs
    z = op.outputs[0]
    grad_x = multiply(multiply(grad, y), pow(x, subtract(y, 1)))
    positive = comparison_ops.greater(x, 0)
    safe_x = select_ops.where(positive, x, array_ops.ones_like(x))
    log_x = select_ops.where(positive, unary_ops.log(safe_x), array_ops.zeros_like(x))
    return unbroadcast(op, grad_x, multiply(multiply(grad, z), log_x))


_maximum = _binary("Maximum", "max(x, y), elementwise with broadcasting.")
_minimum = _binary("Minimum", "min(x, y), elementwise with broadcasting.")


def maximum(x, y, name=None):
    """Returns the elementwise maximum of ``x`` and ``y`` (``tf.maximum``)."""
    return apply_op(_maximum, [x, y], name=name or "Maximum")


def minimum(x, y, name=None):
    """Returns the elementwise minimum of ``x`` and ``y`` (``tf.minimum``)."""
    return apply_op(_minimum, [x, y], name=name or "Minimum")


def _maximum_minimum_grad(op, grad, x_wins):
    """The gradient goes to whichever operand was chosen; on ties, to ``x``."""
    x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    x_mask = x_wins(x, y)
    return unbroadcast(op, select_ops.where(x_mask, grad, zeros),
                        select_ops.where(x_mask, zeros, grad))


@gradient("Maximum")
def _maximum_grad(op, grad):
    return _maximum_minimum_grad(op, grad, comparison_ops.greater_equal)


@gradient("Minimum")
def _minimum_grad(op, grad):
    return _maximum_minimum_grad(op, grad, comparison_ops.less_equal)


_squared_difference = _binary("SquaredDifference", "(x - y) ** 2, elementwise.",
                              dtypes.FLOATING + REAL_INDEX)


def squared_difference(x, y, name=None):
    """Returns ``(x - y) ** 2`` elementwise (``tf.squared_difference``)."""
    return apply_op(_squared_difference, [x, y], name=name or "SquaredDifference")


@gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    grad_x = multiply(multiply(grad, 2), subtract(x, y))
    return unbroadcast(op, grad_x, unary_ops.negative(grad_x))


# ---- AddN and clip_by_value ---------------------------------------------------------------
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


@gradient("AddN")
def _add_n_grad(op, grad):
    """Every summand receives the whole gradient."""
    return [grad] * len(op.inputs)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips ``t`` to ``[clip_value_min, clip_value_max]`` elementwise (``tf.clip_by_value``).

    As in TF1 it is two ops in scope ``clip_by_value``: a ``Minimum`` with
    the upper bound, then a ``Maximum`` with the lower bound (named after the
    scope); its gradient is theirs.  The bounds may be scalars or broadcast
    against ``t``, but must not make the result larger than ``t``.

    Raises:
        ValueError: if the bounds would broadcast ``t`` to a larger shape.
    """
    with op_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return t_max


# ---- Range -------------------------------------------------------------------------------------
_RANGE_TYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range_shape(op):
    """A vector whose length is known when start, limit and delta are constants.

    Raises:
        ValueError: for a non-scalar argument, a zero delta, or a delta that
            steps away from the limit.
    """
    for t in op.inputs:
        with_rank(t.shape, 0)
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
not_differentiable("Range", reason="its output's length depends on its inputs")


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
    with op_scope(name, "Range", [start, limit, delta]) as scope:
        args = [convert_to_tensor(value, dtype=dtype, name=arg_name) for value, arg_name
                in ((start, "start"), (limit, "limit"), (delta, "delta"))]
        if dtype is None:
            for t in args:
                if t.dtype.base_dtype not in _RANGE_TYPES:
                    raise TypeError("Range arguments must be int32, int64, float32 or float64, "
                                    "got %s" % t.dtype.base_dtype.name)
            inferred = builtins.max((t.dtype.base_dtype for t in args), key=_RANGE_TYPES.index)
            args = [unary_ops.cast(t, inferred) for t in args]
        return apply_op(_range, args, name=scope)


def _lin_space_shape(op):
    num = constant_value(op.inputs[2])
    return [TensorShape([None if num is None else int(num)])]


_lin_space = define_op("LinSpace", inputs=("start", "stop", "num"), shape_fn=_lin_space_shape,
                       type_constraint=dtypes.FLOATING, same_dtype_inputs=("start", "stop"),
                       doc="num evenly spaced values from start to stop, both included.")
not_differentiable("LinSpace", reason="not differentiable in TF1 either")


def lin_space(start, stop, num, name=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive (``tf.linspace``).

    Example:
        >>> sess.run(tf.linspace(0.0, 1.0, 5))
        array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    return apply_op(_lin_space, [start, stop, num], name=name or "LinSpace")


linspace = lin_space
