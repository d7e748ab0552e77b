"""String ops: ``tf.strings.join``, ``split``, ``to_number``, ``substr``, ``regex_replace`` ...

A ``tf.string`` tensor holds *bytes* (``b"cat"``), one byte string per
element, of any length; Python ``str`` values are encoded as UTF-8 when they
become constants.  These ops work element by element and, like TF's, count
in bytes unless told ``unit="UTF8_CHAR"``::

    words = tf.string_split(["the cat", "sat"])        # a SparseTensor
    tf.strings.join(["id", tf.as_string(7)], "-")      # b"id-7"
    tf.string_to_number(["1.5", "2"])                  # [1.5, 2.0] float32

Malformed values (a field that is not a number, a position outside a
string, a bad regular expression) are an ``InvalidArgumentError`` when the
op runs, with TF's messages.  None of these ops has a gradient.

Regular expressions use Python's ``re`` where TF uses RE2: the common syntax
is the same (RE2 lacks backreferences and lookaround, which ``re`` accepts).

Mirrors ``tensorflow/python/ops/string_ops.py`` and ``gen_string_ops``; the
kernels are ``plugins/numpy_cpu/kernels/strings.py``.
"""

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, scalar, unknown_shape
from minitf.ops import array_ops, math_ops
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable
from minitf.ops.reduction_ops import _reduction_shape  # a reduction's output shape

_UNITS = ("BYTE", "UTF8_CHAR")


def _check_unit(unit):
    if unit not in _UNITS:
        raise ValueError("unit must be one of %s, got %r" % (list(_UNITS), unit))
    return unit


def _strings(value, name):
    return convert_to_tensor(value, dtype=dtypes.string, name=name)


def _elementwise_shape(op):
    return [op.inputs[0].shape]


# ---- join -------------------------------------------------------------------------------------
def _join_shape(op):
    """Scalars broadcast; the other inputs must share one shape."""
    shape = scalar()
    for tensor in op.inputs:
        if tensor.shape.ndims != 0:
            shape = tensor.shape if shape.ndims == 0 else shape.merge_with(tensor.shape)
    return [shape]


_string_join = define_op(
    "StringJoin", inputs=("inputs*",), attrs={"separator": ""}, shape_fn=_join_shape,
    type_constraint=(dtypes.string,), doc="Joins strings elementwise, scalars broadcast.")
not_differentiable("StringJoin")


def string_join(inputs, separator="", name=None):
    """Joins the strings of ``inputs`` elementwise (``tf.string_join``, ``tf.strings.join``).

    Args:
        inputs: a list of string tensors of one shape; scalars broadcast.
        separator: put between the joined strings.
        name: the op name (default ``StringJoin``).

    Example:
        >>> sess.run(tf.strings.join(["a", ["b", "c"]], separator="-"))
        array([b'a-b', b'a-c'], dtype=object)
    """
    inputs = [_strings(value, "inputs_%d" % i) for i, value in enumerate(inputs)]
    return apply_op(_string_join, [inputs], attrs={"separator": separator},
                    name=name or "StringJoin")


_reduce_join = define_op(
    "ReduceJoin", inputs=("inputs", "reduction_indices"),
    attrs={"keep_dims": False, "separator": ""}, shape_fn=_reduction_shape,
    type_constraint=(dtypes.string,), doc="Joins the strings along the given axes.")
not_differentiable("ReduceJoin")


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins the strings of ``inputs`` along ``axis`` (``tf.reduce_join``).

    The axes are joined in the order given, the first varying fastest: for
    ``a = [["a", "b"], ["c", "d"]]``, ``reduce_join(a, [0, 1])`` is
    ``b"acbd"`` and ``reduce_join(a, [1, 0])`` (and ``reduce_join(a)``) ``b"abcd"``.

    Args:
        inputs: a string tensor.
        axis: the axes to join along (None: all of them).
        keep_dims, keepdims: keep the joined axes with length 1.
        separator: put between the joined strings.
        name: the name scope (default ``ReduceJoin``).
        reduction_indices: TF1's old name for ``axis``.
    """
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "ReduceJoin", [inputs, axis]) as scope:
        inputs = _strings(inputs, "inputs")
        if axis is None:  # every axis, the last first: row-major order
            rank = inputs.shape.ndims
            axis = (list(range(rank - 1, -1, -1)) if rank is not None
                    else math_ops.range(array_ops.rank(inputs) - 1, -1, -1))
        axis = convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        return apply_op(_reduce_join, [inputs, axis],
                        attrs={"keep_dims": keep, "separator": separator}, name=scope)


# ---- split ------------------------------------------------------------------------------------
def _split_shapes(op):
    if op.inputs[0].shape.ndims not in (None, 1):
        raise ValueError("Shape must be rank 1 but is rank %d (input)" % op.inputs[0].shape.ndims)
    if op.inputs[1].shape.ndims not in (None, 0):
        raise ValueError("Shape must be rank 0 but is rank %d (delimiter)"
                         % op.inputs[1].shape.ndims)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _split_dtypes(op):
    return [dtypes.int64, dtypes.string, dtypes.int64]


_string_split = define_op(
    "StringSplit", inputs=("input", "delimiter"), outputs=("indices", "values", "shape"),
    attrs={"skip_empty": True}, shape_fn=_split_shapes, dtype_fn=_split_dtypes,
    type_constraint=(dtypes.string,),
    doc="Splits strings at any of the delimiter's characters (a sparse result).")
not_differentiable("StringSplit")

_string_split_v2 = define_op(
    "StringSplitV2", inputs=("input", "sep"), outputs=("indices", "values", "shape"),
    attrs={"maxsplit": -1}, shape_fn=_split_shapes, dtype_fn=_split_dtypes,
    type_constraint=(dtypes.string,),
    doc="Splits strings at a separator, as Python's str.split (a sparse result).")
not_differentiable("StringSplitV2")


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor",
                 name=None):
    """Splits each string of the vector ``source`` into tokens (TF1's ``tf.string_split``).

    Every *character* of the delimiter (default ``" "``) splits; an empty
    delimiter splits into single bytes.  Token ``j`` of string ``i`` is the
    value at ``[i, j]`` of the resulting 2-D SparseTensor, whose dense shape
    is ``[len(source), most tokens in one string]``.

    Args:
        source: a 1-D string tensor.
        sep: the delimiter characters (a scalar string); ``delimiter`` is its old name.
        skip_empty: drop empty tokens (between two delimiters).
        result_type: "SparseTensor" (minitf has no RaggedTensor).
        name: the name scope (default ``StringSplit``).

    Returns:
        A SparseTensor of strings.

    Example:
        >>> sess.run(tf.string_split(["a b", "c"]))
        SparseTensorValue(indices=array([[0, 0], [0, 1], [1, 0]]),
                          values=array([b'a', b'b', b'c'], dtype=object), dense_shape=array([2, 2]))
    """
    _check_sparse_result(result_type)
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    delimiter = " " if sep is None and delimiter is None else (sep if sep is not None
                                                               else delimiter)
    with name_scope(name, "StringSplit", [source]):
        delimiter = _strings(delimiter, "delimiter")
        source = _strings(source, "source")
        return SparseTensor(*apply_op(_string_split, [source, delimiter],
                                      attrs={"skip_empty": bool(skip_empty)},
                                      name="StringSplit"))


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor",  # noqa: A002
          source=None, name=None):
    """Splits each string at ``sep`` (TF1's ``tf.strings.split``), as Python's ``str.split``.

    Unlike :func:`string_split`, a multi-character ``sep`` is one separator
    and empty tokens are kept; ``sep=None`` splits at runs of whitespace and
    drops empty tokens.

    Args:
        input: a scalar or 1-D string tensor (``source`` is its old name).
        sep: the separator (None: whitespace).
        maxsplit: split at most this many times (-1: no limit).
        result_type: "SparseTensor" (minitf has no RaggedTensor).
        name: the name scope (default ``StringSplit``).

    Returns:
        A 2-D SparseTensor of strings.
    """
    _check_sparse_result(result_type)
    input = source if input is None else input  # noqa: A001
    with name_scope(name, "StringSplit", [input]):
        input = _strings(input, "input")  # noqa: A001
        if input.shape.ndims == 0:
            input = array_ops.expand_dims(input, 0)  # noqa: A001
        sep = _strings("" if sep is None else sep, "sep")
        return SparseTensor(*apply_op(_string_split_v2, [input, sep],
                                      attrs={"maxsplit": int(maxsplit)}, name="StringSplitV2"))


def _check_sparse_result(result_type):
    if result_type == "RaggedTensor":
        raise NotImplementedError("minitf has no RaggedTensor; use result_type='SparseTensor'")
    if result_type != "SparseTensor":
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


# ---- conversions ------------------------------------------------------------------------------
_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)

_string_to_number = define_op(
    "StringToNumber", inputs=("string_tensor",), attrs={"out_type": dtypes.float32},
    shape_fn=_elementwise_shape, dtype_fn=lambda op: [dtypes.as_dtype(op.get_attr("out_type"))],
    type_constraint=(dtypes.string,), doc="Parses each string as a number.")
not_differentiable("StringToNumber")


def string_to_number(string_tensor, out_type=dtypes.float32, name=None):
    """Parses each string as a number (``tf.string_to_number``, ``tf.strings.to_number``).

    Args:
        string_tensor: a string tensor, e.g. ``["1.5", " 2"]`` (surrounding
            whitespace is allowed).
        out_type: float32, float64, int32 or int64.
        name: the op name (default ``StringToNumber``).

    Raises:
        TypeError: for another ``out_type``.
        InvalidArgumentError: at run time, for a string that is not a number
            of that type ("StringToNumberOp could not correctly convert string: x").
    """
    out_type = dtypes.as_dtype(out_type).base_dtype
    if out_type not in _NUMBER_TYPES:
        raise TypeError("out_type must be one of %s, got %s"
                        % (", ".join(t.name for t in _NUMBER_TYPES), out_type.name))
    return apply_op(_string_to_number, [_strings(string_tensor, "string_tensor")],
                    attrs={"out_type": out_type}, name=name or "StringToNumber")


_AS_STRING_TYPES = dtypes.NUMERIC + (dtypes.bool,)

_as_string = define_op(
    "AsString", inputs=("input",),
    attrs={"precision": -1, "scientific": False, "shortest": False, "width": -1, "fill": ""},
    shape_fn=_elementwise_shape, dtype_fn=lambda op: [dtypes.string],
    type_constraint=_AS_STRING_TYPES, doc="Formats each number (or bool) as a string.")
not_differentiable("AsString")


def as_string(input, precision=-1, scientific=False, shortest=False,  # noqa: A002
              width=-1, fill="", name=None):
    """Formats each element as a string, with C's ``printf`` rules (``tf.as_string``).

    Floats use ``%f`` (``%e`` with ``scientific``, ``%g`` with ``shortest``):
    ``tf.as_string(1.5)`` is ``b"1.500000"``.  Integers use ``%d``; bools
    become ``b"true"``/``b"false"``.

    Args:
        input: a numeric or bool tensor.
        precision: digits after the point (floats only; -1: printf's default).
        scientific, shortest: choose ``%e`` or ``%g`` (not both).
        width: pad to at least this width (-1: no padding).
        fill: the printf flag used for padding: ``" "``, ``"0"``, ``"-"``,
            ``"+"`` or ``"#"``.
        name: the op name (default ``AsString``).

    Raises:
        ValueError: for both ``scientific`` and ``shortest``, a ``precision``
            with integers, or an unsupported ``fill``.
    """
    input = convert_to_tensor(input, name="input")  # noqa: A001
    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    if precision > -1 and not input.dtype.base_dtype.is_floating:
        raise ValueError("Cannot select precision for type %s" % input.dtype.name)
    if len(fill) > 1 or (fill and fill not in " +-0#"):
        raise ValueError("Fill argument not supported: \"%s\"" % fill)
    attrs = {"precision": int(precision), "scientific": bool(scientific),
             "shortest": bool(shortest), "width": int(width), "fill": fill}
    return apply_op(_as_string, [input], attrs=attrs, name=name or "AsString")


# ---- length, substrings, case, whitespace -----------------------------------------------------
_string_length = define_op(
    "StringLength", inputs=("input",), attrs={"unit": "BYTE"}, shape_fn=_elementwise_shape,
    dtype_fn=lambda op: [dtypes.int32], type_constraint=(dtypes.string,),
    doc="The length of each string, in bytes or UTF-8 characters.")
not_differentiable("StringLength")


def length(input, name=None, unit="BYTE"):  # noqa: A002
    """The length of each string (``tf.strings.length``): bytes, or characters (``"UTF8_CHAR"``)."""
    return apply_op(_string_length, [_strings(input, "input")],
                    attrs={"unit": _check_unit(unit)}, name=name or "StringLength")


def _substr_shape(op):
    source, pos, count = op.inputs
    if pos.shape.is_fully_defined() and count.shape.is_fully_defined() and \
            pos.shape != count.shape:
        raise ValueError("pos and len should have the same shape, got %s and %s"
                         % (pos.shape, count.shape))
    if source.shape.ndims is None or pos.shape.ndims is None:
        return [unknown_shape()]
    return [_broadcast_static(source.shape, pos.shape)]


def _broadcast_static(a, b):
    """The broadcast of two known-rank static shapes (unknown sizes stay unknown)."""
    a, b = a.as_list(), b.as_list()
    rank = max(len(a), len(b))
    a, b = [1] * (rank - len(a)) + a, [1] * (rank - len(b)) + b
    dims = []
    for x, y in zip(a, b):
        if x == 1 or y == 1:
            dims.append(y if x == 1 else x)
        elif x is None or y is None:
            dims.append(x if y is None else y)
        elif x != y:
            raise ValueError("Incompatible shapes for broadcasting: %s and %s" % (a, b))
        else:
            dims.append(x)
    return TensorShape(dims)


_substr = define_op(
    "Substr", inputs=("input", "pos", "len"), attrs={"unit": "BYTE"}, shape_fn=_substr_shape,
    type_constraint=(dtypes.string,), doc="The substring of each string at pos of length len.")
not_differentiable("Substr")


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's argument names
    """The substrings ``input[pos:pos + len]`` (``tf.substr``, ``tf.strings.substr``).

    ``pos`` and ``len`` (int32 or int64, of one shape) broadcast against
    ``input``.  A negative ``pos`` counts from the end; a ``len`` running past
    the end (or negative) stops at the end.

    Raises:
        InvalidArgumentError: at run time, for a ``pos`` outside a string
            ("pos 3 out of range for string b'ab' at index 1").
    """
    with name_scope(name, "Substr", [input, pos, len]) as scope:
        pos = convert_to_tensor(pos, name="pos")
        count = convert_to_tensor(len, dtype=pos.dtype, name="len")
        return apply_op(_substr, [_strings(input, "input"), pos, count],
                        attrs={"unit": _check_unit(unit)}, name=scope)


def _elementwise_string_op(name, doc):
    op_def = define_op(name, inputs=("input",), shape_fn=_elementwise_shape,
                       type_constraint=(dtypes.string,), stacklevel=2, doc=doc)
    not_differentiable(name)
    return op_def


_string_lower = _elementwise_string_op("StringLower", "Each string in lower case (ASCII).")
_string_upper = _elementwise_string_op("StringUpper", "Each string in upper case (ASCII).")
_string_strip = _elementwise_string_op("StringStrip",
                                       "Each string without leading and trailing whitespace.")


def lower(input, encoding="", name=None):  # noqa: A002
    """Each string with its ASCII letters in lower case (``tf.strings.lower``)."""
    del encoding  # TF's "utf-8" also lowers only what its locale knows; minitf: ASCII
    return apply_op(_string_lower, [_strings(input, "input")], name=name or "StringLower")


def upper(input, encoding="", name=None):  # noqa: A002
    """Each string with its ASCII letters in upper case (``tf.strings.upper``)."""
    del encoding
    return apply_op(_string_upper, [_strings(input, "input")], name=name or "StringUpper")


def strip(input, name=None):  # noqa: A002
    """Each string without leading and trailing whitespace (``tf.strings.strip``)."""
    return apply_op(_string_strip, [_strings(input, "input")], name=name or "StringStrip")


# ---- regular expressions ----------------------------------------------------------------------
_regex_replace = define_op(
    "RegexReplace", inputs=("input", "pattern", "rewrite"), attrs={"replace_global": True},
    shape_fn=_elementwise_shape, type_constraint=(dtypes.string,),
    same_dtype_inputs=("input", "pattern", "rewrite"),
    doc="Replaces the matches of a regular expression in each string.")
not_differentiable("RegexReplace")

_static_regex_replace = define_op(
    "StaticRegexReplace", inputs=("input",),
    attrs={"pattern": None, "rewrite": None, "replace_global": True},
    shape_fn=_elementwise_shape, type_constraint=(dtypes.string,),
    doc="RegexReplace with the pattern and rewrite as attrs.")
not_differentiable("StaticRegexReplace")


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces the matches of ``pattern`` in each string by ``rewrite`` (``tf.regex_replace``).

    ``rewrite`` may refer to groups as ``\\1`` ... ``\\9`` and to the whole
    match as ``\\0`` (RE2's syntax).  With Python strings for ``pattern``
    and ``rewrite`` the op is TF's ``StaticRegexReplace`` (pattern compiled
    once); with tensors, ``RegexReplace``.

    Args:
        input: a string tensor.
        pattern: the regular expression.
        rewrite: the replacement.
        replace_global: replace every match (False: only the first).
        name: the op name.

    Raises:
        InvalidArgumentError: at run time, for an invalid pattern.

    Example:
        >>> sess.run(tf.regex_replace(["aab"], "a+", "<\\\\0>"))
        array([b'<aa>b'], dtype=object)
    """
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        attrs = {"pattern": _text(pattern), "rewrite": _text(rewrite),
                 "replace_global": bool(replace_global)}
        return apply_op(_static_regex_replace, [_strings(input, "input")], attrs=attrs,
                        name=name or "StaticRegexReplace")
    return apply_op(_regex_replace, [_strings(input, "input"), pattern, rewrite],
                    attrs={"replace_global": bool(replace_global)}, name=name or "RegexReplace")


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


__all__ = ["as_string", "length", "lower", "reduce_join", "regex_replace", "split",
           "string_join", "string_split", "string_to_number", "strip", "substr", "upper"]
