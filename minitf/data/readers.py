"""Datasets read from files: ``tf.data.TextLineDataset``, ``tf.data.TFRecordDataset``.

A text file becomes a dataset of its lines (scalar strings, line endings
removed), read lazily as the iterator asks for them — the usual start of a
CSV pipeline, with :func:`~minitf.ops.parsing_ops.decode_csv` to split each
line into typed columns::

    def parse(line):
        *features, label = tf.decode_csv(line, [[0.0]] * 4 + [[0]])
        return tf.stack(features), label

    dataset = (tf.data.TextLineDataset(["train-1.csv", "train-2.csv"])
               .skip(1)              # (one header line in all, here)
               .map(parse)
               .shuffle(1000).batch(32))

Several files are read one after the other; for one header per file, use
``Dataset.from_tensor_slices(files).flat_map(lambda f:
TextLineDataset(f).skip(1))``.  ``compression_type`` ``"GZIP"`` or
``"ZLIB"`` reads compressed files.  A file that does not exist is a
``NotFoundError`` when the iterator reaches it, not when the dataset is built.

A TFRecord file becomes a dataset of its records (scalar strings), usually
serialized ``tf.train.Example`` protos parsed by ``map``::

    def parse(record):
        features = tf.parse_single_example(record, {
            "image": tf.FixedLenFeature([784], tf.float32),
            "label": tf.FixedLenFeature([], tf.int64)})
        return features["image"], features["label"]

    dataset = tf.data.TFRecordDataset("train.tfrecord").map(parse).batch(32)

A damaged record is a ``DataLossError`` when the iterator reaches it.

Mirrors ``tensorflow/python/data/ops/readers.py``.
"""

from minitf.data.dataset import Dataset
from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, dataset_ops

_DEFAULT_BUFFER_SIZE = 256 * 1024  # TF's default read buffer (accepted, unused)


class TextLineDataset(Dataset):
    """The lines of one or more text files (``tf.data.TextLineDataset``).

    Args:
        filenames: a string, a list of strings or a string tensor (e.g. a
            placeholder fed when an initializable iterator starts).
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted for compatibility (files are read line by line).

    Example:
        >>> lines = tf.data.TextLineDataset("iris.csv").skip(1)
        >>> lines.output_types, lines.output_shapes
        (tf.string, TensorShape([]))
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None):
        variant = dataset_ops.dataset_op(dataset_ops.TEXT_LINE_DATASET,
                                         _file_inputs(filenames, compression_type, buffer_size))
        super().__init__(variant, dtypes.string, TensorShape([]))


class TFRecordDataset(Dataset):
    """The records of one or more TFRecord files (``tf.data.TFRecordDataset``).

    Args:
        filenames: a string, a list of strings or a string tensor.
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted for compatibility (records are read one by one).
        num_parallel_reads: accepted; the files are read one after the other
            (TF reads that many at once and interleaves their records).

    Example:
        >>> records = tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"])
        >>> records.output_types, records.output_shapes
        (tf.string, TensorShape([]))
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        variant = dataset_ops.dataset_op(dataset_ops.TF_RECORD_DATASET,
                                         _file_inputs(filenames, compression_type, buffer_size))
        super().__init__(variant, dtypes.string, TensorShape([]))


def _file_inputs(filenames, compression_type, buffer_size):
    """The three inputs of a file dataset op: file names (a vector),
    compression type and buffer size."""
    filenames = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    filenames = array_ops.reshape(filenames, [-1], name="flat_filenames")
    with filenames.graph.as_default():
        compression = convert_to_tensor(compression_type or "", dtype=dtypes.string,
                                        name="compression_type")
        buffer = convert_to_tensor(buffer_size or _DEFAULT_BUFFER_SIZE, dtype=dtypes.int64,
                                   name="buffer_size")
    return [filenames, compression, buffer]
