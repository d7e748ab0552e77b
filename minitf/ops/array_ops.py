"""The basic array ops: feeding values, passing them through, shapes, reshaping,
and tensors filled with one value.

Each op is declared with :func:`define_op` next to its Python wrapper and its
gradient.  The wrappers keep TF1's signatures and default names
(``tf.reshape`` builds an op named ``Reshape``), and, like TF1, some of them
build no op of their own type when the answer is known while the graph is
built: ``tf.shape`` of a fully defined tensor is a ``Const``, so is a small
``tf.zeros``.  Kernels live in the backends (``plugins/numpy_cpu``).

Shape functions here follow TF's C++ shape inference: a shape that depends on
a *value* (``tf.reshape(x, [2, -1])``) is read with
:func:`~minitf.framework.tensor_util.constant_value`, and contradictions known
at construction are a ``ValueError`` then, not an error at run time.

The gradients of this module's ops only move the incoming gradient back into
the input's shape (``Reshape``, ``ExpandDims``, ``Squeeze``) or pass it on
(``Identity``); shapes and filled tensors do not depend on the values of
their inputs, so they are not differentiable (``Fill`` is, in its ``value``).

The other array ops live beside this module (see :mod:`~minitf.ops.array_util`):
transposing, joining, slicing (and ``tensor[...]``), padding and gathering.

Mirrors ``tensorflow/python/ops/array_ops.py`` and ``array_grad.py``.
"""

import numbers

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops.array_util import (
    INDEX_TYPES, canonical_axis, like_input, op_scope, output_list, scalar_value, shape_string,
    with_rank)
from minitf.ops.common_shapes import scalar_shape, unchanged_shape
from minitf.ops.constant_op import constant
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


# ---- Placeholder -----------------------------------------------------------------
def _placeholder_shape(op):
    return [as_shape(op.get_attr("shape"))]


_placeholder = define_op(
    "Placeholder", attrs={"dtype": None, "shape": None}, shape_fn=_placeholder_shape,
    doc="A value that must be fed; running it unfed is an InvalidArgumentError.")
not_differentiable("Placeholder", reason="it has no inputs")


def placeholder(dtype, shape=None, name=None):
    """A tensor whose value is fed at run time (``tf.placeholder``).

    Args:
        dtype: the element type.
        shape: the shape, possibly partial (``[None, 784]``); None: any shape.
        name: op name (default ``Placeholder``).

    Example:
        >>> x = tf.placeholder(tf.float32, shape=[None, 3])
        >>> sess.run(x * 2, feed_dict={x: [[1, 2, 3]]})
        array([[2., 4., 6.]], dtype=float32)
    """
    shape = TensorShape(shape)
    return apply_op(_placeholder, [], attrs={"dtype": dtypes.as_dtype(dtype), "shape": shape},
                    name=name or "Placeholder")


_placeholder_with_default = define_op(
    "PlaceholderWithDefault", inputs=("input",), attrs={"shape": None},
    shape_fn=_placeholder_shape,
    doc="Passes its input through unless a value is fed.")


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    """A placeholder that passes ``input`` through when not fed.

    Raises:
        ValueError: if ``shape`` is incompatible with ``input``'s shape.
    """
    shape = TensorShape(shape)
    with op_scope(name or "PlaceholderWithDefault", [input]) as scope:
        value = convert_to_tensor(input, name="input")
        if not value.shape.is_compatible_with(shape):
            raise ValueError("Shapes %s and %s are incompatible" % (value.shape, shape))
        return apply_op(_placeholder_with_default, [value], attrs={"shape": shape}, name=scope)


@gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]


# ---- Identity, StopGradient -------------------------------------------------------------
_identity = define_op("Identity", inputs=("input",), shape_fn=unchanged_shape,
                      doc="Returns its input (reading a variable's value, for instance).")


def identity(input, name=None):  # noqa: A002
    """Returns a tensor with the same value as ``input`` (``tf.identity``).

    Of a variable under ``tf.control_dependencies([op])``, the Identity reads
    the variable itself, not a read op made for it: it is then this op whose
    ``control_inputs`` are ``[op]``, and it sees what ``op`` wrote — as TF1's
    Identity of ``v/read``, which shares the variable's buffer.
    """
    if _is_variable(input) and input.graph._control_inputs_for([input._ref()]):
        input = input._ref()  # noqa: A001
    return apply_op(_identity, [input], name=name or "Identity")


def _is_variable(value):
    """Whether ``value`` is a ``tf.Variable`` (which this layer cannot import)."""
    return hasattr(value, "_ref") and not isinstance(value, Tensor)


@gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


_stop_gradient = define_op("StopGradient", inputs=("input",), shape_fn=unchanged_shape,
                           doc="Returns its input; gradients do not flow through it.")
not_differentiable("StopGradient", reason="blocking the gradient is what it is for")


def stop_gradient(input, name=None):  # noqa: A002
    """Returns ``input`` unchanged, but blocks gradients (``tf.stop_gradient``).

    ``tf.gradients`` treats the result as a constant: nothing upstream of it
    receives a gradient through it (used for targets in Q-learning, EM steps...).
    """
    return apply_op(_stop_gradient, [input], name=name or "StopGradient")


# ---- Shape, ShapeN, Size, Rank ------------------------------------------------------------
def _typed_by_out_type(op):
    return [op.get_attr("out_type")] * op.op_def.output_count(op.attrs)


def _check_out_type(out_type):
    out_type = dtypes.as_dtype(out_type)
    if out_type not in INDEX_TYPES:
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list of "
                        "allowed values: int32, int64" % out_type.name)
    return out_type


_shape = define_op(
    "Shape", inputs=("input",), attrs=("out_type: {int32, int64} = int32",),
    shape_fn=lambda op: [TensorShape([op.inputs[0].shape.ndims])], dtype_fn=_typed_by_out_type,
    doc="The shape of its input, as a 1-D integer tensor.")
_shape_n = define_op(
    "ShapeN", inputs=("input*",), attrs=("N: int >= 1", "out_type: {int32, int64} = int32"),
    num_outputs=lambda attrs: attrs["N"], dtype_fn=_typed_by_out_type,
    shape_fn=lambda op: [TensorShape([t.shape.ndims]) for t in op.inputs],
    doc="The shapes of its N inputs.")
_size = define_op("Size", inputs=("input",), attrs=("out_type: {int32, int64} = int32",),
                  shape_fn=scalar_shape, dtype_fn=_typed_by_out_type,
                  doc="The number of elements of its input.")
_rank = define_op("Rank", inputs=("input",), shape_fn=scalar_shape,
                  dtype_fn=lambda op: [dtypes.int32],
                  doc="The number of dimensions of its input.")
not_differentiable("Shape", "ShapeN", "Size", "Rank",
                   reason="the result depends on the input's shape, not on its values")


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The shape of ``input`` as a 1-D tensor (``tf.shape``).

    Unlike ``input.shape`` (the static shape, possibly partial), this is the
    shape at run time.  As in TF1, when the static shape is fully defined the
    result is simply a ``Const`` holding it.

    Example:
        >>> x = tf.placeholder(tf.float32, [None, 3])
        >>> sess.run(tf.shape(x), {x: np.zeros((5, 3))})
        array([5, 3], dtype=int32)
    """
    out_type = _check_out_type(out_type)
    with op_scope(name or "Shape", [input]) as scope:
        tensor = convert_to_tensor(input)
        if tensor.shape.is_fully_defined():
            return constant(tensor.shape.as_list(), out_type, name=scope)
        return apply_op(_shape, [tensor], attrs={"out_type": out_type}, name=scope)


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of the tensors in the list ``input``, one op (``tf.shape_n``)."""
    out_type = _check_out_type(out_type)
    return output_list(apply_op(_shape_n, [input], attrs={"N": len(input), "out_type": out_type},
                                name=name or "ShapeN"))


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements of ``input`` as a scalar (``tf.size``).

    A ``Const`` when the static shape fully defines it (or has a 0 dimension).
    """
    out_type = _check_out_type(out_type)
    with op_scope(name or "Size", [input]) as scope:
        tensor = convert_to_tensor(input)
        known = tensor.shape.num_elements()
        if known is None and tensor.shape.ndims is not None and 0 in tensor.shape.as_list():
            known = 0
        if known is not None:
            return constant(known, out_type, name=scope)
        return apply_op(_size, [tensor], attrs={"out_type": out_type}, name=scope)


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar (``tf.rank``).

    A ``Const`` when the static rank is known.
    """
    with op_scope(name or "Rank", [input]) as scope:
        tensor = convert_to_tensor(input)
        if tensor.shape.ndims is not None:
            return constant(tensor.shape.ndims, dtypes.int32, name=scope)
        return apply_op(_rank, [tensor], name=scope)


# ---- Reshape ----------------------------------------------------------------------------
def _known_product(dims):
    """``(product of the known dims, indices of the unknown ones)``."""
    product, unknown = 1, []
    for i, d in enumerate(dims):
        if d is None:
            unknown.append(i)
        else:
            product *= d
    return product, unknown


def _reshape_shape(op):
    """TF's shape inference for ``Reshape``.

    The output is the requested shape, where -1 (or a value unknown while
    building) is an unknown dimension.  When the input and the request each
    have at most one unknown dimension, the element counts are compared, and
    the request's unknown dimension is inferred from a fully known input.
    """
    tensor, shape_tensor = op.inputs
    with_rank(shape_tensor.shape, 1)
    value = constant_value(shape_tensor)
    if value is not None and value.size and value.min() < -1:
        raise ValueError("Invalid value in tensor used for shape: %d" % value.min())
    out = constant_value_as_shape(shape_tensor)
    if out.ndims is None or tensor.shape.ndims is None:
        return [out]
    out_dims = out.as_list()
    out_known, out_unknown = _known_product(out_dims)
    in_known, in_unknown = _known_product(tensor.shape.as_list())
    if len(out_unknown) > 1 or len(in_unknown) > 1:
        return [out]
    if not out_unknown and not in_unknown and in_known != out_known:
        raise ValueError("Cannot reshape a tensor with %d elements to shape %s (%d elements)"
                         % (in_known, shape_string(out_dims), out_known))
    if out_unknown and not in_unknown and out_known > 0:
        if in_known % out_known:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                             % (out_known, in_known))
        out_dims[out_unknown[0]] = in_known // out_known
    if in_unknown and not out_unknown and in_known > 0 and out_known % in_known:
        raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                         % (in_known, out_known))
    return [TensorShape(out_dims)]


_reshape = define_op("Reshape", inputs=("tensor", "shape"), shape_fn=_reshape_shape,
                     dtype_fn=like_input(0, {1: "shape"}),
                     doc="Its input's elements, in order, in a new shape (one -1 is inferred).")


def reshape(tensor, shape, name=None):
    """Gives ``tensor``'s elements, in row-major order, the shape ``shape`` (``tf.reshape``).

    Args:
        tensor: the tensor.
        shape: a 1-D int32/int64 tensor or list; at most one entry may be -1,
            which is inferred so that the element count is unchanged.  Entries
            may be scalar tensors (``[batch, -1]``).
        name: op name (default ``Reshape``).

    Example:
        >>> tf.reshape(tf.zeros([2, 3]), [3, -1])
        Tensor("Reshape:0", shape=(3, 2), dtype=float32)

    Raises:
        ValueError: if the element counts are known to differ.
        InvalidArgumentError: when running, if they differ.
    """
    return apply_op(_reshape, [tensor, shape], name=name or "Reshape")


def _reshape_to_input(op, grad):
    """``grad`` in the shape of ``op``'s input: the gradient of every op that only
    rearranges the dimensions around the same elements in the same order."""
    return reshape(grad, shape(op.inputs[0]))


@gradient("Reshape")
def _reshape_grad(op, grad):
    return [_reshape_to_input(op, grad), None]


# ---- ExpandDims, Squeeze --------------------------------------------------------------------
def _expand_dims_shape(op):
    x, dim = op.inputs
    rank = x.shape.ndims
    axis = scalar_value(dim)
    if rank is None or axis is None:
        return [unknown_shape()]
    if not -rank - 1 <= axis <= rank:
        raise ValueError("dim %d not in the interval [%d, %d]." % (axis, -rank - 1, rank))
    dims = x.shape.as_list()
    dims.insert(axis % (rank + 1), 1)
    return [TensorShape(dims)]


_expand_dims = define_op("ExpandDims", inputs=("input", "dim"), shape_fn=_expand_dims_shape,
                         dtype_fn=like_input(0, {1: "dim"}),
                         doc="Inserts a dimension of size 1 at index dim.")


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """Inserts a dimension of size 1 at index ``axis`` (``tf.expand_dims``).

    ``axis`` counts like a list index into the *output* shape: for a ``[2, 3]``
    tensor, 0 gives ``[1, 2, 3]``, -1 gives ``[2, 3, 1]``.  ``dim`` is TF1's
    deprecated name for ``axis``.

    Raises:
        ValueError: if both or neither of ``axis`` and ``dim`` are given, or
            ``axis`` is outside ``[-rank-1, rank]``.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    if axis is None and dim is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op(_expand_dims, [input, dim if axis is None else axis],
                    name=name or "ExpandDims")


@gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [_reshape_to_input(op, grad), None]


def _squeeze_shape(op):
    """TF's shape inference for ``Squeeze``: removes the listed size-1 dims, or
    every dim known to be 1 (then an unknown dim makes the whole shape unknown)."""
    x = op.inputs[0]
    rank = x.shape.ndims
    if rank is None:
        return [unknown_shape()]
    axes = {canonical_axis(a, rank, "Tried to squeeze dim index %d for tensor with %d "
                                    "dimensions." % (a, rank))
            for a in op.get_attr("squeeze_dims")}
    dims = []
    for i, d in enumerate(x.shape.as_list()):
        if d is None and not axes:
            return [unknown_shape()]
        if i in axes and d not in (None, 1):
            raise ValueError("Can not squeeze dim[%d], expected a dimension of 1, got %d" % (i, d))
        if i in axes or (d == 1 and not axes):
            continue
        dims.append(d)
    return [TensorShape(dims)]


_squeeze = define_op("Squeeze", inputs=("input",), attrs=("squeeze_dims: list(int) = []",),
                     shape_fn=_squeeze_shape,
                     doc="Removes dimensions of size 1 (all, or those listed).")


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """Removes dimensions of size 1 (``tf.squeeze``).

    Args:
        input: a tensor.
        axis: an int or list of ints: the dimensions to remove, each of which
            must have size 1.  None: remove every dimension of size 1.
        name: op name (default ``Squeeze``).
        squeeze_dims: TF1's deprecated name for ``axis``.

    Example: a ``[1, 2, 1, 3]`` tensor squeezes to ``[2, 3]``, or with
    ``axis=[2]`` to ``[1, 2, 3]``.

    Raises:
        ValueError: if a listed dimension is known not to be 1.
    """
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = []
    elif isinstance(axis, numbers.Integral):
        axis = [axis]
    return apply_op(_squeeze, [input], attrs={"squeeze_dims": [int(a) for a in axis]},
                    name=name or "Squeeze")


@gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [_reshape_to_input(op, grad)]


# ---- Fill, zeros, ones, zeros_like, ones_like ----------------------------------------------------
def _fill_shape(op):
    dims_tensor, value = op.inputs
    with_rank(dims_tensor.shape, 1)
    with_rank(value.shape, 0)
    dims = constant_value(dims_tensor)
    if dims is not None and (dims < 0).any():
        raise ValueError("Fill dimensions must be >= 0")
    return [constant_value_as_shape(dims_tensor)]


_fill = define_op("Fill", inputs=("dims", "value"), shape_fn=_fill_shape,
                  dtype_fn=like_input(1, {0: "dims"}),
                  doc="A tensor of shape dims, every element value.")


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with the scalar ``value`` (``tf.fill``).

    Example: ``tf.fill([2, 3], 9)`` is ``[[9, 9, 9], [9, 9, 9]]`` (int32).
    """
    return apply_op(_fill, [dims, value], name=name or "Fill")


@gradient("Fill")
def _fill_grad(op, grad):
    """Every output element is ``value``, so its gradient is the sum of ``grad``
    (flattened, then summed); ``dims`` only says how many there are (TF1: ``None``).

    The ``Sum`` op is named by its type, as in :mod:`~minitf.ops.gradient_util`:
    reduction_ops, which declares it, is built on this module.
    """
    return [None, apply_op("Sum", [reshape(grad, [-1]), 0], attrs={"keep_dims": False})]


_SMALL_CONSTANT = 1000
"""TF1 builds a ``zeros``/``ones`` smaller than this as a ``Const``, larger ones
as a ``Fill``, to keep serialized graphs small."""


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` with every element 0 (``tf.zeros``).

    A static shape of fewer than 1000 elements gives a ``Const``; otherwise a
    ``Fill`` (whose shape may be a tensor known only at run time).

    Example:
        >>> tf.zeros([3, 4], tf.int32)
        Tensor("zeros:0", shape=(3, 4), dtype=int32)
    """
    dtype = dtypes.as_dtype(dtype).base_dtype
    zero = {dtypes.bool: False, dtypes.string: ""}.get(dtype, 0)
    return _filled(shape, dtype, zero, name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` with every element 1 (``tf.ones``); see :func:`zeros`."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    return _filled(shape, dtype, True if dtype == dtypes.bool else 1, name or "ones")


def _filled(shape, dtype, value, name):
    with op_scope(name, [shape]) as scope:
        static = _static_dims(shape)
        if static is not None and np.prod(static) < _SMALL_CONSTANT:
            return constant(value, dtype=dtype, shape=static, name=scope)
        dims = convert_to_tensor(shape if static is None else static, name="shape_as_tensor")
        if dims.shape.ndims == 0:
            dims = reshape(dims, [-1])
        return fill(dims, constant(value, dtype=dtype), name=scope)


def _static_dims(shape):
    """``shape`` as an int or a list of ints if it is known while building, else None."""
    if isinstance(shape, TensorShape):
        return shape.as_list() if shape.is_fully_defined() else None
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    if isinstance(shape, (numbers.Integral, Dimension)):
        return int(shape)
    if isinstance(shape, (list, tuple)) and all(
            isinstance(d, (numbers.Integral, Dimension)) for d in shape):
        return [int(d) for d in shape]
    return None


_zeros_like = define_op("ZerosLike", inputs=("x",), shape_fn=unchanged_shape,
                        doc="Zeros of its input's shape and dtype.")
not_differentiable("ZerosLike", reason="the result does not depend on the input's values")


def zeros_like(tensor, dtype=None, name=None):
    """Zeros with the shape of ``tensor`` (``tf.zeros_like``).

    As in TF1, a fully defined static shape gives :func:`zeros` (a ``Const``);
    otherwise a ``ZerosLike`` op reads the shape at run time (or ``Fill`` when
    ``dtype`` differs from ``tensor``'s).
    """
    with op_scope(name or "zeros_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype).base_dtype
        if tensor.shape.is_fully_defined():
            return zeros(tensor.shape.as_list(), dtype=dtype, name=scope)
        if dtype != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype=dtype, name=scope)
        return apply_op(_zeros_like, [tensor], name=scope)


def ones_like(tensor, dtype=None, name=None):
    """Ones with the shape of ``tensor`` (``tf.ones_like``).

    Built as TF1 builds it: ``tf.ones(tf.shape(tensor))``, a ``Fill``.
    """
    with op_scope(name or "ones_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else dtype
        return ones(shape(tensor), dtype=dtype, name=scope)
