"""The IDX file format, in which MNIST is distributed.

An IDX file is a tiny header followed by a big-endian array in C order::

    byte 0-1   0x00 0x00
    byte 2     the element type: 0x08 uint8, 0x09 int8, 0x0B int16,
               0x0C int32, 0x0D float32, 0x0E float64
    byte 3     the number of dimensions, n
    then       n big-endian uint32 sizes
    then       the data: prod(sizes) elements, big-endian

So the first four bytes, read as a big-endian int, are the *magic number*:
``0x00000803`` = 2051 for MNIST's images (uint8, 3 dimensions: count, 28,
28) and ``0x00000801`` = 2049 for its labels (uint8, 1 dimension).  The
files are usually gzip-compressed (``.gz``); :func:`read_idx` accepts both.

A file is read as untrusted input: the header is read first, and then at
most the number of bytes it declares — streamed through the decompressor in
chunks, so a small ``.gz`` that inflates to gigabytes (a "gzip bomb") is
refused after one byte too many instead of filling the memory.

Reference: http://yann.lecun.com/exdb/mnist/ (bottom of the page).
"""

import gzip
import io
import os
import struct
import zlib

import numpy as np

TYPE_CODES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"


_CHUNK = 1 << 20


def _read_declared(stream, source, file_size=None):
    """The bytes of an IDX file from ``stream``: the header, then exactly the
    data it declares, read in chunks.

    Args:
        stream: a binary file, or a ``GzipFile`` decompressing one.
        source: the file name, for messages.
        file_size: the size of an uncompressed file, checked against the
            declared size before the data is read.

    Raises:
        ValueError: if a decompressed stream holds more bytes than the header
            declares, or an uncompressed file fewer; :func:`parse_idx`
            judges the rest.
    """
    header = stream.read(4)
    if len(header) == 4 and header[:2] == b"\x00\x00":
        header += stream.read(4 * header[3])
    if len(header) < 4 or len(header) != 4 + 4 * header[3] or header[2] not in TYPE_CODES:
        return header  # too short or not IDX: parse_idx names the problem
    shape = struct.unpack(">%dI" % header[3], header[4:])
    declared = int(np.prod(shape, dtype=object)) * np.dtype(TYPE_CODES[header[2]]).itemsize
    if file_size is not None:
        if file_size - len(header) < declared:
            raise ValueError("%s: the IDX header says shape %s (%d bytes of data) but the file "
                             "has only %d bytes of data (truncated or damaged?)"
                             % (source, list(shape), declared, file_size - len(header)))
        return header + stream.read()  # no more than the file's size
    chunks, remaining = [header], declared + 1  # one byte more tells an overlong file
    while remaining > 0:
        chunk = stream.read(min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    if remaining == 0:
        raise ValueError("%s holds more data than the %d bytes its IDX header declares (shape "
                         "%s); refusing it (a damaged file, or a gzip bomb?)"
                         % (source, declared, list(shape)))
    return b"".join(chunks)


def _open_bytes(path):
    """The (decompressed) bytes of the IDX file ``path``, bounded by its header."""
    with open(path, "rb") as f:
        if f.read(2) != _GZIP_MAGIC:
            f.seek(0)
            return _read_declared(f, path, os.fstat(f.fileno()).st_size)
        f.seek(0)
        try:
            with gzip.GzipFile(fileobj=f, mode="rb") as inflated:
                return _read_declared(inflated, path)
        except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
            raise ValueError("%s: damaged gzip data (%s)" % (path, e)) from None


def parse_idx(content, source="<bytes>"):
    """Decodes the bytes of an (uncompressed) IDX file.

    Returns:
        ``(magic, array)``: the magic number and the data as a native-endian array.

    Raises:
        ValueError: for a bad magic number or a size that does not match the header.
    """
    if len(content) < 4:
        raise ValueError("%s is not an IDX file: only %d bytes" % (source, len(content)))
    zero, type_code, ndim = struct.unpack(">HBB", content[:4])
    magic = struct.unpack(">I", content[:4])[0]
    if zero != 0 or type_code not in TYPE_CODES:
        raise ValueError("%s is not an IDX file: bad magic number 0x%08x (expected 0x0000TTNN "
                         "with type code TT in %s)"
                         % (source, magic, ", ".join("0x%02X" % c for c in sorted(TYPE_CODES))))
    header = 4 + 4 * ndim
    if len(content) < header:
        raise ValueError("%s: truncated IDX header (%d dimensions need %d bytes, file has %d)"
                         % (source, ndim, header, len(content)))
    shape = struct.unpack(">%dI" % ndim, content[4:header])
    dtype = np.dtype(TYPE_CODES[type_code])
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(content) - header != expected:
        raise ValueError("%s: the IDX header says shape %s of %s (%d bytes of data) but the file "
                         "has %d bytes of data (truncated or damaged?)"
                         % (source, list(shape), dtype.name, expected, len(content) - header))
    data = np.frombuffer(content, dtype=dtype, offset=header).reshape(shape)
    return magic, data.astype(dtype.newbyteorder("="))


def read_idx(path):
    """Reads an IDX file, gzip-compressed or not (detected from its content).

    Returns:
        ``(magic, array)``.

    Raises:
        ValueError: if the file is not a valid IDX file.
    """
    return parse_idx(_open_bytes(path), os.fspath(path))


def idx_bytes(array):
    """The IDX encoding of ``array`` (its dtype must be one IDX supports)."""
    array = np.asarray(array)
    for code, dtype in TYPE_CODES.items():
        if np.dtype(dtype).newbyteorder("=") == array.dtype.newbyteorder("="):
            break
    else:
        raise ValueError("IDX cannot store dtype %s" % array.dtype)
    header = struct.pack(">HBB", 0, code, array.ndim) + struct.pack(">%dI" % array.ndim,
                                                                    *array.shape)
    return header + np.ascontiguousarray(array, dtype=np.dtype(dtype)).tobytes()


def write_idx(path, array, compress=None):
    """Writes ``array`` as an IDX file; gzip-compressed when ``compress`` is
    True, or when None and ``path`` ends with ``.gz``."""
    data = idx_bytes(array)
    if compress or (compress is None and os.fspath(path).endswith(".gz")):
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as f:
            f.write(data)
        data = buffer.getvalue()
    with open(path, "wb") as f:
        f.write(data)
