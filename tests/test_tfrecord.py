"""TFRecord files: ``tf.python_io.TFRecordWriter``/``tf_record_iterator`` and
``tf.data.TFRecordDataset``, checked against the format's definition and
against files written by TensorFlow (``tests/data/make_tfrecords.py``)."""

import os
import pathlib
import struct

import pytest

import minitf as tf
from minitf.lib.io import tf_record

DATA = pathlib.Path(__file__).parent / "data"
TF_FILES = {"": DATA / "examples.tfrecord", "GZIP": DATA / "examples.tfrecord.gz",
            "ZLIB": DATA / "examples.tfrecord.zlib"}

# What make_tfrecords.py wrote, record by record (see EXAMPLES there).
EXAMPLES = [
    {"label": [1], "weights": [0.5, 1.5, -2.0], "name": [b"alpha"], "tags": [b"a", b"b"],
     "ids": [1, 2, 3]},
    {"label": [0], "weights": [1.0, 2.0, 3.0], "name": [b"beta"], "tags": [], "ids": [7]},
    {"label": [1], "weights": [-1.0, 0.0, 0.25], "name": [b"gamma"], "tags": [b"c"]},
]


def crc32c(data):
    """CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), bit by bit: an
    implementation independent of the one minitf uses."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def framed(data):
    """One record as the TFRecord format defines it."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked(crc32c(length))) + data
            + struct.pack("<I", masked(crc32c(data))))


def make_example(values):
    features = {}
    for key, value in values.items():
        if key in ("name", "tags"):
            features[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        elif key == "weights":
            features[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
            features[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
    return tf.train.Example(features=tf.train.Features(feature=features))


def tf_records():
    return list(tf.python_io.tf_record_iterator(str(TF_FILES[""])))


# ---- the format -------------------------------------------------------------------------
def test_crc32c_check_value_and_mask():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert tf_record.masked_crc32c(b"123456789") == masked(0xE3069283)
    assert tf_record.masked_crc32c(b"") == masked(0)


def test_writer_writes_the_format(tmp_path):
    path = tmp_path / "a.tfrecord"
    with tf.python_io.TFRecordWriter(str(path)) as writer:
        writer.write(b"x")
        writer.write(b"")
        writer.write("h\u00e9llo")  # str: written as UTF-8
    assert path.read_bytes() == framed(b"x") + framed(b"") + framed("h\u00e9llo".encode())


def test_roundtrip_of_many_records(tmp_path):
    records = [bytes(range(n % 256)) * (n + 1) for n in range(50)] + [b"\x00" * 100_000]
    for compression in ("", "GZIP", "ZLIB"):
        path = str(tmp_path / ("r" + compression))
        options = tf.python_io.TFRecordOptions(compression or None)
        with tf.python_io.TFRecordWriter(path, options) as writer:
            for record in records:
                writer.write(record)
        assert list(tf.python_io.tf_record_iterator(path, options)) == records
        assert list(tf.python_io.tf_record_iterator(path, compression)) == records


def test_writer_flush_close_and_write_after_close(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    writer = tf.python_io.TFRecordWriter(path)
    writer.write(b"one")
    writer.flush()
    assert list(tf.python_io.tf_record_iterator(path)) == [b"one"]  # visible after flush
    writer.close()
    writer.close()  # a second close does nothing, as in TF
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed"):
        writer.write(b"two")


def test_writer_into_missing_directory_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.python_io.TFRecordWriter(str(tmp_path / "nodir" / "a.tfrecord"))


def test_options_and_compression_names():
    options = tf.python_io.TFRecordOptions
    kind = tf.python_io.TFRecordCompressionType
    assert (kind.NONE, kind.ZLIB, kind.GZIP) == (0, 1, 2)
    assert options.get_compression_type_string(None) == ""
    assert options.get_compression_type_string("GZIP") == "GZIP"
    assert options.get_compression_type_string(options(kind.ZLIB)) == "ZLIB"
    assert options.get_compression_type_string(options(kind.NONE)) == ""
    assert options("GZIP").compression_type == kind.GZIP
    with pytest.raises(ValueError, match="compression_type"):
        options("LZ4")


def test_tf_io_aliases():
    assert tf.io.TFRecordWriter is tf.python_io.TFRecordWriter
    assert tf.io.tf_record_iterator is tf.python_io.tf_record_iterator
    assert tf.io.TFRecordOptions is tf.python_io.TFRecordOptions
    assert tf.io.TFRecordCompressionType is tf.python_io.TFRecordCompressionType


# ---- damaged files ----------------------------------------------------------------------
def _damaged(tmp_path, data):
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(data))
    return str(path)


def test_corrupted_data_is_data_loss_naming_the_offset(tmp_path):
    data = bytearray(framed(b"abc") + framed(b"defg"))
    data[12 + 1] ^= 1  # a byte of the first record's data
    with pytest.raises(tf.errors.DataLossError, match="^corrupted record at 12$"):
        list(tf.python_io.tf_record_iterator(_damaged(tmp_path, data)))


def test_corrupted_length_of_the_first_record_asks_if_it_is_a_tfrecord(tmp_path):
    data = bytearray(framed(b"abc"))
    data[5] ^= 1
    with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 0 \(Is this even"):
        list(tf.python_io.tf_record_iterator(_damaged(tmp_path, data)))


def test_records_before_the_damage_are_read(tmp_path):
    data = bytearray(framed(b"abc") + framed(b"defg"))
    data[19 + 12] ^= 0xFF  # the second record's data
    records = tf.python_io.tf_record_iterator(_damaged(tmp_path, data))
    assert next(records) == b"abc"
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 31"):
        next(records)


def test_truncated_data_is_data_loss_but_a_partial_header_ends_the_file(tmp_path):
    data = framed(b"abc") + framed(b"defg")
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 19"):
        list(tf.python_io.tf_record_iterator(_damaged(tmp_path, data[:-3])))
    # TF's RecordReader: fewer bytes than a header after the last record is the end.
    assert list(tf.python_io.tf_record_iterator(_damaged(tmp_path, data[:22]))) == [b"abc"]


@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_a_huge_length_field_allocates_only_what_the_file_holds(tmp_path, compression):
    import gzip
    import tracemalloc
    length = struct.pack("<Q", 1 << 40)  # a terabyte, with a valid CRC of its length
    data = length + struct.pack("<I", tf_record.masked_crc32c(length)) + b"x" * 100
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(gzip.compress(data) if compression else data)
    tracemalloc.start()
    try:
        with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
            list(tf.python_io.tf_record_iterator(
                str(path), tf.python_io.TFRecordOptions(compression or None)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_wrong_compression_is_data_loss_and_missing_file_not_found(tmp_path):
    with pytest.raises(tf.errors.DataLossError, match="inflate"):
        list(tf.python_io.tf_record_iterator(str(TF_FILES[""]), "GZIP"))
    with pytest.raises(tf.errors.NotFoundError, match="No such file"):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "missing")))


# ---- interop with TensorFlow's files ------------------------------------------------------
@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_reads_files_written_by_tensorflow(compression):
    records = list(tf.python_io.tf_record_iterator(str(TF_FILES[compression]),
                                                   compression or None))
    assert len(records) == len(EXAMPLES)
    for record, expected in zip(records, EXAMPLES):
        features = tf.train.Example.FromString(record).features.feature
        assert set(features) == set(expected)
        for key, values in expected.items():
            kind = features[key].WhichOneof("kind")
            assert list(getattr(features[key], kind).value) == values


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_writes_the_very_bytes_tensorflow_writes(tmp_path, compression):
    path = str(tmp_path / "out")
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression or None)) \
            as writer:
        for record in tf_records():
            writer.write(record)
    assert pathlib.Path(path).read_bytes() == TF_FILES[compression].read_bytes()


def test_examples_serialize_to_tensorflows_bytes(tmp_path):
    ours = [make_example(values).SerializeToString(deterministic=True) for values in EXAMPLES]
    assert ours == tf_records()
    path = str(tmp_path / "examples.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in ours:
            writer.write(record)
    assert pathlib.Path(path).read_bytes() == TF_FILES[""].read_bytes()


# ---- tf.data.TFRecordDataset ------------------------------------------------------------
def _all_elements(sess, dataset):
    next_element = tf.data.make_one_shot_iterator(dataset).get_next()
    elements = []
    with pytest.raises(tf.errors.OutOfRangeError):
        while True:
            elements.append(sess.run(next_element))
    return elements


def test_dataset_reads_the_records_of_several_files(sess, tmp_path):
    other = str(tmp_path / "other.tfrecord")
    with tf.python_io.TFRecordWriter(other) as writer:
        writer.write(b"last")
    dataset = tf.data.TFRecordDataset([str(TF_FILES[""]), other])
    assert dataset.output_types == tf.string
    assert dataset.output_shapes.as_list() == []
    assert _all_elements(sess, dataset) == tf_records() + [b"last"]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_dataset_reads_compressed_files(sess, compression):
    dataset = tf.data.TFRecordDataset(str(TF_FILES[compression]), compression_type=compression,
                                      buffer_size=1024)
    assert _all_elements(sess, dataset) == tf_records()


def test_dataset_filenames_from_a_placeholder(sess):
    files = tf.placeholder(tf.string, [None])
    iterator = tf.data.make_initializable_iterator(tf.data.TFRecordDataset(files))
    sess.run(iterator.initializer, {files: [str(TF_FILES[""])] * 2})
    records = [sess.run(iterator.get_next()) for _ in range(6)]
    assert records == tf_records() * 2


def test_dataset_of_a_damaged_file_is_data_loss(sess, tmp_path):
    data = bytearray(framed(b"abc") + framed(b"defg"))
    data[19 + 12] ^= 0xFF
    next_element = tf.data.make_one_shot_iterator(
        tf.data.TFRecordDataset(_damaged(tmp_path, data))).get_next()
    assert sess.run(next_element) == b"abc"
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 31"):
        sess.run(next_element)


def test_dataset_of_a_missing_file_is_not_found_when_read(sess, tmp_path):
    dataset = tf.data.TFRecordDataset(os.fspath(tmp_path / "missing.tfrecord"))
    with pytest.raises(tf.errors.NotFoundError):
        sess.run(tf.data.make_one_shot_iterator(dataset).get_next())


def test_dataset_with_unknown_compression_is_invalid(sess):
    dataset = tf.data.TFRecordDataset(str(TF_FILES[""]), compression_type="LZ4")
    with pytest.raises(tf.errors.InvalidArgumentError, match="compression_type"):
        sess.run(tf.data.make_one_shot_iterator(dataset).get_next())


def test_batched_records_keep_trailing_nul_bytes(sess, tmp_path):
    path = str(tmp_path / "nul.tfrecord")
    records = [b"ab\x00\x00", b"\x00", b"c"]
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    (batch,) = _all_elements(sess, tf.data.TFRecordDataset(path).batch(3))
    assert batch.tolist() == records


def test_dataset_parsed_and_batched(sess):
    def parse(record):
        features = tf.parse_single_example(record, {
            "label": tf.FixedLenFeature([], tf.int64),
            "weights": tf.FixedLenFeature([3], tf.float32)})
        return features["weights"], features["label"]

    dataset = tf.data.TFRecordDataset(str(TF_FILES[""])).map(parse).batch(2)
    (weights, labels), (last_weights, last_labels) = _all_elements(sess, dataset)
    assert weights.tolist() == [[0.5, 1.5, -2.0], [1.0, 2.0, 3.0]]
    assert labels.tolist() == [1, 0]
    assert last_weights.tolist() == [[-1.0, 0.0, 0.25]] and last_labels.tolist() == [1]
