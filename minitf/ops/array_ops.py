"""Array ops: creating, feeding, reshaping, slicing and combining tensors.

Each op is declared with :func:`define_op` next to its Python wrapper.  The
wrappers keep TF1's signatures and default names (``tf.concat`` builds an op
named ``concat``, ``tf.reshape`` one named ``Reshape``), and, like TF1, some of
them build no op of their own type when the answer is known while the graph is
built: ``tf.shape`` of a fully defined tensor is a ``Const``, so is a small
``tf.zeros``.  Kernels live in the backends (``plugins/numpy_cpu``).

Shape functions here follow TF's C++ shape inference: a shape that depends on
a *value* (``tf.reshape(x, [2, -1])``) is read with
:func:`~minitf.framework.tensor_util.constant_value`, and contradictions known
at construction are a ``ValueError`` then, not an error at run time.

The module also installs ``Tensor.__getitem__`` (NumPy-style indexing, one
``StridedSlice`` op) and the *autopacking* conversion that turns a list holding
tensors, ``[n, -1]``, into a ``Pack`` op.

Mirrors ``tensorflow/python/ops/array_ops.py``.
"""

import contextlib
import numbers

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops.common_shapes import scalar_shape, unchanged_shape
from minitf.ops.constant_op import constant
from minitf.ops.op_def_library import (
    apply_op, define_op, gradient, graph_of, not_differentiable)

# ``slice`` is also the name of an op wrapper below (``tf.slice``), as in TF.
_BaseSlice = slice

newaxis = None
"""``tf.newaxis``: in an index, inserts a dimension of size 1 (``x[:, tf.newaxis]``)."""

_INDEX_TYPES = (dtypes.int32, dtypes.int64)


# ---- helpers shared by the shape and dtype functions ----------------------------------
def _check_dtype(op, position, param, allowed=_INDEX_TYPES):
    """TF's TypeError when input ``position`` (parameter ``param``) is not of ``allowed``."""
    dtype = op.inputs[position].dtype.base_dtype
    if dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s" % (param, dtype.name, ", ".join(d.name for d in allowed)))


def _like_input(position, index_inputs=None):
    """A ``dtype_fn``: every output is typed like input ``position``.

    Args:
        position: the input whose dtype the outputs take.
        index_inputs: ``{position: parameter name}`` of inputs that hold indices
            or sizes and so must be int32 or int64 (``Reshape``'s ``shape``).
    """
    def dtype_fn(op):
        for i, param in (index_inputs or {}).items():
            _check_dtype(op, i, param)
        return [op.inputs[position].dtype.base_dtype] * op.op_def.output_count(op.attrs)
    return dtype_fn


def _shape_string(dims):
    """``[2,?]``: a shape as TF's error messages print it."""
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def _with_rank(shape, rank):
    """``shape`` with exactly ``rank`` dimensions (unknown dims if its rank is unknown).

    Raises:
        ValueError: TF's "Shape must be rank 1 but is rank 2".
    """
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return as_shape(shape) if shape.ndims is not None else unknown_shape(rank)


def _canonical_axis(axis, rank, message):
    """``axis`` in ``[-rank, rank)`` as a non-negative index; else ``ValueError(message)``."""
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(message)
    return axis % rank


def _scalar_value(tensor):
    """The Python int value of a scalar (or one-element) tensor, or None when unknown."""
    value = constant_value(tensor)
    return None if value is None else int(np.asarray(value).item())


def _merged_shape(shapes):
    """The one shape that all of ``shapes`` describe (the inputs of ``Pack``).

    Raises:
        ValueError: with TF's messages when ranks or known dimensions differ.
    """
    merged = unknown_shape()
    for shape in shapes:
        if merged.ndims is not None and shape.ndims is not None:
            if merged.ndims != shape.ndims:
                raise ValueError("Shapes must be equal rank, but are %d and %d"
                                 % (merged.ndims, shape.ndims))
            for i, (a, b) in enumerate(zip(merged.as_list(), shape.as_list())):
                if a is not None and b is not None and a != b:
                    raise ValueError(
                        "Dimension %d in both shapes must be equal, but are %d and %d. Shapes "
                        "are %s and %s." % (i, a, b, _shape_string(merged.as_list()),
                                            _shape_string(shape.as_list())))
        merged = merged.merge_with(shape)
    return merged


def _is_tensor_like(value):
    """True for Tensors and for objects that convert to one by reading (Variables)."""
    return isinstance(value, Tensor) or (
        hasattr(value, "_as_graph_element") and hasattr(value, "dtype"))


@contextlib.contextmanager
def _op_scope(name, values):
    """TF's ``ops.name_scope(name, default_name, values)``: enters the graph of
    ``values`` and a unique name scope; yields the scope (``"zeros/"``).

    A wrapper that builds several ops, or that may return a ``Const`` instead of
    its own op, opens one; passing the scope as ``name`` then names the final op
    after it (``zeros``), and the helper ops inside it (``zeros/Const``).
    """
    graph = graph_of(values)
    with graph.as_default(), graph.name_scope(name) as scope:
        yield scope


def _output_list(result):
    """The outputs of an op with a dynamic output count, always as a list."""
    return result if isinstance(result, list) else [result]


# ---- Placeholder -----------------------------------------------------------------
def _placeholder_shape(op):
    return [as_shape(op.get_attr("shape"))]


_placeholder = define_op(
    "Placeholder", attrs={"dtype": None, "shape": None}, shape_fn=_placeholder_shape,
    doc="A value that must be fed; running it unfed is an InvalidArgumentError.")
not_differentiable("Placeholder")


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
    with _op_scope(name or "PlaceholderWithDefault", [input]) as scope:
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
    """Returns a tensor with the same value as ``input`` (``tf.identity``)."""
    return apply_op(_identity, [input], name=name or "Identity")


@gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


_stop_gradient = define_op("StopGradient", inputs=("input",), shape_fn=unchanged_shape,
                           doc="Returns its input; gradients do not flow through it.")
not_differentiable("StopGradient")


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
    if out_type not in _INDEX_TYPES:
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list of "
                        "allowed values: int32, int64" % out_type.name)
    return out_type


_shape = define_op(
    "Shape", inputs=("input",), attrs={"out_type": dtypes.int32},
    shape_fn=lambda op: [TensorShape([op.inputs[0].shape.ndims])], dtype_fn=_typed_by_out_type,
    doc="The shape of its input, as a 1-D integer tensor.")
_shape_n = define_op(
    "ShapeN", inputs=("input*",), attrs={"N": None, "out_type": dtypes.int32},
    num_outputs=lambda attrs: attrs["N"], dtype_fn=_typed_by_out_type,
    shape_fn=lambda op: [TensorShape([t.shape.ndims]) for t in op.inputs],
    doc="The shapes of its N inputs.")
_size = define_op("Size", inputs=("input",), attrs={"out_type": dtypes.int32},
                  shape_fn=scalar_shape, dtype_fn=_typed_by_out_type,
                  doc="The number of elements of its input.")
_rank = define_op("Rank", inputs=("input",), shape_fn=scalar_shape,
                  dtype_fn=lambda op: [dtypes.int32],
                  doc="The number of dimensions of its input.")
not_differentiable("Shape", "ShapeN", "Size", "Rank")


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
    with _op_scope(name or "Shape", [input]) as scope:
        tensor = convert_to_tensor(input)
        if tensor.shape.is_fully_defined():
            return constant(tensor.shape.as_list(), out_type, name=scope)
        return apply_op(_shape, [tensor], attrs={"out_type": out_type}, name=scope)


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of the tensors in the list ``input``, one op (``tf.shape_n``)."""
    out_type = _check_out_type(out_type)
    return _output_list(apply_op(_shape_n, [input], attrs={"N": len(input), "out_type": out_type},
                                 name=name or "ShapeN"))


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements of ``input`` as a scalar (``tf.size``).

    A ``Const`` when the static shape fully defines it (or has a 0 dimension).
    """
    out_type = _check_out_type(out_type)
    with _op_scope(name or "Size", [input]) as scope:
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
    with _op_scope(name or "Rank", [input]) as scope:
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
    _with_rank(shape_tensor.shape, 1)
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
                         % (in_known, _shape_string(out_dims), out_known))
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
                     dtype_fn=_like_input(0, {1: "shape"}),
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


# ---- Transpose, matrix_transpose, ReverseV2 ------------------------------------------------
def _transpose_shape(op):
    x, perm = op.inputs
    perm_length = _with_rank(perm.shape, 1)[0].value
    rank = x.shape.ndims if x.shape.ndims is not None else perm_length
    if rank is None:
        return [unknown_shape()]
    if perm_length is not None and perm_length != rank:
        raise ValueError("Dimension must be %d but is %d" % (rank, perm_length))
    order = constant_value(perm)
    if order is None or x.shape.ndims is None:
        return [unknown_shape(rank)]
    for p in order:
        if not 0 <= p < rank:
            raise ValueError("perm dim %d is out of range of input rank %d" % (p, rank))
    dims = x.shape.as_list()
    return [TensorShape([dims[p] for p in order])]


_transpose = define_op("Transpose", inputs=("x", "perm"), shape_fn=_transpose_shape,
                       dtype_fn=_like_input(0, {1: "perm"}),
                       doc="Permutes the dimensions: output dim i is input dim perm[i].")


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of ``a`` (``tf.transpose``).

    Output dimension ``i`` is input dimension ``perm[i]``; by default the
    dimensions are reversed (a matrix is transposed).

    Args:
        a: a tensor.
        perm: a permutation of ``range(rank)``; None: ``[rank-1, ..., 0]``.
        name: op name (default ``transpose``).
        conjugate: for complex tensors in TF; minitf has no complex dtypes, so
            it changes nothing.

    Example:
        >>> tf.transpose(tf.zeros([2, 3, 4]), perm=[0, 2, 1])
        Tensor("transpose:0", shape=(2, 4, 3), dtype=float32)

    Raises:
        ValueError: if ``perm`` is known not to fit ``a``'s rank.
    """
    del conjugate  # no complex dtypes
    with _op_scope(name, [a]) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            perm = _reversed_dims(a)
        return apply_op(_transpose, [a, perm], name=scope)


def _reversed_dims(a):
    """``[rank - 1, ..., 1, 0]``: a constant when ``a``'s rank is static, else ops."""
    if a.shape.ndims is not None:
        return np.arange(a.shape.ndims - 1, -1, -1, dtype=np.int32)
    from minitf.ops import math_ops  # imported here: math_ops itself imports array_ops
    return math_ops.range(rank(a) - 1, -1, -1)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of ``a`` (``tf.matrix_transpose``).

    A batch of matrices ``[..., M, N]`` becomes ``[..., N, M]``.

    Raises:
        ValueError: if ``a`` is known to have rank below 2.
    """
    with _op_scope(name, [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is None:
            from minitf.ops import math_ops  # imported here: math_ops itself imports array_ops
            a_rank = rank(a)
            perm = concat([math_ops.range(0, a_rank - 2, 1), [a_rank - 1, a_rank - 2]], 0)
        elif ndims < 2:
            raise ValueError("Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: "
                             "%s" % a.shape)
        else:
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        return transpose(a, perm=perm, conjugate=conjugate)


def _reverse_shape(op):
    x, axis = op.inputs
    axes = constant_value(axis)
    rank = x.shape.ndims
    if axes is not None and rank is not None:
        seen = set()
        for i, a in enumerate(axes.reshape(-1)):
            a = _canonical_axis(a, rank, "'axis'[%d] = %d is out of valid range [%d, %d)"
                                % (i, a, -rank, rank))
            if a in seen:
                raise ValueError("axis %d specified more than once." % a)
            seen.add(a)
    return [x.shape]


_reverse_v2 = define_op("ReverseV2", inputs=("tensor", "axis"), shape_fn=_reverse_shape,
                        dtype_fn=_like_input(0, {1: "axis"}),
                        doc="Reverses the order of elements along the given axes.")


def reverse(tensor, axis, name=None):
    """Reverses ``tensor`` along each dimension in ``axis`` (``tf.reverse``).

    Example: ``tf.reverse([[1, 2], [3, 4]], [1])`` is ``[[2, 1], [4, 3]]``.
    """
    return apply_op(_reverse_v2, [tensor, axis], name=name or "ReverseV2")


# ---- ExpandDims, Squeeze --------------------------------------------------------------------
def _expand_dims_shape(op):
    x, dim = op.inputs
    rank = x.shape.ndims
    axis = _scalar_value(dim)
    if rank is None or axis is None:
        return [unknown_shape()]
    if not -rank - 1 <= axis <= rank:
        raise ValueError("dim %d not in the interval [%d, %d]." % (axis, -rank - 1, rank))
    dims = x.shape.as_list()
    dims.insert(axis % (rank + 1), 1)
    return [TensorShape(dims)]


_expand_dims = define_op("ExpandDims", inputs=("input", "dim"), shape_fn=_expand_dims_shape,
                         dtype_fn=_like_input(0, {1: "dim"}),
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


def _squeeze_shape(op):
    """TF's shape inference for ``Squeeze``: removes the listed size-1 dims, or
    every dim known to be 1 (then an unknown dim makes the whole shape unknown)."""
    x = op.inputs[0]
    rank = x.shape.ndims
    if rank is None:
        return [unknown_shape()]
    axes = {_canonical_axis(a, rank, "Tried to squeeze dim index %d for tensor with %d "
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


_squeeze = define_op("Squeeze", inputs=("input",), attrs={"squeeze_dims": ()},
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


# ---- Pack (stack), Unpack (unstack) ------------------------------------------------------------
def _pack_shape(op):
    shape = _merged_shape([t.shape for t in op.inputs])
    if shape.ndims is None:
        return [unknown_shape()]
    axis = op.get_attr("axis")
    rank = shape.ndims + 1
    axis = _canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
    dims = shape.as_list()
    dims.insert(axis, len(op.inputs))
    return [TensorShape(dims)]


_pack = define_op("Pack", inputs=("values*",), attrs={"axis": 0}, shape_fn=_pack_shape,
                  same_dtype_inputs=("values",),
                  doc="Stacks N tensors of one shape into one tensor of rank + 1.")


def stack(values, axis=0, name="stack"):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor (``tf.stack``).

    All values must have the same shape and dtype.  ``axis`` is the new
    dimension's index in the output.  As in TF1, values that are all constants
    stacked on axis 0 become one ``Const``.

    Example:
        >>> x = tf.constant([1, 4])
        >>> y = tf.constant([2, 5])
        >>> tf.stack([x, y], axis=1)     # [[1, 2], [4, 5]]
        Tensor("stack:0", shape=(2, 2), dtype=int32)

    Raises:
        ValueError: if the shapes differ or ``axis`` is out of ``[-(R+1), R+1)``.
    """
    if axis == 0:
        return convert_to_tensor(values, name=name)
    return apply_op(_pack, [values], attrs={"axis": axis}, name=name)


def _unpack_shape(op):
    x = op.inputs[0]
    num = op.get_attr("num")
    if x.shape.ndims is None:
        return [unknown_shape()] * num
    axis, rank = op.get_attr("axis"), x.shape.ndims
    axis = _canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
    dims = x.shape.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError("Dimension must be %d but is %d" % (num, dims[axis]))
    del dims[axis]
    return [TensorShape(dims)] * num


_unpack = define_op("Unpack", inputs=("value",), attrs={"num": None, "axis": 0},
                    num_outputs=lambda attrs: attrs["num"], shape_fn=_unpack_shape,
                    doc="Splits a tensor along one axis into num tensors of rank - 1.")


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks dimension ``axis`` of ``value`` into a list of tensors (``tf.unstack``).

    The inverse of :func:`stack`: a ``[3, 4]`` tensor unstacks into three
    ``[4]`` tensors (``axis=0``) or four ``[3]`` tensors (``axis=1``).

    Args:
        value: a tensor of rank R > 0.
        num: the length of dimension ``axis``; inferred from the static shape
            when None.
        axis: the dimension to unpack.
        name: op name (default ``unstack``).

    Raises:
        ValueError: if ``num`` is None and cannot be inferred.
    """
    if num is None:
        value = convert_to_tensor(value)
        shape_ = value.shape
        if shape_.ndims is not None:
            rank = shape_.ndims
            axis = _canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
            num = shape_[axis].value
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % shape_)
    return _output_list(apply_op(_unpack, [value], attrs={"num": num, "axis": axis},
                                 name=name))


# ---- ConcatV2 (concat), Split and SplitV (split) ----------------------------------------------
def _concat_shape(op):
    """The inputs' shapes joined along ``axis``; every other dim must agree."""
    values, axis_tensor = op.inputs[:-1], op.inputs[-1]
    rank = next((t.shape.ndims for t in values if t.shape.ndims is not None), None)
    if rank is None:
        return [unknown_shape()]
    for t in values:
        _with_rank(t.shape, rank)
    axis = _scalar_value(axis_tensor)
    if axis is None:
        return [unknown_shape(rank)]
    if not -rank <= axis < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d"
                         % (axis + 1 if axis >= 0 else -axis, rank))
    axis %= rank
    shapes = [unknown_shape(rank).merge_with(t.shape).as_list() for t in values]
    dims = _merged_shape([TensorShape(d[:axis] + [None] + d[axis + 1:]) for d in shapes]).as_list()
    sizes = [d[axis] for d in shapes]
    dims[axis] = None if None in sizes else sum(sizes)
    return [TensorShape(dims)]


_concat_v2 = define_op("ConcatV2", inputs=("values*", "axis"), shape_fn=_concat_shape,
                       same_dtype_inputs=("values",), dtype_fn=_like_input(0, {-1: "axis"}),
                       doc="Joins N tensors along one existing dimension.")


def concat(values, axis, name="concat"):
    """Joins a list of tensors along dimension ``axis`` (``tf.concat``).

    The tensors must have the same rank and the same sizes in every other
    dimension.  A single value is returned through an ``Identity``, as in TF1.

    Example:
        >>> t1 = [[1, 2, 3], [4, 5, 6]]
        >>> t2 = [[7, 8, 9], [10, 11, 12]]
        >>> tf.concat([t1, t2], 0)       # shape [4, 3]
        >>> tf.concat([t1, t2], -1)      # shape [2, 6]

    Raises:
        ValueError: if the shapes are known not to fit.
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with _op_scope(name, values) as scope:
            axis = convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            _with_rank(axis.shape, 0)
            return identity(values[0], name=name)
    return apply_op(_concat_v2, [list(values), axis], name=name)


def _split_shape(op):
    split_dim, value = op.inputs
    num = op.get_attr("num_split")
    if num < 1:
        raise ValueError("num_split must be at least 1, got %d" % num)
    rank = value.shape.ndims
    axis = _scalar_value(split_dim)
    if rank is None:
        return [unknown_shape()] * num
    if axis is None:
        return [unknown_shape(rank)] * num
    axis = _canonical_axis(axis, rank, "Dimension size, given by scalar input %d must be in "
                                       "range [%d, %d)" % (axis, -rank, rank))
    dims = value.shape.as_list()
    if dims[axis] is not None:
        if dims[axis] % num:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d"
                             % (num, dims[axis]))
        dims[axis] //= num
    return [TensorShape(dims)] * num


_split = define_op("Split", inputs=("split_dim", "value"), attrs={"num_split": None},
                   num_outputs=lambda attrs: attrs["num_split"], shape_fn=_split_shape,
                   dtype_fn=_like_input(1, {0: "split_dim"}),
                   doc="Splits a tensor into num_split equal pieces along split_dim.")


def _split_v_shape(op):
    value, size_splits, split_dim = op.inputs
    num = op.get_attr("num_split")
    rank = value.shape.ndims
    axis = _scalar_value(split_dim)
    sizes = constant_value(size_splits)
    if rank is None:
        return [unknown_shape()] * num
    if axis is None:
        return [unknown_shape(rank)] * num
    axis = _canonical_axis(axis, rank, "Dimension size, given by scalar input %d must be in "
                                       "range [%d, %d)" % (axis, -rank, rank))
    dims = value.shape.as_list()
    if sizes is None:
        return [TensorShape(dims[:axis] + [None] + dims[axis + 1:])] * num
    sizes = [int(s) for s in sizes.reshape(-1)]
    if len(sizes) != num:
        raise ValueError("size_splits has %d entries but num_split is %d" % (len(sizes), num))
    sizes = _resolved_split_sizes(sizes, dims[axis])
    return [TensorShape(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]


def _resolved_split_sizes(sizes, dim):
    """``sizes`` with its one -1 replaced by what is left of ``dim`` (None if unknown).

    Raises:
        ValueError: if the sizes cannot split a known ``dim``.
    """
    if sizes.count(-1) > 1 or min(sizes, default=0) < -1:
        raise ValueError("size_splits may contain at most one -1 and no other negative "
                         "values, got %s" % _shape_string(sizes))
    known = sum(s for s in sizes if s != -1)
    if dim is not None and (known > dim or (-1 not in sizes and known != dim)):
        raise ValueError("can't split axis of size %d into pieces of size %s"
                         % (dim, _shape_string(sizes)))
    rest = None if dim is None else dim - known
    return [rest if s == -1 else s for s in sizes]


_split_v = define_op("SplitV", inputs=("value", "size_splits", "split_dim"),
                     attrs={"num_split": None}, num_outputs=lambda attrs: attrs["num_split"],
                     shape_fn=_split_v_shape,
                     dtype_fn=_like_input(0, {1: "size_splits", 2: "split_dim"}),
                     doc="Splits a tensor into pieces of the given sizes along split_dim.")


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits ``value`` along ``axis`` into a list of tensors (``tf.split``).

    Args:
        value: the tensor to split.
        num_or_size_splits: an int N (N equal pieces: a ``Split`` op), or a 1-D
            list/tensor of piece sizes, one of which may be -1 (a ``SplitV`` op).
        axis: the dimension to split.
        num: the number of pieces when ``num_or_size_splits`` is a tensor
            whose length is not statically known.
        name: op name (default ``split``).

    Example:
        >>> x = tf.zeros([5, 30])
        >>> [t.shape for t in tf.split(x, [4, 15, 11], 1)]
        [TensorShape([5, 4]), TensorShape([5, 15]), TensorShape([5, 11])]
        >>> len(tf.split(x, 3, axis=1))
        3

    Raises:
        ValueError: if the split is known not to fit (``tf.split`` of 3 into 2).
    """
    if isinstance(num_or_size_splits, (numbers.Integral, Dimension)):
        return _output_list(apply_op(_split, [axis, value],
                                     attrs={"num_split": int(num_or_size_splits)}, name=name))
    if num is None:
        num = _static_length(num_or_size_splits)
    return _output_list(apply_op(_split_v, [value, num_or_size_splits, axis],
                                 attrs={"num_split": num}, name=name))


def _static_length(size_splits):
    """How many pieces a list or 1-D tensor of split sizes makes.

    Raises:
        ValueError: for a scalar, or a tensor of unknown length.
    """
    if not _is_tensor_like(size_splits):
        return len(size_splits)
    static = size_splits.shape
    if static.ndims == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         "to split. Argument provided: %s" % (size_splits,))
    if static.ndims is None or static[0].value is None:
        raise ValueError("Cannot infer num from shape %s" % (size_splits,))
    return static[0].value


# ---- Tile, Pad, PadV2, MirrorPad ----------------------------------------------------------------
def _tile_shape(op):
    x, multiples = op.inputs
    length = _with_rank(multiples.shape, 1)[0].value
    rank = x.shape.ndims if x.shape.ndims is not None else length
    if rank is None:
        return [unknown_shape()]
    if length is not None and length != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, length))
    times = constant_value(multiples)
    if times is None:
        return [unknown_shape(rank)]
    dims = unknown_shape(rank).merge_with(x.shape).as_list()
    return [TensorShape([None if d is None else d * int(m) for d, m in zip(dims, times)])]


_tile = define_op("Tile", inputs=("input", "multiples"), shape_fn=_tile_shape,
                  dtype_fn=_like_input(0, {1: "multiples"}),
                  doc="Repeats its input multiples[i] times along dimension i.")


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along each dimension i (``tf.tile``).

    Example: ``tf.tile([[1, 2]], [2, 2])`` is ``[[1, 2, 1, 2], [1, 2, 1, 2]]``.
    """
    return apply_op(_tile, [input, multiples], name=name or "Tile")


def _pad_shape(op):
    """Each dimension grows by its ``paddings`` row, ``[before, after]``."""
    x, paddings = op.inputs[:2]
    paddings_shape = _with_rank(paddings.shape, 2)
    if paddings_shape[1].value not in (None, 2):
        raise ValueError("Dimension must be 2 but is %d" % paddings_shape[1].value)
    rank = paddings_shape[0].value
    rank = x.shape.ndims if rank is None else rank
    if rank is None:
        return [unknown_shape()]
    dims = _with_rank(x.shape, rank).as_list()
    pads = constant_value(paddings)
    if pads is None:
        return [unknown_shape(rank)]
    if (pads < 0).any():
        raise ValueError("Paddings must be non-negative")
    return [TensorShape([None if d is None else d + int(before) + int(after)
                         for d, (before, after) in zip(dims, pads)])]


_pad = define_op("Pad", inputs=("input", "paddings"), shape_fn=_pad_shape,
                 dtype_fn=_like_input(0, {1: "paddings"}),
                 doc="Pads with zeros: paddings[i] = [before, after] for dimension i.")
_pad_v2 = define_op("PadV2", inputs=("input", "paddings", "constant_values"),
                    shape_fn=_pad_shape, same_dtype_inputs=("input", "constant_values"),
                    dtype_fn=_like_input(0, {1: "paddings"}),
                    doc="Pads with constant_values: paddings[i] = [before, after].")
_mirror_pad = define_op("MirrorPad", inputs=("input", "paddings"), attrs={"mode": None},
                        shape_fn=_pad_shape, dtype_fn=_like_input(0, {1: "paddings"}),
                        doc="Pads with a mirror image of the input (REFLECT or SYMMETRIC).")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads ``tensor`` (``tf.pad``).

    ``paddings`` is an integer ``[rank, 2]`` list or tensor: dimension i gets
    ``paddings[i][0]`` values before and ``paddings[i][1]`` after.

    Args:
        tensor: the tensor to pad.
        paddings: the amounts, non-negative.
        mode: ``"CONSTANT"`` (fill with ``constant_values``), ``"REFLECT"``
            (mirror without the edge: ``[1, 2, 3]`` padded by 2 before is
            ``[3, 2, 1, 2, 3]``) or ``"SYMMETRIC"`` (mirror with the edge:
            ``[2, 1, 1, 2, 3]``); case-insensitive.
        name: op name (default: the op type, ``Pad``, ``PadV2`` or ``MirrorPad``).
        constant_values: the fill value for ``"CONSTANT"``; a nonzero value
            builds ``PadV2`` instead of ``Pad``, as TF1 does.

    Raises:
        ValueError: for an unknown mode or negative constant paddings.
        InvalidArgumentError: when running, if a mirror padding is larger than
            the dimension allows.
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if not _is_tensor_like(constant_values) and np.all(np.equal(constant_values, 0)):
            return apply_op(_pad, [tensor, paddings], name=name or "Pad")
        return apply_op(_pad_v2, [tensor, paddings, constant_values], name=name or "PadV2")
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op(_mirror_pad, [tensor, paddings], attrs={"mode": mode},
                        name=name or "MirrorPad")
    raise ValueError("Unknown padding mode: %s" % mode)


# ---- Fill, zeros, ones, zeros_like, ones_like ----------------------------------------------------
def _fill_shape(op):
    dims_tensor, value = op.inputs
    _with_rank(dims_tensor.shape, 1)
    _with_rank(value.shape, 0)
    dims = constant_value(dims_tensor)
    if dims is not None and (dims < 0).any():
        raise ValueError("Fill dimensions must be >= 0")
    return [constant_value_as_shape(dims_tensor)]


_fill = define_op("Fill", inputs=("dims", "value"), shape_fn=_fill_shape,
                  dtype_fn=_like_input(1, {0: "dims"}),
                  doc="A tensor of shape dims, every element value.")


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with the scalar ``value`` (``tf.fill``).

    Example: ``tf.fill([2, 3], 9)`` is ``[[9, 9, 9], [9, 9, 9]]`` (int32).
    """
    return apply_op(_fill, [dims, value], name=name or "Fill")


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
    with _op_scope(name, [shape]) as scope:
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
not_differentiable("ZerosLike")


def zeros_like(tensor, dtype=None, name=None):
    """Zeros with the shape of ``tensor`` (``tf.zeros_like``).

    As in TF1, a fully defined static shape gives :func:`zeros` (a ``Const``);
    otherwise a ``ZerosLike`` op reads the shape at run time (or ``Fill`` when
    ``dtype`` differs from ``tensor``'s).
    """
    with _op_scope(name or "zeros_like", [tensor]) as scope:
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
    with _op_scope(name or "ones_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else dtype
        return ones(shape(tensor), dtype=dtype, name=scope)


# ---- OneHot ---------------------------------------------------------------------------------
def _one_hot_dtypes(op):
    _check_dtype(op, 0, "indices", (dtypes.uint8, dtypes.int32, dtypes.int64))
    _check_dtype(op, 1, "depth", (dtypes.int32,))
    return [op.inputs[2].dtype.base_dtype]


def _one_hot_shape(op):
    indices = op.inputs[0]
    axis = op.get_attr("axis")
    if indices.shape.ndims is None:
        return [unknown_shape()]
    rank = indices.shape.ndims
    if not -1 <= axis <= rank:
        raise ValueError("Expected axis to be -1 or between [0, %d).  But received: %d"
                         % (rank + 1, axis))
    dims = indices.shape.as_list()
    dims.insert(rank if axis == -1 else axis, _scalar_value(op.inputs[1]))
    return [TensorShape(dims)]


_one_hot = define_op("OneHot", inputs=("indices", "depth", "on_value", "off_value"),
                     attrs={"axis": -1}, shape_fn=_one_hot_shape, dtype_fn=_one_hot_dtypes,
                     same_dtype_inputs=("on_value", "off_value"),
                     doc="on_value where the new axis equals the index, off_value elsewhere.")
not_differentiable("OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes ``indices`` along a new dimension of size ``depth`` (``tf.one_hot``).

    ``output[..., j] = on_value if indices[...] == j else off_value``; an index
    outside ``[0, depth)`` (such as -1) gives a row of ``off_value``.

    Args:
        indices: uint8/int32/int64 tensor.
        depth: the size of the new dimension.
        on_value, off_value: scalars (default 1 and 0).
        axis: where the new dimension goes (default -1: last).
        dtype: the output dtype; default: that of ``on_value``/``off_value``,
            else float32.
        name: op name (default ``one_hot``).

    Example:
        >>> sess.run(tf.one_hot([0, 2, -1], 3))
        array([[1., 0., 0.],
               [0., 0., 1.],
               [0., 0., 0.]], dtype=float32)

    Raises:
        TypeError: if ``on_value``, ``off_value`` and ``dtype`` disagree.
    """
    with _op_scope(name or "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        on = None if on_value is None else convert_to_tensor(on_value, preferred_dtype=dtype)
        off = None if off_value is None else convert_to_tensor(off_value, preferred_dtype=dtype)
        given = on if on is not None else off
        dtype = dtype or (given.dtype.base_dtype if given is not None else dtypes.float32)
        on = constant(1, dtype, name="on_value") if on is None else on
        off = constant(0, dtype, name="off_value") if off is None else off
        for param, value in (("on_value", on), ("off_value", off)):
            if value.dtype.base_dtype != dtype:
                raise TypeError("dtype %s of %s does not match dtype %s"
                                % (value.dtype.name, param, dtype.name))
        return apply_op(_one_hot, [indices, depth, on, off],
                        attrs={"axis": -1 if axis is None else axis}, name=scope)


# ---- GatherV2 ---------------------------------------------------------------------------------
def _gather_shape(op):
    """``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``."""
    params, indices, axis_tensor = op.inputs
    rank = params.shape.ndims
    axis = _scalar_value(axis_tensor)
    if rank is None or indices.shape.ndims is None:
        return [unknown_shape()]
    if axis is None:
        return [unknown_shape(rank + indices.shape.ndims - 1)]
    if not -rank <= axis < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d"
                         % (axis + 1 if axis >= 0 else -axis, rank))
    axis %= rank
    dims = params.shape.as_list()
    return [TensorShape(dims[:axis] + indices.shape.as_list() + dims[axis + 1:])]


_gather_v2 = define_op(
    "GatherV2", inputs=("params", "indices", "axis"), shape_fn=_gather_shape,
    dtype_fn=_like_input(0, {1: "indices", 2: "axis"}),
    doc="Slices of params along axis, at the positions indices.")


def gather(params, indices, validate_indices=None, name=None, axis=None):
    """Gathers slices of ``params`` along ``axis`` at ``indices`` (``tf.gather``).

    Like ``np.take(params, indices, axis)``: the result has shape
    ``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``.  An index
    outside ``[0, params.shape[axis])`` is an error at run time (no wrapping
    of negative indices).

    Args:
        params: the tensor to gather from.
        indices: int32/int64 tensor of positions.
        validate_indices: ignored (deprecated in TF1 too).
        name: op name (default ``GatherV2``).
        axis: the dimension to gather along (default 0).

    Example:
        >>> sess.run(tf.gather([[1, 2], [3, 4], [5, 6]], [2, 0]))
        array([[5, 6],
               [1, 2]], dtype=int32)

    Raises:
        InvalidArgumentError: when running, for an out-of-range index
            (``indices[1] = 7 is not in [0, 3)``).
    """
    del validate_indices
    return apply_op(_gather_v2, [params, indices, 0 if axis is None else axis],
                    name=name or "GatherV2")


# ---- Slice ----------------------------------------------------------------------------------
def _slice_shape(op):
    """``size`` itself, where a -1 means "to the end": ``dim - begin``."""
    x, begin, size_tensor = op.inputs
    length = _with_rank(begin.shape, 1)[0].value
    length = _with_rank(size_tensor.shape, 1)[0].value if length is None else length
    rank = x.shape.ndims if x.shape.ndims is not None else length
    if rank is None:
        return [unknown_shape()]
    if length is not None and length != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (length, rank))
    starts, sizes = constant_value(begin), constant_value(size_tensor)
    if sizes is None:
        return [unknown_shape(rank)]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * rank
    out = []
    for i, s in enumerate(sizes):
        if s != -1:
            out.append(int(s))
        elif starts is None or dims[i] is None:
            out.append(None)
        else:
            out.append(dims[i] - int(starts[i]))
    return [TensorShape(out)]


_slice = define_op(
    "Slice", inputs=("input", "begin", "size"), shape_fn=_slice_shape,
    dtype_fn=_like_input(0, {1: "begin", 2: "size"}),
    doc="The block of size[i] elements from begin[i] in each dimension (-1: to the end).")


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's name
    """Extracts the block starting at ``begin`` of extent ``size`` (``tf.slice``).

    ``size[i] == -1`` takes everything from ``begin[i]`` to the end.  This is
    ``input_[begin[0]:begin[0] + size[0], begin[1]:...]``.

    Example:
        >>> t = tf.constant([[1, 1, 1], [2, 2, 2], [3, 3, 3]])
        >>> sess.run(tf.slice(t, [1, 0], [1, -1]))
        array([[2, 2, 2]], dtype=int32)

    Raises:
        InvalidArgumentError: when running, if the block leaves the tensor.
    """
    return apply_op(_slice, [input_, begin, size], name=name or "Slice")


# ---- StridedSlice and Tensor.__getitem__ ------------------------------------------------------
_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


class _Unknown:
    """A slice bound not known while the graph is built."""

    def __repr__(self):
        return "?"


_UNKNOWN = _Unknown()


def strided_slice_index(begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                        new_axis_mask=0, shrink_axis_mask=0):
    """The Python index a ``StridedSlice`` op applies: ``x[strided_slice_index(...)]``.

    Entry ``i`` of ``begin``/``end``/``strides`` and bit ``i`` of the masks
    describe one item of the index:

    * ``ellipsis_mask`` bit: ``...`` (the other inputs are ignored);
    * ``new_axis_mask`` bit: ``None`` — a new dimension of size 1;
    * ``shrink_axis_mask`` bit: the integer ``begin[i]`` — drops the dimension;
    * otherwise ``begin[i]:end[i]:strides[i]``, where a ``begin_mask`` /
      ``end_mask`` bit leaves that bound out (``:end``, ``begin:``).

    So ``x[1, ..., ::-1, tf.newaxis]`` is begin ``[1, 0, 0, 0]``, end
    ``[2, 0, 0, 0]``, strides ``[1, 1, -1, 1]``, shrink 0b0001, ellipsis 0b0010,
    begin and end masks 0b0100, new axis 0b1000.  The NumPy kernel and the
    shape function both read the op through this function, as TF's kernel and
    shape inference share ``ValidateStridedSliceOp``.

    Args:
        begin, end: lists of ints, or None when not known while building
            (their entries are then ``_UNKNOWN``).
        strides: list of ints.

    Raises:
        ValueError: for more than one ellipsis or a zero stride.
    """
    if ellipsis_mask & (ellipsis_mask - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    index = []
    for i, stride in enumerate(strides):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif stride == 0:
            raise ValueError("strides[%d] must be non-zero" % i)
        elif shrink_axis_mask & bit:
            index.append(_bound(begin, i))
        else:
            start = None if begin_mask & bit else _bound(begin, i)
            stop = None if end_mask & bit else _bound(end, i)
            index.append(_BaseSlice(start, stop, int(stride)))
    return tuple(index)


def _bound(values, i):
    return _UNKNOWN if values is None else int(values[i])


def sliced_shape(dims, index):
    """The shape of ``x[index]`` for an ``x`` of shape ``dims`` (None: unknown dims).

    Follows TF's rules for what is known while building: a slice with an
    unknown bound has an unknown length, unless both bounds are left out.

    Raises:
        ValueError: for more indices than dimensions, or an integer index known
            to be out of range (TF's "slice index 5 of dimension 0 out of bounds.").
    """
    consumed = sum(1 for item in index if item is not Ellipsis and item is not None)
    if consumed > len(dims):
        raise ValueError("Index out of range using input dim %d; input has only %d dims"
                         % (len(dims), len(dims)))
    if not any(item is Ellipsis for item in index):
        index += (Ellipsis,)  # unmentioned trailing dimensions are kept whole
    out, d = [], 0
    for item in index:
        if item is Ellipsis:
            span = len(dims) - consumed
            out.extend(dims[d:d + span])
            d += span
        elif item is None:
            out.append(1)
        elif isinstance(item, _BaseSlice):
            out.append(_slice_length(item, dims[d]))
            d += 1
        else:
            _check_in_bounds(item, dims[d], d)
            d += 1
    return out


def _slice_length(item, dim):
    if dim is None or item.start is _UNKNOWN or item.stop is _UNKNOWN:
        return None
    return len(range(*item.indices(dim)))


def _check_in_bounds(index, dim, d):
    if index is _UNKNOWN or dim is None:
        return
    if not -dim <= index < dim:
        raise ValueError("slice index %d of dimension %d out of bounds."
                         % (index + dim if index < 0 else index, d))


def _strided_slice_shape(op):
    x, begin, end, strides = op.inputs
    stride_values = constant_value(strides)
    if x.shape.ndims is None or stride_values is None:
        return [unknown_shape()]
    begin_values, end_values = constant_value(begin), constant_value(end)
    index = strided_slice_index(
        None if begin_values is None else begin_values.tolist(),
        None if end_values is None else end_values.tolist(),
        stride_values.tolist(), **{mask: op.get_attr(mask) for mask in _MASKS})
    return [TensorShape(sliced_shape(x.shape.as_list(), index))]


_strided_slice = define_op(
    "StridedSlice", inputs=("input", "begin", "end", "strides"),
    attrs=dict.fromkeys(_MASKS, 0), shape_fn=_strided_slice_shape,
    dtype_fn=_like_input(0, {1: "begin", 2: "end", 3: "strides"}),
    doc="NumPy-style basic indexing: x[begin:end:strides] with masks for ..., newaxis, ints.")


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """``input_[begin:end:strides]`` over several dimensions (``tf.strided_slice``).

    Most code writes ``x[1:, ..., ::-1]`` instead, which builds this op (see
    :func:`strided_slice_index` for how the masks encode an index).

    Args:
        input_: the tensor to slice.
        begin, end, strides: 1-D int32/int64 tensors of one length; ``strides``
            defaults to ones.
        begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask:
            bit fields, bit i about entry i.
        var: ignored (TF uses it for sliced assignment).
        name: op name (default ``StridedSlice``).

    Raises:
        ValueError: for an index known to be invalid.
    """
    del var
    if strides is None:
        strides = ones_like(begin) if _is_tensor_like(begin) else [1] * len(begin)
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    return apply_op(_strided_slice, [input_, begin, end, strides], attrs=masks,
                    name=name or "StridedSlice")


_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                     "scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(index):
    """An int index as an int; a scalar int32/int64 tensor passes unchanged.

    Raises:
        TypeError: for anything else (floats, lists, vectors...).
    """
    if isinstance(index, (numbers.Integral, Dimension)):
        return int(index)
    dtype = getattr(index, "dtype", None)
    is_integer = dtype is not None and dtypes.as_dtype(dtype).base_dtype in _INDEX_TYPES
    rank = index.shape.ndims if _is_tensor_like(index) else np.ndim(index)
    if not is_integer or rank not in (0, None):
        raise TypeError("%s, got %r" % (_SLICE_TYPE_ERROR, index))
    return index


def _slice_helper(tensor, slice_spec):
    """``tensor[slice_spec]``: NumPy basic indexing as one ``StridedSlice`` op.

    Accepts ints (negative count from the end), slices with any step, ``...``,
    ``tf.newaxis`` and scalar int32/int64 tensors.  Each item of the index
    becomes one entry of ``begin``/``end``/``strides`` plus mask bits; the
    three lists are packed into tensors named ``strided_slice/stack``,
    ``stack_1``, ``stack_2``, and the op is named ``strided_slice``, as in TF.

    Example:
        >>> x = tf.zeros([4, 5, 6])
        >>> x[1:, ..., tf.newaxis, ::-2]
        Tensor("strided_slice:0", shape=(3, 5, 1, 3), dtype=float32)

    Raises:
        TypeError: for an index of another kind.
        ValueError: for an index known to be out of range.
    """
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, item in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(item, _BaseSlice):
            entry = (0 if item.start is None else _check_index(item.start),
                     0 if item.stop is None else _check_index(item.stop),
                     1 if item.step is None else _check_index(item.step))
            if item.start is None:
                masks["begin_mask"] |= bit
            if item.stop is None:
                masks["end_mask"] |= bit
        elif item is Ellipsis:
            entry = (0, 0, 1)
            masks["ellipsis_mask"] |= bit
        elif item is newaxis:
            entry = (0, 0, 1)
            masks["new_axis_mask"] |= bit
        else:
            index = _check_index(item)
            entry = (index, index + 1, 1)
            masks["shrink_axis_mask"] |= bit
        for values, value in zip((begin, end, strides), entry):
            values.append(value)
    with _op_scope("strided_slice", [tensor] + begin + end + strides) as scope:
        if not begin:
            empty = constant([], dtype=dtypes.int32)
            return strided_slice(tensor, empty, empty, empty, name=scope, **masks)
        index_dtype = _index_dtype(begin + end + strides)
        packed = [convert_to_tensor(values, dtype=index_dtype, name="stack")
                  for values in (begin, end, strides)]
        return strided_slice(tensor, *packed, name=scope, **masks)


def _index_dtype(values):
    """int64 if any tensor among ``values`` is int64, else int32."""
    int64 = any(_is_tensor_like(v) and v.dtype.base_dtype == dtypes.int64 for v in values)
    return dtypes.int64 if int64 else dtypes.int32


Tensor._override_operator("__getitem__", _slice_helper)


# ---- Autopacking: lists holding tensors convert to Pack ops -------------------------------------
def _first_tensor_dtype(values):
    """The dtype of the first tensor-like in the nested list ``values``, or None."""
    for value in values:
        if _is_tensor_like(value):
            return value.dtype.base_dtype
        if isinstance(value, (list, tuple)):
            dtype = _first_tensor_dtype(value)
            if dtype is not None:
                return dtype
    return None


def _autopacking_conversion(value, dtype=None, name=None, as_ref=False):
    """Converts a (nested) list holding Tensors or Variables: ``[n, -1]`` -> ``Pack``.

    Lists without tensors return ``NotImplemented``, which hands them on to
    the constant conversion.  Python values inside adopt the tensors' dtype.
    This is TF's ``_autopacking_conversion_function``; the op is named
    ``packed`` unless a name is given.
    """
    inferred = None if as_ref else _first_tensor_dtype(value)
    if inferred is None:
        return NotImplemented
    return _autopack(value, dtype or inferred, name or "packed")


def _autopack(values, dtype, name):
    with _op_scope(name, values) as scope:
        elements = []
        for i, value in enumerate(values):
            if _is_tensor_like(value):
                element = convert_to_tensor(value)
                if element.dtype.base_dtype != dtype:
                    raise TypeError("Cannot convert a list containing a tensor of dtype %s to %s "
                                    "(Tensor is: %r)" % (element.dtype.name, dtype.name, element))
            elif isinstance(value, (list, tuple)) and _first_tensor_dtype(value) is not None:
                element = _autopack(value, dtype, str(i))
            else:
                element = constant(value, dtype=dtype, name=str(i))
            elements.append(element)
        return apply_op(_pack, [elements], attrs={"axis": 0}, name=scope)


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=99)
