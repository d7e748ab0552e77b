"""``tf.python_io``: TFRecord files, written and read outside the graph.

TF1's name for :mod:`minitf.lib.io.tf_record` (TF 1.13+ also spells these
``tf.io.TFRecordWriter`` ...)::

    with tf.python_io.TFRecordWriter("train.tfrecord") as writer:
        writer.write(example.SerializeToString())
    for record in tf.python_io.tf_record_iterator("train.tfrecord"):
        ...
"""

from minitf.lib.io.tf_record import (  # noqa: F401 - the public API
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
