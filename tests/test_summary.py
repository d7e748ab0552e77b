"""tf.summary: summary ops, FileWriter, event files read back (ours and TensorBoard's reader)."""

import glob
import os
import struct

import numpy as np
import pytest
from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2

import minitf as tf
from minitf.ops import summary_ops
from minitf.summary import event_file


def _events(logdir):
    (path,) = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    return list(tf.train.summary_iterator(path))


def _values(event):
    return {v.tag: v for v in event.summary.value}


def test_crc32c_known_answers():
    # RFC 3720 B.4 test vectors.
    assert event_file.crc32c(b"123456789") == 0xE3069283
    assert event_file.crc32c(bytes(32)) == 0x8A9136AA
    assert event_file.crc32c(b"\xff" * 32) == 0x62A8AB43


def test_summary_and_event_are_tensorboards_messages():
    assert tf.Summary is summary_pb2.Summary and tf.summary.Summary is summary_pb2.Summary
    assert tf.Event is event_pb2.Event and tf.summary.HistogramProto is summary_pb2.HistogramProto


def test_scalar_summary_names_tags_and_collection(sess):
    x = tf.constant(2.5)
    with tf.name_scope("train"):
        s = tf.summary.scalar("loss", x)
    assert s.name == "train/loss:0" and s.dtype == tf.string and s.shape.ndims == 0
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]
    (value,) = tf.Summary.FromString(sess.run(s)).value
    assert value.tag == "train/loss" and value.simple_value == 2.5
    assert tf.summary.scalar("a b", x).op.inputs[0].op.get_attr("value") == b"a_b"


def test_scalar_of_a_vector_is_a_run_time_error(sess):
    s = tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not the same shape"):
        sess.run(s)


def test_histogram_matches_tf_bucketing(sess):
    values = np.array([-3.0, -0.5, 0.0, 0.0, 1e-3, 2.0, 2.0, 7.5])
    s = tf.summary.histogram("h", tf.constant(values, tf.float32))
    histo = tf.Summary.FromString(sess.run(s)).value[0].histo
    f32 = values.astype(np.float32).astype(np.float64)
    assert (histo.min, histo.max, histo.num) == (-3.0, 7.5, 8)
    assert histo.sum == pytest.approx(f32.sum()) and histo.sum_squares == pytest.approx(
        np.square(f32).sum())
    # Every non-empty bucket [limit_prev, limit) holds exactly the values in it.
    limits = np.array(histo.bucket_limit)
    counts = np.array(histo.bucket)
    assert counts.sum() == 8 and limits[-1] == np.finfo(np.float64).max
    for low, high, count in zip(np.r_[-np.inf, limits[:-1]], limits, counts):
        assert count == np.sum((f32 >= low) & (f32 < high))
    # TF's default limits grow by 10% from 1e-12: 2.0 lies in [1.1**k, 1.1**(k+1)) * 1e-12.
    i = int(np.flatnonzero(counts == 2)[-1])
    assert limits[i - 1] <= 2.0 < limits[i] and limits[i] / limits[i - 1] == pytest.approx(1.1)


def test_histogram_of_nan_is_an_error(sess):
    s = tf.summary.histogram("h", tf.constant([1.0, np.nan]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"):
        sess.run(s)


def test_image_summary_tags_sizes_and_pixels(sess):
    images = np.linspace(0.0, 2.0, 2 * 3 * 4).reshape(2, 3, 4, 1).astype(np.float32)
    s = tf.summary.image("img", tf.constant(images), max_outputs=5)
    values = tf.Summary.FromString(sess.run(s)).value
    assert [v.tag for v in values] == ["img/image/0", "img/image/1"]
    image = values[1].image
    assert (image.height, image.width, image.colorspace) == (3, 4, 1)
    png = image.encoded_image_string
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    import zlib
    (length,) = struct.unpack(">I", png[33:37])
    rows = zlib.decompress(png[41:41 + length])
    pixels = np.frombuffer(rows, np.uint8).reshape(3, 5)[:, 1:]  # drop the filter bytes
    expected = (images[1, :, :, 0] * (255.0 / images[1].max())).astype(np.uint8)
    np.testing.assert_array_equal(pixels, expected)
    with pytest.raises(ValueError, match="rank 4"):
        tf.summary.image("bad", tf.constant(images[0]))


def test_text_summary_holds_the_string(sess):
    s = tf.summary.text("note", tf.constant("héllo"))
    (value,) = tf.Summary.FromString(sess.run(s)).value
    assert value.tag == "note" and value.metadata.plugin_data.plugin_name == "text"
    assert value.tensor.dtype == 7  # DT_STRING
    assert list(value.tensor.string_val) == ["héllo".encode("utf-8")]
    assert tf.make_ndarray(value.tensor) == "héllo".encode("utf-8")


def test_merge_all_and_duplicate_tags(sess):
    assert tf.summary.merge_all() is None
    tf.summary.scalar("a", tf.constant(1.0))
    tf.summary.scalar("b", tf.constant(2.0), collections=["mine"])
    tf.summary.histogram("c", tf.constant([1.0]))
    merged = tf.summary.merge_all()
    assert merged.name == "Merge/MergeSummary:0"
    assert sorted(_values(tf.Event(summary=tf.Summary.FromString(sess.run(merged))))) == [
        "a", "c"]
    # tf.summary.scalar makes tags unique (x, x_1) through the name scope; the op does not.
    assert tf.summary.scalar("x", 1.0, collections=[]).name == "x:0"
    assert tf.summary.scalar("x", 1.0, collections=[]).name == "x_1:0"
    dup = tf.summary.merge([summary_ops.scalar_summary("x", 1.0),
                            summary_ops.scalar_summary("x", 2.0)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag x"):
        sess.run(dup)


def test_file_writer_round_trip(tmp_path):
    x = tf.placeholder(tf.float32, [], name="input")
    tf.summary.scalar("x", x)
    tf.summary.histogram("xs", tf.stack([x, 2 * x]))
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: step + 0.5}), global_step=10 * step)
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.75)]), 99)
        writer.close()
    assert writer.get_logdir() == str(tmp_path)
    events = _events(tmp_path)
    assert events[0].file_version == "brain.Event:2"
    assert events[1].graph_def and events[1].step == 0
    graph_def = graph_pb2.GraphDef.FromString(events[1].graph_def)
    assert [n.name for n in graph_def.node] == [op.name for op in
                                                tf.get_default_graph().get_operations()]
    (shape,) = graph_def.node[0].attr["_output_shapes"].list.shape  # add_graph adds shapes
    assert shape.dim == [] and not shape.unknown_rank  # the scalar placeholder
    scalars = [(e.step, _values(e)["x"].simple_value) for e in events[2:5]]
    assert scalars == [(0, 0.5), (10, 1.5), (20, 2.5)]
    assert _values(events[3])["xs"].histo.sum == pytest.approx(1.5 * 3)
    assert events[5].step == 99 and _values(events[5])["acc"].simple_value == 0.75


def test_corrupted_event_file_is_data_loss(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1.0)]), 1)
    writer.close()
    (path,) = glob.glob(str(tmp_path / "events*"))
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        _events(tmp_path)


def test_tensorboard_reads_our_event_files(tmp_path):
    loader_module = pytest.importorskip(
        "tensorboard.backend.event_processing.event_file_loader")
    tf.summary.scalar("loss", tf.constant(0.25))
    tf.summary.histogram("w", tf.constant([1.0, 2.0, 3.0]))
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        writer.add_summary(sess.run(tf.summary.merge_all()), 7)
        writer.close()
    (path,) = glob.glob(str(tmp_path / "events*"))
    events = list(loader_module.LegacyEventFileLoader(path).Load())
    assert events[0].file_version == "brain.Event:2"
    from tensorboard.compat.proto import graph_pb2
    graph = graph_pb2.GraphDef.FromString(events[1].graph_def)
    assert [n.name for n in graph.node][:2] == ["Const", "loss/tags"]
    assert graph.node[0].attr["dtype"].type == 1  # DT_FLOAT
    values = {v.tag: v for v in events[2].summary.value}
    assert events[2].step == 7 and values["loss"].simple_value == 0.25
    assert values["w"].histo.num == 3 and values["w"].histo.sum == 6.0


def test_add_graph_takes_a_graph_def_and_refuses_other_objects(tmp_path):
    tf.constant(1.0, name="c")
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_graph(None, graph_def=tf.get_default_graph().as_graph_def())
    with pytest.raises(TypeError, match="tf.Graph .* or a GraphDef"):
        writer.add_graph("not a graph")
    writer.close()
    (event,) = [e for e in _events(tmp_path) if e.graph_def]
    assert [n.name for n in graph_pb2.GraphDef.FromString(event.graph_def).node] == ["c"]


def test_event_file_records_are_tensorflows_events(tmp_path):
    """Every record, framing and CRC included, is what TF's record writer writes:
    a reader with no minitf code (a hand-rolled TFRecord loop and event_pb2) reads it."""
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag="loss", simple_value=0.5)]), global_step=3)
    writer.close()
    (path,) = glob.glob(str(tmp_path / "events*"))
    data, events = open(path, "rb").read(), []
    while data:
        (length,) = struct.unpack("<Q", data[:8])
        events.append(event_pb2.Event.FromString(data[12:12 + length]))
        data = data[12 + length + 4:]
    assert events[0].file_version == "brain.Event:2"
    assert (events[1].step, events[1].summary.value[0].tag) == (3, "loss")
    assert events[1].summary.value[0].simple_value == 0.5


def test_add_run_metadata_writes_a_tagged_run_metadata_event(tmp_path):
    """word2vec_basic.py and mnist_with_summaries.py log the last step's trace."""
    x = tf.constant(2.0) * 3.0
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(x, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_run_metadata(metadata, "step99", global_step=99)
    with pytest.raises(ValueError, match="already used"):
        writer.add_run_metadata(metadata, "step99")
    writer.close()
    (path,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    (event,) = [e for e in tf.train.summary_iterator(path) if e.HasField("tagged_run_metadata")]
    assert event.step == 99 and event.tagged_run_metadata.tag == "step99"
    from tensorboard.compat.proto import config_pb2
    proto = config_pb2.RunMetadata.FromString(event.tagged_run_metadata.run_metadata)
    assert any(node.node_name for device in proto.step_stats.dev_stats
               for node in device.node_stats)
