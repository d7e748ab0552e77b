"""CPU kernels of the elementwise math ops: one NumPy call each, plus TF's run-time checks.

Inputs arrive with the dtypes the graph checked, so NumPy computes in the
op's dtype.  Results follow IEEE rules, as TF's kernels do (``1.0 / 0`` is
``inf``, ``log(-1.0)`` is ``nan``), while integer division by zero is an
``InvalidArgumentError``.  Kernels whose domain errors are routine (division,
logarithms, powers) run under :func:`ieee`, which silences NumPy's
RuntimeWarnings; ``Add`` (and TF 2's ``AddV2``, the same kernel), ``Sub``
and ``Mul`` do not, because entering ``np.errstate`` costs about 1 µs, more
than the small additions themselves (an overflowing product still gives
``inf``, with NumPy's warning).  The
reductions and the matrix ops have their own modules (``reduction.py``,
``linalg.py``).
"""

import functools

import numpy as np

from minitf_numpy_cpu.kernels.forwarding import forwards_input, reusable
from minitf_numpy_cpu.kernels.table import kernel


def ieee(fn):
    """Runs the kernel without NumPy's warnings for inf and nan results.

    ``quiet_body`` lets the straight-line executor silence a whole step once
    instead of every call (see :func:`minitf.runtime.executors.generated._quiet_fp`).
    """
    @functools.wraps(fn)
    def quiet(*args, **kwargs):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*args, **kwargs)
    quiet.quiet_body = fn
    return quiet


def _check_integer_divisor(ctx, y):
    if y.dtype.kind in "iu" and not np.all(y):
        raise ctx.invalid_argument("Integer division by zero")


# ---- elementwise binary ----------------------------------------------------------------
@kernel("Add")
@kernel("AddV2")
@forwards_input(0)
def add(ctx, x, y):
    if ctx.forward_input:
        return add_forwarding(ctx, x, y)
    return np.add(x, y)


def add_forwarding(ctx, x, y):
    """``Add`` with buffer forwarding (forwarding.py): the step is done with ``x``,
    so when the sum has ``x``'s shape (``x + bias``) it is written into ``x``'s buffer.

    A separate function, called only for a forwarding context, so that the
    plain call costs no more than ``np.add`` itself.
    """
    if reusable(ctx, x) and np.shape(y) == x.shape[x.ndim - np.ndim(y):]:
        return np.add(x, y, out=x)
    return np.add(x, y)


@kernel("Sub")
def sub(ctx, x, y):
    return np.subtract(x, y)


@kernel("Mul")
def mul(ctx, x, y):
    return np.multiply(x, y)


@kernel("RealDiv")
@ieee
def real_div(ctx, x, y):
    return np.true_divide(x, y)


@kernel("FloorDiv")
@ieee
def floor_div(ctx, x, y):
    _check_integer_divisor(ctx, y)
    return np.floor_divide(x, y)


@kernel("FloorMod")
@ieee
def floor_mod(ctx, x, y):
    _check_integer_divisor(ctx, y)
    return np.mod(x, y)


@kernel("Pow")
@ieee
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
@ieee
def squared_difference(ctx, x, y):
    return np.square(np.subtract(x, y))


@kernel("BroadcastGradientArgs")
def broadcast_gradient_args(ctx, s0, s1):
    """The axes where each shape, padded on the left with 1s, is 1 (none if equal)."""
    dtype = ctx.output_dtypes[0]
    s0, s1 = [int(d) for d in s0], [int(d) for d in s1]
    if s0 == s1:
        return np.zeros(0, dtype), np.zeros(0, dtype)
    rank = max(len(s0), len(s1))
    s0 = [1] * (rank - len(s0)) + s0
    s1 = [1] * (rank - len(s1)) + s1
    for a, b in zip(s0, s1):
        if a != b and 1 not in (a, b):
            raise ctx.invalid_argument("Incompatible shapes: [%s] vs. [%s]"
                                       % (",".join(map(str, s0)), ",".join(map(str, s1))))
    r0 = [i for i, d in enumerate(s0) if d == 1]
    r1 = [i for i, d in enumerate(s1) if d == 1]
    return np.array(r0, dtype), np.array(r1, dtype)


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
@ieee
def sqrt(ctx, x):
    return np.sqrt(x)


@kernel("Rsqrt")
@ieee
def rsqrt(ctx, x):
    return np.reciprocal(np.sqrt(x))


@kernel("Reciprocal")
@ieee
def reciprocal(ctx, x):
    return np.reciprocal(x)


@kernel("Exp")
@ieee
def exp(ctx, x):
    return np.exp(x)


@kernel("Expm1")
@ieee
def expm1(ctx, x):
    return np.expm1(x)


@kernel("Log")
@ieee
def log(ctx, x):
    return np.log(x)


@kernel("Log1p")
@ieee
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


# ---- the fused gradients of unary ops, written with y = f(x) ----------------------------------
@kernel("SqrtGrad")
@ieee
def sqrt_grad(ctx, y, dy):
    return dy * 0.5 / y


@kernel("RsqrtGrad")
@ieee
def rsqrt_grad(ctx, y, dy):
    return dy * -0.5 * y * y * y


@kernel("ReciprocalGrad")
@ieee
def reciprocal_grad(ctx, y, dy):
    return -dy * y * y


@kernel("TanhGrad")
@ieee
def tanh_grad(ctx, y, dy):
    return dy * (1 - y * y)


@kernel("SigmoidGrad")
@ieee
def sigmoid_grad(ctx, y, dy):
    return dy * y * (1 - y)


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
@ieee
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


# ---- Cumsum, Cumprod ---------------------------------------------------------------------
def _scan(x, axis, exclusive, reverse, accumulate, identity):
    axis = int(axis)
    if reverse:
        x = np.flip(x, axis)
    out = accumulate(x, axis=axis, dtype=x.dtype)
    if exclusive and out.shape[axis]:
        first = np.full_like(np.take(out, [0], axis=axis), identity)
        out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@kernel("Cumsum")
def cumsum(ctx, x, axis, exclusive, reverse):
    if not -x.ndim <= int(axis) < x.ndim:
        raise ctx.invalid_argument("axis %d out of range for a %d-D tensor" % (axis, x.ndim))
    return _scan(x, axis, exclusive, reverse, np.cumsum, 0)


@kernel("Cumprod")
def cumprod(ctx, x, axis, exclusive, reverse):
    if not -x.ndim <= int(axis) < x.ndim:
        raise ctx.invalid_argument("axis %d out of range for a %d-D tensor" % (axis, x.ndim))
    return _scan(x, axis, exclusive, reverse, np.cumprod, 1)


# ---- LinSpace ----------------------------------------------------------------------------
@kernel("LinSpace")
def lin_space(ctx, start, stop, num):
    if int(num) <= 0:
        raise ctx.invalid_argument("Requires num > 0: %d" % num)
    return np.linspace(start, stop, int(num)).astype(start.dtype)


# ---- Einsum ------------------------------------------------------------------------------
@kernel("Einsum")
def einsum(ctx, *inputs, equation):
    try:
        return np.asarray(np.einsum(equation, *inputs))
    except ValueError as e:
        raise ctx.invalid_argument("einsum %r: %s" % (equation, e)) from None
