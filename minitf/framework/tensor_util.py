"""Static values of tensors: ``constant_value`` and the ``TensorProto`` encoding.

Shape functions sometimes need a *value*, not just a shape: ``tf.reshape(x,
[2, -1])`` can only infer its output shape because ``[2, -1]`` is a constant.
``constant_value`` evaluates the small set of ops whose value is known while
the graph is built (constants, ``Shape`` of a fully defined tensor, ``Pack`` of
constants, ...) and returns None otherwise.

A value stored in a graph (a ``Const``'s ``value`` attr) is written as TF's
``TensorProto``: :func:`make_tensor_proto` encodes an array as TF does — a
numeric tensor of more than one element as the raw little-endian bytes of
``tensor_content``, a scalar in its typed field (``float_val``, ``int_val``,
...), strings in ``string_val`` — and :func:`make_ndarray` reads every form
back, including TF's shorthand of fewer values than elements (the last value
repeats: ``float_val: 0`` fills a zero tensor of any shape).

Mirrors ``tensorflow/python/framework/tensor_util.py``.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework import protos
from minitf.framework.tensor_shape import TensorShape

# Which typed field of a TensorProto holds a scalar (or TF's short form) of each dtype.
_VALUE_FIELDS = {"float32": "float_val", "float64": "double_val", "int32": "int_val",
                 "int16": "int_val", "int8": "int_val", "uint8": "int_val",
                 "uint16": "int_val", "int64": "int64_val", "bool": "bool_val",
                 "float16": "half_val", "string": "string_val"}


def constant_value(tensor):
    """The NumPy value of ``tensor`` if known at construction time, else None."""
    op = tensor.op
    kind = op.type
    if kind == "Const":
        return op.get_attr("value")
    if kind == "Shape":
        shape = op.inputs[0].shape
        if shape.is_fully_defined():
            return np.array(shape.as_list(), dtype=tensor.dtype.as_numpy_dtype)
        return None
    if kind == "Size":
        n = op.inputs[0].shape.num_elements()
        return None if n is None else np.array(n, dtype=tensor.dtype.as_numpy_dtype)
    if kind == "Rank":
        rank = op.inputs[0].shape.ndims
        return None if rank is None else np.array(rank, dtype=np.int32)
    if kind in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if kind == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(tensor.dtype.as_numpy_dtype)
    if kind == "Pack":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.stack(values, axis=op.get_attr("axis"))
    if kind == "ConcatV2":
        values = [constant_value(t) for t in op.inputs]
        if any(v is None for v in values):
            return None
        return np.concatenate(values[:-1], axis=int(values[-1]))
    if kind == "Reshape":
        value, shape = (constant_value(t) for t in op.inputs)
        return None if value is None or shape is None else np.reshape(value, shape)
    if kind == "InvertPermutation":  # the gradient of a Transpose by a constant perm
        perm = constant_value(op.inputs[0])
        return None if perm is None else np.argsort(perm).astype(perm.dtype)
    if kind == "Fill":
        dims, value = (constant_value(t) for t in op.inputs)
        if dims is None or value is None:
            return None
        return np.full(tuple(dims), value, dtype=tensor.dtype.as_numpy_dtype)
    return None


def constant_value_as_shape(tensor):
    """A TensorShape from a 1-D shape tensor, with unknown entries as None.

    Handles ``Pack`` of partly known scalars and ``-1`` placeholders, as TF
    does for ``tf.reshape(x, tf.stack([n, -1]))``.
    """
    from minitf.framework.tensor_shape import TensorShape, unknown_shape
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in value.reshape(-1)])
    if tensor.op.type == "Pack":
        dims = []
        for t in tensor.op.inputs:
            v = constant_value(t)
            dims.append(None if v is None or int(v) < 0 else int(v))
        return TensorShape(dims)
    if tensor.op.type == "Shape":
        return tensor.op.inputs[0].shape
    if tensor.op.type == "ConcatV2":
        shape = TensorShape([])
        for t in tensor.op.inputs[:-1]:
            shape = shape.concatenate(constant_value_as_shape(t))
        return shape
    if tensor.op.type == "StridedSlice":
        return _strided_slice_as_shape(tensor)
    rank = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return unknown_shape(rank)


def _strided_slice_as_shape(tensor):
    """``shape_tensor[begin:end:stride]`` as a partial shape (``tf.shape(x)[1:]``).

    Only a plain slice of a 1-D shape tensor is understood, as in TF.
    """
    from minitf.framework.tensor_shape import TensorShape, unknown_shape
    op = tensor.op
    bounds = [constant_value(t) for t in op.inputs[1:]]
    masks = {name: op.get_attr(name) for name in ("begin_mask", "end_mask", "ellipsis_mask",
                                                  "new_axis_mask", "shrink_axis_mask")}
    simple = (masks["begin_mask"] in (0, 1) and masks["end_mask"] in (0, 1)
              and not masks["ellipsis_mask"] and not masks["new_axis_mask"]
              and not masks["shrink_axis_mask"])
    if not simple or any(b is None or b.shape != (1,) for b in bounds):
        rank = tensor.shape[0].value if tensor.shape.ndims == 1 else None
        return unknown_shape(rank)
    begin, end, stride = (int(b[0]) for b in bounds)
    begin = None if masks["begin_mask"] else begin
    end = None if masks["end_mask"] else end
    return TensorShape(constant_value_as_shape(op.inputs[0])[begin:end:stride])


def make_tensor_proto(values, dtype=None, shape=None):
    """``values`` as TF's ``TensorProto`` (``tf.make_tensor_proto``).

    Example:
        >>> make_tensor_proto([1.0, 2.0]).tensor_content
        b'\\x00\\x00\\x80?\\x00\\x00\\x00@'
        >>> make_tensor_proto(3).int_val
        [3]

    Args:
        values: an array, a nested list or a scalar.
        dtype: the tensor's DType (default: inferred from ``values``).
        shape: the tensor's shape (default: that of ``values``); a single
            value fills a tensor of any shape.

    Raises:
        TypeError: if ``values`` has a dtype minitf cannot store.
        ValueError: if ``values`` does not have ``shape``'s number of elements.
    """
    array = _as_array(values, None if dtype is None else dtypes.as_dtype(dtype))
    if shape is not None:
        size = int(np.prod(shape, dtype=np.int64))
        if array.size not in (1, size):
            raise ValueError("Expected %d values for a tensor of shape %s, got %d."
                             % (size, list(shape), array.size))
        array = np.broadcast_to(array.reshape(-1), (size,)).reshape(shape)
    dtype = dtypes.string if array.dtype.kind == "O" else dtypes.as_dtype(array.dtype)
    proto = protos.load("tensor_pb2").TensorProto(
        dtype=dtype.as_datatype_enum, tensor_shape=TensorShape(array.shape).as_proto())
    if dtype == dtypes.string:
        proto.string_val.extend(string_array(array).reshape(-1).tolist())
    elif array.size > 1 and dtype != dtypes.bool:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<")).tobytes()
    elif dtype == dtypes.float16:
        proto.half_val.extend(array.reshape(-1).view(np.uint16).tolist())  # the bit patterns
    else:
        getattr(proto, _VALUE_FIELDS[dtype.name]).extend(array.reshape(-1).tolist())
    return proto


def _as_array(values, dtype):
    if dtype == dtypes.string or (dtype is None and _holds_strings(values)):
        return string_array(values)
    array = np.asarray(values, dtype=None if dtype is None else dtype.as_numpy_dtype)
    if dtype is None and not isinstance(values, (np.ndarray, np.generic)):
        array = _python_default(array)
    if array.dtype.kind not in "biuf":
        raise TypeError("Cannot make a TensorProto of %r (NumPy dtype %s)." % (values, array.dtype))
    return array


def _python_default(array):
    """TF's types for Python numbers: float32, and int32 unless a value needs int64."""
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype == np.int64 and (array.size == 0 or (
            array.min() >= np.iinfo(np.int32).min and array.max() <= np.iinfo(np.int32).max)):
        return array.astype(np.int32)
    return array


def _holds_strings(values):
    return np.asarray(values).dtype.kind in "OSU"


def make_ndarray(tensor):
    """The NumPy array a ``TensorProto`` holds (``tf.make_ndarray``).

    Raises:
        TypeError: if the proto's dtype has no NumPy form in minitf.
    """
    dtype = dtypes.as_dtype(tensor.dtype).base_dtype
    shape = [d.size for d in tensor.tensor_shape.dim]
    size = int(np.prod(shape, dtype=np.int64))
    if tensor.tensor_content:
        little_endian = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        return np.frombuffer(tensor.tensor_content, dtype=little_endian) \
            .astype(dtype.as_numpy_dtype).reshape(shape)
    if dtype.name not in _VALUE_FIELDS:
        raise TypeError("Cannot make an ndarray of a TensorProto of dtype %s." % dtype.name)
    values = list(getattr(tensor, _VALUE_FIELDS[dtype.name]))
    if dtype == dtypes.string:
        flat = np.empty(len(values), dtype=object)
        flat[:] = values
    elif dtype == dtypes.float16:
        flat = np.array(values, dtype=np.uint16).view(np.float16)
    else:
        flat = np.array(values, dtype=dtype.as_numpy_dtype)
    if len(flat) < size:  # TF's short form: the last value (or zero) fills the rest
        fill = flat[-1] if len(flat) else (b"" if dtype == dtypes.string else 0)
        flat = np.concatenate([flat, np.full(size - len(flat), fill, dtype=flat.dtype)])
    return flat[:size].reshape(shape)


def string_array(value):
    """``value`` as a ``tf.string`` array: an object array whose items are ``bytes``.

    TF's string tensors hold bytes, so ``sess.run(tf.constant("hi"))`` is
    ``b'hi'``; Python ``str`` items (and ``np.str_``) are UTF-8 encoded, as
    ``tf.compat.as_bytes`` does.
    """
    source = np.array(value, dtype=object)
    array = np.empty(source.shape, dtype=object)
    array.reshape(-1)[:] = [v.encode("utf-8") if isinstance(v, str) else v
                            for v in source.reshape(-1)]
    return array
