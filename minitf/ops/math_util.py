"""What the math op modules share: composite-op scopes, operand conversion,
TF1's deprecated argument names, and shape checks with TF's error messages.

The math ops are split by family — arithmetic (:mod:`~minitf.ops.math_ops`),
functions of one tensor (:mod:`~minitf.ops.unary_ops`), comparisons and logic
(:mod:`~minitf.ops.comparison_ops`), choosing by a condition
(:mod:`~minitf.ops.select_ops`), reductions (:mod:`~minitf.ops.reduction_ops`)
and matrices (:mod:`~minitf.ops.linalg_ops`).  The small helpers they all need
live here, so that no family imports another one's private names.
"""

import contextlib

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import unknown_shape
from minitf.ops.op_def_library import graph_of

SIGNED = dtypes.FLOATING + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
REAL_INDEX = (dtypes.int32, dtypes.int64)


# ---- building composite ops ------------------------------------------------------------
@contextlib.contextmanager
def op_scope(name, default_name, values):
    """Opens the name scope of a composite op in the graph of ``values``.

    Ops created inside are named ``scope/Op``; the composite's last op is
    given the scope's own name, so ``truediv(x, y)`` yields ``truediv/Cast``
    and an op called ``truediv`` (TF's ``ops.name_scope(name, default, values)``).
    """
    graph = graph_of(values)
    with graph.as_default(), graph.name_scope(name or default_name) as scope:
        yield scope


def tensor_dtype(value):
    """The base dtype of a Tensor or Variable, None for Python and NumPy values."""
    if hasattr(value, "_as_graph_element") and hasattr(value, "dtype"):
        return value.dtype.base_dtype
    return None


def convert_operands(x, y, names=("x", "y")):
    """Converts the operands of a composite binary op as ``apply_op`` converts
    the inputs of one op: a Python value adopts the Tensor operand's dtype."""
    dtype = tensor_dtype(x) or tensor_dtype(y)
    return (convert_to_tensor(x, name=names[0], preferred_dtype=dtype),
            convert_to_tensor(y, name=names[1], preferred_dtype=dtype))


def deprecated_argument_lookup(new_name, new_value, old_name, old_value):
    """TF1 kept old argument names (``reduction_indices``, ``keep_dims``,
    ``dimension``) beside the new ones; at most one of each pair may be given."""
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'." % (old_name, new_name))
    return old_value


# ---- dtype functions ----------------------------------------------------------------------
def expect_dtype(op, index, allowed):
    """Rejects input ``index`` of ``op`` unless its dtype is in ``allowed``.

    Used by dtype functions for the inputs ``type_constraint`` does not cover
    (``Select``'s condition, a reduction's axes).

    Raises:
        TypeError: with TF's message.
    """
    dtype = op.inputs[index].dtype.base_dtype
    if dtype not in allowed:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: %s (op '%s' of type %s)"
                        % (op.op_def.inputs[index], dtype.name,
                           ", ".join(d.name for d in allowed), op.name, op.type))


def bool_output(op):
    """Comparisons and predicates output ``bool`` whatever their input dtype."""
    return [dtypes.bool]


# ---- shape checks with TF's messages ---------------------------------------------------
def dims_text(shape):
    return "[%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())


def with_rank(shape, rank):
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, shape.ndims))
    return shape if shape.ndims is not None else unknown_shape(rank)


def with_rank_at_least(shape, rank):
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError("Shape must be at least rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def with_rank_at_most(shape, rank):
    if shape.ndims is not None and shape.ndims > rank:
        raise ValueError("Shape must be at most rank %d but is rank %d" % (rank, shape.ndims))
    return shape


def merge_dims(a, b):
    """The more specific of two dimensions (ints or None) that must be equal."""
    if a is not None and b is not None and a != b:
        raise ValueError("Dimensions must be equal, but are %d and %d" % (a, b))
    return a if a is not None else b


def merge_shapes(a, b):
    """The merge of two shapes that must be equal (``Select``'s ``t`` and ``e``)."""
    if a.ndims is not None and b.ndims is not None:
        if a.ndims != b.ndims:
            raise ValueError("Shapes must be equal rank, but are %d and %d" % (a.ndims, b.ndims))
        for i, (x, y) in enumerate(zip(a.as_list(), b.as_list())):
            if x is not None and y is not None and x != y:
                raise ValueError("Dimension %d in both shapes must be equal, but are %d and %d. "
                                 "Shapes are %s and %s." % (i, x, y, dims_text(a), dims_text(b)))
    return a.merge_with(b)
