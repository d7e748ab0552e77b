"""Event files: TensorBoard's append-only logs of ``Event`` messages.

A file named ``events.out.tfevents.<seconds>.<hostname>`` is a sequence of
TFRecords, each framing one serialized ``Event`` (TF's ``event_pb2.Event``)::

    uint64 length            little-endian
    uint32 masked_crc32c(length bytes)
    bytes  data[length]
    uint32 masked_crc32c(data)

CRC-32C (Castagnoli) is the checksum; TFRecord "masks" it (rotate right by
15 bits, add a constant) because a CRC of data that itself contains CRCs is
weak.  The first event of every file says ``file_version: "brain.Event:2"``.

Mirrors ``tensorflow/core/lib/io/record_writer.cc``,
``tensorflow/core/util/events_writer.cc`` and ``tf.train.summary_iterator``.
"""

import os
import socket
import struct
import time

from minitf.framework import errors
from minitf.framework import protos

FILE_VERSION = "brain.Event:2"
_MASK_DELTA = 0xA282EAD8


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # reversed Castagnoli poly
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    """The CRC-32C of ``data`` (``crc32c(b"123456789") == 0xE3069283``)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


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

    Raises:
        minitf.errors.DataLossError: on a truncated record or a CRC mismatch.
    """
    with open(path, "rb") as f:
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(None, None, "truncated record header in %s" % path)
            length, header_crc = struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != header_crc:
                raise errors.DataLossError(None, None, "corrupted record length in %s" % path)
            data = f.read(length)
            footer = f.read(4)
            if len(data) < length or len(footer) < 4:
                raise errors.DataLossError(None, None, "truncated record in %s" % path)
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise errors.DataLossError(None, None, "corrupted record data in %s" % path)
            yield data


class EventFileWriter:
    """Appends ``Event`` records to a new event file in ``logdir``.

    Args:
        logdir: the directory (created if missing).
        filename_suffix: appended to the file name (TF's ``filename_suffix``).
    """

    def __init__(self, logdir, filename_suffix=""):
        os.makedirs(logdir, exist_ok=True)
        self.path = os.path.join(logdir, "events.out.tfevents.%010d.%s%s"
                                 % (int(time.time()), socket.gethostname(), filename_suffix))
        self._file = open(self.path, "ab")
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
