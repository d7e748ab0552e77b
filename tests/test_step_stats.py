"""RunOptions/RunMetadata: step statistics, the Chrome timeline, deadlines."""

import json

import pytest

import minitf as tf
from minitf.client import timeline

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


@pytest.mark.parametrize("config", [tf.ConfigProto(), tf.ConfigProto(inter_op_parallelism_threads=2)],
                         ids=["straight_line", "parallel"])
def test_full_trace_records_each_op(config):
    x = tf.placeholder(tf.float32, name="x")
    y = tf.add(tf.add(x, 1.0, name="a"), 2.0, name="b")
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        assert sess.run(y, {x: 1.0}, options=FULL, run_metadata=metadata) == 4.0
    (dev,) = metadata.step_stats.dev_stats
    assert dev.device.endswith("device:CPU:0")
    names = [n.node_name for n in dev.node_stats]
    assert "a" in names and "b" in names
    for node in dev.node_stats:
        assert node.all_start_micros > 0 and node.all_end_rel_micros >= 0
    a, b = (next(n for n in dev.node_stats if n.node_name == k) for k in ("a", "b"))
    assert b.all_start_micros >= a.all_start_micros


def test_timeline_shows_devices_and_send_recv():
    with tf.device("/cpu:0"):
        a = tf.add(tf.constant(1.0), 1.0, name="a")
    with tf.device("/cpu:1"):
        b = tf.add(a, 1.0, name="b")
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:  # 2 processes
        assert sess.run(b, options=FULL, run_metadata=metadata) == 3.0
    devices = sorted(d.device for d in metadata.step_stats.dev_stats)
    assert [d[-5:] for d in devices] == ["CPU:0", "CPU:1"]
    trace = json.loads(timeline.Timeline(metadata.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    processes = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert set(devices) == processes
    ops = {e["name"] for e in events if e["ph"] == "X"}
    assert {"_Send", "_Recv", "Add"} <= ops
    assert [e["ph"] for e in events if e.get("cat") == "DataFlow"] == ["s", "f"]


def test_plain_runs_after_traced_runs_still_work():
    x = tf.placeholder(tf.float32)
    y = tf.add(x, 1.0)
    with tf.Session() as sess:
        sess.run(y, {x: 1.0}, options=FULL, run_metadata=tf.RunMetadata())
        assert sess.run(y, {x: 2.0}) == 3.0
        assert sess.run([y], {x: 3.0}, options=tf.RunOptions(timeout_in_ms=1000)) == [4.0]
