"""CPU kernels of the string ops: Python's ``bytes`` and ``re``, element by element.

A string tensor is a NumPy object array of ``bytes``; the kernels loop over
its flattened elements (strings have no vectorized arithmetic) and build an
object array of the same shape.  Errors carry TF's messages.

Mirrors ``tensorflow/core/kernels/string_join_op.cc``, ``string_split_op.cc``,
``string_to_number_op.cc``, ``as_string_op.cc``, ``substr_op.cc`` and
``regex_replace_op.cc``.
"""

import re

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel

_INTEGER = re.compile(rb"\s*[+-]?\d+\s*\Z")
_FLOAT = re.compile(rb"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|inf|infinity|nan)"
                    rb"\s*\Z", re.IGNORECASE)


def _map(fn, array, dtype=object):
    """``fn`` applied to every element of ``array``, in an array of its shape."""
    array = np.asarray(array, dtype=object)
    out = np.empty(array.shape, dtype=dtype)
    flat_out = out.reshape(-1)
    for i, value in enumerate(array.reshape(-1)):
        flat_out[i] = fn(value)
    return out if out.shape else out[()]


def _as_bytes(value):
    """One string element as ``bytes`` (scalar inputs may arrive as 0-d arrays)."""
    if isinstance(value, np.ndarray):
        value = value.item()
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


# ---- join -------------------------------------------------------------------------------------
@kernel("StringJoin")
def string_join(ctx, *inputs, separator):
    shapes = {np.shape(x) for x in inputs if np.ndim(x) > 0}
    if len(shapes) > 1:
        raise ctx.invalid_argument("Input shapes do not match: %s"
                                   % " vs. ".join(str(list(s)) for s in sorted(shapes)))
    shape = shapes.pop() if shapes else ()
    columns = [np.broadcast_to(np.asarray(x, dtype=object), shape).reshape(-1) for x in inputs]
    sep = _as_bytes(separator)
    joined = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
    for i in range(joined.size):
        joined[i] = sep.join(_as_bytes(column[i]) for column in columns)
    joined = joined.reshape(shape)
    return joined if shape else joined[()]


@kernel("ReduceJoin")
def reduce_join(ctx, inputs, reduction_indices, keep_dims, separator):
    """Joins along the axes in the order given, the first varying fastest (TF's order)."""
    inputs = np.asarray(inputs, dtype=object)
    rank = inputs.ndim
    axes = [int(a) for a in np.reshape(reduction_indices, -1)]
    if any(not -rank <= a < rank for a in axes):
        raise ctx.invalid_argument("Invalid reduction dimension %s for input with %d dimensions"
                                   % (axes, rank))
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise ctx.invalid_argument("Duplicate reduction dimension in %s" % axes)
    kept = [a for a in range(rank) if a not in axes]
    moved = np.transpose(inputs, kept + axes[::-1])
    rows = moved.reshape([inputs.shape[a] for a in kept] + [-1])
    sep = _as_bytes(separator)
    joined = np.empty(rows.shape[:-1], dtype=object)
    for index in np.ndindex(joined.shape):
        joined[index] = sep.join(_as_bytes(v) for v in rows[index])
    if keep_dims:
        joined = joined.reshape([1 if a in axes else n for a, n in enumerate(inputs.shape)])
    return joined if joined.shape else joined[()]


# ---- split ------------------------------------------------------------------------------------
def _sparse(ctx, rows):
    """The ``(indices, values, shape)`` of a 2-D sparse tensor whose row ``i`` is ``rows[i]``."""
    indices = [[i, j] for i, row in enumerate(rows) for j in range(len(row))]
    values = np.empty(len(indices), dtype=object)
    values[:] = [token for row in rows for token in row]
    width = max((len(row) for row in rows), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), values,
            np.array([len(rows), width], dtype=np.int64))


def _check_vector(ctx, source):
    if np.ndim(source) != 1:
        raise ctx.invalid_argument("input must be a vector, got shape: %s" % list(np.shape(source)))


@kernel("StringSplit")
def string_split(ctx, source, delimiter, skip_empty):
    """Every character of ``delimiter`` splits; ``b""`` splits into single bytes."""
    _check_vector(ctx, source)
    delimiter = _as_bytes(delimiter)
    rows = []
    for text in np.asarray(source, dtype=object):
        text = _as_bytes(text)
        if not delimiter:
            tokens = [text[i:i + 1] for i in range(len(text))]
        else:
            tokens = re.split(b"[" + re.escape(delimiter) + b"]", text)
        rows.append([t for t in tokens if t or not skip_empty] if text else [])
    return _sparse(ctx, rows)


@kernel("StringSplitV2")
def string_split_v2(ctx, source, sep, maxsplit):
    """Python's ``bytes.split(sep or None, maxsplit)``, row by row."""
    _check_vector(ctx, source)
    sep = _as_bytes(sep) or None
    rows = [_as_bytes(text).split(sep, maxsplit) if _as_bytes(text) else []
            for text in np.asarray(source, dtype=object)]
    return _sparse(ctx, rows)


# ---- conversions ------------------------------------------------------------------------------
@kernel("StringToNumber")
def string_to_number(ctx, string_tensor, out_type):
    dtype = np.dtype(ctx.output_dtypes[0])
    is_integer = dtype.kind == "i"
    pattern = _INTEGER if is_integer else _FLOAT

    def parse(value):
        text = _as_bytes(value)
        if pattern.match(text):
            number = int(text) if is_integer else float(text)
            if not is_integer or np.iinfo(dtype).min <= number <= np.iinfo(dtype).max:
                return number
        raise ctx.invalid_argument("StringToNumberOp could not correctly convert string: %s"
                                   % text.decode("utf-8", "replace"))
    result = _map(parse, string_tensor, dtype=dtype)
    return np.asarray(result, dtype=dtype)


@kernel("AsString")
def as_string(ctx, input, precision, scientific, shortest, width, fill):  # noqa: A002
    """C's ``printf`` with TF's format: ``%<fill><width>.<precision>f`` (or ``e``, ``g``, ``d``)."""
    array = np.asarray(input)
    if array.dtype == np.bool_:
        return _map(lambda v: b"true" if v else b"false", array)
    spec = "%" + fill + (str(width) if width > -1 else "")
    if array.dtype.kind == "f":
        spec += ("." + str(precision) if precision > -1 else "")
        spec += "e" if scientific else "g" if shortest else "f"
        return _map(lambda v: (spec % float(v)).encode("ascii"), array)
    return _map(lambda v: ((spec + "d") % int(v)).encode("ascii"), array)


# ---- length, substrings, case, whitespace -----------------------------------------------------
def _units(text, unit):
    """``text`` as a sequence of its units: bytes, or UTF-8 characters (as str)."""
    return text if unit == "BYTE" else text.decode("utf-8", "surrogateescape")


@kernel("StringLength")
def string_length(ctx, input, unit):  # noqa: A002
    return np.asarray(_map(lambda v: len(_units(_as_bytes(v), unit)), input, dtype=np.int32),
                      dtype=np.int32)


@kernel("Substr")
def substr(ctx, input, pos, length, unit):  # noqa: A002 - TF's input names (len: length)
    if np.shape(pos) != np.shape(length):
        raise ctx.invalid_argument("pos and len should have the same shape, got: %s vs. %s"
                                   % (list(np.shape(pos)), list(np.shape(length))))
    try:
        source, pos, length = np.broadcast_arrays(np.asarray(input, dtype=object), pos, length)
    except ValueError:
        raise ctx.invalid_argument("Incompatible shapes: %s vs. %s"
                                   % (list(np.shape(input)), list(np.shape(pos)))) from None
    out = np.empty(source.shape, dtype=object)
    for flat_index, index in enumerate(np.ndindex(source.shape)):
        text = _as_bytes(source[index])
        units = _units(text, unit)
        start, size = int(pos[index]), int(length[index])
        if not -len(units) <= start <= len(units):
            raise ctx.invalid_argument("pos %d out of range for string b'%s' at index %d"
                                       % (start, text.decode("utf-8", "replace"), flat_index))
        start = start + len(units) if start < 0 else start  # negative: from the end
        piece = units[start:] if size < 0 else units[start:start + size]
        out[index] = piece if unit == "BYTE" else piece.encode("utf-8", "surrogateescape")
    return out if out.shape else out[()]


@kernel("StringLower")
def string_lower(ctx, input):  # noqa: A002
    return _map(lambda v: _as_bytes(v).lower(), input)


@kernel("StringUpper")
def string_upper(ctx, input):  # noqa: A002
    return _map(lambda v: _as_bytes(v).upper(), input)


@kernel("StringStrip")
def string_strip(ctx, input):  # noqa: A002
    return _map(lambda v: _as_bytes(v).strip(), input)


# ---- regular expressions ----------------------------------------------------------------------
def _compile(ctx, pattern):
    text = _as_bytes(pattern).decode("utf-8", "surrogateescape")
    try:
        return re.compile(text)
    except re.error as error:
        raise ctx.invalid_argument("Invalid pattern: %s, error: %s" % (text, error)) from None


def _expander(ctx, rewrite, groups):
    """A function of a match giving RE2's rewrite.

    In ``rewrite``, ``\\0``-``\\9`` are the groups and ``\\\\`` a backslash.
    """
    rewrite = _as_bytes(rewrite).decode("utf-8", "surrogateescape")
    parts, i = [], 0  # literal strings and group numbers, in order
    while i < len(rewrite):
        char = rewrite[i]
        if char == "\\" and i + 1 < len(rewrite) and (rewrite[i + 1].isdigit()
                                                       or rewrite[i + 1] == "\\"):
            following = rewrite[i + 1]
            if following == "\\":
                parts.append("\\")
            elif int(following) > groups:
                raise ctx.invalid_argument("Invalid rewrite pattern: %s" % rewrite)
            else:
                parts.append(int(following))
            i += 2
        else:
            parts.append(char)
            i += 1

    def expand(match):
        return "".join(match.group(p) or "" if isinstance(p, int) else p for p in parts)
    return expand


def _replace(ctx, input, pattern, rewrite, replace_global):  # noqa: A002
    regex = _compile(ctx, pattern)
    expand = _expander(ctx, rewrite, regex.groups)
    count = 0 if replace_global else 1

    def replace(value):
        text = _as_bytes(value).decode("utf-8", "surrogateescape")
        return regex.sub(expand, text, count=count).encode("utf-8", "surrogateescape")
    return _map(replace, input)


@kernel("RegexReplace")
def regex_replace(ctx, input, pattern, rewrite, replace_global):  # noqa: A002
    return _replace(ctx, input, pattern, rewrite, replace_global)


@kernel("StaticRegexReplace")
def static_regex_replace(ctx, input, pattern, rewrite, replace_global):  # noqa: A002
    return _replace(ctx, input, pattern, rewrite, replace_global)
