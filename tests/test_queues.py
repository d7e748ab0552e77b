"""Queues, QueueRunner and Coordinator: TF1's threaded input pipelines.

Blocking behaviour is tested with real threads and short waits (<= 0.5 s);
every test that could block has a ``pytest.mark.timeout`` so none can hang.
"""

import threading
import time

import numpy as np
import pytest

import minitf as tf
from tests.threaded import start

SHORT = tf.RunOptions(timeout_in_ms=100)


# ---- FIFOQueue -------------------------------------------------------------------------
def test_fifo_queue_ops_and_names():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    assert q.name == "fifo_queue" and q.queue_ref.op.type == "FIFOQueueV2"
    assert q.queue_ref.dtype == tf.as_dtype("resource")
    assert q.enqueue(1.0).name == "fifo_queue_enqueue"
    assert q.enqueue(1.0).type == "QueueEnqueueV2"
    dequeued = q.dequeue()
    assert dequeued.op.name == "fifo_queue_Dequeue" and dequeued.shape.as_list() == []
    assert q.dequeue_many(2).shape.as_list() == [2]
    assert q.dequeue_up_to(2).shape.as_list() == [None]
    assert q.size().dtype == tf.int32 and q.is_closed().dtype == tf.bool


def test_fifo_order_size_and_batches(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[2]])
    x = tf.placeholder(tf.int32, [2])
    enqueue = q.enqueue(x)
    for i in range(3):
        sess.run(enqueue, {x: [i, 10 * i]})
    sess.run(q.enqueue_many([[[3, 30], [4, 40]]]))
    assert sess.run(q.size()) == 5
    assert sess.run(q.dequeue()).tolist() == [0, 0]
    assert sess.run(q.dequeue_many(3)).tolist() == [[1, 10], [2, 20], [3, 30]]
    assert sess.run(q.size()) == 1


def test_multi_component_and_named_elements(sess):
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]])
    sess.run(q.enqueue((1, [0.5, 1.5])))
    label, features = sess.run(q.dequeue())
    assert label == 1 and features.tolist() == [0.5, 1.5]
    named = tf.FIFOQueue(5, [tf.int32, tf.string], shapes=[[], []], names=["id", "tag"])
    sess.run(named.enqueue_many({"id": [1, 2], "tag": ["a", "b"]}))
    element = sess.run(named.dequeue())
    assert set(element) == {"id", "tag"} and element["id"] == 1
    batch = sess.run(named.dequeue_many(1))
    assert batch["id"].tolist() == [2]
    with pytest.raises(ValueError, match="names"):
        named.enqueue((1, "c"))


def test_construction_time_checks():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[2]])
    with pytest.raises(ValueError):
        q.enqueue(([1, 2, 3],))
    with pytest.raises((TypeError, ValueError)):
        q.enqueue(([1.5, 2.5],))
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(2, tf.int32, shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(2, [tf.int32, tf.int32], shapes=[[1]])


def test_run_time_shape_mismatch(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[2]])
    x = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape mismatch in tuple component 0. Expected \[2\], got \[3\]"):
        sess.run(q.enqueue(x), {x: [1, 2, 3]})


def test_dequeue_many_needs_shapes(sess):
    q = tf.FIFOQueue(2, tf.int32)
    sess.run(q.enqueue(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have "
                                                             "specified shapes"):
        sess.run(q.dequeue_many(1))
    assert sess.run(q.size()) == 1  # nothing was taken


# ---- closing -------------------------------------------------------------------------
def test_closed_queue_drains_then_raises_out_of_range(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    sess.run(q.enqueue_many([[1.0, 2.0]]))
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match="FIFOQueue '_0_fifo_queue' is closed."):
        sess.run(q.enqueue(3.0))
    assert sess.run(q.dequeue()) == 1.0
    with pytest.raises(tf.errors.OutOfRangeError, match=r"has insufficient elements "
                                                        r"\(requested 2, current size 1\)"):
        sess.run(q.dequeue_many(2))
    assert sess.run(q.dequeue()) == 2.0
    with pytest.raises(tf.errors.OutOfRangeError) as info:
        sess.run(q.dequeue())
    assert ("FIFOQueue '_0_fifo_queue' is closed and has insufficient elements "
            "(requested 1, current size 0)") in info.value.message


def test_dequeue_up_to_returns_the_rest_of_a_closed_queue(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2, 3, 4, 5]]))
    sess.run(q.close())
    take = q.dequeue_up_to(3)
    assert sess.run(take).tolist() == [1, 2, 3]
    assert sess.run(take).tolist() == [4, 5]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(take)


# ---- blocking, deadlines, threads ----------------------------------------------------------
@pytest.mark.timeout(10)
def test_dequeue_on_empty_queue_times_out(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    began = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting for notification"):
        sess.run(q.dequeue(), options=SHORT)
    assert 0.09 <= time.monotonic() - began < 2.0


@pytest.mark.timeout(10)
def test_enqueue_on_full_queue_times_out_with_the_session_default():
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    enqueue = q.enqueue(1.0)
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        sess.run(enqueue)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(enqueue)
        assert sess.run(q.size()) == 1


@pytest.mark.timeout(10)
def test_blocked_dequeue_wakes_when_another_thread_enqueues(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    dequeue, enqueue = q.dequeue(), q.enqueue(7.0)
    thread, result = start(sess.run, dequeue)
    time.sleep(0.2)
    assert thread.is_alive()  # still waiting
    sess.run(enqueue)
    thread.join(5)
    assert result == {"value": 7.0}


@pytest.mark.timeout(10)
def test_blocked_enqueue_wakes_when_another_thread_dequeues(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enqueue = q.enqueue(x)
    sess.run(enqueue, {x: 1})
    thread, result = start(sess.run, enqueue, {x: 2})
    time.sleep(0.2)
    assert thread.is_alive() and sess.run(q.size()) == 1
    assert sess.run(q.dequeue()) == 1
    thread.join(5)
    assert "error" not in result
    assert sess.run(q.dequeue()) == 2


@pytest.mark.timeout(10)
def test_close_wakes_a_blocked_dequeue_with_out_of_range(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    thread, result = start(sess.run, q.dequeue())
    time.sleep(0.1)
    sess.run(q.close())
    thread.join(5)
    assert isinstance(result["error"], tf.errors.OutOfRangeError)


@pytest.mark.timeout(10)
def test_close_with_cancel_pending_enqueues_cancels_blocked_enqueues(sess):
    q = tf.FIFOQueue(1, [tf.int32, tf.float32])
    sess.run(q.enqueue((1, 2.0)))
    thread, result = start(sess.run, q.enqueue((3, 4.0)))
    time.sleep(0.1)
    sess.run(q.close(cancel_pending_enqueues=True))
    thread.join(5)
    assert isinstance(result["error"], tf.errors.CancelledError)
    assert "Enqueue operation was cancelled" in result["error"].message
    assert sess.run(q.dequeue())[0] == 1  # what was enqueued stays


@pytest.mark.timeout(10)
def test_close_without_cancel_lets_a_blocked_enqueue_finish(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess.run(q.enqueue(1))
    thread, result = start(sess.run, q.enqueue(2))
    time.sleep(0.1)
    sess.run(q.close())
    assert sess.run(q.dequeue()) == 1
    thread.join(5)
    assert "error" not in result
    assert sess.run(q.dequeue()) == 2


@pytest.mark.timeout(10)
def test_closing_the_session_cancels_blocked_ops():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    dequeue = q.dequeue()
    sess = tf.Session()
    thread, result = start(sess.run, dequeue)
    time.sleep(0.1)
    sess.close()
    thread.join(5)
    assert isinstance(result["error"], tf.errors.CancelledError)
    assert "Dequeue operation was cancelled" in result["error"].message


@pytest.mark.timeout(20)
def test_concurrent_producers_and_consumers_lose_nothing(sess):
    q = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enqueue, dequeue = q.enqueue(x), q.dequeue()
    received, lock = [], threading.Lock()

    def produce(offset):
        for i in range(50):
            sess.run(enqueue, {x: offset + i})

    def consume():
        while True:
            try:
                value = sess.run(dequeue)
            except tf.errors.OutOfRangeError:
                return
            with lock:
                received.append(int(value))

    producers = [threading.Thread(target=produce, args=(k * 100,)) for k in range(4)]
    consumers = [threading.Thread(target=consume) for _ in range(3)]
    for thread in producers + consumers:
        thread.start()
    for thread in producers:
        thread.join(10)
    sess.run(q.close())
    for thread in consumers:
        thread.join(10)
    assert sorted(received) == sorted(k * 100 + i for k in range(4) for i in range(50))


# ---- RandomShuffleQueue, PaddingFIFOQueue ----------------------------------------------
def shuffle_queue_order(seed, graph_seed=None):
    graph = tf.Graph()
    with graph.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]], seed=seed)
        fill, take = q.enqueue_many([list(range(20))]), q.dequeue_many(20)
        with tf.Session(graph=graph) as sess:
            sess.run(fill)
            return sess.run(take).tolist()


def test_random_shuffle_queue_permutes_and_is_seeded():
    order = shuffle_queue_order(seed=4)
    assert sorted(order) == list(range(20)) and order != list(range(20))
    assert shuffle_queue_order(seed=4) == order
    assert shuffle_queue_order(seed=None, graph_seed=2) == shuffle_queue_order(None, 2)
    assert shuffle_queue_order(seed=None) != shuffle_queue_order(seed=None)


@pytest.mark.timeout(10)
def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed(sess):
    q = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], seed=1)
    sess.run(q.enqueue_many([[1, 2, 3, 4]]))
    assert sess.run(q.dequeue()) in (1, 2, 3, 4)  # 4 > min_after_dequeue
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.dequeue(), options=SHORT)  # would leave fewer than 3
    sess.run(q.close())
    rest = sess.run(q.dequeue_up_to(10)).tolist()  # a closed queue drains
    assert len(rest) == 3
    with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue"):
        sess.run(q.dequeue())


def test_padding_fifo_queue_pads_batches(sess):
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.float32], shapes=[[None], [2]])
    x = tf.placeholder(tf.int32, [None])
    enqueue = q.enqueue((x, [1.0, 2.0]))
    sess.run(enqueue, {x: [1]})
    sess.run(enqueue, {x: [1, 2, 3]})
    sess.run(enqueue, {x: [4, 5]})
    ids, values = q.dequeue_many(2)
    assert ids.shape.as_list() == [2, None]
    ids_value, values_value = sess.run([ids, values])
    assert ids_value.tolist() == [[1, 0, 0], [1, 2, 3]]
    assert values_value.shape == (2, 2)
    assert sess.run(q.dequeue()[0]).tolist() == [4, 5]  # single elements are not padded
    with pytest.raises(TypeError):
        tf.PaddingFIFOQueue(5, [tf.int32])  # shapes are required


# ---- Coordinator ---------------------------------------------------------------------
@pytest.mark.timeout(10)
def test_coordinator_stops_threads_and_reraises_the_first_error():
    coord = tf.train.Coordinator()

    def worker(fail):
        with coord.stop_on_exception():
            while not coord.should_stop():
                if fail:
                    raise ValueError("boom")
                time.sleep(0.01)

    threads = [threading.Thread(target=worker, args=(i == 2,)) for i in range(3)]
    for thread in threads:
        thread.start()
    with pytest.raises(ValueError, match="boom"):
        coord.join(threads, stop_grace_period_secs=2)
    assert coord.should_stop() and coord.joined
    assert not any(thread.is_alive() for thread in threads)


@pytest.mark.timeout(10)
def test_out_of_range_is_a_clean_stop_and_clear_stop_resets():
    coord = tf.train.Coordinator()
    assert not coord.wait_for_stop(0.05)
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    assert coord.wait_for_stop(0.05)
    coord.join([])  # nothing to re-raise
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    coord.request_stop(RuntimeError("first"))
    coord.request_stop(RuntimeError("second"))
    with pytest.raises(RuntimeError, match="first"):
        coord.raise_requested_exception()


@pytest.mark.timeout(10)
def test_join_reports_threads_that_do_not_stop():
    coord = tf.train.Coordinator()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(5,), daemon=True, name="stubborn")
    thread.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stubborn"):
        coord.join([thread], stop_grace_period_secs=0.1)
    release.set()


@pytest.mark.timeout(10)
def test_looper_thread_calls_its_target_until_stopped():
    coord = tf.train.Coordinator()
    calls = []
    tf.train.LooperThread.loop(coord, 0.01, target=calls.append, args=(1,))
    time.sleep(0.1)
    coord.request_stop()
    coord.join(stop_grace_period_secs=2)
    assert len(calls) >= 2


# ---- QueueRunner ---------------------------------------------------------------------
@pytest.mark.timeout(20)
def test_queue_runner_pipeline_feeds_a_training_loop_until_input_ends():
    """Stage 1: a closed queue of 20 numbers.  Stage 2: two runner threads move
    them, doubled, into a small queue.  The loop sums batches until the end of
    input travels down the pipeline as OutOfRangeError."""
    data = np.arange(20, dtype=np.float32)
    source = tf.FIFOQueue(100, tf.float32, shapes=[[]])
    fill = source.enqueue_many([data])
    close_source = source.close()
    buffer = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    move = buffer.enqueue(source.dequeue() * 2)
    tf.train.add_queue_runner(tf.train.QueueRunner(buffer, [move, move]))
    assert len(tf.get_default_graph().get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1
    total = tf.Variable(0.0)
    step = tf.assign_add(total, tf.reduce_sum(buffer.dequeue_up_to(3)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fill)
        sess.run(close_source)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 3  # two enqueue threads and the closer
        steps = 0
        try:
            while not coord.should_stop():
                sess.run(step)
                steps += 1
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(total) == pytest.approx(2 * data.sum())
        assert 7 <= steps <= 20
        assert sess.run(buffer.is_closed())


@pytest.mark.timeout(20)
def test_stopping_the_coordinator_wakes_runners_blocked_on_a_full_queue():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    runner = tf.train.QueueRunner(q, [q.enqueue(tf.random_uniform([]))])
    batch = q.dequeue_many(2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert sess.run(batch).shape == (2,)
        assert runner.create_threads(sess, coord=coord) == []  # already running
        time.sleep(0.1)  # the runner is now blocked on the full queue
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert not any(thread.is_alive() for thread in threads)


@pytest.mark.timeout(20)
def test_runner_errors_reach_the_coordinator():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    unfed = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(q, [q.enqueue(unfed)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            coord.join(threads, stop_grace_period_secs=5)


@pytest.mark.timeout(20)
def test_runner_without_coordinator_records_exceptions():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    unfed = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(q, [q.enqueue(unfed)])
    with tf.Session() as sess:
        (thread,) = runner.create_threads(sess, daemon=True)
        with pytest.raises(tf.errors.InvalidArgumentError):
            thread.run()  # in this thread: the error is recorded and re-raised
    assert len(runner.exceptions_raised) == 1


def test_start_queue_runners_needs_a_session():
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()


@pytest.mark.timeout(20)
def test_start_queue_runners_uses_the_default_session():
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    counter = tf.Variable(0)
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1))]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        with sess.as_default():
            threads = tf.train.start_queue_runners(coord=coord)
        assert sorted(sess.run(q.dequeue_many(3)).tolist()) == [1, 2, 3]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
