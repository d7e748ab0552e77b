"""Parsing records: ``tf.decode_csv`` for text, ``tf.parse_example`` for Examples,
``tf.decode_raw`` for the raw bytes of an array.

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

A TFRecord pipeline reads serialized ``tf.train.Example`` protos instead
(``tf.data.TFRecordDataset``, ``tf.TFRecordReader``) and turns them into
tensors with one ``ParseExampleV2`` op, declared by a dict of features::

    features = tf.parse_single_example(record, {
        "image": tf.FixedLenFeature([784], tf.float32),    # a dense [784] tensor
        "label": tf.FixedLenFeature([], tf.int64),         # a scalar
        "tags": tf.VarLenFeature(tf.string),               # a SparseTensor
    })

A ``FixedLenFeature`` without a ``default_value`` is required: an example
that lacks it is an ``InvalidArgumentError`` at run time naming the key.
``tf.parse_single_example`` is ``tf.parse_example`` of a batch of one, with
the batch dimension taken off again (as TF 1.15+ builds it).

Mirrors ``tensorflow/python/ops/parsing_ops.py`` and
``tensorflow/core/kernels/{decode_csv_op,example_parsing_ops}.cc``; the
kernels are ``plugins/numpy_cpu/kernels/parsing.py``.
"""

import collections

from minitf.api_scopes import name_scope
from minitf.framework import dtypes
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, slicing_ops
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


# ---- tf.decode_raw: the bytes of a string as numbers -------------------------------------------
def _decode_raw_shapes(op):
    return [op.inputs[0].shape.concatenate([None])]


_decode_raw = define_op(
    "DecodeRaw", inputs=("bytes",), attrs={"out_type": None, "little_endian": True},
    shape_fn=_decode_raw_shapes, dtype_fn=lambda op: [dtypes.as_dtype(op.get_attr("out_type"))],
    type_constraint=(dtypes.string,),
    doc="Reinterprets the bytes of each string as a vector of numbers.")
not_differentiable("DecodeRaw")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """Reinterprets the bytes of each string as a vector of ``out_type`` (``tf.decode_raw``).

    The inverse of NumPy's ``array.tobytes()``: TF's ``convert_to_records``
    stores an image as ``image_raw`` bytes and a reader pipeline gets the
    pixels back with ``tf.decode_raw(features["image_raw"], tf.uint8)``.

    Args:
        input_bytes: a string tensor, any shape; every string must have the
            same length, a multiple of ``out_type``'s size.
        out_type: the numeric dtype of the result.
        little_endian: the byte order of the strings.
        name: the op's name.
        bytes: TF1's deprecated name of ``input_bytes``.

    Returns:
        A tensor of shape ``input_bytes.shape + [length // out_type.size]``.

    Raises:
        TypeError: for a non-numeric ``out_type``.
    """
    if input_bytes is None:
        input_bytes = bytes
    out_type = dtypes.as_dtype(out_type)
    if out_type not in dtypes.ALL_TYPES:
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list of "
                        "allowed values: %s" % (out_type.name,
                                                ", ".join(t.name for t in dtypes.ALL_TYPES)))
    return apply_op(_decode_raw, [input_bytes], name=name or "DecodeRaw",
                    attrs={"out_type": out_type, "little_endian": bool(little_endian)})


# ---- tf.train.Example: parse_example ------------------------------------------------------------
EXAMPLE_DTYPES = (dtypes.float32, dtypes.int64, dtypes.string)


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values, parsed into a dense tensor
    (``tf.FixedLenFeature``).

    Args:
        shape: the shape of one example's values (``[]`` for one value).
        dtype: ``tf.float32``, ``tf.int64`` or ``tf.string``.
        default_value: used when an example lacks the feature (reshaped to
            ``shape``); None makes the feature required.
    """

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature with any number of values of shape ``shape``, parsed into a dense
    tensor ``[batch, longest] + shape``, padded with ``default_value`` (or zero)
    (``tf.FixedLenSequenceFeature``).  ``parse_example`` needs ``allow_missing``.
    """

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed into a ``SparseTensor``
    (``tf.VarLenFeature``): row ``b`` holds example ``b``'s values."""


def _parse_example_shapes(op):
    batch = op.inputs[0].shape
    rank = batch.ndims
    num_sparse = op.get_attr("num_sparse")
    indices = [TensorShape([None, None if rank is None else rank + 1])] * num_sparse
    values = [TensorShape([None])] * num_sparse
    shapes = [TensorShape([None if rank is None else rank + 1])] * num_sparse
    dense = [batch.concatenate(shape) for shape in op.get_attr("dense_shapes")]
    return indices + values + shapes + dense


def _parse_example_dtypes(op):
    num_sparse = op.get_attr("num_sparse")
    return ([dtypes.int64] * num_sparse + [dtypes.as_dtype(t) for t in op.get_attr("sparse_types")]
            + [dtypes.int64] * num_sparse + [dtypes.as_dtype(t) for t in op.get_attr("Tdense")])


_parse_example = define_op(
    "ParseExampleV2",
    inputs=("serialized", "names", "sparse_keys", "dense_keys", "ragged_keys", "dense_defaults*"),
    attrs={"Tdense": None, "num_sparse": None, "sparse_types": None, "ragged_value_types": [],
           "ragged_split_types": [], "dense_shapes": None},
    num_outputs=lambda attrs: 3 * attrs["num_sparse"] + len(attrs["Tdense"]),
    shape_fn=_parse_example_shapes, dtype_fn=_parse_example_dtypes,
    type_constraint=(dtypes.string,),
    doc="Parses serialized tf.train.Example protos into sparse and dense tensors.")
not_differentiable("ParseExampleV2")


def _check_dtype(key, dtype, what):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if dtype not in EXAMPLE_DTYPES:
        raise TypeError("Value passed to parameter '%s' has DataType %s not in list of allowed "
                        "values: float32, int64, string (feature %r)" % (what, dtype.name, key))
    return dtype


def _dense_default(key, feature, dtype):
    """The ``dense_defaults`` input of one dense feature (TF's names: ``key_<key>``)."""
    if isinstance(feature, FixedLenSequenceFeature):
        if feature.default_value is None:
            return convert_to_tensor([], dtype=dtype)
        return convert_to_tensor(feature.default_value, dtype=dtype, name="key_%s" % key)
    if feature.default_value is None:
        return convert_to_tensor([], dtype=dtype)  # empty: the feature is required
    default = convert_to_tensor(feature.default_value, dtype=dtype, name="key_%s" % key)
    return array_ops.reshape(default, feature.shape)


def _dense_shape(key, feature):
    if feature.shape is None:
        raise ValueError("Missing shape for feature %s." % key)
    if isinstance(feature, FixedLenSequenceFeature):
        if not feature.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be "
                             "True.")
        return TensorShape([None]).concatenate(feature.shape)  # the sequence's length varies
    return TensorShape(feature.shape)


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized ``tf.train.Example`` protos (``tf.parse_example``).

    One ``ParseExampleV2`` op reads every feature of ``features`` from each
    record of ``serialized``.

    Args:
        serialized: a 1-D string tensor of serialized Examples.
        features: maps feature names to :class:`FixedLenFeature`,
            :class:`FixedLenSequenceFeature` or :class:`VarLenFeature`.
        name: the name scope (default ``ParseExample``).
        example_names: names of the records for error messages.

    Returns:
        A dict from feature names to a tensor ``[batch] + shape`` for a
        FixedLenFeature, ``[batch, longest] + shape`` for a
        FixedLenSequenceFeature, and a ``SparseTensor`` of dense shape
        ``[batch, most values]`` for a VarLenFeature.

    Raises:
        ValueError: for no features, a FixedLenFeature without a shape, or a
            default that does not fit the shape.
        TypeError: for a dtype other than float32, int64 and string.
        InvalidArgumentError: when running, for a record that is not an
            Example, a required feature that is missing ("Feature: label
            (data type: int64) is required but could not be found."), or
            values of another type or number than declared.

    Example:
        >>> features = tf.parse_example(records, {
        ...     "label": tf.FixedLenFeature([], tf.int64),
        ...     "tags": tf.VarLenFeature(tf.string)})
        >>> features["label"]          # Tensor of shape [batch]
        >>> features["tags"]           # SparseTensor
    """
    if not features:
        raise ValueError("Argument `features` cannot be None or falsy. Got %s" % (features,))
    sparse = sorted(k for k, f in features.items() if isinstance(f, VarLenFeature))
    dense = sorted(k for k, f in features.items()
                   if isinstance(f, (FixedLenFeature, FixedLenSequenceFeature)))
    unknown = set(features) - set(sparse) - set(dense)
    if unknown:
        raise ValueError("Unsupported feature type for %s: %r"
                         % (sorted(unknown)[0], features[sorted(unknown)[0]]))
    sparse_types = [_check_dtype(k, features[k].dtype, "sparse_types") for k in sparse]
    dense_types = [_check_dtype(k, features[k].dtype, "dense_defaults") for k in dense]
    dense_shapes = [_dense_shape(k, features[k]) for k in dense]
    attrs = {"Tdense": dense_types, "num_sparse": len(sparse), "sparse_types": sparse_types,
             "dense_shapes": dense_shapes}
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        defaults = [_dense_default(k, features[k], t) for k, t in zip(dense, dense_types)]
        with name_scope(None, "ParseExampleV2") as scope:  # TF: ParseExampleV2/dense_keys
            keys = [convert_to_tensor(list(keys), dtype=dtypes.string, name=what)
                    for keys, what in ((example_names or [], "names"), (sparse, "sparse_keys"),
                                       (dense, "dense_keys"), ([], "ragged_keys"))]
            outputs = apply_op(_parse_example, [serialized] + keys + [defaults], attrs=attrs,
                               name=scope)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    n = len(sparse)
    result = {key: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
              for i, key in enumerate(sparse)}
    result.update(zip(dense, outputs[3 * n:]))
    return result


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized ``tf.train.Example`` (``tf.parse_single_example``).

    :func:`parse_example` of a batch of one, without the batch dimension:
    a FixedLenFeature of shape ``s`` gives a tensor of shape ``s``, a
    VarLenFeature a 1-D ``SparseTensor``.

    Raises:
        ValueError: if ``serialized`` is known not to be a scalar (and as
            :func:`parse_example`).
    """
    if not features:
        raise ValueError("Argument `features` cannot be None or falsy. Got %s" % (features,))
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError("Input serialized must be a scalar")
        batch = array_ops.expand_dims(serialized, 0)
        names = None if example_names is None else [example_names]
        parsed = parse_example(batch, features, example_names=names)
        return {key: _unbatched(key, value) for key, value in parsed.items()}


def _unbatched(key, value):
    """One parsed feature of a batch of one, without the batch dimension."""
    if isinstance(value, SparseTensor):
        return SparseTensor(slicing_ops.slice(value.indices, [0, 1], [-1, 1]), value.values,
                            slicing_ops.slice(value.dense_shape, [1], [1]))
    return array_ops.squeeze(value, [0], name="Squeeze_%s" % key)
