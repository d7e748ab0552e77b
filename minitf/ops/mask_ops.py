"""Masks: ``tf.sequence_mask`` builds one, ``tf.boolean_mask`` applies one.

Both are composites of existing ops, so their gradients come for free:

* ``sequence_mask(lengths, maxlen)[i, j] = j < lengths[i]`` — the padding
  mask of a batch of variable-length sequences: ``range(maxlen) <
  expand_dims(lengths, -1)``;
* ``boolean_mask(tensor, mask)`` keeps the entries (rows, for a mask of
  lower rank) where ``mask`` is true: the first ``mask.ndim`` dimensions are
  flattened into one, and ``gather`` takes the rows ``where(mask)`` names.

Mirrors ``tf.sequence_mask`` and ``tf.boolean_mask`` in TF's ``array_ops.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (
    array_ops, comparison_ops, gather_ops, joining_ops, math_ops, reduction_ops, select_ops,
    unary_ops)
from minitf.ops.math_util import op_scope


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """The mask of the first ``lengths[i]`` positions of each row (``tf.sequence_mask``).

    Args:
        lengths: int tensor of any shape ``S``.
        maxlen: the mask's last dimension (default: ``max(lengths)``).
        dtype: the mask's dtype (default bool).
        name: the name scope (default ``SequenceMask``).

    Returns:
        A tensor of shape ``S + [maxlen]``.

    Example:
        >>> sess.run(tf.sequence_mask([1, 3, 2], 5))
        array([[ True, False, False, False, False],
               [ True,  True,  True, False, False],
               [ True,  True, False, False, False]])
    """
    with op_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = reduction_ops.reduce_max(lengths)
        maxlen = unary_ops.cast(convert_to_tensor(maxlen, name="maxlen"), lengths.dtype)
        row = math_ops.range(0, maxlen, 1)
        mask = comparison_ops.less(row, array_ops.expand_dims(lengths, -1))
        return mask if dtype == dtypes.bool else unary_ops.cast(mask, dtype)


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries of ``tensor`` where ``mask`` is true (``tf.boolean_mask``).

    Args:
        tensor: an N-D tensor.
        mask: a K-D bool tensor, K <= N, whose shape matches the first K
            dimensions of ``tensor`` (from ``axis`` on, default 0).
        name: the name scope.
        axis: the first dimension ``mask`` applies to.

    Returns:
        ``tensor`` with those K dimensions replaced by one, as long as
        ``mask`` has true entries.

    Raises:
        ValueError: if ``mask``'s rank is unknown or 0, or its shape does not
            match ``tensor``'s.
    """
    with op_scope(name, "boolean_mask", [tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        k = mask.shape.ndims
        if k is None or k == 0:
            raise ValueError("mask dimensions must be known and at least 1, got %s" % mask.shape)
        axis = 0 if axis is None else axis
        known = tensor.shape.ndims is not None
        if known:
            tensor.shape[axis:axis + k].assert_is_compatible_with(mask.shape)
        shape = array_ops.shape(tensor)
        flat = array_ops.reshape(tensor, joining_ops.concat(
            [shape[:axis], [-1], shape[axis + k:]], 0))
        indices = array_ops.squeeze(select_ops.where(array_ops.reshape(mask, [-1])), axis=[1])
        return gather_ops.gather(flat, indices, axis=axis)


__all__ = ["boolean_mask", "sequence_mask"]
