"""Row updates of a variable: ``tf.scatter_add``, ``tf.scatter_sub``, ``tf.scatter_update``.

``scatter_add(ref, indices, updates)`` adds ``updates[i]`` to row
``indices[i]`` of the variable ``ref`` and leaves every other row alone::

    ref = [[0, 0], [0, 0], [0, 0]]
    scatter_add(ref, [2, 0, 2], [[1, 1], [2, 2], [3, 3]])   # ref = [[2, 2], [0, 0], [4, 4]]

A row named twice receives both updates (``scatter_update`` keeps one of
them).  These are how an optimizer applies a sparse gradient without a
fused ``SparseApply*`` op: ``tf.train.GradientDescentOptimizer`` subtracts
``lr * grad.values`` at ``grad.indices`` (``ScatterSub``), and Adam adds its
scaled gradients into the rows of its moment slots (``ScatterAdd``).

Like ``Assign``, each op takes the variable's reference (input 0), writes
through it and outputs it.  ``indices`` may have any shape; ``updates`` has
the shape ``indices.shape + ref.shape[1:]``, or is a scalar used for every
element of the named rows.

Mirrors the scatter ops of ``tensorflow/python/ops/state_ops.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.array_util import check_dtype
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _scatter_shape(op):
    """The variable's shape; ``updates`` must be ``indices.shape + ref.shape[1:]``."""
    ref, indices, updates = (t.shape for t in op.inputs)
    if ref.ndims is not None and ref.ndims < 1:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if updates.ndims != 0 and indices.ndims is not None and ref.ndims is not None:
        expected = TensorShape(indices.as_list() + ref.as_list()[1:])
        if not updates.is_compatible_with(expected):
            raise ValueError("Shapes %s and %s are incompatible: updates must have the shape "
                             "indices.shape + ref.shape[1:]" % (updates, expected))
    return [ref]


def _scatter_dtypes(op):
    check_dtype(op, 1, "indices")
    return [op.inputs[0].dtype]


def _scatter_op(name, doc):
    op_def = define_op(
        name, inputs=("ref", "indices", "updates"), outputs=("output_ref",),
        attrs={"use_locking": False}, shape_fn=_scatter_shape, dtype_fn=_scatter_dtypes,
        type_constraint=dtypes.NUMERIC if name != "ScatterUpdate" else None,
        same_dtype_inputs=("ref", "updates"), stateful=True, ref_inputs=(0,), stacklevel=2,
        doc=doc)
    not_differentiable(name)
    return op_def


_scatter_add = _scatter_op("ScatterAdd", "ref[indices, ...] += updates; outputs the reference.")
_scatter_sub = _scatter_op("ScatterSub", "ref[indices, ...] -= updates; outputs the reference.")
_scatter_update = _scatter_op("ScatterUpdate",
                              "ref[indices, ...] = updates; outputs the reference.")


def _scatter(op_def, ref, indices, updates, use_locking, name):
    ref = ref._ref() if hasattr(ref, "_ref") else ref
    if not ref.dtype.is_ref:
        raise TypeError("'%s' needs a variable reference as its first input, got %r."
                        % (op_def.name, ref))
    return apply_op(op_def, [ref, indices, updates], attrs={"use_locking": bool(use_locking)},
                    name=name or op_def.name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    """Adds ``updates`` to the rows ``indices`` of the variable ``ref`` (``tf.scatter_add``).

    Returns:
        ``ref``'s reference, after the update.

    Raises:
        TypeError: if ``ref`` is not a variable, or ``indices`` not int32/int64.
        ValueError: if ``updates`` does not have the shape
            ``indices.shape + ref.shape[1:]`` (nor is a scalar).
        InvalidArgumentError: when running, for an index outside the rows.

    Example:
        >>> v = tf.Variable([[0.0, 0.0], [0.0, 0.0]])
        >>> sess.run(tf.scatter_add(v, [1, 1], [[1.0, 2.0], [3.0, 4.0]]))
        array([[0., 0.],
               [4., 6.]], dtype=float32)
    """
    return _scatter(_scatter_add, ref, indices, updates, use_locking, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    """Subtracts ``updates`` from the rows ``indices`` of ``ref`` (``tf.scatter_sub``).

    A row named twice has both updates subtracted; see :func:`scatter_add`.
    """
    return _scatter(_scatter_sub, ref, indices, updates, use_locking, name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    """Writes ``updates`` into the rows ``indices`` of ``ref`` (``tf.scatter_update``).

    For a row named twice one of its updates wins (the last, here; TF does
    not promise which); see :func:`scatter_add`.
    """
    return _scatter(_scatter_update, ref, indices, updates, use_locking, name)


__all__ = ["scatter_add", "scatter_sub", "scatter_update"]
