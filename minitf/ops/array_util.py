"""What the array op modules share: dtype and shape checks with TF's messages,
and the name scope of wrappers that build several ops.

The array ops are split by what they do to a tensor:

* :mod:`~minitf.ops.array_ops` — feeding and passing values through, shapes,
  reshaping, and tensors filled with one value (``zeros``, ``ones``, ``fill``);
* :mod:`~minitf.ops.transpose_ops` — permuting and reversing dimensions;
* :mod:`~minitf.ops.joining_ops` — ``stack``/``unstack``, ``concat``/``split``,
  and the *autopacking* of lists holding tensors;
* :mod:`~minitf.ops.slicing_ops` — ``tf.slice``, ``tf.strided_slice`` and
  ``tensor[...]``;
* :mod:`~minitf.ops.padding_ops` — ``tf.pad`` (and its mirror modes) and ``tf.tile``;
* :mod:`~minitf.ops.gather_ops` — ``tf.gather``, its scatter-add inverse
  ``tf.unsorted_segment_sum``, and ``tf.one_hot``.

Each module declares its ops next to their wrappers and gradients; the small
helpers they all need live here, so that no module imports another's private
names.
"""

import contextlib

import numpy as np

from minitf.framework import dtypes
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_shape import as_shape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops.op_def_library import graph_of

INDEX_TYPES = (dtypes.int32, dtypes.int64)
"""The dtypes of inputs that hold indices, sizes or axes."""


# ---- dtype and shape functions -------------------------------------------------------
def check_dtype(op, position, param, allowed=INDEX_TYPES):
    """TF's TypeError when input ``position`` (parameter ``param``) is not of ``allowed``."""
    dtype = op.inputs[position].dtype.base_dtype
    if dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s" % (param, dtype.name, ", ".join(d.name for d in allowed)))


def like_input(position, index_inputs=None):
    """A ``dtype_fn``: every output is typed like input ``position``.

    Args:
        position: the input whose dtype the outputs take.
        index_inputs: ``{position: parameter name}`` of inputs that hold indices
            or sizes and so must be int32 or int64 (``Reshape``'s ``shape``).
    """
    def dtype_fn(op):
        for i, param in (index_inputs or {}).items():
            check_dtype(op, i, param)
        return [op.inputs[position].dtype.base_dtype] * op.op_def.output_count(op.attrs)
    return dtype_fn


def shape_string(dims):
    """``[2,?]``: a shape as TF's error messages print it."""
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


def with_rank(shape, rank):
    """``shape`` with exactly ``rank`` dimensions (unknown dims if its rank is unknown).

    Raises:
        ValueError: TF's "Shape must be rank 1 but is rank 2".
    """
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return as_shape(shape) if shape.ndims is not None else unknown_shape(rank)


def canonical_axis(axis, rank, message):
    """``axis`` in ``[-rank, rank)`` as a non-negative index; else ``ValueError(message)``."""
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(message)
    return axis % rank


def scalar_value(tensor):
    """The Python int value of a scalar (or one-element) tensor, or None when unknown."""
    value = constant_value(tensor)
    return None if value is None else int(np.asarray(value).item())


def merged_shape(shapes):
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
                        "are %s and %s." % (i, a, b, shape_string(merged.as_list()),
                                            shape_string(shape.as_list())))
        merged = merged.merge_with(shape)
    return merged


# ---- building ops from wrappers ------------------------------------------------------
def is_tensor_like(value):
    """True for Tensors and for objects that convert to one by reading (Variables)."""
    return isinstance(value, Tensor) or (
        hasattr(value, "_as_graph_element") and hasattr(value, "dtype"))


@contextlib.contextmanager
def op_scope(name, values):
    """TF's ``ops.name_scope(name, default_name, values)``: enters the graph of
    ``values`` and a unique name scope; yields the scope (``"zeros/"``).

    A wrapper that builds several ops, or that may return a ``Const`` instead of
    its own op, opens one; passing the scope as ``name`` then names the final op
    after it (``zeros``), and the helper ops inside it (``zeros/Const``).
    """
    graph = graph_of(values)
    with graph.as_default(), graph.name_scope(name) as scope:
        yield scope


def output_list(result):
    """The outputs of an op with a dynamic output count, always as a list
    (empty when the op has none: ``tf.unstack`` of a length-0 dimension)."""
    if isinstance(result, Operation):
        return list(result.outputs)
    return result if isinstance(result, list) else [result]
