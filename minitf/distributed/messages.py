"""The messages of the cluster's RPCs: a small JSON header plus raw tensor bytes.

TF's master and worker services exchange protocol buffers whose tensors are
``TensorProto``\\ s.  minitf keeps the header readable and the tensors raw::

    +---------+-------------------------+-------------+-------------+
    | 8 bytes | header: UTF-8 JSON      | tensor 0    | tensor 1 ...|
    | length  | {"method": ..., ...,    | raw bytes   | raw bytes   |
    | of hdr  |  "tensors": [{"dtype":  | (C order)   |             |
    |         |  "<f4", "shape": [2]}]} |             |             |
    +---------+-------------------------+-------------+-------------+

A string tensor (TF's ``tf.string``: an array of ``bytes``) has the dtype
``"string"``; its bytes are one little-endian ``uint64`` length per element,
then the elements' bytes one after the other (``str`` elements cross as UTF-8
and arrive as ``bytes``, as TF's strings do).

Decoding checks every size against the limits *before* allocating: the header
length, the number of tensors and each tensor's byte count (from its dtype
and shape, with Python's unbounded integers: no overflow) must fit what
actually arrived and :data:`MAX_MESSAGE_BYTES`.  A malformed, truncated or
oversized message is an ``InvalidArgumentError``, never a crash of the server
that received it.  A message larger than one gRPC message crosses as a
stream of chunks joined into one buffer (:mod:`~minitf.distributed.rpc`);
:func:`encode_parts` gives the pieces of a message without joining them.  Nothing is ever unpickled: only numbers, booleans and
strings cross (no other Python objects).

Where TF's RPC has a protocol buffer (the ``GraphDef`` of ``RegisterGraph``
and ``CreateSession``, a ``ConfigProto``, a ``RunOptions``, a step's
``RunMetadata``), it crosses as its serialized bytes, one ``uint8`` tensor
(:func:`minitf.framework.protos.as_payload`), and :func:`proto_payload` parses it.
"""

import json
import math
import os
import struct

import numpy as np

from minitf.framework import errors
from minitf.framework import protos

#: The largest message a task accepts (tensors included): 8 GiB, or the
#: environment's ``MINITF_MAX_MESSAGE_BYTES`` (read when minitf is imported).
#: A message above gRPC's own limit crosses in chunks, so this is the only cap
#: on a step's tensors; a peer announcing more is refused before anything is
#: allocated.
MAX_MESSAGE_BYTES = int(os.environ.get("MINITF_MAX_MESSAGE_BYTES", 8 << 30))
MAX_HEADER_BYTES = 64 << 20
MAX_TENSORS = 1 << 16
_LENGTH = struct.Struct("<Q")
_CROSSING_KINDS = "biufc"  # bool, integers, floats, complex: plain bytes
_STRING_KINDS = "OSU"  # object arrays of bytes/str, fixed-size bytes and str
#: The descriptor dtype of a string tensor.
STRING = "string"


def encode(header, tensors=()):
    """``header`` (a JSON-compatible dict) and NumPy ``tensors`` as one message."""
    parts, _ = encode_parts(header, tensors)
    return b"".join(parts)


def encode_parts(header, tensors=()):
    """The message of :func:`encode` as ``(buffers, total bytes)``, not joined.

    A tensor's buffer is a view of its array (no copy), so a large message
    can be sent in chunks without ever being assembled in one piece.
    """
    descriptors, payloads = [], []
    for tensor in tensors:
        array = np.asarray(tensor)
        if array.dtype.kind in _STRING_KINDS:
            descriptors.append({"dtype": STRING, "shape": list(array.shape)})
            payloads.extend(_string_bytes(array))
        elif array.dtype.kind in _CROSSING_KINDS:
            array = np.require(array, requirements="C")
            descriptors.append({"dtype": array.dtype.str, "shape": list(array.shape)})
            payloads.append(memoryview(array.reshape(-1).view(np.uint8)))
        else:
            raise errors.InvalidArgumentError(
                None, None, "A tensor of dtype %s cannot cross tasks in minitf (only "
                "numbers, booleans and strings do)" % array.dtype)
    head = json.dumps(dict(header, tensors=descriptors)).encode()
    parts = [_LENGTH.pack(len(head)), head] + payloads
    return parts, sum(len(part) for part in parts)


def _string_bytes(array):
    """The payload of a string tensor: the elements' lengths, then their bytes."""
    items = []
    for item in array.reshape(-1).tolist():
        if isinstance(item, str):
            item = item.encode("utf-8")
        if not isinstance(item, bytes):
            raise errors.InvalidArgumentError(
                None, None, "A string tensor holds a %s (%r): only bytes and str cross tasks"
                % (type(item).__name__, item))
        items.append(item)
    return [np.array([len(i) for i in items], dtype="<u8").tobytes()] + items


def decode(message):
    """``(header, [arrays])`` of a message made by :func:`encode`.

    The arrays are read-only views on ``message`` (no copy).

    Raises:
        errors.InvalidArgumentError: if the message is malformed, truncated or too large.
    """
    view = memoryview(message)
    if len(view) < _LENGTH.size or len(view) > MAX_MESSAGE_BYTES:
        raise _malformed("a message of %d bytes" % len(view))
    (head_size,) = _LENGTH.unpack_from(view)
    if head_size > min(MAX_HEADER_BYTES, len(view) - _LENGTH.size):
        raise _malformed("a header of %d bytes in a message of %d" % (head_size, len(view)))
    try:
        header = json.loads(bytes(view[_LENGTH.size:_LENGTH.size + head_size]))
        descriptors = header["tensors"]
    except (ValueError, TypeError, KeyError) as error:
        raise _malformed("an unreadable header (%s)" % error) from None
    if not isinstance(descriptors, list) or len(descriptors) > MAX_TENSORS:
        raise _malformed("a bad tensor list")
    offset = _LENGTH.size + head_size
    arrays = []
    for descriptor in descriptors:
        dtype, shape = _checked(descriptor)
        count = math.prod(shape)  # a Python int: a huge shape cannot wrap around
        if dtype is None:
            array, offset = _decoded_strings(view, offset, shape, count)
            arrays.append(array)
            continue
        nbytes = dtype.itemsize * count
        if nbytes > len(view) - offset:
            raise _malformed("a truncated tensor (%d bytes announced, %d left)"
                             % (nbytes, len(view) - offset))
        arrays.append(np.frombuffer(view[offset:offset + nbytes], dtype=dtype).reshape(shape))
        offset += nbytes
    if offset != len(view):
        raise _malformed("%d bytes after the last tensor" % (len(view) - offset))
    return header, arrays


def _decoded_strings(view, offset, shape, count):
    """A string tensor read at ``offset``: ``(object array of bytes, next offset)``."""
    if 8 * count > len(view) - offset:  # checked before the array of lengths is read
        raise _malformed("a truncated string tensor (%d lengths announced, %d bytes left)"
                         % (count, len(view) - offset))
    lengths = np.frombuffer(view[offset:offset + 8 * count], dtype="<u8")
    offset += 8 * count
    total = int(lengths.sum(dtype=object)) if count else 0  # exact, cannot overflow
    if total > len(view) - offset:
        raise _malformed("a truncated string tensor (%d bytes announced, %d left)"
                         % (total, len(view) - offset))
    array = np.empty(count, dtype=object)
    for i, length in enumerate(lengths.tolist()):
        array[i] = bytes(view[offset:offset + length])
        offset += length
    return array.reshape(shape), offset


def _checked(descriptor):
    """The dtype (None for strings) and shape a tensor descriptor announces, checked."""
    try:
        dtype = None if descriptor["dtype"] == STRING else np.dtype(descriptor["dtype"])
        shape = [int(d) for d in descriptor["shape"]]
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise _malformed("a bad tensor descriptor (%s)" % error) from None
    if (dtype is not None and dtype.kind not in _CROSSING_KINDS) or len(shape) > 32 \
            or any(d < 0 or d > MAX_MESSAGE_BYTES for d in shape):
        raise _malformed("a bad tensor descriptor %r" % (descriptor,))
    return dtype, shape


def _malformed(what):
    return errors.InvalidArgumentError(None, None, "Malformed message: %s" % what)


def proto_payload(tensors, index, message_class, field):
    """The ``message_class`` message a request carries as its tensor ``index``.

    Args:
        field: what the message is, for errors (``"graph_def"``).

    Raises:
        errors.InvalidArgumentError: if the tensor is missing or is not such a message.
    """
    from google.protobuf import message  # loaded with the protos, not with minitf
    if index >= len(tensors):
        raise errors.InvalidArgumentError(None, None, "Malformed request: it has no field %r "
                                          "(tensor %d, a serialized %s)"
                                          % (field, index, message_class.DESCRIPTOR.name))
    try:
        return protos.from_payload(message_class, tensors[index])
    except (message.DecodeError, ValueError) as error:
        raise _malformed("%s is not a serialized %s (%s)"
                         % (field, message_class.DESCRIPTOR.name, error)) from None


def error_header(error):
    """An OpError as a header (``{"error": {"code": ..., "message": ...}}``)."""
    if not isinstance(error, errors.OpError):
        error = errors.InternalError(None, None, "%s: %s" % (type(error).__name__, error))
    return {"error": {"code": error.error_code, "message": error.message}}


def raise_if_error(header):
    """Raises the OpError a reply header carries, if any."""
    record = header.get("error")
    if record is not None:
        cls = errors.exception_type_from_error_code(record["code"])
        raise cls(None, None, record["message"])
