"""CPU kernel of ``DecodeCSV``: CSV records split into typed columns.

Each record is split into fields by :func:`split_fields` (TF's rules: an
optional double-quoted field, ``""`` for a quote inside it), then field ``j``
is converted to column ``j``'s dtype (string columns hold bytes, as every
``tf.string`` value does), or replaced by its default when it is empty or
equal to ``na_value``.  Errors carry TF's messages.

Mirrors ``tensorflow/core/kernels/decode_csv_op.cc``.
"""

import numpy as np

from minitf.framework import dtypes
from minitf_numpy_cpu.kernels.table import kernel

_TYPE_NAMES = {dtypes.int32: "int32", dtypes.int64: "int64", dtypes.float32: "float",
               dtypes.float64: "double"}
_INT_RANGES = {dtypes.int32: (-2 ** 31, 2 ** 31 - 1), dtypes.int64: (-2 ** 63, 2 ** 63 - 1)}


def split_fields(record, delim, use_quote_delim):
    """The fields of one record, or raises ``ValueError`` with TF's message.

    Example:
        >>> split_fields('1,"a,""b",', ",", True)
        ['1', 'a,"b', '']
    """
    fields, i, n = [], 0, len(record)
    while True:
        if use_quote_delim and i < n and record[i] == '"':
            i, field = _quoted_field(record, i + 1, delim)
        else:
            end = record.find(delim, i)
            end = n if end < 0 else end
            field = record[i:end]
            if use_quote_delim and '"' in field:
                raise ValueError("Unquoted fields cannot have quotes/CRLFs inside")
            i = end
        fields.append(field)
        if i >= n:
            return fields
        i += 1  # skip the delimiter; a trailing one means a last, empty field


def _quoted_field(record, i, delim):
    """Reads a quoted field whose text starts at ``i``; returns (end index, text)."""
    parts, n = [], len(record)
    while True:
        close = record.find('"', i)
        if close < 0:
            raise ValueError("Quoted field has to end with quote followed by delim or end")
        parts.append(record[i:close])
        if close + 1 < n and record[close + 1] == '"':  # "" is one quote
            parts.append('"')
            i = close + 2
        elif close + 1 == n or record[close + 1] == delim:
            return close + 1, "".join(parts)
        else:
            raise ValueError("Quote inside a string has to be escaped by another quote")


def _convert(field, dtype, column, index):
    if dtype == dtypes.string:
        return field.encode("utf-8", "surrogateescape")  # tf.string values are bytes
    name = _TYPE_NAMES[dtype]
    try:
        if dtype.is_integer:
            value = int(field.strip(), 10)
            low, high = _INT_RANGES[dtype]
            if not low <= value <= high:
                raise ValueError
            return value
        return float(field)
    except ValueError:
        raise ValueError("Field %d in record %d is not a valid %s: %s"
                         % (column, index, name, field)) from None


@kernel("DecodeCSV")
def decode_csv(ctx, records, *record_defaults, OUT_TYPE, field_delim, use_quote_delim,
               na_value, select_cols):
    types = [dtypes.as_dtype(t) for t in OUT_TYPE]
    defaults = [np.reshape(d, -1) for d in record_defaults]
    wanted = list(select_cols) or list(range(len(types)))
    flat = np.reshape(np.asarray(records, dtype=object), -1)
    columns = [np.empty(flat.shape, dtype=t.as_numpy_dtype) for t in types]
    for index, record in enumerate(flat):
        text = (record.decode("utf-8", "surrogateescape") if isinstance(record, bytes)
                else str(record))
        try:
            fields = split_fields(text, field_delim, use_quote_delim)
        except ValueError as error:
            raise ctx.invalid_argument("%s (record %d: %r)" % (error, index, text)) from None
        if (select_cols and len(fields) <= wanted[-1]) or \
                (not select_cols and len(fields) != len(types)):
            raise ctx.invalid_argument("Expect %d fields but have %d in record %d"
                                       % (wanted[-1] + 1 if select_cols else len(types),
                                          len(fields), index))
        for k, column in enumerate(wanted):
            field = fields[column]
            if field == "" or field == na_value:
                if not defaults[k].size:
                    raise ctx.invalid_argument("Field %d is required but missing in record %d!"
                                               % (column, index))
                columns[k][index] = defaults[k][0]
            else:
                try:
                    columns[k][index] = _convert(field, types[k], column, index)
                except ValueError as error:
                    raise ctx.invalid_argument(str(error)) from None
    shape = np.shape(records)
    outputs = [c.reshape(shape) if shape else c[0] for c in columns]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
