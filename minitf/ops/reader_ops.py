"""Queue-based file readers: ``tf.TextLineReader``, ``tf.TFRecordReader`` and the others.

Before ``tf.data``, a TF1 program read files with a *reader* fed by a queue
of file names::

    filename_queue = tf.train.string_input_producer(["a.csv", "b.csv"])
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(filename_queue)      # "a.csv:2", b"5.1,3.5,1.4"
    columns = tf.decode_csv(value, record_defaults=[[0.0]] * 4 + [[0]])

A reader is state in the session, like a queue: the reader op
(``TextLineReaderV2`` ...) outputs a ``resource`` handle to an object that
remembers which file it is reading and how far it got.  Each run of
``ReaderReadV2(reader, queue)`` returns the next record of the current file
as ``(key, value)``; when the file is exhausted it dequeues the next file
name from the queue — blocking while the queue is empty — and when the
queue is closed and empty it raises ``OutOfRangeError``, which ends the
input (``tf.train.start_queue_runners`` and ``tf.train.Coordinator`` take it
from there).  Several ``read`` ops on one reader share its position.

The readers and their records:

==============================  =========================================  ==================
reader                          one record                                 key
==============================  =========================================  ==================
``TextLineReader``              a line, without its ``\\n``                 ``file:line``
``WholeFileReader``             the whole file                             ``file``
``FixedLengthRecordReader``     ``record_bytes`` bytes, after a header     ``file:index``
``TFRecordReader``              a TFRecord record                          ``file:offset``
==============================  =========================================  ==================

(line numbers count from 1 and include skipped header lines; indices count
records from 0; offsets are in bytes.)

Mirrors ``tensorflow/python/ops/io_ops.py`` (``ReaderBase`` and its
subclasses) and ``tensorflow/core/framework/reader_base.cc``; the kernels are
``plugins/numpy_cpu/kernels/readers.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _scalars(op):
    return [TensorShape([])] * len(op.outputs)


def _reader_op(name, attrs, doc):
    """Declares a reader op: its output is the reader's ``resource`` handle."""
    return define_op(name, outputs=("reader_handle",),
                     attrs=dict(attrs, container="", shared_name=""), shape_fn=_scalars,
                     dtype_fn=lambda op: [dtypes.resource], stateful=True, doc=doc,
                     stacklevel=2)


_text_line_reader = _reader_op("TextLineReaderV2", {"skip_header_lines": 0},
                               "A reader of the lines of text files.")
_whole_file_reader = _reader_op("WholeFileReaderV2", {},
                                "A reader of whole files, one record each.")
_fixed_length_record_reader = _reader_op(
    "FixedLengthRecordReaderV2",
    {"header_bytes": 0, "record_bytes": None, "footer_bytes": 0, "hop_bytes": 0, "encoding": ""},
    "A reader of fixed-length records between a header and a footer.")
_tf_record_reader = _reader_op("TFRecordReaderV2", {"compression_type": ""},
                               "A reader of the records of TFRecord files.")

_read = define_op(
    "ReaderReadV2", inputs=("reader_handle", "queue_handle"), outputs=("key", "value"),
    shape_fn=_scalars, dtype_fn=lambda op: [dtypes.string, dtypes.string], stateful=True,
    doc="The next (key, value) record; dequeues the next file when one ends.")
_read_up_to = define_op(
    "ReaderReadUpToV2", inputs=("reader_handle", "queue_handle", "num_records"),
    outputs=("keys", "values"), shape_fn=lambda op: [TensorShape([None])] * 2,
    dtype_fn=lambda op: [dtypes.string, dtypes.string], stateful=True,
    doc="Up to num_records records of one file.")
_num_records_produced = define_op(
    "ReaderNumRecordsProducedV2", inputs=("reader_handle",), outputs=("records_produced",),
    shape_fn=_scalars, dtype_fn=lambda op: [dtypes.int64], stateful=True,
    doc="How many records the reader has produced.")
_num_work_units_completed = define_op(
    "ReaderNumWorkUnitsCompletedV2", inputs=("reader_handle",), outputs=("units_completed",),
    shape_fn=_scalars, dtype_fn=lambda op: [dtypes.int64], stateful=True,
    doc="How many files the reader has finished.")
_reset = define_op(
    "ReaderResetV2", inputs=("reader_handle",), outputs=(), shape_fn=lambda op: [],
    stateful=True, doc="Forgets the current file and the counts.")
not_differentiable("TextLineReaderV2", "WholeFileReaderV2", "FixedLengthRecordReaderV2",
                   "TFRecordReaderV2", "ReaderReadV2", "ReaderReadUpToV2",
                   "ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2")


def _queue_ref(queue):
    """A queue's resource handle (``queue`` is a ``tf.FIFOQueue`` or its handle)."""
    return queue.queue_ref if hasattr(queue, "queue_ref") else queue


class ReaderBase:
    """The ops on one reader resource (``tf.ReaderBase``).

    Args:
        reader_ref: the reader op's ``resource`` output.
        supports_serialize: whether the reader's state can be saved (never, here).
    """

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self):
        return self._supports_serialize

    def read(self, queue, name=None):
        """The next record: a pair of scalar string tensors ``(key, value)``.

        Args:
            queue: the queue of file names (a ``tf.FIFOQueue`` or its handle).
            name: the op's name (default ``ReaderReadV2``).

        Returns:
            ``(key, value)``; running them raises ``OutOfRangeError`` once the
            queue is closed and every file read.
        """
        return tuple(apply_op(_read, [self._reader_ref, _queue_ref(queue)],
                              name=name or "ReaderReadV2"))

    def read_up_to(self, queue, num_records, name=None):
        """Up to ``num_records`` records, all from one file: ``(keys, values)``,
        two string vectors (fewer records at the end of a file)."""
        num_records = convert_to_tensor(num_records, dtype=dtypes.int64, name="num_records")
        return tuple(apply_op(_read_up_to, [self._reader_ref, _queue_ref(queue), num_records],
                              name=name or "ReaderReadUpToV2"))

    def num_records_produced(self, name=None):
        """An int64 scalar: how many records ``read`` has produced."""
        return apply_op(_num_records_produced, [self._reader_ref],
                        name=name or "ReaderNumRecordsProducedV2")

    def num_work_units_completed(self, name=None):
        """An int64 scalar: how many files the reader has finished."""
        return apply_op(_num_work_units_completed, [self._reader_ref],
                        name=name or "ReaderNumWorkUnitsCompletedV2")

    def reset(self, name=None):
        """An op that forgets the current file and zeroes the counts."""
        return apply_op(_reset, [self._reader_ref], name=name or "ReaderResetV2")


class TextLineReader(ReaderBase):
    """Reads the lines of files (``tf.TextLineReader``).

    Args:
        skip_header_lines: lines to skip at the start of each file.
        name: the reader op's name.
    """

    def __init__(self, skip_header_lines=None, name=None):
        ref = apply_op(_text_line_reader, [], attrs={"skip_header_lines": skip_header_lines or 0},
                       name=name or "TextLineReaderV2")
        super().__init__(ref)


class WholeFileReader(ReaderBase):
    """Reads each file as one record, keyed by its name (``tf.WholeFileReader``)."""

    def __init__(self, name=None):
        super().__init__(apply_op(_whole_file_reader, [], name=name or "WholeFileReaderV2"))


class FixedLengthRecordReader(ReaderBase):
    """Reads records of ``record_bytes`` bytes (``tf.FixedLengthRecordReader``),
    e.g. CIFAR-10's binary files.

    Args:
        record_bytes: the length of a record.
        header_bytes: bytes to skip at the start of each file.
        footer_bytes: bytes to ignore at the end of each file.
        hop_bytes: if positive, a record starts every ``hop_bytes`` bytes
            (records then overlap or leave gaps).
        name: the reader op's name.
        encoding: ``""`` or ``"ZLIB"``/``"GZIP"`` for compressed files.
    """

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        attrs = {"record_bytes": record_bytes, "header_bytes": header_bytes or 0,
                 "footer_bytes": footer_bytes or 0, "hop_bytes": hop_bytes or 0,
                 "encoding": encoding or ""}
        super().__init__(apply_op(_fixed_length_record_reader, [], attrs=attrs,
                                  name=name or "FixedLengthRecordReaderV2"))


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files (``tf.TFRecordReader``).

    Args:
        name: the reader op's name.
        options: a ``tf.python_io.TFRecordOptions`` (or a compression name).
    """

    def __init__(self, name=None, options=None):
        if options is None or isinstance(options, str):
            compression_type = options or ""
        else:  # TFRecordOptions, whose compression_type may be an enum value
            compression_type = options.get_compression_type_string(options)
        super().__init__(apply_op(_tf_record_reader, [],
                                  attrs={"compression_type": compression_type},
                                  name=name or "TFRecordReaderV2"))


__all__ = ["FixedLengthRecordReader", "ReaderBase", "TFRecordReader", "TextLineReader",
           "WholeFileReader"]
