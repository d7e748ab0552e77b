"""Writes the TFRecord files that tests/test_tfrecord.py and
tests/test_example_parsing.py read, *with TensorFlow*, so that the tests
check minitf against TF's own bytes.

Run once, from the repository root, with a Python that has TensorFlow
(2.x; the TF1 APIs are used through ``tf.compat.v1``)::

    /path/to/tf-venv/bin/python tests/data/make_tfrecords.py

It writes, into ``tests/data/``:

* ``examples.tfrecord`` — the three ``tf.train.Example`` records of
  :data:`EXAMPLES`, uncompressed;
* ``examples.tfrecord.gz`` — the same records, ``TFRecordCompressionType.GZIP``;
* ``examples.tfrecord.zlib`` — the same records, ``TFRecordCompressionType.ZLIB``;
* ``example_descriptors.pbtxt`` — TF's ``FileDescriptorProto`` of
  ``feature.proto`` and ``example.proto`` (a ``FileDescriptorSet`` in text
  format, file options cleared), which minitf's descriptors must equal.

Each Example is serialized with ``SerializeToString(deterministic=True)``
(map keys sorted), so that minitf's ``tf.train.Example`` built from the same
values must give the very same bytes.  The tests repeat :data:`EXAMPLES`
literally instead of importing this file (it imports TensorFlow).
"""

import os

import tensorflow as tf
from google.protobuf import descriptor_pb2, text_format
from tensorflow.core.example import example_pb2, feature_pb2

HERE = os.path.dirname(os.path.abspath(__file__))

#: Per record: label (int64), weights (3 floats), name (bytes),
#: tags (any number of bytes), ids (any number of int64, absent in the last).
EXAMPLES = [
    {"label": [1], "weights": [0.5, 1.5, -2.0], "name": [b"alpha"], "tags": [b"a", b"b"],
     "ids": [1, 2, 3]},
    {"label": [0], "weights": [1.0, 2.0, 3.0], "name": [b"beta"], "tags": [], "ids": [7]},
    {"label": [1], "weights": [-1.0, 0.0, 0.25], "name": [b"gamma"], "tags": [b"c"]},
]


def feature(key, values):
    if key in ("name", "tags"):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if key == "weights":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def serialized(example):
    features = tf.train.Features(feature={k: feature(k, v) for k, v in example.items()})
    return tf.train.Example(features=features).SerializeToString(deterministic=True)


def main():
    v1 = tf.compat.v1
    kinds = {"examples.tfrecord": None,
             "examples.tfrecord.gz": v1.python_io.TFRecordCompressionType.GZIP,
             "examples.tfrecord.zlib": v1.python_io.TFRecordCompressionType.ZLIB}
    for filename, compression in kinds.items():
        options = v1.python_io.TFRecordOptions(compression) if compression else None
        with v1.python_io.TFRecordWriter(os.path.join(HERE, filename), options) as writer:
            for example in EXAMPLES:
                writer.write(serialized(example))
    descriptors = descriptor_pb2.FileDescriptorSet()
    for module in (feature_pb2, example_pb2):
        file_proto = descriptors.file.add()
        module.DESCRIPTOR.CopyToProto(file_proto)
        file_proto.ClearField("options")  # java_package and the like
    with open(os.path.join(HERE, "example_descriptors.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(descriptors))


if __name__ == "__main__":
    main()
