"""GPU kernels of the elementwise ops: unary and binary math with broadcasting,
comparisons, logic, the fused activation gradients, ``Cast``, ``Select``,
``AddN``, ``Fill``, ``ZerosLike`` (sources: ``opencl_kernels/elementwise.cl``
and ``cast.cl``).

A binary op picks the cheapest of five kernels: both inputs of the output's
shape (``_same``, four elements per work item, see :func:`vector_items`), one
of them a single element (``_sa``/``_sb``), one of them a row repeated along
the leading axes (``_ra``/``_rb``), or general NumPy broadcasting (``_bcast``,
with per-input strides from :func:`~minitf_opencl_gpu.kernels.table.strided_args`).
"""

import numpy as np

from minitf.framework import errors

from minitf_opencl_gpu.kernels.table import (
    broadcast_shape, broadcast_strides, empty, host_kernel, i32, kernel, on_device, run,
    strided_args)
from minitf_opencl_gpu.programs import CL_TYPES, cl_type

# op type -> (kernel name in elementwise.cl, dtype groups, output is bool)
BINARY = {
    "Add": ("add", ("float", "int"), False),
    "AddV2": ("add", ("float", "int"), False),
    "Sub": ("sub", ("float", "int"), False),
    "Mul": ("mul", ("float", "int"), False),
    "Maximum": ("maximum", ("float", "int"), False),
    "Minimum": ("minimum", ("float", "int"), False),
    "RealDiv": ("real_div", ("float",), False),
    "Pow": ("pow_", ("float", "int"), False),
    "SquaredDifference": ("squared_difference", ("float", "int"), False),
    "FloorDiv": ("floor_div", ("float",), False),
    "FloorMod": ("floor_mod", ("float",), False),
    "ReluGrad": ("relu_grad", ("float",), False),
    "Relu6Grad": ("relu6_grad", ("float",), False),
    "EluGrad": ("elu_grad", ("float",), False),
    "SeluGrad": ("selu_grad", ("float",), False),
    "SoftplusGrad": ("softplus_grad", ("float",), False),
    "SoftsignGrad": ("softsign_grad", ("float",), False),
    "SigmoidGrad": ("sigmoid_grad", ("float",), False),
    "TanhGrad": ("tanh_grad", ("float",), False),
    "SqrtGrad": ("sqrt_grad", ("float",), False),
    "RsqrtGrad": ("rsqrt_grad", ("float",), False),
    "ReciprocalGrad": ("reciprocal_grad", ("float",), False),
    "SigmoidCrossEntropyWithLogits": ("sigmoid_xent", ("float",), False),
    "Equal": ("equal", ("float", "int", "bool"), True),
    "NotEqual": ("not_equal", ("float", "int", "bool"), True),
    "Less": ("less", ("float", "int"), True),
    "LessEqual": ("less_equal", ("float", "int"), True),
    "Greater": ("greater", ("float", "int"), True),
    "GreaterEqual": ("greater_equal", ("float", "int"), True),
    "LogicalAnd": ("logical_and", ("bool",), True),
    "LogicalOr": ("logical_or", ("bool",), True),
}

# op type -> (kernel name, dtype groups, output is bool)
UNARY = {
    "Neg": ("neg", ("float", "int"), False),
    "Abs": ("abs_", ("float", "int"), False),
    "Sign": ("sign_", ("float", "int"), False),
    "Square": ("square", ("float", "int"), False),
    "Sqrt": ("sqrt_", ("float",), False),
    "Rsqrt": ("rsqrt_", ("float",), False),
    "Reciprocal": ("reciprocal", ("float",), False),
    "Exp": ("exp_", ("float",), False),
    "Expm1": ("expm1_", ("float",), False),
    "Log": ("log_", ("float",), False),
    "Log1p": ("log1p_", ("float",), False),
    "Sin": ("sin_", ("float",), False),
    "Cos": ("cos_", ("float",), False),
    "Tan": ("tan_", ("float",), False),
    "Tanh": ("tanh_", ("float",), False),
    "Sigmoid": ("sigmoid", ("float",), False),
    "Floor": ("floor_", ("float",), False),
    "Ceil": ("ceil_", ("float",), False),
    "Round": ("round_", ("float",), False),
    "Relu": ("relu", ("float", "int"), False),
    "Relu6": ("relu6", ("float", "int"), False),
    "Elu": ("elu", ("float",), False),
    "Selu": ("selu", ("float",), False),
    "Softplus": ("softplus", ("float",), False),
    "Softsign": ("softsign", ("float",), False),
    "IsNan": ("is_nan", ("float",), True),
    "IsInf": ("is_inf", ("float",), True),
    "IsFinite": ("is_finite", ("float",), True),
    "LogicalNot": ("logical_not", ("bool",), True),
}


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
    items = vector_items(n) if variant == "_same" else n
    run(ctx, "elementwise", name + variant, x.dtype, items, out, x, y, i32(n), *extra)
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
    run(ctx, "elementwise", name, x.dtype, vector_items(out.size), out, x, i32(out.size))
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


for _op, (_name, _groups, _is_bool) in BINARY.items():
    kernel(_op, dtypes=_groups)(_make_binary(_op, _name, _is_bool))
for _op, (_name, _groups, _is_bool) in UNARY.items():
    kernel(_op, dtypes=_groups)(_make_unary(_op, _name, _is_bool))

# Integer division checks its divisor for zero on the host, as the shape
# arithmetic that uses it (reduce_mean's gradient) lives there anyway.
host_kernel("FloorDiv", "FloorMod", "BroadcastGradientArgs", "Range", "InvertPermutation")


@kernel("LeakyRelu")
def leaky_relu(ctx, features, alpha):
    out = empty(ctx, features.shape, features.dtype)
    run(ctx, "elementwise", "leaky_relu", features.dtype, out.size, out, features,
        features.dtype.type(alpha), i32(out.size))
    return out


@kernel("LeakyReluGrad")
def leaky_relu_grad(ctx, gradients, features, alpha):
    out = empty(ctx, features.shape, features.dtype)
    run(ctx, "elementwise", "leaky_relu_grad", features.dtype, out.size, out, gradients,
        features, features.dtype.type(alpha), i32(out.size))
    return out


@kernel("Cast", dtypes=("float", "int", "small_int", "bool"))
def cast(ctx, x, DstT):  # noqa: N803 - TF's attr name
    dst = np.dtype(DstT.as_numpy_dtype)
    if dst not in CL_TYPES:
        raise ctx.error(errors.UnimplementedError,
                        "The OpenCL backend has no %s tensors; cast to %s on the CPU "
                        "(tf.device('/cpu:0'))" % (dst.name, dst.name))
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
    run(ctx, "elementwise", "select_bcast", dtype, out.size, out, condition, t, e,
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
        run(ctx, "elementwise", "fill_value", dtype, out.size, out, scalar(dtype, value),
            i32(out.size))
    else:
        run(ctx, "elementwise", "fill_from", dtype, out.size, out, value, i32(out.size))
    return out


def zeros(ctx, shape, dtype):
    """A new device tensor of zeros."""
    dtype = np.dtype(dtype)
    out = empty(ctx, shape, dtype)
    run(ctx, "elementwise", "fill_value", dtype, out.size, out, scalar(dtype, 0), i32(out.size))
    return out


@kernel("ZerosLike", dtypes=("float", "int", "bool"))
def zeros_like(ctx, x):
    return zeros(ctx, x.shape, x.dtype)


def scalar(dtype, value):
    """``value`` as a kernel argument of element type ``dtype`` (bool is a uchar)."""
    dtype = np.dtype(dtype)
    return np.uint8(bool(value)) if dtype == np.bool_ else dtype.type(value)
