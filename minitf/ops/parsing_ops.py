"""Parsing text records: ``tf.decode_csv``.

A CSV input pipeline reads lines as strings (``tf.data.TextLineDataset``, or a
queue of lines) and turns each into typed columns with one ``DecodeCSV`` op::

    dataset = tf.data.TextLineDataset("iris.csv").skip(1)
    def parse(line):
        *features, label = tf.decode_csv(line, [[0.0]] * 4 + [[""]])
        return tf.stack(features), label
    dataset = dataset.map(parse)

``record_defaults`` says, per column, its dtype (int32, int64, float32,
float64 or string) and the value of an empty field: ``[0.0]`` is a float32
column defaulting to 0, an empty list or tensor (``tf.constant([], tf.int32)``)
a *required* int32 column.  Each output has the shape of ``records``.

Fields follow TF's CSV rules: separated by ``field_delim``; with
``use_quote_delim`` a field may be enclosed in double quotes, inside which
the delimiter is literal and ``""`` stands for one quote.  Malformed records
are an ``InvalidArgumentError`` at run time naming the record and field
(``Field 0 in record 3 is not a valid float: abc``).

Mirrors ``tensorflow/python/ops/parsing_ops.py`` (``decode_csv``) and
``tensorflow/core/kernels/decode_csv_op.cc``; the kernel is
``plugins/numpy_cpu/kernels/parsing.py``.
"""

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable

CSV_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _decode_csv_shapes(op):
    for i, default in enumerate(op.inputs[1:]):
        shape = default.shape
        if shape.ndims is not None and (shape.ndims > 1 or
                                        (shape.ndims == 1 and (shape[0].value or 0) > 1)):
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a "
                             "scalar. (record_defaults[%d] of op '%s' has shape %s)"
                             % (i, op.name, shape))
    return [op.inputs[0].shape] * len(op.get_attr("OUT_TYPE"))


def _decode_csv_dtypes(op):
    return [dtypes.as_dtype(t) for t in op.get_attr("OUT_TYPE")]


_decode_csv = define_op(
    "DecodeCSV", inputs=("records", "record_defaults*"),
    attrs={"OUT_TYPE": None, "field_delim": ",", "use_quote_delim": True, "na_value": "",
           "select_cols": []},
    num_outputs=lambda attrs: len(attrs["OUT_TYPE"]), shape_fn=_decode_csv_shapes,
    dtype_fn=_decode_csv_dtypes, type_constraint=(dtypes.string,),
    doc="Splits CSV records into typed columns.")
not_differentiable("DecodeCSV")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Converts CSV records to one tensor per column (``tf.decode_csv``).

    Args:
        records: a string tensor of records (lines), any shape.
        record_defaults: one per column: a list ``[value]`` or a scalar tensor
            (the column's dtype and default), or an empty list/tensor (a
            required column).
        field_delim: the one-character field separator.
        use_quote_delim: treat double quotes as field quoting (RFC 4180).
        name: the op's name.
        na_value: a field equal to this string is also missing.
        select_cols: read only these columns (sorted indices); then
            ``record_defaults`` gives one per selected column.

    Returns:
        A list of tensors, one per column, each of the shape of ``records``.

    Raises:
        ValueError: for a default that is not a scalar or one-element vector,
            a delimiter that is not one character, or unsorted ``select_cols``.
        TypeError: for a default whose dtype is not a CSV column type.

    Example:
        >>> a, b = tf.decode_csv(["1,x", "2,"], [[0], ["none"]])
        >>> sess.run([a, b])
        [array([1, 2], dtype=int32), array(['x', 'none'], dtype=object)]
    """
    if len(field_delim) != 1:
        raise ValueError("field_delim must be one character, got %r" % (field_delim,))
    select_cols = list(select_cols or [])
    if select_cols != sorted(set(select_cols)) or any(c < 0 for c in select_cols):
        raise ValueError("select_cols is not strictly increasing (or has a negative index): %s"
                         % select_cols)
    if select_cols and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    with name_scope(name, "DecodeCSV", [records]) as scope:  # TF: DecodeCSV/record_defaults_0
        records = convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = [convert_to_tensor(d, name="record_defaults_%d" % i)
                    for i, d in enumerate(record_defaults)]
        for i, default in enumerate(defaults):
            if default.dtype.base_dtype not in CSV_DTYPES:
                raise TypeError("record_defaults[%d] has dtype %s; a CSV column must be one of "
                                "%s" % (i, default.dtype.name,
                                        ", ".join(t.name for t in CSV_DTYPES)))
        attrs = {"OUT_TYPE": [d.dtype.base_dtype for d in defaults], "field_delim": field_delim,
                 "use_quote_delim": bool(use_quote_delim), "na_value": na_value,
                 "select_cols": select_cols}
        outputs = apply_op(_decode_csv, [records, defaults], attrs=attrs, name=scope)
    return list(outputs) if isinstance(outputs, list) else [outputs]
