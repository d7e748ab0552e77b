"""CPU kernels of the parsing ops: ``DecodeCSV``, ``DecodeRaw`` and ``ParseExampleV2``.

``DecodeCSV``: CSV records split into typed columns.

Each record is split into fields by :func:`split_fields` (TF's rules: an
optional double-quoted field, ``""`` for a quote inside it), then field ``j``
is converted to column ``j``'s dtype (string columns hold bytes, as every
``tf.string`` value does), or replaced by its default when it is empty or
equal to ``na_value``.  Errors carry TF's messages.

``ParseExampleV2``: each record is decoded as a ``tf.train.Example`` (the
protobuf message of :mod:`minitf.framework.example_proto`); each feature's
values are checked against its declared type and count, and gathered into a
dense batch or the three arrays of a sparse one.  Errors carry TF's
messages (``Name: <unknown>, Feature: label (data type: int64) is required
but could not be found.``).

Mirrors ``tensorflow/core/kernels/decode_csv_op.cc`` and
``tensorflow/core/kernels/example_parsing_ops.cc`` (with
``tensorflow/core/util/example_proto_fast_parsing.cc``).
"""

import numpy as np

from minitf.plugin import dtypes, errors
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


# ---- DecodeRaw -----------------------------------------------------------------------------------
@kernel("DecodeRaw")
def decode_raw(ctx, data, out_type, little_endian):
    """Each string's bytes read as numbers of ``out_type`` in the given byte order."""
    dtype = np.dtype(dtypes.as_dtype(out_type).as_numpy_dtype)
    dtype = dtype.newbyteorder("<" if little_endian else ">")
    flat = [bytes(s) for s in np.reshape(np.asarray(data, dtype=object), -1)]
    size = len(flat[0]) if flat else 0
    if size % dtype.itemsize:
        raise ctx.invalid_argument("Input to DecodeRaw has length %d that is not a multiple of "
                                   "%d, the size of %s" % (size, dtype.itemsize,
                                                           dtypes.as_dtype(out_type).name))
    for i, s in enumerate(flat):
        if len(s) != size:
            raise ctx.invalid_argument("DecodeRaw requires input strings to all be the same "
                                       "size, but element %d has size %d != %d"
                                       % (i, size, len(s)))
    values = np.frombuffer(b"".join(flat), dtype=dtype).astype(dtype.newbyteorder("="))
    return values.reshape(np.shape(data) + (size // dtype.itemsize,))


# ---- ParseExampleV2 ------------------------------------------------------------------------------
_KIND_OF = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_KIND_TYPE_NAMES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _example(ctx, record):
    """The ``tf.train.Example`` of one serialized record."""
    from google.protobuf.message import DecodeError  # protobuf is loaded on first use
    from minitf.plugin import example_proto
    try:
        return example_proto.Example.FromString(bytes(record))
    except DecodeError:
        raise ctx.invalid_argument("Could not parse example input, value: '%s'"
                                   % bytes(record).decode("utf-8", "backslashreplace")) from None


def _values(ctx, example, key, dtype, where):
    """The values of feature ``key`` of one example, or None if it has none."""
    feature = example.features.feature.get(key)
    kind = None if feature is None else feature.WhichOneof("kind")
    if kind is None:
        return None
    if kind != _KIND_OF[dtype]:
        raise ctx.invalid_argument("%sKey: %s, Index: %d.  Data types don't match. Data type: %s "
                                   "but expected type: %s" % (where[0], key, where[1],
                                                              _KIND_TYPE_NAMES[kind],
                                                              _KIND_TYPE_NAMES[_KIND_OF[dtype]]))
    return np.array(getattr(feature, kind).value, dtype=dtype.as_numpy_dtype)


def _sparse_feature(ctx, examples, wheres, key, dtype):
    """``(indices, values, dense_shape)`` of a VarLenFeature over the batch."""
    rows = [_values(ctx, e, key, dtype, w) for e, w in zip(examples, wheres)]
    rows = [np.zeros([0], dtype.as_numpy_dtype) if r is None else r for r in rows]
    indices = [[b, i] for b, row in enumerate(rows) for i in range(len(row))]
    values = np.concatenate(rows) if rows else np.zeros([0], dtype.as_numpy_dtype)
    longest = max((len(r) for r in rows), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), values,
            np.array([len(rows), longest], dtype=np.int64))


def _dense_feature(ctx, examples, wheres, key, dtype, shape, default):
    """The ``[batch] + shape`` tensor of a FixedLenFeature (or, with a first
    dimension None, of a FixedLenSequenceFeature, padded to the longest)."""
    dims = shape.as_list()
    variable = bool(dims) and dims[0] is None
    stride = int(np.prod(dims[1:] if variable else dims))
    type_name = _KIND_TYPE_NAMES[_KIND_OF[dtype]]
    rows = []
    for example, where in zip(examples, wheres):
        values = _values(ctx, example, key, dtype, where)
        if values is None and not variable:
            if not np.size(default):
                raise ctx.invalid_argument("%sFeature: %s (data type: %s) is required but could "
                                           "not be found." % (where[0], key, type_name))
            values = np.reshape(default, -1)
        elif values is None:
            values = np.zeros([0], dtype.as_numpy_dtype)
        if variable and len(values) % stride:
            raise ctx.invalid_argument(
                "%sKey: %s, Index: %d.  Number of %s values is not a multiple of stride length. "
                "Saw %d values but output shape is: %s" % (where[0], key, where[1], type_name,
                                                           len(values), _shape_text(dims)))
        if not variable and len(values) != stride:
            raise ctx.invalid_argument(
                "%sKey: %s, Index: %d.  Number of %s values != expected.  Values size: %d but "
                "output shape: %s" % (where[0], key, where[1], type_name, len(values),
                                      _shape_text(dims)))
        rows.append(values)
    if not variable:
        return np.array(rows, dtype=dtype.as_numpy_dtype).reshape([len(rows)] + dims)
    longest = max((len(r) // stride for r in rows), default=0)
    pad = np.reshape(default, -1)[0] if np.size(default) else (b"" if dtype == dtypes.string else 0)
    batch = np.full([len(rows), longest * stride], pad, dtype=dtype.as_numpy_dtype)
    for b, row in enumerate(rows):
        batch[b, :len(row)] = row
    return batch.reshape([len(rows), longest] + dims[1:])


def _shape_text(dims):
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


@kernel("ParseExampleV2")
def parse_example_v2(ctx, serialized, names, sparse_keys, dense_keys, ragged_keys,
                     *dense_defaults, Tdense, num_sparse, sparse_types, ragged_value_types,
                     ragged_split_types, dense_shapes):
    if np.size(ragged_keys):
        raise ctx.error(errors.UnimplementedError, "minitf's ParseExampleV2 has no ragged "
                        "features (tf.io.RaggedFeature is TF2)")
    records = np.reshape(np.asarray(serialized, dtype=object), -1)
    if np.ndim(serialized) > 1:
        raise ctx.invalid_argument("Expected serialized to be a scalar or vector, got shape: %s"
                                   % (list(np.shape(serialized)),))
    labels = [n.decode() if isinstance(n, bytes) else str(n) for n in np.reshape(names, -1)]
    wheres = [("Name: %s, " % (labels[i] if labels else "<unknown>"), i)
              for i in range(len(records))]
    examples = [_example(ctx, r) for r in records]
    text = [k.decode() if isinstance(k, bytes) else str(k) for k in np.reshape(sparse_keys, -1)]
    sparse = [_sparse_feature(ctx, examples, wheres, key, dtypes.as_dtype(t))
              for key, t in zip(text, sparse_types)]
    text = [k.decode() if isinstance(k, bytes) else str(k) for k in np.reshape(dense_keys, -1)]
    dense = [_dense_feature(ctx, examples, wheres, key, dtypes.as_dtype(t), shape, default)
             for key, t, shape, default in zip(text, Tdense, dense_shapes, dense_defaults)]
    if np.ndim(serialized) == 0:  # a scalar record: no batch dimension
        sparse = [(i[:, 1:], v, s[1:]) for i, v, s in sparse]
        dense = [d[0] for d in dense]
    outputs = ([s[0] for s in sparse] + [s[1] for s in sparse] + [s[2] for s in sparse]
               + dense)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
