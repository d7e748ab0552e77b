"""Shape functions shared by many ops.

A shape function takes the :class:`~minitf.framework.operation.Operation` being
built and returns the static shapes of its outputs; raising ``ValueError``
rejects the graph at construction, as TF's C++ shape inference does.
"""

from minitf.framework.tensor_shape import TensorShape, unknown_shape


def unchanged_shape(op):
    """The output has the shape of the first input."""
    return [op.inputs[0].shape]


def scalar_shape(op):
    return [TensorShape([])]


def unknown_shapes(op):
    return [unknown_shape() for _ in op.outputs]


def broadcast_shapes(a, b):
    """The NumPy broadcast of two static shapes.

    Raises:
        ValueError: when known dimensions differ and neither is 1.
    """
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    a_dims, b_dims = a.as_list(), b.as_list()
    rank = max(len(a_dims), len(b_dims))
    a_dims = [1] * (rank - len(a_dims)) + a_dims
    b_dims = [1] * (rank - len(b_dims)) + b_dims
    out = []
    for x, y in zip(a_dims, b_dims):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError("Dimensions must be equal, but are %d and %d" % (x, y))
    return TensorShape(out)


def broadcast_binary_shape(op):
    """Elementwise binary ops: the broadcast of the two input shapes."""
    return [broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)]


def same_shape_n(op):
    """All inputs must have one shape (``AddN``); the output has it too."""
    shape = unknown_shape()
    for t in op.inputs:
        shape = shape.merge_with(t.shape)
    return [shape]


def merge_dims(a, b):
    """The merge of two dimensions, or TF's "Dimensions must be equal" ValueError."""
    if not a.is_compatible_with(b):
        raise ValueError("Dimensions must be equal, but are %d and %d" % (a.value, b.value))
    return a.merge_with(b)
