"""CPU kernels of ``ScatterAdd``, ``ScatterSub`` and ``ScatterUpdate``: row updates
of a variable through its reference.

The new value is computed into a copy, as ``AssignAdd``'s kernel does, so an
array the user fetched earlier never changes under their feet.  ``np.add.at``
(unlike ``value[indices] += updates``) adds every update of a row named twice.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _checked_copy(ctx, ref, indices):
    value = np.array(ref.get(), copy=True)
    bad = np.argwhere((indices < 0) | (indices >= value.shape[0]))
    if len(bad):
        position = tuple(int(i) for i in bad[0])
        raise ctx.invalid_argument("indices[%s] = %d is not in [0, %d)"
                                   % (",".join(map(str, position)), indices[position],
                                      value.shape[0]))
    return value


def _rows_of(value, indices, updates):
    """``updates`` broadcast to the shape of the rows it writes."""
    return np.broadcast_to(updates, np.shape(indices) + value.shape[1:])


@kernel("ScatterAdd")
def scatter_add(ctx, ref, indices, updates, use_locking):
    value = _checked_copy(ctx, ref, indices)
    np.add.at(value, indices, _rows_of(value, indices, updates))
    ref.value = value
    return ref


@kernel("ScatterSub")
def scatter_sub(ctx, ref, indices, updates, use_locking):
    value = _checked_copy(ctx, ref, indices)
    np.subtract.at(value, indices, _rows_of(value, indices, updates))
    ref.value = value
    return ref


@kernel("ScatterUpdate")
def scatter_update(ctx, ref, indices, updates, use_locking):
    value = _checked_copy(ctx, ref, indices)
    value[indices] = _rows_of(value, indices, updates)
    ref.value = value
    return ref
