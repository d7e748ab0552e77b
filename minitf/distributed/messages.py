"""The messages of the cluster's RPCs: a small JSON header plus raw tensor bytes.

TF's master and worker services exchange protocol buffers whose tensors are
``TensorProto``\\ s.  minitf keeps the header readable and the tensors raw::

    +---------+-------------------------+-------------+-------------+
    | 8 bytes | header: UTF-8 JSON      | tensor 0    | tensor 1 ...|
    | length  | {"method": ..., ...,    | raw bytes   | raw bytes   |
    | of hdr  |  "tensors": [{"dtype":  | (C order)   |             |
    |         |  "<f4", "shape": [2]}]} |             |             |
    +---------+-------------------------+-------------+-------------+

Decoding checks every size against the limits *before* allocating: the header
length, the number of tensors and each tensor's byte count (from its dtype
and shape) must fit what actually arrived and :data:`MAX_MESSAGE_BYTES`.  A
malformed, truncated or oversized message is an ``InvalidArgumentError``, never
a crash of the server that received it.  Nothing is ever unpickled: only plain
numeric and boolean dtypes cross (no Python objects).
"""

import json
import struct

import numpy as np

from minitf.framework import errors

#: The largest message a task accepts (tensors included).  gRPC's own limit
#: is lifted to this (its 4 MiB default would cap a step).
MAX_MESSAGE_BYTES = (1 << 31) - 1
MAX_HEADER_BYTES = 64 << 20
MAX_TENSORS = 1 << 16
_LENGTH = struct.Struct("<Q")
_CROSSING_KINDS = "biufc"  # bool, integers, floats, complex: plain bytes


def encode(header, tensors=()):
    """``header`` (a JSON-compatible dict) and NumPy ``tensors`` as one message."""
    arrays = [np.require(np.asarray(t), requirements="C") for t in tensors]
    for array in arrays:
        if array.dtype.kind not in _CROSSING_KINDS:
            raise errors.InvalidArgumentError(
                None, None, "A tensor of dtype %s cannot cross tasks in minitf (only "
                "numbers and booleans do)" % array.dtype)
    header = dict(header, tensors=[{"dtype": a.dtype.str, "shape": list(a.shape)}
                                   for a in arrays])
    head = json.dumps(header).encode()
    return b"".join([_LENGTH.pack(len(head)), head] + [a.tobytes() for a in arrays])


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
        nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if nbytes > len(view) - offset:
            raise _malformed("a truncated tensor (%d bytes announced, %d left)"
                             % (nbytes, len(view) - offset))
        arrays.append(np.frombuffer(view[offset:offset + nbytes], dtype=dtype).reshape(shape))
        offset += nbytes
    if offset != len(view):
        raise _malformed("%d bytes after the last tensor" % (len(view) - offset))
    return header, arrays


def _checked(descriptor):
    """The dtype and shape a tensor descriptor announces, checked."""
    try:
        dtype = np.dtype(descriptor["dtype"])
        shape = [int(d) for d in descriptor["shape"]]
    except (KeyError, TypeError, ValueError) as error:
        raise _malformed("a bad tensor descriptor (%s)" % error) from None
    if dtype.kind not in _CROSSING_KINDS or any(d < 0 for d in shape) or len(shape) > 32:
        raise _malformed("a bad tensor descriptor %r" % (descriptor,))
    return dtype, shape


def _malformed(what):
    return errors.InvalidArgumentError(None, None, "Malformed message: %s" % what)


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
