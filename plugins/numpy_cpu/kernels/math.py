"""CPU kernels of the math ops: one NumPy call each, plus TF's run-time checks.

Inputs arrive with the dtypes the graph checked, so NumPy computes in the
op's dtype; where NumPy would widen (sums of int32, means) the kernel asks for
the output dtype.  Division follows IEEE rules silently, as TF's kernels do
(``1.0 / 0`` is ``inf``, ``log(-1.0)`` is ``nan``), while integer division by
zero is an ``InvalidArgumentError``.
"""

import functools

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _ieee(fn):
    """Runs the kernel without NumPy's warnings for inf and nan results."""
    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*args, **kwargs)
    return quiet


def _check_integer_divisor(ctx, y):
    if y.dtype.kind in "iu" and not np.all(y):
        raise ctx.invalid_argument("Integer division by zero")


# ---- elementwise binary ----------------------------------------------------------------
@kernel("Add")
def add(ctx, x, y):
    return np.add(x, y)


@kernel("Sub")
def sub(ctx, x, y):
    return np.subtract(x, y)


@kernel("Mul")
def mul(ctx, x, y):
    return np.multiply(x, y)


@kernel("RealDiv")
@_ieee
def real_div(ctx, x, y):
    return np.true_divide(x, y)


@kernel("FloorDiv")
@_ieee
def floor_div(ctx, x, y):
    _check_integer_divisor(ctx, y)
    return np.floor_divide(x, y)


@kernel("FloorMod")
@_ieee
def floor_mod(ctx, x, y):
    _check_integer_divisor(ctx, y)
    return np.mod(x, y)


@kernel("Pow")
@_ieee
def pow_(ctx, x, y):
    # NumPy raises "Integers to negative integer powers are not allowed." as TF does.
    return np.power(x, y)


@kernel("Maximum")
def maximum(ctx, x, y):
    return np.maximum(x, y)


@kernel("Minimum")
def minimum(ctx, x, y):
    return np.minimum(x, y)


@kernel("SquaredDifference")
def squared_difference(ctx, x, y):
    return np.square(np.subtract(x, y))


# ---- comparisons and logic ------------------------------------------------------------
@kernel("Equal")
def equal(ctx, x, y):
    return np.equal(x, y)


@kernel("NotEqual")
def not_equal(ctx, x, y):
    return np.not_equal(x, y)


@kernel("Less")
def less(ctx, x, y):
    return np.less(x, y)


@kernel("LessEqual")
def less_equal(ctx, x, y):
    return np.less_equal(x, y)


@kernel("Greater")
def greater(ctx, x, y):
    return np.greater(x, y)


@kernel("GreaterEqual")
def greater_equal(ctx, x, y):
    return np.greater_equal(x, y)


@kernel("LogicalAnd")
def logical_and(ctx, x, y):
    return np.logical_and(x, y)


@kernel("LogicalOr")
def logical_or(ctx, x, y):
    return np.logical_or(x, y)


@kernel("LogicalNot")
def logical_not(ctx, x):
    return np.logical_not(x)


# ---- elementwise unary ------------------------------------------------------------------
@kernel("Neg")
def neg(ctx, x):
    return np.negative(x)


@kernel("Abs")
def abs_(ctx, x):
    return np.abs(x)


@kernel("Sign")
def sign(ctx, x):
    return np.sign(x)


@kernel("Square")
def square(ctx, x):
    return np.square(x)


@kernel("Sqrt")
@_ieee
def sqrt(ctx, x):
    return np.sqrt(x)


@kernel("Rsqrt")
@_ieee
def rsqrt(ctx, x):
    return np.reciprocal(np.sqrt(x))


@kernel("Reciprocal")
@_ieee
def reciprocal(ctx, x):
    return np.reciprocal(x)


@kernel("Exp")
@_ieee
def exp(ctx, x):
    return np.exp(x)


@kernel("Expm1")
@_ieee
def expm1(ctx, x):
    return np.expm1(x)


@kernel("Log")
@_ieee
def log(ctx, x):
    return np.log(x)


@kernel("Log1p")
@_ieee
def log1p(ctx, x):
    return np.log1p(x)


@kernel("Sin")
def sin(ctx, x):
    return np.sin(x)


@kernel("Cos")
def cos(ctx, x):
    return np.cos(x)


@kernel("Tan")
def tan(ctx, x):
    return np.tan(x)


@kernel("Tanh")
def tanh(ctx, x):
    return np.tanh(x)


@kernel("Sigmoid")
def sigmoid(ctx, x):
    # 1 / (1 + e^-x) = e^-log(1 + e^-x); logaddexp(0, -x) never overflows.
    return np.exp(-np.logaddexp(np.zeros_like(x), -x))


@kernel("Floor")
def floor(ctx, x):
    return np.floor(x)


@kernel("Ceil")
def ceil(ctx, x):
    return np.ceil(x)


@kernel("Round")
def round_(ctx, x):
    return np.round(x)  # half to even, like TF


@kernel("IsNan")
def is_nan(ctx, x):
    return np.isnan(x)


@kernel("IsInf")
def is_inf(ctx, x):
    return np.isinf(x)


@kernel("IsFinite")
def is_finite(ctx, x):
    return np.isfinite(x)


@kernel("Cast")
@_ieee
def cast(ctx, x, DstT):  # noqa: N803 - TF's attr name
    # astype truncates floats toward zero, maps x != 0 to True and wraps integers, as TF.
    return np.asarray(x).astype(DstT.as_numpy_dtype)


# ---- selecting and combining -------------------------------------------------------------
@kernel("Select")
def select(ctx, condition, t, e):
    if t.shape != e.shape:
        raise ctx.invalid_argument("'then' and 'else' must have the same size.  but received: "
                                   "%s vs. %s" % (list(t.shape), list(e.shape)))
    if condition.ndim == 1 and t.ndim > 1:
        if condition.shape[0] != t.shape[0]:
            raise ctx.invalid_argument("Number of batches of 'then' must match size of 'cond', "
                                       "but saw: %d vs. %d" % (t.shape[0], condition.shape[0]))
        condition = condition.reshape((-1,) + (1,) * (t.ndim - 1))  # choose whole rows
    elif condition.ndim > 0 and condition.shape != t.shape:
        raise ctx.invalid_argument("'cond' and 'then' must have the same size.  but received: "
                                   "%s vs. %s" % (list(condition.shape), list(t.shape)))
    return np.where(condition, t, e)


@kernel("SelectV2")
def select_v2(ctx, condition, t, e):
    return np.where(condition, t, e)


@kernel("Where")
def where(ctx, condition):
    return np.argwhere(condition).astype(np.int64)


@kernel("AddN")
def add_n(ctx, *inputs):
    return functools.reduce(np.add, inputs)


# ---- reductions ------------------------------------------------------------------------
def _reduction_axes(ctx, x, reduction_indices):
    """The axes to reduce as a tuple of non-negative ints, checked as TF checks them."""
    axes = []
    for axis in np.reshape(reduction_indices, -1).tolist():
        if not -x.ndim <= axis < x.ndim:
            raise ctx.invalid_argument("Invalid reduction dimension (%d for input with %d "
                                       "dimension(s)" % (axis, x.ndim))
        if axis % x.ndim in axes:
            raise ctx.invalid_argument("Invalid reduction arguments: Axes contains duplicate "
                                       "dimension: %d" % (axis % x.ndim))
        axes.append(axis % x.ndim)
    return tuple(axes)


@kernel("Sum")
def sum_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    return np.sum(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)


@kernel("Mean")
@_ieee
def mean(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    total = np.sum(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)
    count = int(np.prod([x.shape[a] for a in axes]))
    if x.dtype.kind in "iu":
        # Integer mean: C's division, truncating toward zero; an empty mean is 0.
        return np.sign(total) * (np.abs(total) // max(count, 1))
    return np.divide(total, count, dtype=x.dtype)  # an empty mean is nan


@kernel("Max")
def max_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.max(x, axis=axes, keepdims=keep_dims, initial=lowest)


@kernel("Min")
def min_(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    highest = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
    return np.min(x, axis=axes, keepdims=keep_dims, initial=highest)


@kernel("Prod")
def prod(ctx, x, reduction_indices, keep_dims):
    axes = _reduction_axes(ctx, x, reduction_indices)
    return np.prod(x, axis=axes, keepdims=keep_dims, dtype=x.dtype)


@kernel("Any")
def any_(ctx, x, reduction_indices, keep_dims):
    return np.any(x, axis=_reduction_axes(ctx, x, reduction_indices), keepdims=keep_dims)


@kernel("All")
def all_(ctx, x, reduction_indices, keep_dims):
    return np.all(x, axis=_reduction_axes(ctx, x, reduction_indices), keepdims=keep_dims)


def _arg_axis(ctx, x, dimension):
    axis = int(dimension)
    if not -x.ndim <= axis < x.ndim:
        raise ctx.invalid_argument("Expected dimension in the range [%d, %d), but got %d"
                                   % (-x.ndim, x.ndim, axis))
    if x.shape[axis] == 0:
        raise ctx.invalid_argument("Reduction axis %d is empty in shape %s"
                                   % (axis, list(x.shape)))
    return axis


@kernel("ArgMax")
def arg_max(ctx, x, dimension, output_type):
    return np.argmax(x, axis=_arg_axis(ctx, x, dimension)).astype(output_type.as_numpy_dtype)


@kernel("ArgMin")
def arg_min(ctx, x, dimension, output_type):
    return np.argmin(x, axis=_arg_axis(ctx, x, dimension)).astype(output_type.as_numpy_dtype)


# ---- matrices ------------------------------------------------------------------------
def _matrix_product(ctx, a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ctx.invalid_argument("Matrix size-incompatible: In[0]: %s, In[1]: %s"
                                   % (list(a.shape), list(b.shape)))
    return np.matmul(a, b)


@kernel("MatMul")
def mat_mul(ctx, a, b, transpose_a, transpose_b):
    return _matrix_product(ctx, a.T if transpose_a else a, b.T if transpose_b else b)


@kernel("BatchMatMulV2")
def batch_mat_mul(ctx, x, y, adj_x, adj_y):
    return _matrix_product(ctx, np.swapaxes(x, -1, -2) if adj_x else x,
                           np.swapaxes(y, -1, -2) if adj_y else y)


@kernel("MatrixInverse")
def matrix_inverse(ctx, x, adjoint):
    try:
        inverse = np.linalg.inv(x)
    except np.linalg.LinAlgError:
        raise ctx.invalid_argument("Input is not invertible.") from None
    return np.swapaxes(inverse, -1, -2) if adjoint else inverse


@kernel("MatrixDeterminant")
def matrix_determinant(ctx, x):
    return np.linalg.det(x).astype(x.dtype)


# ---- Range ---------------------------------------------------------------------------
@kernel("Range")
def range_(ctx, start, limit, delta):
    for name, value in (("start", start), ("limit", limit), ("delta", delta)):
        if np.ndim(value) != 0:
            raise ctx.invalid_argument("%s must be a scalar, not shape %s"
                                       % (name, list(np.shape(value))))
    if delta == 0:
        raise ctx.invalid_argument("Requires delta != 0: %s" % delta)
    if delta > 0 and start > limit:
        raise ctx.invalid_argument("Requires start <= limit when delta > 0: %s/%s" % (start, limit))
    if delta < 0 and start < limit:
        raise ctx.invalid_argument("Requires start >= limit when delta < 0: %s/%s" % (start, limit))
    if np.asarray(delta).dtype.kind == "i":
        size = -((int(start) - int(limit)) // int(delta))
    else:
        size = int(np.ceil((limit - start) / delta))
    # Computed in the op's dtype, as TF does: start + i * delta.
    return start + np.arange(size, dtype=ctx.output_dtypes[0]) * delta
