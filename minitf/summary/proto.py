"""The protocol-buffer messages of TensorBoard's files, encoded by hand.

An event file holds ``Event`` messages; a summary op's output is a serialized
``Summary``; ``add_graph`` stores a ``GraphDef``.  They are protocol buffers,
and the protobuf wire format is small enough to write out here, so minitf
needs no protobuf library to produce files TensorBoard reads:

* a message is a sequence of fields, each a *key* ``(field_number << 3) |
  wire_type`` followed by the value;
* wire type 0 is a *varint* (7 bits per byte, low bits first, the top bit
  says "more follows"): ints, bools, enums;
* wire type 1 is 8 little-endian bytes (a ``double``), type 5 is 4 (a
  ``float``);
* wire type 2 is *length-delimited*: a varint length, then bytes (strings,
  nested messages, packed repeated numbers).

The field numbers below are those of TF's ``event.proto``, ``summary.proto``,
``graph.proto``, ``node_def.proto``, ``attr_value.proto``, ``tensor.proto``
and ``tensor_shape.proto``.  :func:`parse_message` decodes any message into
``{field_number: [values]}`` (enough to read events back in tests and in
:func:`minitf.summary.summary_iterator`).
"""

import struct

import numpy as np

from minitf.framework.dtypes import DType
from minitf.framework.tensor_shape import TensorShape

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5

# TF's DataType enum (types.proto).
DATA_TYPE_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
                  "string": 7, "int64": 9, "bool": 10, "uint16": 17, "float16": 19,
                  "resource": 20, "variant": 21}


# ---- encoding -----------------------------------------------------------------------------------
def varint(value):
    """``value`` as a protobuf varint (negative ints as their 64-bit two's complement)."""
    value = int(value) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _key(number, wire_type):
    return varint(number << 3 | wire_type)


def int_field(number, value):
    """An int64/int32/bool/enum field."""
    return _key(number, VARINT) + varint(value)


def double_field(number, value):
    return _key(number, FIXED64) + struct.pack("<d", value)


def float_field(number, value):
    return _key(number, FIXED32) + struct.pack("<f", value)


def bytes_field(number, value):
    """A string, bytes or nested-message field (``value`` already encoded)."""
    value = value.encode("utf-8") if isinstance(value, str) else bytes(value)
    return _key(number, LENGTH_DELIMITED) + varint(len(value)) + value


def packed_doubles(number, values):
    return bytes_field(number, np.asarray(values, dtype="<f8").tobytes())


# ---- TensorBoard's messages ---------------------------------------------------------------------
def summary_value(tag, simple_value=None, histo=None, image=None, tensor=None, metadata=None):
    """One ``Summary.Value``: a tag and one kind of value (each already encoded)."""
    out = bytes_field(1, tag)
    if simple_value is not None:
        out += float_field(2, simple_value)
    if image is not None:
        out += bytes_field(4, image)
    if histo is not None:
        out += bytes_field(5, histo)
    if tensor is not None:
        out += bytes_field(8, tensor)
    if metadata is not None:
        out += bytes_field(9, metadata)
    return out


def summary(values):
    """A ``Summary`` of encoded ``Summary.Value`` messages."""
    return b"".join(bytes_field(1, v) for v in values)


def histogram(min_value, max_value, num, total, sum_squares, bucket_limit, bucket):
    """A ``HistogramProto``."""
    return (double_field(1, min_value) + double_field(2, max_value) + double_field(3, num)
            + double_field(4, total) + double_field(5, sum_squares)
            + packed_doubles(6, bucket_limit) + packed_doubles(7, bucket))


def image(height, width, colorspace, encoded_png):
    """A ``Summary.Image``."""
    return (int_field(1, height) + int_field(2, width) + int_field(3, colorspace)
            + bytes_field(4, encoded_png))


def plugin_metadata(plugin_name, content=b""):
    """A ``SummaryMetadata`` naming the TensorBoard plugin that shows the value."""
    return bytes_field(1, bytes_field(1, plugin_name) + bytes_field(2, content))


def tensor_shape(dims):
    """A ``TensorShapeProto`` (``dims`` None: unknown rank; a dim None: -1)."""
    if dims is None:
        return int_field(3, True)
    return b"".join(bytes_field(2, int_field(1, -1 if d is None else d)) for d in dims)


def tensor(array):
    """A ``TensorProto`` of a NumPy array (strings as ``string_val``, numbers as raw bytes)."""
    array = np.asarray(array)
    if array.dtype.kind == "O":
        out = int_field(1, DATA_TYPE_ENUM["string"]) + bytes_field(2, tensor_shape(array.shape))
        for item in array.reshape(-1):
            out += bytes_field(8, item if isinstance(item, bytes) else str(item))
        return out
    dtype_name = "bool" if array.dtype == np.bool_ else array.dtype.name
    content = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return (int_field(1, DATA_TYPE_ENUM[dtype_name]) + bytes_field(2, tensor_shape(array.shape))
            + bytes_field(4, content))


def event(wall_time, step=0, file_version=None, graph_def=None, summary=None):
    """An ``Event``: when, at which step, and one payload (each already encoded)."""
    out = double_field(1, wall_time) + int_field(2, step)
    if file_version is not None:
        out += bytes_field(3, file_version)
    if graph_def is not None:
        out += bytes_field(4, graph_def)
    if summary is not None:
        out += bytes_field(5, summary)
    return out


# ---- decoding ---------------------------------------------------------------------------------
def _read_varint(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def parse_message(data):
    """Decodes a message into ``{field_number: [raw values]}``.

    Varints come back as ints, fixed64/fixed32 as their 8/4 raw bytes (the
    schema says whether they are a double or a float, see :func:`as_double`),
    length-delimited fields as bytes (a nested message: parse it again).

    Raises:
        ValueError: on a truncated message or an unknown wire type.
    """
    fields = {}
    pos = 0
    try:
        while pos < len(data):
            key, pos = _read_varint(data, pos)
            number, wire_type = key >> 3, key & 7
            if wire_type == VARINT:
                value, pos = _read_varint(data, pos)
            elif wire_type in (FIXED64, FIXED32):
                size = 8 if wire_type == FIXED64 else 4
                value, pos = bytes(data[pos:pos + size]), pos + size
            elif wire_type == LENGTH_DELIMITED:
                size, pos = _read_varint(data, pos)
                value, pos = bytes(data[pos:pos + size]), pos + size
            else:
                raise ValueError("unknown wire type %d" % wire_type)
            fields.setdefault(number, []).append(value)
    except IndexError:
        raise ValueError("truncated protocol buffer message") from None
    if pos != len(data):
        raise ValueError("truncated protocol buffer message")
    return fields


def as_double(raw):
    """A fixed64 field's bytes as a Python float."""
    return struct.unpack("<d", raw)[0]


def as_float(raw):
    """A fixed32 field's bytes as a Python float."""
    return struct.unpack("<f", raw)[0]


def as_signed(value):
    """A varint read back as a signed int64."""
    return value - (1 << 64) if value >= 1 << 63 else value


# ---- GraphDef ---------------------------------------------------------------------------------
def graph_def(graph):
    """The ``GraphDef`` message of a :class:`~minitf.Graph`, for TensorBoard's graph tab.

    Each op becomes a ``NodeDef`` (name, op, inputs, device, attrs).  Attrs
    that have no ``AttrValue`` form (Python functions of ``tf.data`` ops) are
    left out: TensorBoard only displays them.
    """
    nodes = b""
    for op in graph.get_operations():
        node_def = op.node_def
        node = bytes_field(1, node_def.name) + bytes_field(2, node_def.op)
        node += b"".join(bytes_field(3, name) for name in node_def.input)
        if node_def.device:
            node += bytes_field(4, node_def.device)
        for name, value in sorted(node_def.attr.items()):
            encoded = _attr_value(value)
            if encoded is not None:
                node += bytes_field(5, bytes_field(1, name) + bytes_field(2, encoded))
        nodes += bytes_field(1, node)
    return nodes + bytes_field(4, int_field(1, 1))  # versions { producer: 1 }


def _attr_value(value):
    """An ``AttrValue`` message, or None for a value it cannot hold.

    ``AttrValue.ListValue`` numbers its repeated fields like ``AttrValue``'s
    own (s=2, i=3, f=4, b=5, type=6, shape=7, tensor=8), so a list is the
    concatenation of its items' fields.
    """
    if isinstance(value, (list, tuple)):
        items = [None if isinstance(v, (list, tuple)) else _attr_value(v) for v in value]
        return None if None in items else bytes_field(1, b"".join(items))
    if isinstance(value, DType):
        ref_offset = 100 if value != value.base_dtype else 0  # DT_FLOAT_REF = DT_FLOAT + 100
        return int_field(6, DATA_TYPE_ENUM[value.base_dtype.name] + ref_offset)
    if isinstance(value, TensorShape):
        return bytes_field(7, tensor_shape(None if value.ndims is None else value.as_list()))
    if isinstance(value, np.ndarray):
        return bytes_field(8, tensor(value))
    if isinstance(value, (bool, np.bool_)):
        return int_field(5, value)
    if isinstance(value, (int, np.integer)):
        return int_field(3, value)
    if isinstance(value, (float, np.floating)):
        return float_field(4, value)
    if isinstance(value, (str, bytes)):
        return bytes_field(2, value)
    return None
