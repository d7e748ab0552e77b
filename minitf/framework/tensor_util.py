"""Static values of tensors: ``make_ndarray`` and ``constant_value``.

Shape functions sometimes need a *value*, not just a shape: ``tf.reshape(x,
[2, -1])`` can only infer its output shape because ``[2, -1]`` is a constant.
``constant_value`` evaluates the small set of ops whose value is known while
the graph is built (constants, ``Shape`` of a fully defined tensor, ``Pack`` of
constants, ...) and returns None otherwise.

Mirrors ``tensorflow/python/framework/tensor_util.py``.
"""

import numpy as np


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


def make_ndarray(value):
    """Returns ``value`` as a NumPy array (TF's ``tf.make_ndarray`` over a proto)."""
    return np.asarray(value)


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
