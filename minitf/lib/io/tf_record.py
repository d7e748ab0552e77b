"""TFRecord files: ``tf.python_io.TFRecordWriter`` and ``tf_record_iterator``.

A TFRecord file is a sequence of byte strings — usually serialized
``tf.train.Example`` protos — each framed so that a reader can find the next
one and tell a damaged one.  Every record is::

    uint64  length                      little-endian
    uint32  masked_crc32c(length)       the CRC of those 8 bytes
    byte    data[length]
    uint32  masked_crc32c(data)

The checksum is CRC-32C (Castagnoli), *masked* — rotated right by 15 bits
plus ``0xa282ead8`` — because computing a CRC over data that itself holds
CRCs is weak.  With ``TFRecordCompressionType.ZLIB`` or ``GZIP`` the whole
stream of such records goes through zlib (as a zlib or a gzip stream);
offsets then count uncompressed bytes.

Writing::

    with tf.python_io.TFRecordWriter("train.tfrecord") as writer:
        for features, label in data:
            writer.write(make_example(features, label).SerializeToString())

and reading, outside the graph::

    for record in tf.python_io.tf_record_iterator("train.tfrecord"):
        example = tf.train.Example.FromString(record)

or in the graph, with ``tf.data.TFRecordDataset`` or ``tf.TFRecordReader``,
whose kernels read through :func:`read_records` here.  A damaged record is
a ``DataLossError`` (``corrupted record at 12``); a file that ends inside a
record header ends the file, as in TF.

Like TF's writer, ``TFRecordWriter`` writes straight to ``path`` (a reader
may follow a file still being written); it is not an atomic write.

Mirrors ``tensorflow/python/lib/io/tf_record.py`` and
``tensorflow/core/lib/io/record_{writer,reader}.cc``.
"""

import os
import struct
import zlib

import google_crc32c

from minitf.framework import errors

_HEADER = struct.Struct("<QI")  # length, masked CRC of the length
_FOOTER = struct.Struct("<I")  # masked CRC of the data
_MASK_DELTA = 0xA282EAD8
_READ_CHUNK = 256 * 1024  # TF's default input buffer size


def masked_crc32c(data):
    """The masked CRC-32C of ``data`` that TFRecord headers and footers hold.

    Example:
        >>> hex(masked_crc32c(b"123456789"))  # CRC-32C 0xe3069283, masked
        '0xc78ab0e5'
    """
    crc = google_crc32c.value(bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data):
    """``data`` framed as one TFRecord: header, data, footer."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + _FOOTER.pack(masked_crc32c(data)))


# ---- options ------------------------------------------------------------------------
class TFRecordCompressionType:
    """How the records are compressed (``tf.python_io.TFRecordCompressionType``)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """How a TFRecord file is compressed (``tf.python_io.TFRecordOptions``).

    Args:
        compression_type: a :class:`TFRecordCompressionType`, or its name
            (``"GZIP"``, ``"ZLIB"``, ``""``), or None for none.
        flush_mode: the zlib flush of ``TFRecordWriter.flush`` (default
            ``Z_NO_FLUSH``: data is handed to the compressor, which emits it
            when it sees fit).
        input_buffer_size, output_buffer_size: accepted for compatibility.
        window_bits: zlib's window size, 8..15 (default 15).
        compression_level: 0..9, or -1 for zlib's default.
        compression_method: zlib's method (``Z_DEFLATED``).
        mem_level: zlib's memory level (TF's default 9).
        compression_strategy: zlib's strategy (default ``Z_DEFAULT_STRATEGY``).

    Raises:
        ValueError: for an unknown compression type.
    """

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        if isinstance(compression_type, str):
            names = {v: k for k, v in self.compression_type_map.items()}
            if compression_type not in names:
                raise ValueError('Not a valid compression_type: "%s"' % compression_type)
            compression_type = names[compression_type]
        elif compression_type not in (None,) + tuple(self.compression_type_map):
            raise ValueError('Not a valid compression_type: "%s"' % (compression_type,))
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """``"ZLIB"``, ``"GZIP"`` or ``""`` for ``options`` (options, a name or None)."""
        if not options:
            return ""
        if not isinstance(options, cls):
            options = cls(options)
        return cls.compression_type_map[options.compression_type or TFRecordCompressionType.NONE]

    def _zlib_arguments(self):
        """``(level, method, wbits, mem_level, strategy)`` for ``zlib.compressobj``."""
        wbits = self.window_bits or zlib.MAX_WBITS
        if self.compression_type == TFRecordCompressionType.GZIP:
            wbits += 16  # zlib's way of asking for a gzip header and trailer
        return (zlib.Z_DEFAULT_COMPRESSION if self.compression_level is None
                else self.compression_level,
                self.compression_method or zlib.DEFLATED, wbits,
                9 if self.mem_level is None else self.mem_level,
                self.compression_strategy or zlib.Z_DEFAULT_STRATEGY)


def _as_options(options):
    """``options`` — None, a compression name or a TFRecordOptions — as TFRecordOptions."""
    return options if isinstance(options, TFRecordOptions) else TFRecordOptions(options or None)


def window_bits_for(compression_type):
    """zlib's ``wbits`` that reads ``"ZLIB"`` or ``"GZIP"``; None for no compression.

    Raises:
        ValueError: for another compression type.
    """
    try:
        return {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS + 16}[compression_type]
    except KeyError:
        raise ValueError("Unsupported compression_type: %s." % compression_type) from None


# ---- writing ------------------------------------------------------------------------
class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.python_io.TFRecordWriter``).

    Args:
        path: the file to create (an existing one is replaced).
        options: a :class:`TFRecordOptions`, a compression name or None.

    Raises:
        NotFoundError: if the file's directory does not exist.

    Example:
        >>> with tf.python_io.TFRecordWriter("/tmp/a.tfrecord") as writer:
        ...     writer.write(b"first")
        ...     writer.write(b"second")
        >>> list(tf.python_io.tf_record_iterator("/tmp/a.tfrecord"))
        [b'first', b'second']
    """

    def __init__(self, path, options=None):
        path = os.fspath(path)
        options = _as_options(options)
        try:
            self._file = open(path, "wb")
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, "%s; No such file or directory"
                                       % path) from None
        self._compressor = None
        self._flush_mode = zlib.Z_NO_FLUSH
        if options.compression_type in (TFRecordCompressionType.ZLIB,
                                        TFRecordCompressionType.GZIP):
            self._compressor = zlib.compressobj(*options._zlib_arguments())
            if options.flush_mode is not None:
                self._flush_mode = options.flush_mode

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _check_open(self):
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")

    def write(self, record):
        """Appends one record: ``bytes`` (a ``str`` is written as UTF-8)."""
        self._check_open()
        if isinstance(record, str):
            record = record.encode("utf-8")
        framed = encode_record(bytes(record))
        self._file.write(self._compressor.compress(framed) if self._compressor else framed)

    def flush(self):
        """Hands what was written to the file (through the compressor's ``flush_mode``)."""
        self._check_open()
        if self._compressor is not None and self._flush_mode != zlib.Z_NO_FLUSH:
            self._file.write(self._compressor.flush(self._flush_mode))
        self._file.flush()

    def close(self):
        """Ends the compressed stream, if any, and closes the file (again: no-op)."""
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None


# ---- reading ------------------------------------------------------------------------
class _InflatingReader:
    """``read(n)`` over a zlib or gzip stream (``wbits`` says which)."""

    def __init__(self, file, wbits):
        self._file = file
        self._inflater = zlib.decompressobj(wbits)
        self._buffer = bytearray()

    def read(self, n):
        while len(self._buffer) < n and not self._inflater.eof:
            chunk = self._file.read(_READ_CHUNK)
            if not chunk:
                break
            try:
                self._buffer += self._inflater.decompress(chunk)
            except zlib.error as error:
                raise errors.DataLossError(None, None, "inflate() failed: %s" % error) from None
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data


def read_records(path, compression_type=""):
    """Yields ``(offset, record)`` for each record of a TFRecord file.

    ``offset`` is where the record starts in the (uncompressed) stream: the
    ``"file:offset"`` keys of ``tf.TFRecordReader``.  The file is opened when
    the first record is asked for.

    Args:
        path: the file.
        compression_type: ``""``, ``"ZLIB"`` or ``"GZIP"``.

    Raises:
        NotFoundError: if the file does not exist.
        DataLossError: for a record whose checksum does not match, data that
            ends inside a record, or data that does not decompress.
        ValueError: for another compression type.
    """
    wbits = window_bits_for(compression_type)
    path = os.fsdecode(path)
    try:
        file = open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s; No such file or directory" % path) from None
    with file:
        stream = file if wbits is None else _InflatingReader(file, wbits)
        offset = 0
        while True:
            record = _read_record(stream, offset)
            if record is None:
                return
            yield offset, record
            offset += _HEADER.size + len(record) + _FOOTER.size


def _read_record(stream, offset):
    """The record at ``offset``, or None at the end of the file (TF's
    ``RecordReader::ReadRecord``: a partial header is an end, not an error)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    length, length_crc = _HEADER.unpack(header)
    if masked_crc32c(header[:8]) != length_crc:
        hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
        raise errors.DataLossError(None, None, "corrupted record at %d%s" % (offset, hint))
    data = _read_at_most(stream, length)
    footer = stream.read(_FOOTER.size)
    if len(data) < length or len(footer) < _FOOTER.size:
        raise errors.DataLossError(None, None, "truncated record at %d' failed with Read less "
                                   "bytes than requested" % offset)
    if masked_crc32c(data) != _FOOTER.unpack(footer)[0]:
        raise errors.DataLossError(None, None, "corrupted record at %d"
                                   % (offset + _HEADER.size))
    return data


def _read_at_most(stream, count):
    """Up to ``count`` bytes of ``stream``, read in chunks: a length field that
    claims more than the file holds allocates no more than the file has."""
    chunks = []
    while count > 0:
        chunk = stream.read(min(count, _READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def tf_record_iterator(path, options=None):
    """Yields the records of a TFRecord file, as ``bytes``
    (``tf.python_io.tf_record_iterator``).

    Args:
        path: the file.
        options: a :class:`TFRecordOptions`, a compression name or None.

    Raises:
        NotFoundError: if the file does not exist (on the first ``next``).
        DataLossError: for a damaged record, when the iteration reaches it.
    """
    compression_type = TFRecordOptions.get_compression_type_string(options)
    for _, record in read_records(path, compression_type):
        yield record


__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "encode_record",
           "masked_crc32c", "read_records", "tf_record_iterator", "window_bits_for"]
