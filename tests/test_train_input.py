"""Queue-based input pipelines: ``tf.count_up_to``, ``tf.train.limit_epochs``, the
producers and the batchers (``tf.train.batch``, ``shuffle_batch`` ...).

Op names and shapes were checked against TensorFlow 1.x; the expected
elements are worked out by hand from the inputs.  Every test that starts
runner threads has a timeout so none can hang.
"""

import threading
import time

import numpy as np
import pytest

import minitf as tf

FEATURES = np.arange(10, dtype=np.float32).reshape(5, 2)  # row i is [2i, 2i + 1]
LABELS = np.arange(5, dtype=np.int64)


def run_pipeline(fetch, limit=100):
    """Starts the graph's queue runners, runs ``fetch`` until OutOfRangeError,
    joins the threads (re-raising their errors) and returns the values."""
    values = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(limit):
                values.append(sess.run(fetch))
            raise AssertionError("no OutOfRangeError after %d runs" % limit)
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    return values


# ---- CountUpTo and limit_epochs ------------------------------------------------------------
def test_count_up_to_returns_the_old_value_until_the_limit():
    counter = tf.Variable(0, name="counter")
    step = counter.count_up_to(3)
    assert step.op.type == "CountUpTo" and step.op.name == "CountUpTo"
    assert step.dtype == tf.int32 and step.shape.as_list() == []
    wide = tf.count_up_to(tf.Variable(tf.constant(5, tf.int64)), 6)
    assert wide.dtype == tf.int64
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [sess.run(step) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 3"):
            sess.run(step)
        assert sess.run(counter) == 3
        assert sess.run(wide) == 5
    with pytest.raises(TypeError, match="int32, int64"):
        tf.count_up_to(tf.Variable(1.0), 3)
    with pytest.raises(TypeError, match="variable reference"):
        tf.count_up_to(tf.constant(1), 3)


@pytest.mark.timeout(20)
def test_count_up_to_is_atomic_across_threads():
    step = tf.Variable(0).count_up_to(200)
    seen, lock = [], threading.Lock()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

        def count():
            while True:
                try:
                    value = sess.run(step)
                except tf.errors.OutOfRangeError:
                    return
                with lock:
                    seen.append(int(value))
        threads = [threading.Thread(target=count) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert sorted(seen) == list(range(200))


def test_limit_epochs_passes_the_tensor_num_epochs_times():
    tensor = tf.constant([1, 2])
    assert tf.train.limit_epochs(tensor) is tensor
    limited = tf.train.limit_epochs(tensor, num_epochs=2)
    assert limited.op.name == "limit_epochs" and limited.op.type == "Identity"
    epochs, = tf.local_variables()
    assert epochs.name == "limit_epochs/epochs:0" and epochs.dtype.base_dtype == tf.int64
    assert epochs not in tf.global_variables() and epochs not in tf.trainable_variables()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(limited).tolist() == [1, 2]
        assert sess.run(limited).tolist() == [1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(limited)
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tensor, 0)


# ---- producers -------------------------------------------------------------------------------
def test_op_names_follow_tf1():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=2, shuffle=False)
    assert (x.name, y.name) == ("input_producer/GatherV2:0", "input_producer/GatherV2_1:0")
    assert x.shape.as_list() == [2] and y.shape.as_list() == [] and y.dtype == tf.int64
    batched = tf.train.batch([x, y], 2, allow_smaller_final_batch=True)
    assert [t.name for t in batched] == ["batch:0", "batch:1"]
    assert [t.shape.as_list() for t in batched] == [[None, 2], [None]]
    single = tf.train.batch([x], 2)
    assert single.name == "batch_1:0" and single.shape.as_list() == [2, 2]
    shuffled = tf.train.shuffle_batch([x, y], 2, capacity=10, min_after_dequeue=3, seed=1)
    assert [t.name for t in shuffled] == ["shuffle_batch:0", "shuffle_batch:1"]
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"input_producer/input_producer/limit_epochs/epochs",
            "input_producer/input_producer/limit_epochs/CountUpTo",
            "input_producer/input_producer",  # the index queue
            "input_producer/input_producer/input_producer_EnqueueMany",
            "input_producer/input_producer_Dequeue",
            "batch/fifo_queue", "batch/fifo_queue_enqueue", "batch/n",
            "shuffle_batch/random_shuffle_queue",
            "shuffle_batch/random_shuffle_queue_enqueue"} <= names
    runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert [r.queue.name for r in runners] == [
        "input_producer/input_producer", "batch/fifo_queue", "batch_1/fifo_queue",
        "shuffle_batch/random_shuffle_queue"]


def _summary_value(serialized):
    (value,) = tf.Summary.FromString(serialized).value
    return value.tag, value.simple_value


@pytest.mark.timeout(20)
def test_queues_report_how_full_they_are_as_tf1_summaries():
    x, = tf.train.slice_input_producer([FEATURES], shuffle=False, capacity=8)
    batch = tf.train.batch([x], 2, capacity=10)
    shuffled = tf.train.shuffle_batch([x], 2, capacity=10, min_after_dequeue=4)
    names = [t.op.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    assert names == ["input_producer/input_producer/fraction_of_8_full",
                     "batch/fraction_of_10_full", "shuffle_batch/fraction_over_4_of_6_full"]
    index_full, batch_full, shuffle_full = tf.get_collection(tf.GraphKeys.SUMMARIES)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        sess.run([batch, shuffled])
        deadline = time.monotonic() + 10
        while True:  # the runners fill every queue to capacity again
            values = [_summary_value(v) for v in sess.run([index_full, batch_full, shuffle_full])]
            if all(fraction == 1.0 for _, fraction in values) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert values == [("input_producer/input_producer/fraction_of_8_full", 1.0),
                          ("batch/fraction_of_10_full", 1.0),
                          ("shuffle_batch/fraction_over_4_of_6_full", 1.0)]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    with tf.Session() as sess:  # nothing runs the queues: all empty
        assert _summary_value(sess.run(batch_full))[1] == 0.0
        assert _summary_value(sess.run(shuffle_full))[1] == 0.0  # max(0, 0 - 4) / 6


@pytest.mark.timeout(20)
def test_unshuffled_slices_in_order_for_each_epoch():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=2, shuffle=False)
    values = run_pipeline([x, y])
    assert [int(label) for _, label in values] == [0, 1, 2, 3, 4] * 2
    for row, label in values:
        assert row.tolist() == [2 * label, 2 * label + 1]


@pytest.mark.timeout(20)
def test_shuffled_epochs_are_permutations_and_keep_rows_paired():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=3, seed=7)
    values = run_pipeline([x, y])
    labels = [int(label) for _, label in values]
    assert len(labels) == 15
    for epoch in range(3):
        assert sorted(labels[5 * epoch:5 * epoch + 5]) == [0, 1, 2, 3, 4]
    assert labels != [0, 1, 2, 3, 4] * 3  # 1 chance in 120**3 of failing when shuffled
    for row, label in values:
        assert row.tolist() == [2 * label, 2 * label + 1]


@pytest.mark.timeout(20)
def test_string_and_range_input_producers():
    files = tf.train.string_input_producer(["a.csv", "b.csv", "c.csv"], num_epochs=2,
                                           shuffle=False)
    assert isinstance(files, tf.FIFOQueue) and files.dtypes == [tf.string]
    names = run_pipeline(files.dequeue())
    assert [n.decode() if isinstance(n, bytes) else n for n in names] == [
        "a.csv", "b.csv", "c.csv"] * 2
    with pytest.raises(ValueError, match="non-null input tensor"):
        tf.train.string_input_producer([])


@pytest.mark.timeout(20)
def test_range_input_producer_counts_forever_without_num_epochs():
    indices = tf.train.range_input_producer(4, shuffle=False, capacity=3)
    assert indices.dtypes == [tf.int32]
    next_index = indices.dequeue()
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert [int(sess.run(next_index)) for _ in range(10)] == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_producer_argument_errors():
    with pytest.raises(ValueError, match="at least one tensor"):
        tf.train.slice_input_producer([])
    with pytest.raises(ValueError, match="fully defined shape"):
        tf.train.input_producer(tf.placeholder(tf.float32, [None, None]))
    queue = tf.train.input_producer(tf.placeholder(tf.float32, [None, None]), element_shape=[3])
    assert queue.shapes[0].as_list() == [3]


# ---- batchers ---------------------------------------------------------------------------------
@pytest.mark.timeout(20)
def test_batch_drops_the_final_partial_batch_unless_allowed():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=2, shuffle=False)
    labels = tf.train.batch([x, y], 3)[1]
    assert [b.tolist() for b in run_pipeline(labels)] == [[0, 1, 2], [3, 4, 0], [1, 2, 3]]

    tf.reset_default_graph()
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=2, shuffle=False)
    rows, labels = tf.train.batch([x, y], 3, allow_smaller_final_batch=True)
    batches = run_pipeline([rows, labels])
    assert [b.tolist() for _, b in batches] == [[0, 1, 2], [3, 4, 0], [1, 2, 3], [4]]
    np.testing.assert_array_equal(batches[-1][0], [[8.0, 9.0]])


@pytest.mark.timeout(20)
def test_batch_of_a_dict_and_of_whole_batches():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=1, shuffle=False)
    batch = tf.train.batch({"x": x, "y": y}, 2)
    assert sorted(batch) == ["x", "y"] and batch["x"].shape.as_list() == [2, 2]
    values = run_pipeline(batch)
    assert [v["y"].tolist() for v in values] == [[0, 1], [2, 3]]
    np.testing.assert_array_equal(values[1]["x"], FEATURES[2:4])

    tf.reset_default_graph()
    counter = tf.Variable(0)
    chunk = tf.reshape(tf.range(3) + 3 * counter.count_up_to(2), [3])  # [0 1 2], [3 4 5]
    batch = tf.train.batch([chunk], 4, enqueue_many=True, allow_smaller_final_batch=True)
    assert batch.shape.as_list() == [None]
    assert [b.tolist() for b in run_pipeline(batch)] == [[0, 1, 2, 3], [4, 5]]


@pytest.mark.timeout(20)
def test_batch_with_dynamic_pad_pads_to_the_longest():
    lengths = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
    sequence = tf.range(1, lengths + 2)  # [1], [1 2], [1 2 3]
    with pytest.raises(ValueError, match="All shapes must be fully defined"):
        tf.train.batch([sequence], 3)
    padded = tf.train.batch([sequence], 3, dynamic_pad=True)
    assert padded.shape.as_list() == [3, None]
    (values,) = run_pipeline(padded)
    assert values.tolist() == [[1, 0, 0], [1, 2, 0], [1, 2, 3]]


@pytest.mark.timeout(20)
def test_shapes_argument_supplies_unknown_shapes():
    x = tf.train.input_producer(FEATURES, num_epochs=1, shuffle=False).dequeue()
    unknown = tf.placeholder_with_default(x, None)
    batch = tf.train.batch([unknown], 5, shapes=[[2]])
    assert batch.shape.as_list() == [5, 2]
    (values,) = run_pipeline(batch)
    np.testing.assert_array_equal(values, FEATURES)


@pytest.mark.timeout(20)
def test_shuffle_batch_mixes_examples_and_keeps_them_paired():
    x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=4, shuffle=False)
    rows, labels = tf.train.shuffle_batch([x, y], 4, capacity=20, min_after_dequeue=8, seed=3,
                                          allow_smaller_final_batch=True)
    batches = run_pipeline([rows, labels])
    seen = np.concatenate([b for _, b in batches]).tolist()
    assert sorted(seen) == sorted([0, 1, 2, 3, 4] * 4)  # every example once per epoch
    assert seen != [0, 1, 2, 3, 4] * 4
    for batch_rows, batch_labels in batches:
        np.testing.assert_array_equal(batch_rows, FEATURES[batch_labels])


@pytest.mark.timeout(20)
def test_join_forms_run_one_thread_per_input():
    evens = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() * 2
    odds = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() * 2 + 1
    batch = tf.train.batch_join([[evens], [odds]], 2, allow_smaller_final_batch=True)
    runner = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1]
    assert len(runner.enqueue_ops) == 2
    assert sorted(np.concatenate(run_pipeline(batch)).tolist()) == [0, 1, 2, 3, 4, 5]

    tf.reset_default_graph()
    evens = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() * 2
    odds = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() * 2 + 1
    batch = tf.train.shuffle_batch_join([[evens], [odds]], 2, capacity=6, min_after_dequeue=2,
                                        seed=1, allow_smaller_final_batch=True)
    assert sorted(np.concatenate(run_pipeline(batch)).tolist()) == [0, 1, 2, 3, 4, 5]
    with pytest.raises(TypeError, match="consistent"):
        tf.train.batch_join([[tf.constant(1)], [tf.constant(1.0)]], 2)


@pytest.mark.timeout(30)
def test_course_training_loop_on_a_queue_pipeline():
    """Fits y = 2x - 1 by SGD on shuffled batches until the epochs run out."""
    xs = np.linspace(-1.0, 1.0, 16).astype(np.float32)
    x, y = tf.train.slice_input_producer([xs, 2.0 * xs - 1.0], num_epochs=30, seed=0)
    x_batch, y_batch = tf.train.shuffle_batch([x, y], 4, capacity=32, min_after_dequeue=8,
                                              seed=0)
    w, b = tf.Variable(0.0), tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(w * x_batch + b - y_batch))
    grad_w, grad_b = tf.gradients(loss, [w, b])
    train = tf.group(tf.assign_sub(w, 0.3 * grad_w), tf.assign_sub(b, 0.3 * grad_b))
    steps = 0
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while not coord.should_stop():
                sess.run(train)
                steps += 1
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert steps == 16 * 30 // 4  # every example once per epoch, no partial batch
        assert sess.run([w, b]) == pytest.approx([2.0, -1.0], abs=1e-2)
