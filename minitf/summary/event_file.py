"""Event files: TensorBoard's append-only logs of ``Event`` messages.

A file named ``events.out.tfevents.<seconds>.<hostname>`` is a sequence of
TFRecords, each framing one serialized ``Event`` (TF's ``event_pb2.Event``)::

    uint64 length            little-endian
    uint32 masked_crc32c(length bytes)
    bytes  data[length]
    uint32 masked_crc32c(data)

CRC-32C (Castagnoli) is the checksum; TFRecord "masks" it (rotate right by
15 bits, add a constant) because a CRC of data that itself contains CRCs is
weak.  It is computed by the compiled ``google-crc32c`` package (hardware
CRC instructions: an image summary of 64 x 256 x 256 x 3 bytes takes
milliseconds); the table-driven loop here is kept only as the fallback when
that package has no compiled module, and as the readable definition.  The
first event of every file says ``file_version: "brain.Event:2"``.

Event files are read as untrusted input: a length field larger than what is
left of the file, a checksum that does not match, or a payload that is not
an ``Event`` is a ``DataLossError`` naming the file — nothing is allocated
beyond the file's size.  The writer creates its file exclusively
(``O_EXCL | O_NOFOLLOW``): it never appends to, or follows a symbolic link
planted under, the name it chose in a shared log directory.

Mirrors ``tensorflow/core/lib/io/record_writer.cc``,
``tensorflow/core/util/events_writer.cc`` and ``tf.train.summary_iterator``.
"""

import os
import socket
import struct
import time

from minitf.framework import errors
from minitf.framework import protos

try:
    import google_crc32c
except ImportError:  # the dependency is missing: the loop below does the work
    google_crc32c = None

FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8
_HEADER_BYTES = 12  # uint64 length + uint32 masked CRC of it
_FOOTER_BYTES = 4


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # reversed Castagnoli poly
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def python_crc32c(data):
    """The CRC-32C of ``data``, one table lookup per byte (the definition; slow)."""
    crc = 0xFFFFFFFF
    for byte in bytes(data):
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _compiled_crc32c(data):
    return google_crc32c.value(bytes(data))


#: ``"google-crc32c"`` when the compiled package computes the CRCs, else ``"python"``.
CRC32C_IMPLEMENTATION = ("google-crc32c" if google_crc32c is not None
                         and google_crc32c.implementation == "c" else "python")


def crc32c(data):
    """The CRC-32C of ``data`` (``crc32c(b"123456789") == 0xE3069283``)."""
    if CRC32C_IMPLEMENTATION == "google-crc32c":
        return _compiled_crc32c(data)
    return python_crc32c(data)


def masked_crc32c(data):
    """TFRecord's masked CRC: ``((crc >> 15) | (crc << 17)) + 0xa282ead8`` mod 2**32."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data):
    """``data`` framed as one TFRecord."""
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path):
    """Yields the payload of each TFRecord in the file ``path``.

    Each length field is checked against what is left of the file before
    anything is read, so a damaged or crafted length cannot make the reader
    allocate more than the file holds.

    Raises:
        minitf.errors.DataLossError: on a truncated record, a length larger
            than the rest of the file, or a CRC mismatch (the message names
            the file and the offset).
    """
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        while True:
            offset = f.tell()
            header = f.read(_HEADER_BYTES)
            if not header:
                return
            if len(header) < _HEADER_BYTES:
                raise _data_loss(path, offset, "truncated record header")
            length, header_crc = struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != header_crc:
                raise _data_loss(path, offset, "corrupted record length")
            if length > size - offset - _HEADER_BYTES - _FOOTER_BYTES:
                raise _data_loss(path, offset, "record length %d runs past the end of the "
                                 "file (%d bytes): truncated or damaged" % (length, size))
            data = f.read(length)
            footer = f.read(_FOOTER_BYTES)
            if len(data) < length or len(footer) < _FOOTER_BYTES:
                raise _data_loss(path, offset, "truncated record")
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise _data_loss(path, offset, "corrupted record data")
            yield data


def read_events(path):
    """Yields the ``Event`` messages of the event file ``path``.

    Raises:
        minitf.errors.DataLossError: for a damaged record (see
            :func:`read_records`) or a record that is not an ``Event``.
    """
    event_class = protos.load("event_pb2").Event
    for number, record in enumerate(read_records(path)):
        try:
            yield event_class.FromString(record)
        except Exception as e:  # protobuf's DecodeError, or a RuntimeError from its C++ parser
            raise errors.DataLossError(None, None, "%s: record %d is not a valid Event (%s)"
                                       % (path, number, e)) from None


def _data_loss(path, offset, problem):
    return errors.DataLossError(None, None, "%s in %s at offset %d" % (problem, path, offset))


class EventFileWriter:
    """Appends ``Event`` records to a new event file in ``logdir``.

    The file is created exclusively: when its name is taken — by another
    writer in the same second, or by anything planted there, a symbolic
    link included — the next free name with a counter is used instead
    (``events.out.tfevents.<seconds>.<host>.1``).

    Args:
        logdir: the directory (created if missing).
        filename_suffix: appended to the file name (TF's ``filename_suffix``).
    """

    def __init__(self, logdir, filename_suffix=""):
        os.makedirs(logdir, exist_ok=True)
        self.path, self._file = _create_exclusively(
            os.path.join(logdir, "events.out.tfevents.%010d.%s" % (int(time.time()),
                                                                  socket.gethostname())),
            filename_suffix)
        first = protos.load("event_pb2").Event(wall_time=time.time(), file_version=FILE_VERSION)
        self.write_event(first.SerializeToString())

    def write_event(self, event):
        """Appends one serialized ``Event``."""
        self._file.write(encode_record(event))

    def flush(self):
        self._file.flush()

    def close(self):
        if not self._file.closed:
            self._file.close()

    @property
    def closed(self):
        return self._file.closed


_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _create_exclusively(base, suffix, attempts=1000):
    """``(path, file)`` of a file newly created at ``base + suffix``, or at
    ``base.<n> + suffix`` for the first free ``n``."""
    for counter in range(attempts):
        path = base + ("" if counter == 0 else ".%d" % counter) + suffix
        try:
            fd = os.open(path, _EXCLUSIVE, 0o644)
        except FileExistsError:
            continue
        return path, os.fdopen(fd, "wb")
    raise errors.AlreadyExistsError(None, None, "%s: %d event file names are taken"
                                    % (base, attempts))
