"""``tf.unique`` and ``tf.unique_with_counts``: the distinct values of a vector.

``y, idx = tf.unique(x)`` lists each distinct value of the vector ``x``
once, in the order of its first occurrence, and ``idx`` says for every
element of ``x`` where its value sits in ``y``, so ``x == tf.gather(y, idx)``::

    y, idx = tf.unique([1, 1, 4, 2, 4])
    # y = [1, 4, 2], idx = [0, 0, 1, 2, 1]

``unique_with_counts`` also counts each value's occurrences.  The length of
``y`` depends on the data, so it is unknown while the graph is built.
Neither op has a gradient.

Mirrors ``tf.unique``/``tf.unique_with_counts`` (``gen_array_ops.unique``,
``unique_with_counts``); the kernels are ``plugins/numpy_cpu/kernels/unique.py``.
"""

import collections

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable

_INDEX_TYPES = (dtypes.int32, dtypes.int64)


def _unique_shapes(op):
    x = op.inputs[0]
    if x.shape.ndims not in (None, 1):
        raise ValueError("Shape must be rank 1 but is rank %d" % x.shape.ndims)
    shapes = [TensorShape([None]), x.shape if x.shape.ndims == 1 else TensorShape([None])]
    return shapes + ([TensorShape([None])] if op.type == "UniqueWithCounts" else [])


def _unique_dtypes(op):
    out_idx = dtypes.as_dtype(op.get_attr("out_idx"))
    return [op.inputs[0].dtype.base_dtype, out_idx] + ([out_idx] if op.type == "UniqueWithCounts"
                                                       else [])


def _check_out_idx(out_idx):
    out_idx = dtypes.as_dtype(out_idx).base_dtype
    if out_idx not in _INDEX_TYPES:
        raise TypeError("out_idx must be int32 or int64, got %s" % out_idx.name)
    return out_idx


_unique = define_op(
    "Unique", inputs=("x",), outputs=("y", "idx"), attrs={"out_idx": dtypes.int32},
    shape_fn=_unique_shapes, dtype_fn=_unique_dtypes,
    doc="The distinct values of a vector in order of first occurrence, and each element's index.")
not_differentiable("Unique")

Unique = collections.namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of the vector ``x``, in order of first occurrence (``tf.unique``).

    Args:
        x: a 1-D tensor of any dtype.
        out_idx: the dtype of ``idx``, int32 or int64.
        name: the op name (default ``Unique``).

    Returns:
        ``Unique(y, idx)``: ``y`` the distinct values, ``idx`` (shaped like
        ``x``) the position of each element's value in ``y``.

    Raises:
        ValueError: if ``x`` is not a vector.

    Example:
        >>> y, idx = tf.unique([1, 1, 4, 2, 4])
        >>> sess.run([y, idx])
        [array([1, 4, 2], dtype=int32), array([0, 0, 1, 2, 1], dtype=int32)]
    """
    y, idx = apply_op(_unique, [x], attrs={"out_idx": _check_out_idx(out_idx)},
                      name=name or "Unique")
    return Unique(y, idx)


_unique_with_counts = define_op(
    "UniqueWithCounts", inputs=("x",), outputs=("y", "idx", "count"),
    attrs={"out_idx": dtypes.int32}, shape_fn=_unique_shapes, dtype_fn=_unique_dtypes,
    doc="Unique, and how often each distinct value occurs.")
not_differentiable("UniqueWithCounts")

UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """:func:`unique`, and how often each value occurs (``tf.unique_with_counts``).

    ``count[i]`` is how many elements of ``x`` equal ``y[i]``.

    Returns:
        ``UniqueWithCounts(y, idx, count)``; ``count`` has the dtype ``out_idx``.
    """
    y, idx, count = apply_op(_unique_with_counts, [x], attrs={"out_idx": _check_out_idx(out_idx)},
                             name=name or "UniqueWithCounts")
    return UniqueWithCounts(y, idx, count)


__all__ = ["unique", "unique_with_counts"]
