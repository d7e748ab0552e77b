"""Joining tensors and taking them apart: ``tf.stack``/``tf.unstack``,
``tf.concat``/``tf.split``, and the *autopacking* of lists holding tensors.

The ops come in pairs that undo each other, and each one's gradient is its
partner: the gradient of ``Pack`` (``tf.stack``) unstacks the incoming
gradient, that of ``Unpack`` stacks the gradients of the pieces, and
``ConcatV2`` and ``Split``/``SplitV`` are each other's gradients along the
same axis.

The module also installs the conversion that turns a list holding tensors,
``[n, -1]``, into a ``Pack`` op, wherever a tensor is expected.

Mirrors ``tensorflow/python/ops/array_ops.py`` and ``array_grad.py``.
"""

import numbers

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops.array_ops import identity, shape
from minitf.ops.array_util import (
    canonical_axis, is_tensor_like, like_input, merged_shape, op_scope, output_list,
    scalar_value, shape_string, with_rank)
from minitf.ops.constant_op import constant
from minitf.ops.op_def_library import apply_op, define_op, gradient


# ---- Pack (stack), Unpack (unstack) ------------------------------------------------------------
def _pack_shape(op):
    merged = merged_shape([t.shape for t in op.inputs])
    if merged.ndims is None:
        return [unknown_shape()]
    axis = op.get_attr("axis")
    rank = merged.ndims + 1
    axis = canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
    dims = merged.as_list()
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


@gradient("Pack")
def _pack_grad(op, grad):
    """Input i is slice i of the output along ``axis``, so its gradient is too."""
    return unstack(grad, num=len(op.inputs), axis=op.get_attr("axis"))


def _unpack_shape(op):
    x = op.inputs[0]
    num = op.get_attr("num")
    if x.shape.ndims is None:
        return [unknown_shape()] * num
    axis, rank = op.get_attr("axis"), x.shape.ndims
    axis = canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
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
            axis = canonical_axis(axis, rank, "axis = %d not in [%d, %d)" % (axis, -rank, rank))
            num = shape_[axis].value
        if num is None:
            raise ValueError("Cannot infer num from shape %s" % shape_)
    return output_list(apply_op(_unpack, [value], attrs={"num": num, "axis": axis},
                                name=name))


@gradient("Unpack")
def _unpack_grad(op, *grads):
    """The pieces' gradients, stacked back along ``axis``.  (A piece nobody used
    has a zero gradient: ``tf.gradients`` passes zeros for missing ones.)"""
    return [stack(list(grads), axis=op.get_attr("axis"))]


# ---- ConcatV2 (concat), Split and SplitV (split) ----------------------------------------------
def _concat_shape(op):
    """The inputs' shapes joined along ``axis``; every other dim must agree."""
    values, axis_tensor = op.inputs[:-1], op.inputs[-1]
    rank = next((t.shape.ndims for t in values if t.shape.ndims is not None), None)
    if rank is None:
        return [unknown_shape()]
    for t in values:
        with_rank(t.shape, rank)
    axis = scalar_value(axis_tensor)
    if axis is None:
        return [unknown_shape(rank)]
    if not -rank <= axis < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d"
                         % (axis + 1 if axis >= 0 else -axis, rank))
    axis %= rank
    shapes = [unknown_shape(rank).merge_with(t.shape).as_list() for t in values]
    dims = merged_shape([TensorShape(d[:axis] + [None] + d[axis + 1:]) for d in shapes]).as_list()
    sizes = [d[axis] for d in shapes]
    dims[axis] = None if None in sizes else sum(sizes)
    return [TensorShape(dims)]


_concat_v2 = define_op("ConcatV2", inputs=("values*", "axis"), shape_fn=_concat_shape,
                       same_dtype_inputs=("values",), dtype_fn=like_input(0, {-1: "axis"}),
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
        with op_scope(name, values):
            axis = convert_to_tensor(axis, dtype=dtypes.int32, name="concat_dim")
            with_rank(axis.shape, 0)
            return identity(values[0], name=name)
    return apply_op(_concat_v2, [list(values), axis], name=name)


@gradient("ConcatV2")
def _concat_grad(op, grad):
    """Each input's gradient is its piece of ``grad``: ``grad`` split along the
    axis in the inputs' sizes along it (TF slices once per input; a ``SplitV``
    is the same thing as one op).  The axis gets None."""
    values, axis = op.inputs[:-1], op.inputs[-1]
    return split(grad, _sizes_along(values, axis), axis) + [None]


def _sizes_along(values, axis):
    """The sizes of ``values`` along ``axis``: Python ints when the shapes tell
    them while building, else a vector of ``tf.shape(value)[axis]``."""
    static_axis = scalar_value(axis)
    if static_axis is not None and all(v.shape.ndims is not None for v in values):
        sizes = [v.shape[static_axis].value for v in values]
        if None not in sizes:
            return sizes
    return stack([shape(v, out_type=axis.dtype.base_dtype)[axis] for v in values])


def _split_shape(op):
    split_dim, value = op.inputs
    num = op.get_attr("num_split")
    if num < 1:
        raise ValueError("num_split must be at least 1, got %d" % num)
    rank = value.shape.ndims
    axis = scalar_value(split_dim)
    if rank is None:
        return [unknown_shape()] * num
    if axis is None:
        return [unknown_shape(rank)] * num
    axis = canonical_axis(axis, rank, "Dimension size, given by scalar input %d must be in "
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
                   dtype_fn=like_input(1, {0: "split_dim"}),
                   doc="Splits a tensor into num_split equal pieces along split_dim.")


def _split_v_shape(op):
    value, size_splits, split_dim = op.inputs
    num = op.get_attr("num_split")
    rank = value.shape.ndims
    axis = scalar_value(split_dim)
    sizes = constant_value(size_splits)
    if rank is None:
        return [unknown_shape()] * num
    if axis is None:
        return [unknown_shape(rank)] * num
    axis = canonical_axis(axis, rank, "Dimension size, given by scalar input %d must be in "
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
                         "values, got %s" % shape_string(sizes))
    known = sum(s for s in sizes if s != -1)
    if dim is not None and (known > dim or (-1 not in sizes and known != dim)):
        raise ValueError("can't split axis of size %d into pieces of size %s"
                         % (dim, shape_string(sizes)))
    rest = None if dim is None else dim - known
    return [rest if s == -1 else s for s in sizes]


_split_v = define_op("SplitV", inputs=("value", "size_splits", "split_dim"),
                     attrs={"num_split": None}, num_outputs=lambda attrs: attrs["num_split"],
                     shape_fn=_split_v_shape,
                     dtype_fn=like_input(0, {1: "size_splits", 2: "split_dim"}),
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
        return output_list(apply_op(_split, [axis, value],
                                    attrs={"num_split": int(num_or_size_splits)}, name=name))
    if num is None:
        num = _static_length(num_or_size_splits)
    return output_list(apply_op(_split_v, [value, num_or_size_splits, axis],
                                attrs={"num_split": num}, name=name))


@gradient("Split")
def _split_grad(op, *grads):
    """The pieces' gradients joined back along ``split_dim`` (zeros stand in
    for the pieces nobody used)."""
    return [None, concat(list(grads), op.inputs[0])]


@gradient("SplitV")
def _split_v_grad(op, *grads):
    return [concat(list(grads), op.inputs[2]), None, None]


def _static_length(size_splits):
    """How many pieces a list or 1-D tensor of split sizes makes.

    Raises:
        ValueError: for a scalar, or a tensor of unknown length.
    """
    if not is_tensor_like(size_splits):
        return len(size_splits)
    static = size_splits.shape
    if static.ndims == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         "to split. Argument provided: %s" % (size_splits,))
    if static.ndims is None or static[0].value is None:
        raise ValueError("Cannot infer num from shape %s" % (size_splits,))
    return static[0].value


# ---- Autopacking: lists holding tensors convert to Pack ops -------------------------------------
def _first_tensor_dtype(values):
    """The dtype of the first tensor-like in the nested list ``values``, or None."""
    for value in values:
        if is_tensor_like(value):
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
    with op_scope(name, values) as scope:
        elements = []
        for i, value in enumerate(values):
            if is_tensor_like(value):
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
