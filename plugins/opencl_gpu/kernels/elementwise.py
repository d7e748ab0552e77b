"""GPU kernels of the elementwise ops: unary and binary math with broadcasting,
comparisons, logic, the fused activation gradients, ``Cast``, ``Select``,
``AddN``, ``Fill``, ``ZerosLike`` (sources: ``opencl_kernels/elementwise.cl``
and ``cast.cl``).

Each unary and binary op is written in C once, as the *expression template*
of one element in :data:`EXPRESSIONS`; its kernels are generated from it, and
so are the fused kernels of :mod:`~minitf_opencl_gpu.kernels.fusion` that
compute a whole cluster of such ops in one pass.

A binary op picks the cheapest of five kernels: both inputs of the output's
shape (``_same``, four elements per work item, see :func:`vector_items`), one
of them a single element (``_sa``/``_sb``), one of them a row repeated along
the leading axes (``_ra``/``_rb``), or general NumPy broadcasting (``_bcast``,
with per-input strides from :func:`~minitf_opencl_gpu.kernels.table.strided_args`).
"""

import dataclasses

import numpy as np

from minitf.plugin import errors

from minitf_opencl_gpu.kernels.table import (
    broadcast_shape, broadcast_strides, empty, host_kernel, i32, kernel, on_device, run, run2d,
    strided_args)
from minitf_opencl_gpu.programs import CL_TYPES, cl_type, register_source, source

# The program of the unary and binary kernels: elementwise_math.cl, elementwise.cl and
# the UNARY/BINARY lines generated from EXPRESSIONS (see register_program).
PROGRAM = "elementwise_ops"


@dataclasses.dataclass(frozen=True)
class Expression:
    """One elementwise op written in C, once: the *expression template* of its element.

    The unfused kernels of the op (``UNARY``/``BINARY`` in ``elementwise.cl``)
    and every fused kernel that holds it (:mod:`~minitf_opencl_gpu.kernels.fusion`)
    are made from the same text.  An expression computes one element from the
    operands ``a`` (and ``b``) of element type ``T``; it may call the helpers of
    ``elementwise_math.cl`` as ``TYPED(name)(...)``.

    Attributes:
        kernel: the name of its unfused kernels in the program.
        arity: 1 or 2 operands.
        templates: dtype group (``"float"``, ``"int"``, ``"bool"``) -> C expression.
        bool_output: the result is a bool (stored as ``uchar``), else of type ``T``.
    """

    kernel: str
    arity: int
    templates: dict
    bool_output: bool = False

    @property
    def groups(self):
        return tuple(self.templates)


def _expression(kernel, arity, bool_output=False, number=None, **templates):
    if number is not None:  # the same text for floats and integers
        templates = dict(float=number, int=number, **templates)
    return Expression(kernel, arity, templates, bool_output)


def _unary(kernel, **templates):
    return _expression(kernel, 1, **templates)


def _binary(kernel, **templates):
    return _expression(kernel, 2, **templates)


def _comparison(kernel, text, groups=("float", "int")):
    return _expression(kernel, 2, bool_output=True, **{group: text for group in groups})


# op type -> its Expression.  Fused gradients take a and b in TF's input order.
EXPRESSIONS = {
    "Add": _binary("add", number="a + b"),
    "AddV2": _binary("add", number="a + b"),
    "Sub": _binary("sub", number="a - b"),
    "Mul": _binary("mul", number="a * b"),
    # NaN wins, as in NumPy (a != a is true only for NaN).
    "Maximum": _binary("maximum", float="(a > b || a != a) ? a : b", int="a > b ? a : b"),
    "Minimum": _binary("minimum", float="(a < b || a != a) ? a : b", int="a < b ? a : b"),
    "RealDiv": _binary("real_div", float="a / b"),
    "Pow": _binary("pow_", float="pow(a, b)", int="TYPED(int_pow)(a, b)"),
    "SquaredDifference": _binary("squared_difference", number="(a - b) * (a - b)"),
    "FloorDiv": _binary("floor_div", float="floor(a / b)"),
    "FloorMod": _binary("floor_mod", float="TYPED(floor_mod)(a, b)"),
    "ReluGrad": _binary("relu_grad", float="b > 0 ? a : 0"),
    "Relu6Grad": _binary("relu6_grad", float="(b > 0 && b < 6) ? a : 0"),
    "EluGrad": _binary("elu_grad", float="b < 0 ? a * (b + 1) : a"),
    "SeluGrad": _binary("selu_grad", float="b < 0 ? a * (b + SELU_SCALE * SELU_ALPHA) "
                                            ": a * SELU_SCALE"),
    "SoftplusGrad": _binary("softplus_grad", float="a * TYPED(stable_sigmoid)(b)"),
    "SoftsignGrad": _binary("softsign_grad", float="a / ((1 + fabs(b)) * (1 + fabs(b)))"),
    "SigmoidGrad": _binary("sigmoid_grad", float="b * a * (1 - a)"),
    "TanhGrad": _binary("tanh_grad", float="b * (1 - a * a)"),
    "SqrtGrad": _binary("sqrt_grad", float="b * 0.5 / a"),
    "RsqrtGrad": _binary("rsqrt_grad", float="b * -0.5 * a * a * a"),
    "ReciprocalGrad": _binary("reciprocal_grad", float="-b * a * a"),
    "SigmoidCrossEntropyWithLogits": _binary(
        "sigmoid_xent", float="(a > 0 ? a : 0) - a * b + log1p(exp(-fabs(a)))"),
    "Equal": _comparison("equal", "a == b", ("float", "int", "bool")),
    "NotEqual": _comparison("not_equal", "a != b", ("float", "int", "bool")),
    "Less": _comparison("less", "a < b"),
    "LessEqual": _comparison("less_equal", "a <= b"),
    "Greater": _comparison("greater", "a > b"),
    "GreaterEqual": _comparison("greater_equal", "a >= b"),
    "LogicalAnd": _comparison("logical_and", "a && b", ("bool",)),
    "LogicalOr": _comparison("logical_or", "a || b", ("bool",)),
    "Neg": _unary("neg", number="-a"),
    "Abs": _unary("abs_", float="fabs(a)", int="a < 0 ? -a : a"),
    "Sign": _unary("sign_", number="a > 0 ? (T)1 : (a < 0 ? (T)-1 : a)"),
    "Square": _unary("square", number="a * a"),
    "Sqrt": _unary("sqrt_", float="sqrt(a)"),
    "Rsqrt": _unary("rsqrt_", float="1 / sqrt(a)"),
    "Reciprocal": _unary("reciprocal", float="1 / a"),
    "Exp": _unary("exp_", float="exp(a)"),
    "Expm1": _unary("expm1_", float="expm1(a)"),
    "Log": _unary("log_", float="log(a)"),
    "Log1p": _unary("log1p_", float="log1p(a)"),
    "Sin": _unary("sin_", float="sin(a)"),
    "Cos": _unary("cos_", float="cos(a)"),
    "Tan": _unary("tan_", float="tan(a)"),
    "Tanh": _unary("tanh_", float="tanh(a)"),
    "Sigmoid": _unary("sigmoid", float="TYPED(stable_sigmoid)(a)"),
    "Floor": _unary("floor_", float="floor(a)"),
    "Ceil": _unary("ceil_", float="ceil(a)"),
    "Round": _unary("round_", float="rint(a)"),          # half to even, like TF
    "Relu": _unary("relu", number="a < 0 ? 0 : a"),     # NaN stays NaN, as np.maximum(x, 0)
    "Relu6": _unary("relu6", number="a < 0 ? 0 : (a > 6 ? 6 : a)"),
    "Elu": _unary("elu", float="a > 0 ? a : expm1(a)"),
    "Selu": _unary("selu", float="SELU_SCALE * (a > 0 ? a : SELU_ALPHA * expm1(a))"),
    "Softplus": _unary("softplus", float="(a > 0 ? a : 0) + log1p(exp(-fabs(a)))"),
    "Softsign": _unary("softsign", float="a / (1 + fabs(a))"),
    "IsNan": _expression("is_nan", 1, bool_output=True, float="isnan(a)"),
    "IsInf": _expression("is_inf", 1, bool_output=True, float="isinf(a)"),
    "IsFinite": _expression("is_finite", 1, bool_output=True, float="isfinite(a)"),
    "LogicalNot": _expression("logical_not", 1, bool_output=True, bool="!a"),
}

#: The preprocessor guard of each dtype group in a program built for one element type.
GROUP_GUARDS = {"float": "IS_FLOAT", "int": "IS_INT", "bool": "IS_BOOL"}


def program_source():
    """The text of :data:`PROGRAM`: the helpers, ``elementwise.cl``, and one
    ``UNARY``/``BINARY`` line per kernel of :data:`EXPRESSIONS` and dtype group."""
    lines = ["", "// ---- generated from kernels/elementwise.py: EXPRESSIONS " + "-" * 26]
    for group, guard in GROUP_GUARDS.items():
        lines.append("#ifdef %s" % guard)
        made = set()
        for expression in EXPRESSIONS.values():
            if group in expression.templates and expression.kernel not in made:
                made.add(expression.kernel)
                lines.append("%s(%s, %s, %s)" % (
                    "UNARY" if expression.arity == 1 else "BINARY", expression.kernel,
                    "uchar" if expression.bool_output else "T", expression.templates[group]))
        lines.append("#endif")
    return "\n".join([source("elementwise_math"), source("elementwise")] + lines) + "\n"


register_source(PROGRAM, program_source())


def binary(ctx, name, x, y, out_dtype=None):
    """Enqueues binary kernel ``name`` on ``x`` and ``y`` with NumPy broadcasting.

    The common cases are told apart from the shapes alone, before any
    general broadcast is computed: this runs once per op of every step.
    """
    dtype = x.dtype if isinstance(x, np.ndarray) or hasattr(x, "allocation") else y.dtype
    x, y = on_device(ctx, x, dtype), on_device(ctx, y, dtype)
    if x.shape == y.shape:
        variant, shape, extra = "_same", x.shape, ()
    elif len(y.shape) <= len(x.shape) and y.size == 1:
        variant, shape, extra = "_sb", x.shape, ()
    elif len(x.shape) <= len(y.shape) and x.size == 1:
        variant, shape, extra = "_sa", y.shape, ()
    elif repeats_along_leading_axes(y.shape, x.shape):
        variant, shape, extra = "_rb", x.shape, (i32(y.size),)
    elif repeats_along_leading_axes(x.shape, y.shape):
        variant, shape, extra = "_ra", y.shape, (i32(x.size),)
    else:
        shape = broadcast_shape(ctx, x.shape, y.shape)
        variant = "_bcast"
        extra = strided_args(shape, broadcast_strides(x.shape, shape),
                             broadcast_strides(y.shape, shape))
    out = empty(ctx, shape, out_dtype or x.dtype)
    n = out.size
    if n == 0:
        return out
    if variant in ("_rb", "_ra"):  # rows x the repeated row's m elements
        m = extra[0]
        run2d(ctx, PROGRAM, name + variant, x.dtype, (m, n // m), None, out, x, y, m)
        return out
    items = vector_items(n) if variant == "_same" else n
    run(ctx, PROGRAM, name + variant, x.dtype, items, out, x, y, i32(n), *extra)
    return out


def repeats_along_leading_axes(small, shape):
    """Whether ``small`` broadcasts to ``shape`` by repeating along leading axes only.

    Then output element ``i`` reads ``small[i % small.size]``: one modulo instead
    of the general per-axis index arithmetic.  This is a bias row added to a
    batch (``[128, 256] + [256]``), in every dense layer and its gradient.
    """
    dims = list(small)
    while dims and dims[0] == 1:
        dims.pop(0)
    return 0 < len(dims) <= len(shape) and tuple(dims) == tuple(shape[len(shape) - len(dims):])


def unary(ctx, name, x, out_dtype=None):
    """Enqueues unary kernel ``name`` on ``x``."""
    out = empty(ctx, x.shape, out_dtype or x.dtype)
    run(ctx, PROGRAM, name, x.dtype, vector_items(out.size), out, x, i32(out.size))
    return out


# Work items are launched in multiples of this many, so that the runtime can
# pick full work groups (a count with no large divisor, e.g. a prime, leaves
# it only tiny ones); the kernels skip the items past the end.
WORK_GROUP_MULTIPLE = 64


def vector_items(n):
    """How many work items a four-elements-per-item kernel needs for ``n`` elements."""
    items = -(-n // 4)
    if items <= WORK_GROUP_MULTIPLE:
        return items
    return -(-items // WORK_GROUP_MULTIPLE) * WORK_GROUP_MULTIPLE


def _make_binary(op_type, name, is_bool):
    def binary_kernel(ctx, x, y):
        return binary(ctx, name, x, y, np.bool_ if is_bool else None)
    binary_kernel.__name__ = name
    binary_kernel.__doc__ = "``%s`` on the device (kernel ``%s_*``)." % (op_type, name)
    return binary_kernel


def _make_unary(op_type, name, is_bool):
    def unary_kernel(ctx, x):
        return unary(ctx, name, x, np.bool_ if is_bool else None)
    unary_kernel.__name__ = name
    unary_kernel.__doc__ = "``%s`` on the device (kernel ``%s``)." % (op_type, name)
    return unary_kernel


for _op, _expr in EXPRESSIONS.items():
    _make = _make_unary if _expr.arity == 1 else _make_binary
    kernel(_op, dtypes=_expr.groups)(_make(_op, _expr.kernel, _expr.bool_output))

# Integer division checks its divisor for zero on the host, as the shape
# arithmetic that uses it (reduce_mean's gradient) lives there anyway.
host_kernel("FloorDiv", "FloorMod", "BroadcastGradientArgs", "Range", "InvertPermutation")


@kernel("LeakyRelu")
def leaky_relu(ctx, features, alpha):
    out = empty(ctx, features.shape, features.dtype)
    run(ctx, PROGRAM, "leaky_relu", features.dtype, out.size, out, features,
        features.dtype.type(alpha), i32(out.size))
    return out


@kernel("LeakyReluGrad")
def leaky_relu_grad(ctx, gradients, features, alpha):
    out = empty(ctx, features.shape, features.dtype)
    run(ctx, PROGRAM, "leaky_relu_grad", features.dtype, out.size, out, gradients,
        features, features.dtype.type(alpha), i32(out.size))
    return out


@kernel("Cast", dtypes=("float", "int", "small_int", "bool"))
def cast(ctx, x, DstT):  # noqa: N803 - TF's attr name
    # DstT is one of the device's dtypes: kernel_dtypes counts a Cast's output.
    dst = np.dtype(DstT.as_numpy_dtype)
    x = on_device(ctx, x)
    if dst == x.dtype:
        return x
    out = empty(ctx, x.shape, dst)
    defines = {"DST": "uchar", "DST_BOOL": "1"} if dst == np.bool_ else {"DST": cl_type(dst)}
    run(ctx, "cast", "cast", x.dtype, out.size, out, x, i32(out.size), **defines)
    return out


@kernel("AddN", dtypes=("float", "int"))
def add_n(ctx, *inputs):
    total = on_device(ctx, inputs[0])
    for x in inputs[1:]:
        total = binary(ctx, "add", total, x)
    return total


def select(ctx, condition, t, e):
    """``where(condition, t, e)`` with broadcasting of all three."""
    dtype = t.dtype
    condition = on_device(ctx, condition, np.bool_)
    t, e = on_device(ctx, t, dtype), on_device(ctx, e, dtype)
    shape = broadcast_shape(ctx, condition.shape, t.shape, e.shape)
    out = empty(ctx, shape, dtype)
    args = strided_args(shape, *(broadcast_strides(a.shape, shape) for a in (condition, t, e)))
    run(ctx, PROGRAM, "select_bcast", dtype, out.size, out, condition, t, e,
        i32(out.size), *args)
    return out


@kernel("SelectV2", dtypes=("float", "int", "bool"))
def select_v2(ctx, condition, t, e):
    return select(ctx, condition, t, e)


@kernel("Select", dtypes=("float", "int", "bool"))
def select_v1(ctx, condition, t, e):
    if tuple(t.shape) != tuple(e.shape):
        raise ctx.invalid_argument("'then' and 'else' must have the same size.  but received: "
                                   "%s vs. %s" % (list(t.shape), list(e.shape)))
    if len(condition.shape) == 1 and len(t.shape) > 1:
        if condition.shape[0] != t.shape[0]:
            raise ctx.invalid_argument("Number of batches of 'then' must match size of 'cond', "
                                       "but saw: %d vs. %d" % (t.shape[0], condition.shape[0]))
        condition = on_device(ctx, condition, np.bool_).reshape(
            (condition.shape[0],) + (1,) * (len(t.shape) - 1))
    elif len(condition.shape) > 0 and tuple(condition.shape) != tuple(t.shape):
        raise ctx.invalid_argument("'cond' and 'then' must have the same size.  but received: "
                                   "%s vs. %s" % (list(condition.shape), list(t.shape)))
    return select(ctx, condition, t, e)


@kernel("Fill", dtypes=("float", "int", "bool"))
def fill(ctx, dims, value):
    dims = [int(d) for d in ctx.device.to_host(dims)]
    for d in dims:
        if d < 0:
            raise ctx.invalid_argument("Dimension %d must be >= 0" % d)
    dtype = np.dtype(ctx.output_dtypes[0])
    out = empty(ctx, dims, dtype)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        run(ctx, PROGRAM, "fill_value", dtype, out.size, out, scalar(dtype, value),
            i32(out.size))
    else:
        run(ctx, PROGRAM, "fill_from", dtype, out.size, out, value, i32(out.size))
    return out


def zeros(ctx, shape, dtype):
    """A new device tensor of zeros."""
    dtype = np.dtype(dtype)
    out = empty(ctx, shape, dtype)
    run(ctx, PROGRAM, "fill_value", dtype, out.size, out, scalar(dtype, 0), i32(out.size))
    return out


@kernel("ZerosLike", dtypes=("float", "int", "bool"))
def zeros_like(ctx, x):
    return zeros(ctx, x.shape, x.dtype)


def scalar(dtype, value):
    """``value`` as a kernel argument of element type ``dtype`` (bool is a uchar)."""
    dtype = np.dtype(dtype)
    return np.uint8(bool(value)) if dtype == np.bool_ else dtype.type(value)
