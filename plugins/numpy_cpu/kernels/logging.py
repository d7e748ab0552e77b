"""CPU kernels of ``Print``, ``Assert`` and ``CheckNumerics``, and TF's way of
summarizing a tensor."""

import sys
import weakref

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel

_PRINT_COUNTS = weakref.WeakKeyDictionary()  # Print op -> times printed (for first_n)


def _element(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (np.floating, float)):
        return "%.6g" % value if np.float32("%.6g" % value) == value else "%.9g" % value
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    return str(value)


def summarize_value(value, max_entries):
    """TF's ``Tensor::SummarizeValue``: the first ``max_entries`` values, nested in
    brackets per dimension, ``...`` where entries were left out."""
    array = np.asarray(value)
    flat = array.reshape(-1)
    limit = flat.size if max_entries < 0 else min(max_entries, flat.size)
    if array.ndim <= 1:
        text = " ".join(_element(v) for v in flat[:limit])
    else:
        text = _summarize_dim(array.shape, 0, flat, limit, [0])
    return text + ("..." if limit < flat.size else "")


def _summarize_dim(shape, dim, flat, limit, index):
    """One dimension of ``summarize_value`` (TF's ``PrintOneDim``).

    ``index[0]`` is the next entry to print, shared by the recursive calls.
    """
    text = ""
    if index[0] >= limit:
        return text
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if index[0] >= limit:
                return text + ("..." if dim != 0 else "")
            text += (" " if i else "") + _element(flat[index[0]])
            index[0] += 1
        return text
    for _ in range(shape[dim]):
        opened = index[0] < limit
        if opened:
            text += "["
        text += _summarize_dim(shape, dim + 1, flat, limit, index)
        if opened:
            text += "]"
    return text


@kernel("Print")
def print_(ctx, input_, *data, message, first_n, summarize):
    count = _PRINT_COUNTS.get(ctx.op, 0)
    if first_n < 0 or count < first_n:
        _PRINT_COUNTS[ctx.op] = count + 1
        sys.stderr.write(message + "".join("[%s]" % summarize_value(v, summarize)
                                           for v in data) + "\n")
    return input_


@kernel("Assert")
def assert_(ctx, condition, *data, summarize):
    if not np.all(condition):
        raise ctx.invalid_argument("assertion failed: " + " ".join(
            "[%s]" % summarize_value(v, summarize) for v in data))


@kernel("CheckNumerics")
def check_numerics(ctx, tensor, message):
    """Passes ``tensor`` through, or raises TF's error for a NaN or an Inf in it."""
    has_nan, has_inf = bool(np.isnan(tensor).any()), bool(np.isinf(tensor).any())
    if has_nan or has_inf:
        found = "Inf and NaN" if has_nan and has_inf else "NaN" if has_nan else "Inf"
        raise ctx.invalid_argument("%s : Tensor had %s values" % (message, found))
    return tensor
