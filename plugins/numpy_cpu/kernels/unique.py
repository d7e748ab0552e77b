"""CPU kernels of ``Unique`` and ``UniqueWithCounts``.

``np.unique`` sorts; TF lists values in order of first occurrence.  The
kernel sorts the distinct values by where each first occurs and renumbers
the inverse indices to match.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel


def _unique(ctx, x):
    """``(y, idx, count)`` in order of first occurrence."""
    if np.ndim(x) != 1:
        raise ctx.invalid_argument("unique expects a 1D vector.")
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.argsort(first, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)  # sorted rank -> rank by first occurrence
    index_dtype = ctx.output_dtypes[1]
    return (values[order], position[inverse.reshape(-1)].astype(index_dtype),
            counts[order].astype(index_dtype))


@kernel("Unique")
def unique(ctx, x, out_idx):
    y, idx, _ = _unique(ctx, x)
    return y, idx


@kernel("UniqueWithCounts")
def unique_with_counts(ctx, x, out_idx):
    return _unique(ctx, x)
