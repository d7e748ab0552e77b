"""``tf.train.Example`` and its parts: TF's example protos, built from their descriptors.

An ``Example`` is a map from feature names to lists of values — bytes,
floats or int64s — and is what TFRecord files usually hold::

    example = tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
        "pixels": tf.train.Feature(float_list=tf.train.FloatList(value=image.ravel())),
    }))
    writer.write(example.SerializeToString())

``tf.parse_example`` turns serialized ones back into tensors.  A
``SequenceExample`` adds ``feature_lists``: per name, a list of Features
(one per time step).

These are real protocol-buffer messages, encoded by the ``protobuf``
library, wire-compatible with TF's: same package (``tensorflow``), same
message names, field numbers, types and ``packed`` options as TF's
``tensorflow/core/example/{feature,example}.proto``.  ``tensorboard``'s copy
of TF's protos does not ship these two files, and compiling ``.proto`` files
would need ``protoc`` at build time, so the two files are given below as the
``FileDescriptorProto`` that ``protoc`` would produce (in text format; field
options included, file options left out), and the classes are made from it
when this module is imported — on first use of ``tf.train.Example``, not by
``import minitf``.  ``tests/test_example_parsing.py`` checks these
descriptors against TF's own (``tests/data/example_descriptors.pbtxt``).

They live in a descriptor pool of their own, so a program that also imports
TensorFlow, whose default pool holds the same file names, sees no clash.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

FEATURE_PROTO = """
name: "tensorflow/core/example/feature.proto"
package: "tensorflow"
syntax: "proto3"
message_type {
  name: "BytesList"
  field { name: "value" number: 1 label: LABEL_REPEATED type: TYPE_BYTES }
}
message_type {
  name: "FloatList"
  field { name: "value" number: 1 label: LABEL_REPEATED type: TYPE_FLOAT
          options { packed: true } }
}
message_type {
  name: "Int64List"
  field { name: "value" number: 1 label: LABEL_REPEATED type: TYPE_INT64
          options { packed: true jstype: JS_STRING } }
}
message_type {
  name: "Feature"
  field { name: "bytes_list" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.BytesList" oneof_index: 0 }
  field { name: "float_list" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.FloatList" oneof_index: 0 }
  field { name: "int64_list" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.Int64List" oneof_index: 0 }
  oneof_decl { name: "kind" }
}
message_type {
  name: "Features"
  field { name: "feature" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".tensorflow.Features.FeatureEntry" }
  nested_type {
    name: "FeatureEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".tensorflow.Feature" }
    options { map_entry: true }
  }
}
message_type {
  name: "FeatureList"
  field { name: "feature" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".tensorflow.Feature" }
}
message_type {
  name: "FeatureLists"
  field { name: "feature_list" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".tensorflow.FeatureLists.FeatureListEntry" }
  nested_type {
    name: "FeatureListEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".tensorflow.FeatureList" }
    options { map_entry: true }
  }
}
"""

EXAMPLE_PROTO = """
name: "tensorflow/core/example/example.proto"
package: "tensorflow"
dependency: "tensorflow/core/example/feature.proto"
syntax: "proto3"
message_type {
  name: "Example"
  field { name: "features" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.Features" }
}
message_type {
  name: "SequenceExample"
  field { name: "context" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.Features" }
  field { name: "feature_lists" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.FeatureLists" }
}
"""


def file_descriptor_protos():
    """The two files as ``FileDescriptorProto`` messages (feature.proto first)."""
    return [text_format.Parse(text, descriptor_pb2.FileDescriptorProto())
            for text in (FEATURE_PROTO, EXAMPLE_PROTO)]


def _build_classes():
    pool = descriptor_pool.DescriptorPool()
    for file_proto in file_descriptor_protos():
        pool.Add(file_proto)
    names = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
             "FeatureLists", "Example", "SequenceExample")
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow." + name))
            for name in names]


(BytesList, FloatList, Int64List, Feature, Features, FeatureList, FeatureLists, Example,
 SequenceExample) = _build_classes()

__all__ = ["BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample", "file_descriptor_protos"]
