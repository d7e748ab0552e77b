"""``tf.train.Example`` and ``tf.parse_example``/``tf.parse_single_example``.

The Example messages are checked against TF's own descriptors
(``tests/data/example_descriptors.pbtxt``) and wire format; parsing against
the records TensorFlow wrote (``tests/data/examples.tfrecord``, values in
``EXAMPLES`` of ``tests/test_tfrecord.py``) and hand-built ones.
"""

import pathlib

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, text_format

import minitf as tf
from minitf.framework import example_proto

DATA = pathlib.Path(__file__).parent / "data"


def tf_records():
    return list(tf.python_io.tf_record_iterator(str(DATA / "examples.tfrecord")))


def example(**features):
    """A serialized Example: ints, floats or bytes by the type of the first value."""
    made = {}
    for key, values in features.items():
        if values and isinstance(values[0], bytes):
            made[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        elif values and isinstance(values[0], float):
            made[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            made[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=made)).SerializeToString()


# ---- the messages -----------------------------------------------------------------------
def test_descriptors_equal_tensorflows():
    theirs = text_format.Parse((DATA / "example_descriptors.pbtxt").read_text(),
                               descriptor_pb2.FileDescriptorSet())
    assert list(theirs.file) == example_proto.file_descriptor_protos()
    for file_proto in theirs.file:  # and the classes really are built from them
        for message in file_proto.message_type:
            ours = getattr(tf.train, message.name).DESCRIPTOR
            assert ours.full_name == "tensorflow." + message.name
            assert [(f.name, f.number) for f in ours.fields] == \
                [(f.name, f.number) for f in message.field]


def test_wire_format_by_hand():
    feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 300]))
    # field 3 (int64_list), length 5: field 1 packed, length 3: varints 1 and 300
    assert feature.SerializeToString() == b"\x1a\x05\x0a\x03\x01\xac\x02"
    floats = tf.train.FloatList(value=[1.0])
    assert floats.SerializeToString() == b"\x0a\x04\x00\x00\x80\x3f"
    parsed = tf.train.Feature.FromString(b"\x0a\x05\x0a\x03abc")
    assert parsed.WhichOneof("kind") == "bytes_list" and list(parsed.bytes_list.value) == [b"abc"]


def test_messages_behave_as_tfs():
    ex = tf.train.Example()
    ex.features.feature["x"].float_list.value.extend([1.5, 2.5])
    assert list(tf.train.Example.FromString(ex.SerializeToString())
                .features.feature["x"].float_list.value) == [1.5, 2.5]
    assert "float_list" in text_format.MessageToString(ex)
    seq = tf.train.SequenceExample()
    seq.context.feature["length"].int64_list.value.append(2)
    steps = seq.feature_lists.feature_list["tokens"].feature
    steps.add().int64_list.value.append(7)
    steps.add().int64_list.value.append(8)
    again = tf.train.SequenceExample.FromString(seq.SerializeToString())
    assert [f.int64_list.value[0] for f in again.feature_lists.feature_list["tokens"].feature] \
        == [7, 8]
    assert tf.train.FeatureList and tf.train.FeatureLists


# ---- parse_example ----------------------------------------------------------------------
FEATURES = {
    "label": tf.FixedLenFeature([], tf.int64),
    "weights": tf.FixedLenFeature([3], tf.float32),
    "name": tf.FixedLenFeature([], tf.string),
    "tags": tf.VarLenFeature(tf.string),
    "ids": tf.VarLenFeature(tf.int64),
    "score": tf.FixedLenFeature([2], tf.float32, default_value=[0.5, -0.5]),
}


def test_parse_example_of_tensorflows_records(sess):
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.parse_example(serialized, FEATURES)
    assert parsed["label"].shape.as_list() == [None]
    assert parsed["weights"].shape.as_list() == [None, 3]
    assert isinstance(parsed["tags"], tf.SparseTensor)
    assert parsed["tags"].indices.shape.as_list() == [None, 2]
    assert parsed["tags"].dtype == tf.string and parsed["ids"].dtype == tf.int64
    assert parsed["label"].op.type == "ParseExampleV2"
    assert parsed["label"].op.name == "ParseExample/ParseExampleV2"
    values = sess.run(parsed, {serialized: tf_records()})
    assert values["label"].tolist() == [1, 0, 1] and values["label"].dtype == np.int64
    np.testing.assert_array_equal(values["weights"], np.float32(
        [[0.5, 1.5, -2.0], [1.0, 2.0, 3.0], [-1.0, 0.0, 0.25]]))
    assert values["name"].tolist() == [b"alpha", b"beta", b"gamma"]
    assert values["score"].tolist() == [[0.5, -0.5]] * 3  # absent everywhere: the default
    tags = values["tags"]
    assert isinstance(tags, tf.SparseTensorValue)
    assert tags.indices.tolist() == [[0, 0], [0, 1], [2, 0]]
    assert tags.values.tolist() == [b"a", b"b", b"c"]
    assert tags.dense_shape.tolist() == [3, 2]
    ids = values["ids"]  # the last record has no "ids": an empty row
    assert ids.indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert ids.values.tolist() == [1, 2, 3, 7] and ids.dense_shape.tolist() == [3, 3]


def test_parse_single_example(sess):
    record = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(record, FEATURES)
    assert parsed["label"].shape.as_list() == []
    assert parsed["weights"].shape.as_list() == [3]
    assert parsed["ids"].indices.shape.as_list() == [None, 1]
    values = sess.run(parsed, {record: tf_records()[0]})
    assert values["label"] == 1 and values["name"] == b"alpha"
    assert values["weights"].tolist() == [0.5, 1.5, -2.0]
    assert values["ids"].indices.tolist() == [[0], [1], [2]]
    assert values["ids"].values.tolist() == [1, 2, 3]
    assert values["ids"].dense_shape.tolist() == [3]
    dense_ids = tf.sparse_tensor_to_dense(parsed["ids"])
    assert sess.run(dense_ids, {record: tf_records()[1]}).tolist() == [7]


def test_parse_fixed_len_sequence_feature_pads_to_the_longest(sess):
    records = [example(seq=[1, 2, 3, 4]), example(seq=[5, 6]), example(other=[0])]
    parsed = tf.parse_example(records, {
        "seq": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True),
        "padded": tf.FixedLenSequenceFeature([], tf.float32, allow_missing=True,
                                             default_value=-1.0)})
    assert parsed["seq"].shape.as_list() == [3, None, 2]
    values = sess.run(parsed)
    assert values["seq"].tolist() == [[[1, 2], [3, 4]], [[5, 6], [0, 0]], [[0, 0], [0, 0]]]
    assert values["padded"].shape == (3, 0)


def test_tf_io_names_are_the_same():
    assert tf.io.parse_example is tf.parse_example
    assert tf.io.parse_single_example is tf.parse_single_example
    assert tf.io.FixedLenFeature is tf.FixedLenFeature
    assert tf.io.VarLenFeature is tf.VarLenFeature
    assert tf.io.FixedLenSequenceFeature is tf.FixedLenSequenceFeature
    assert repr(tf.FixedLenFeature([], tf.int64)) == \
        "FixedLenFeature(shape=[], dtype=tf.int64, default_value=None)"


# ---- errors, as TF raises them ----------------------------------------------------------
def test_missing_required_feature_names_the_key(sess):
    parsed = tf.parse_example([example(a=[1])], {"b": tf.FixedLenFeature([], tf.string)})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Feature: b \(data type: string\) is required but could not be "
                             r"found") as info:
        sess.run(parsed)
    assert "ParseExampleV2" in str(info.value)


def test_values_of_another_type_or_number(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Key: a, Index: 0.  Data types don't match. Data type: int64 but "
                             "expected type: float"):
        sess.run(tf.parse_example([example(a=[1])], {"a": tf.FixedLenFeature([], tf.float32)}))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Key: b, Index: 1.  Number of float values != expected.  Values "
                             r"size: 2 but output shape: \[3\]"):
        sess.run(tf.parse_example([example(b=[1.0, 2.0, 3.0]), example(b=[1.0, 2.0])],
                                  {"b": tf.FixedLenFeature([3], tf.float32)}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data types don't match"):
        sess.run(tf.parse_example([example(t=[b"x"])], {"t": tf.VarLenFeature(tf.int64)}))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple of stride"):
        sess.run(tf.parse_example([example(s=[1, 2, 3])], {
            "s": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)}))


def test_example_names_appear_in_messages(sess):
    parsed = tf.parse_example([example(a=[1])], {"b": tf.FixedLenFeature([], tf.int64)},
                              example_names=["first"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Name: first, Feature: b"):
        sess.run(parsed)


def test_a_record_that_is_not_an_example(sess):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Could not parse example input, value: 'garbage'"):
        sess.run(tf.parse_example([b"garbage"], {"a": tf.FixedLenFeature([], tf.int64)}))


def test_construction_errors():
    records = tf.placeholder(tf.string, [None])
    with pytest.raises(ValueError, match="features"):
        tf.parse_example(records, {})
    with pytest.raises(ValueError, match="Missing shape for feature a"):
        tf.parse_example(records, {"a": tf.FixedLenFeature(None, tf.int64)})
    with pytest.raises(TypeError, match="int32 not in list of allowed values"):
        tf.parse_example(records, {"a": tf.FixedLenFeature([], tf.int32)})
    with pytest.raises(TypeError, match="float64 not in list of allowed values"):
        tf.parse_example(records, {"a": tf.VarLenFeature(tf.float64)})
    with pytest.raises(ValueError):  # a default that does not fit the shape
        tf.parse_example(records, {"a": tf.FixedLenFeature([2], tf.int64, default_value=[1])})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.parse_example(records, {"a": tf.FixedLenSequenceFeature([], tf.int64)})
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tf.parse_single_example(records, {"a": tf.FixedLenFeature([], tf.int64)})


def test_decode_raw_reads_the_bytes_of_an_array(sess):
    """``tf.decode_raw``, as TF's convert_to_records/fully_connected_reader use it."""
    image = np.arange(6, dtype=np.uint8)
    pixels = tf.decode_raw(tf.constant(image.tobytes()), tf.uint8)
    assert pixels.op.type == "DecodeRaw" and pixels.shape.as_list() == [None]
    np.testing.assert_array_equal(sess.run(pixels), image)
    rows = tf.placeholder(tf.string, [None])
    shorts = tf.decode_raw(rows, tf.int16)
    assert shorts.shape.as_list() == [None, None] and shorts.dtype == tf.int16
    np.testing.assert_array_equal(
        sess.run(shorts, {rows: [b"\x01\x02\x03\x04", b"\x05\x06\x07\x00"]}),
        [[513, 1027], [1541, 7]])  # little endian; a trailing NUL byte is data
    big = tf.decode_raw(tf.constant([b"\x01\x02"]), tf.int16, little_endian=False)
    assert sess.run(big).tolist() == [[258]]
    floats = tf.decode_raw(tf.constant(np.array([1.5, -2.0], np.float32).tobytes()),
                           tf.float32)
    assert sess.run(floats).tolist() == [1.5, -2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple of 2"):
        sess.run(shorts, {rows: [b"abc"]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="all be the same size"):
        sess.run(shorts, {rows: [b"abcd", b"ab"]})
    with pytest.raises(TypeError, match="out_type"):
        tf.decode_raw(tf.constant(b"a"), tf.string)
