"""CPU kernels of the reader ops, and the readers themselves.

A reader lives in the session's resource manager, one per reader op (or per
``shared_name``), like a queue.  :class:`Reader` is TF's ``ReaderBase``: the
work loop that every reader shares — take the next file name from the queue
when there is no current file, read records from it, count what it produced
and finished — around a per-file generator of ``(key, value)`` records that
each kind of reader supplies (``_text_lines``, ``_whole_file``,
``_fixed_length_records``, ``_tf_records``).

A read holds the reader's lock: several threads reading from one reader
(``tf.train.batch(..., num_threads=4)``) take records in turn, each record
once.  Waiting for a file name is the queue's dequeue, with its rules
(``OutOfRangeError`` when the queue is closed and empty,
``CancelledError`` when the session closes).

Mirrors ``tensorflow/core/framework/reader_base.cc`` and
``tensorflow/core/kernels/{text_line,whole_file,fixed_length_record,tf_record}_reader_op.cc``.
"""

import os
import threading
import zlib

import numpy as np

from minitf.plugin import errors, tf_record
from minitf_numpy_cpu.kernels.table import kernel


class Reader:
    """The state of one reader: the current file's records and two counters.

    Args:
        records_of: ``records_of(filename) -> iterator of (key, value)``, bytes.
    """

    def __init__(self, records_of):
        self._records_of = records_of
        self._lock = threading.Lock()
        self._reset_locked()

    def _reset_locked(self):
        self._records = None  # the current file's records; None: take the next file
        self.records_produced = 0
        self.work_units_completed = 0

    def reset(self):
        with self._lock:
            self._reset_locked()

    def read(self, ctx, queue, limit):
        """Up to ``limit`` records, all from one file (at least one).

        A file that is exhausted is finished and the next one started, unless
        records of it are being returned: a read never mixes two files.
        """
        with self._lock:
            records = []
            while len(records) < limit:
                if self._records is None:
                    self._records = self._records_of(_next_filename(ctx, queue))
                record = next(self._records, None)
                if record is None:
                    self._records = None
                    self.work_units_completed += 1
                    if records:
                        break
                    continue
                records.append(record)
            self.records_produced += len(records)
            return records


def _next_filename(ctx, queue):
    """Dequeues the next work item, a file name (TF's ``GetNextWorkLocked``)."""
    element = queue.dequeue(ctx, 1)[0]
    if len(element) != 1 or np.ndim(element[0]) != 0:
        raise ctx.invalid_argument("Expected to dequeue a one-element string tensor")
    name = element[0]
    return name.item() if isinstance(name, np.ndarray) else name


def _path(filename):
    return os.fsdecode(filename)


def _key(filename, number=None):
    key = os.fsencode(filename)
    return key if number is None else key + b":%d" % number


def _open(filename):
    try:
        return open(_path(filename), "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s; No such file or directory"
                                   % _path(filename)) from None


# ---- the kinds of records --------------------------------------------------------------
def _text_lines(filename, skip_header_lines):
    """Lines without ``\\n`` (or ``\\r\\n``), keyed ``file:line`` (from 1,
    counting the skipped header)."""
    with _open(filename) as f:
        for number, line in enumerate(f, start=1):
            if number <= skip_header_lines:
                continue
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield _key(filename, number), line


def _whole_file(filename):
    with _open(filename) as f:
        contents = f.read()
    yield _key(filename), contents


def _file_bytes(filename, encoding):
    """The contents of a file, decompressed for ``encoding`` ``"ZLIB"``/``"GZIP"``."""
    with _open(filename) as f:
        data = f.read()
    wbits = tf_record.window_bits_for(encoding)
    if wbits is None:
        return data
    try:
        return zlib.decompress(data, wbits)
    except zlib.error as error:
        raise errors.DataLossError(None, None, "%s: inflate() failed: %s"
                                   % (_path(filename), error)) from None


def _fixed_length_records(filename, header_bytes, record_bytes, footer_bytes, hop_bytes,
                          encoding):
    """Records of ``record_bytes`` bytes between header and footer, keyed
    ``file:index``; one starts every ``hop_bytes`` (default: every record)."""
    data = _file_bytes(filename, encoding)
    end = len(data) - footer_bytes
    step = hop_bytes or record_bytes
    for index, start in enumerate(range(header_bytes, end - record_bytes + 1, step)):
        yield _key(filename, index), data[start:start + record_bytes]


def _tf_records(filename, compression_type):
    """The records of a TFRecord file, keyed ``file:offset``."""
    for offset, record in tf_record.read_records(_path(filename), compression_type):
        yield _key(filename, offset), record


# ---- kernels ---------------------------------------------------------------------------
def _reader(ctx, shared_name, records_of):
    """The reader of this op (or ``shared_name``), created on first use."""
    return ctx.resources.kernel_state(("reader", shared_name or ctx.op.name),
                                      lambda: Reader(records_of))


@kernel("TextLineReaderV2")
def text_line_reader(ctx, skip_header_lines, container, shared_name):
    return _reader(ctx, shared_name, lambda name: _text_lines(name, skip_header_lines))


@kernel("WholeFileReaderV2")
def whole_file_reader(ctx, container, shared_name):
    return _reader(ctx, shared_name, _whole_file)


@kernel("FixedLengthRecordReaderV2")
def fixed_length_record_reader(ctx, header_bytes, record_bytes, footer_bytes, hop_bytes,
                               encoding, container, shared_name):
    if record_bytes <= 0:
        raise ctx.invalid_argument("record_bytes must be > 0 not %d" % record_bytes)
    if min(header_bytes, footer_bytes, hop_bytes) < 0:
        raise ctx.invalid_argument("header_bytes, footer_bytes and hop_bytes must be >= 0")
    if encoding not in ("", "ZLIB", "GZIP"):
        raise ctx.invalid_argument("Unsupported encoding: %s" % encoding)
    return _reader(ctx, shared_name, lambda name: _fixed_length_records(
        name, header_bytes, record_bytes, footer_bytes, hop_bytes, encoding))


@kernel("TFRecordReaderV2")
def tf_record_reader(ctx, compression_type, container, shared_name):
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ctx.invalid_argument("Unsupported compression_type: %s." % compression_type)
    return _reader(ctx, shared_name, lambda name: _tf_records(name, compression_type))


@kernel("ReaderReadV2")
def reader_read(ctx, reader, queue):
    (key, value), = reader.read(ctx, queue, 1)
    return np.array(key, dtype=object), np.array(value, dtype=object)  # scalar strings


@kernel("ReaderReadUpToV2")
def reader_read_up_to(ctx, reader, queue, num_records):
    if num_records <= 0:
        raise ctx.invalid_argument("num_records must be > 0 not %d" % num_records)
    records = reader.read(ctx, queue, int(num_records))
    keys = np.empty(len(records), dtype=object)
    values = np.empty(len(records), dtype=object)
    keys[:], values[:] = [r[0] for r in records], [r[1] for r in records]
    return keys, values


@kernel("ReaderNumRecordsProducedV2")
def reader_num_records_produced(ctx, reader):
    return np.int64(reader.records_produced)


@kernel("ReaderNumWorkUnitsCompletedV2")
def reader_num_work_units_completed(ctx, reader):
    return np.int64(reader.work_units_completed)


@kernel("ReaderResetV2")
def reader_reset(ctx, reader):
    reader.reset()
