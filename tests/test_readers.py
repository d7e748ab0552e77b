"""Queue-based file readers: ``tf.TextLineReader``, ``WholeFileReader``,
``FixedLengthRecordReader`` and ``TFRecordReader`` with
``tf.train.string_input_producer``.

Keys, values, counts and the end of input were checked against TensorFlow's
``compat.v1`` readers on the same files; the expectations here are worked
out from the files' contents.  Every test that starts runner threads stops
on OutOfRangeError, and the ``timeout`` mark keeps any from hanging.
"""

import gzip
import pathlib

import pytest

import minitf as tf

DATA = pathlib.Path(__file__).parent / "data"
TF_RECORDS = str(DATA / "examples.tfrecord")

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def files(tmp_path):
    """Two small text files and a binary one, by name (relative paths: keys are short)."""
    (tmp_path / "a.txt").write_bytes(b"h1\nl1\r\nl2\n")
    (tmp_path / "b.txt").write_bytes(b"h2\nm1")  # no final newline
    (tmp_path / "f.bin").write_bytes(b"HH" + b"abcdefgh" + b"FFF")
    return {name: str(tmp_path / name) for name in ("a.txt", "b.txt", "f.bin")}


def read_all(fetches, reader=None, limit=100):
    """Starts the queue runners, runs ``fetches`` until OutOfRangeError; returns
    the values, and the reader's (records produced, files completed)."""
    values = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(limit):
                values.append(sess.run(fetches))
            raise AssertionError("no OutOfRangeError after %d runs" % limit)
        except tf.errors.OutOfRangeError as error:
            assert "is closed and has insufficient elements" in error.message
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        counts = None if reader is None else sess.run(
            [reader.num_records_produced(), reader.num_work_units_completed()])
    return values, counts


def producer(*names):
    return tf.train.string_input_producer(list(names), shuffle=False, num_epochs=1)


def test_text_line_reader_keys_lines_and_skips_headers(files):
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(producer(files["a.txt"], files["b.txt"]))
    assert key.op.type == "ReaderReadV2" and reader.reader_ref.op.type == "TextLineReaderV2"
    assert reader.reader_ref.dtype.name == "resource"
    assert key.dtype == tf.string and key.shape.as_list() == [] == value.shape.as_list()
    values, counts = read_all([key, value], reader)
    a, b = files["a.txt"].encode(), files["b.txt"].encode()
    assert values == [[a + b":2", b"l1"], [a + b":3", b"l2"], [b + b":2", b"m1"]]
    assert counts == [3, 2]


def test_read_up_to_stays_within_one_file(files):
    reader = tf.TextLineReader()
    keys, values = reader.read_up_to(producer(files["a.txt"], files["b.txt"]), 2)
    assert keys.op.type == "ReaderReadUpToV2" and keys.shape.as_list() == [None]
    batches, counts = read_all([keys, values], reader)
    assert [v.tolist() for _, v in batches] == [[b"h1", b"l1"], [b"l2"], [b"h2", b"m1"]]
    assert batches[1][0].tolist() == [files["a.txt"].encode() + b":3"]
    assert counts == [5, 2]


def test_whole_file_reader(files):
    reader = tf.WholeFileReader()
    values, counts = read_all(reader.read(producer(files["a.txt"], files["f.bin"])), reader)
    assert [list(v) for v in values] == [
        [files["a.txt"].encode(), b"h1\nl1\r\nl2\n"],
        [files["f.bin"].encode(), b"HHabcdefghFFF"]]
    assert counts == [2, 2]


def test_fixed_length_record_reader(files):
    reader = tf.FixedLengthRecordReader(record_bytes=3, header_bytes=2, footer_bytes=3)
    assert reader.reader_ref.op.type == "FixedLengthRecordReaderV2"
    values, counts = read_all(reader.read(producer(files["f.bin"])), reader)
    name = files["f.bin"].encode()
    assert [list(v) for v in values] == [[name + b":0", b"abc"], [name + b":1", b"def"]]
    assert counts == [2, 1]


def test_fixed_length_records_with_hops_and_compression(files, tmp_path):
    path = str(tmp_path / "f.bin.gz")
    with gzip.open(path, "wb") as f:
        f.write(b"abcdefgh")
    reader = tf.FixedLengthRecordReader(record_bytes=4, hop_bytes=2, encoding="GZIP")
    values, _ = read_all(reader.read(producer(path)))
    assert [v for _, v in values] == [b"abcd", b"cdef", b"efgh"]


def test_tf_record_reader_on_tensorflows_file():
    reader = tf.TFRecordReader()
    assert reader.reader_ref.op.type == "TFRecordReaderV2"
    key, value = reader.read(producer(TF_RECORDS))
    values, counts = read_all([key, value], reader)
    records = list(tf.python_io.tf_record_iterator(TF_RECORDS))
    assert [v for _, v in values] == records
    # keys are file:offset, each record taking 16 bytes of framing
    offsets = [0, 16 + len(records[0]), 32 + len(records[0]) + len(records[1])]
    assert [k for k, _ in values] == [b"%s:%d" % (TF_RECORDS.encode(), o) for o in offsets]
    assert counts == [3, 1]


def test_tf_record_reader_of_compressed_files():
    options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.ZLIB)
    reader = tf.TFRecordReader(options=options)
    values, _ = read_all(reader.read(producer(str(DATA / "examples.tfrecord.zlib"))))
    assert [v for _, v in values] == list(tf.python_io.tf_record_iterator(TF_RECORDS))


def test_records_parsed_and_batched_with_queue_runners():
    reader = tf.TFRecordReader()
    _, record = reader.read(producer(TF_RECORDS))
    features = tf.parse_single_example(record, {
        "label": tf.FixedLenFeature([], tf.int64),
        "weights": tf.FixedLenFeature([3], tf.float32)})
    weights, labels = tf.train.batch([features["weights"], features["label"]], batch_size=2,
                                     allow_smaller_final_batch=True)
    batches, _ = read_all([weights, labels])
    assert [b[1].tolist() for b in batches] == [[1, 0], [1]]
    assert batches[0][0].tolist() == [[0.5, 1.5, -2.0], [1.0, 2.0, 3.0]]


def test_several_threads_share_one_reader(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"".join(b"%d\n" % i for i in range(40)))
    _, line = tf.TextLineReader().read(producer(str(path)))
    batch = tf.train.batch([line], batch_size=1, num_threads=3, allow_smaller_final_batch=True)
    values, _ = read_all(batch)
    taken = sorted(int(v[0]) for v in values)
    assert taken == list(range(40))  # every line exactly once


def test_reset_forgets_the_file_and_counts(files):
    queue = tf.FIFOQueue(10, tf.string, shapes=[[]])
    reader = tf.TextLineReader()
    key, _ = reader.read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[files["a.txt"], files["a.txt"]]]))
        assert sess.run(key).endswith(b":1")
        sess.run(reader.reset())
        assert sess.run(reader.num_records_produced()) == 0
        assert sess.run(key).endswith(b":1")  # the second file, from its start


def test_missing_file_is_not_found(tmp_path):
    key, _ = tf.TextLineReader().read(producer(str(tmp_path / "missing.txt")))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
            sess.run(key)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_bad_reader_arguments_are_invalid_when_run():
    queue = tf.FIFOQueue(1, tf.string, shapes=[[]])
    key, _ = tf.FixedLengthRecordReader(record_bytes=0).read(queue)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes must be > 0"):
            sess.run(key)
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_records must be > 0"):
            sess.run(tf.TextLineReader().read_up_to(queue, 0))
