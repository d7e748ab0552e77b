"""Taking part of a tensor: ``tf.slice``, ``tf.strided_slice`` and ``tensor[...]``.

``Tensor.__getitem__`` is installed here: NumPy's basic indexing (ints,
slices with any step, ``...``, ``tf.newaxis``) becomes one ``StridedSlice``
op, whose masks encode the index (see :func:`strided_slice_index`, which the
shape function, the NumPy kernel and the gradient kernel all read the op
through).

The gradient of taking part of a tensor puts the incoming gradient back where
the part came from, in zeros of the input's shape: for ``Slice`` that is a
``Pad``, for ``StridedSlice`` a ``StridedSliceGrad`` op, which scatters with
the same masks.  Both are linear in the gradient, and each one's own gradient
takes the same part again, so second derivatives go through.

Mirrors ``tensorflow/python/ops/array_ops.py`` and ``array_grad.py``.
"""

import numbers

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value, constant_value_as_shape
from minitf.ops.array_ops import ones_like, shape
from minitf.ops.array_util import INDEX_TYPES, is_tensor_like, like_input, op_scope, with_rank
from minitf.ops.constant_op import constant
from minitf.ops.joining_ops import stack
from minitf.ops.op_def_library import apply_op, define_op, gradient

# ``slice`` is also the name of an op wrapper below (``tf.slice``), as in TF.
_BaseSlice = slice

newaxis = None
"""``tf.newaxis``: in an index, inserts a dimension of size 1 (``x[:, tf.newaxis]``)."""


# ---- Slice ----------------------------------------------------------------------------------
def _slice_shape(op):
    """``size`` itself, where a -1 means "to the end": ``dim - begin``."""
    x, begin, size_tensor = op.inputs
    length = with_rank(begin.shape, 1)[0].value
    length = with_rank(size_tensor.shape, 1)[0].value if length is None else length
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
    dtype_fn=like_input(0, {1: "begin", 2: "size"}),
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


@gradient("Slice")
def _slice_grad(op, grad):
    """``grad`` padded with zeros back to the input's shape: in each dimension
    ``begin`` zeros before it and the rest after it.  ``begin`` and ``size``
    get None.

    The ``Pad`` op is named by its type: padding_ops, which declares it, is
    built on this module (Pad's gradient is a Slice).
    """
    x, begin = op.inputs[:2]
    index_type = begin.dtype.base_dtype
    after = shape(x, out_type=index_type) - shape(op.outputs[0], out_type=index_type) - begin
    return [apply_op("Pad", [grad, stack([begin, after], axis=1)]), None, None]


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


def _masks_of(op):
    return {mask: op.get_attr(mask) for mask in _MASKS}


def _strided_slice_shape(op):
    x, begin, end, strides = op.inputs
    stride_values = constant_value(strides)
    if x.shape.ndims is None or stride_values is None:
        return [unknown_shape()]
    begin_values, end_values = constant_value(begin), constant_value(end)
    index = strided_slice_index(
        None if begin_values is None else begin_values.tolist(),
        None if end_values is None else end_values.tolist(),
        stride_values.tolist(), **_masks_of(op))
    return [TensorShape(sliced_shape(x.shape.as_list(), index))]


_strided_slice = define_op(
    "StridedSlice", inputs=("input", "begin", "end", "strides"),
    attrs=dict.fromkeys(_MASKS, 0), shape_fn=_strided_slice_shape,
    dtype_fn=like_input(0, {1: "begin", 2: "end", 3: "strides"}),
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
        strides = ones_like(begin) if is_tensor_like(begin) else [1] * len(begin)
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    return apply_op(_strided_slice, [input_, begin, end, strides], attrs=masks,
                    name=name or "StridedSlice")


@gradient("StridedSlice")
def _strided_slice_gradient(op, grad):
    """``grad`` scattered back, with the same index, into zeros of the input's shape."""
    x, begin, end, strides = op.inputs
    x_shape = shape(x, out_type=begin.dtype.base_dtype)
    return [strided_slice_grad(x_shape, begin, end, strides, grad, **_masks_of(op)),
            None, None, None]


# ---- StridedSliceGrad -----------------------------------------------------------------------
def _strided_slice_grad_shape(op):
    with_rank(op.inputs[0].shape, 1)
    return [constant_value_as_shape(op.inputs[0])]


_strided_slice_grad = define_op(
    "StridedSliceGrad", inputs=("shape", "begin", "end", "strides", "dy"),
    attrs=dict.fromkeys(_MASKS, 0), shape_fn=_strided_slice_grad_shape,
    dtype_fn=like_input(4, {0: "shape", 1: "begin", 2: "end", 3: "strides"}),
    doc="Zeros of the given shape, with dy written where StridedSlice would read.")


def strided_slice_grad(shape, begin, end, strides, dy, begin_mask=0, end_mask=0,  # noqa: A002
                       ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, name=None):
    """The gradient of :func:`strided_slice`: ``x = zeros(shape); x[index] = dy``.

    ``index`` is decoded from ``begin``, ``end``, ``strides`` and the masks
    exactly as ``StridedSlice`` decodes it, so every element the slice read
    receives its gradient and every other element 0 (a strided slice never
    reads an element twice, so nothing needs adding up).

    Args:
        shape: the 1-D shape of the sliced input.
        begin, end, strides, masks: those of the ``StridedSlice``.
        dy: the gradient of the slice, of the slice's shape.
        name: op name (default ``StridedSliceGrad``).

    Raises:
        InvalidArgumentError: when running, if ``dy`` does not have the shape
            of the slice.
    """
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    return apply_op(_strided_slice_grad, [shape, begin, end, strides, dy], attrs=masks,
                    name=name or "StridedSliceGrad")


@gradient("StridedSliceGrad")
def _strided_slice_grad_gradient(op, grad):
    """``StridedSliceGrad`` is linear in ``dy``: its gradient reads the slice again."""
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None, strided_slice(grad, begin, end, strides, **_masks_of(op))]


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
    is_integer = dtype is not None and dtypes.as_dtype(dtype).base_dtype in INDEX_TYPES
    rank = index.shape.ndims if is_tensor_like(index) else np.ndim(index)
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
    with op_scope("strided_slice", [tensor] + begin + end + strides) as scope:
        if not begin:
            empty = constant([], dtype=dtypes.int32)
            return strided_slice(tensor, empty, empty, empty, name=scope, **masks)
        index_dtype = _index_dtype(begin + end + strides)
        packed = [convert_to_tensor(values, dtype=index_dtype, name="stack")
                  for values in (begin, end, strides)]
        return strided_slice(tensor, *packed, name=scope, **masks)


def _index_dtype(values):
    """int64 if any tensor among ``values`` is int64, else int32."""
    int64 = any(is_tensor_like(v) and v.dtype.base_dtype == dtypes.int64 for v in values)
    return dtypes.int64 if int64 else dtypes.int32


Tensor._override_operator("__getitem__", _slice_helper)
