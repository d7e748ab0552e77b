"""``tf.train.QueueRunner``: threads that keep a queue filled.

A queue runner holds a queue and one or more *enqueue ops* (each typically
reads or computes an element and enqueues it).  ``create_threads(sess)``
starts one Python thread per enqueue op, each running it in a loop with
``sess.run`` while the training loop dequeues from the same session::

    queue = tf.FIFOQueue(100, [tf.float32], shapes=[[]])
    enqueue = queue.enqueue(tf.random_uniform([]))
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue] * 2))
    batch = queue.dequeue_many(32)
    ...
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)

How the threads end:

* an enqueue op raising ``OutOfRangeError`` means its *input* is exhausted
  (e.g. it dequeues from another, closed queue): that thread ends, and the
  last one to end closes the queue, so the consumer drains it and then gets
  ``OutOfRangeError`` in turn — end-of-input travels down the pipeline;
* any other error is reported to the coordinator, which stops everyone;
* when the coordinator stops, an extra thread closes the queue with
  ``cancel_pending_enqueues=True`` so that blocked enqueues wake up.

Mirrors ``tensorflow/python/training/queue_runner_impl.py``.
"""

import logging
import threading
import weakref

from minitf.framework import default_session
from minitf.framework import errors
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys

_log = logging.getLogger("minitf")


class QueueRunner:
    """Holds a queue and the ops that enqueue into it, and runs them in threads.

    Args:
        queue: a queue (:class:`~minitf.ops.data_flow_ops.QueueBase`).
        enqueue_ops: the enqueue ops; one thread runs each.
        close_op: the op closing the queue when the input is exhausted
            (default ``queue.close()``).
        cancel_op: the op closing it on a stop request (default
            ``queue.close(cancel_pending_enqueues=True)``).
        queue_closed_exception_types: errors that mean "input exhausted"
            (default ``(tf.errors.OutOfRangeError,)``).

    Raises:
        ValueError: without a queue or enqueue ops.
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if queue is None:
            raise ValueError("A QueueRunner needs a queue.")
        if not enqueue_ops:
            raise ValueError("Must provide enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()  # session -> live enqueue threads
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions raised by the threads when no coordinator was given."""
        return list(self._exceptions_raised)

    @property
    def name(self):
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        """One enqueue thread: runs ``enqueue_op`` until stopped or out of input."""
        finished = False
        try:
            while not (coord and coord.should_stop()):
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    # The input is exhausted; the last thread to see it closes the queue.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        finished = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # the session may be closing
                                _log.debug("Ignored exception: %s", e)
                    return
        except Exception as e:  # reported to the coordinator, or recorded
            if coord:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not finished:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord):
        """Waits for a stop request, then closes the queue, waking blocked enqueues."""
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as e:  # the session may be closed already
            _log.debug("Ignored exception: %s", e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Creates (and with ``start``, starts) the threads running the enqueue ops.

        With a coordinator, one more thread closes the queue when it stops,
        and all threads are registered with it for ``coord.join()``.  If
        threads are already running for ``sess``, returns ``[]``.

        Returns:
            The list of threads.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name="QueueRunner-%s-%d" % (self.name, i))
                   for i, op in enumerate(self._enqueue_ops)]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord),
                                            name="QueueRunner-%s-close" % self.name))
        for thread in threads:
            if coord:
                coord.register_thread(thread)
            thread.daemon = daemon
            if start:
                thread.start()
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """Adds ``qr`` to the default graph's queue-runner collection
    (``tf.train.add_queue_runner``)."""
    graph_lib.get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """Starts the threads of every queue runner collected in ``sess``'s graph
    (``tf.train.start_queue_runners``).

    Args:
        sess: the session (default: the default session).
        coord: an optional Coordinator for the threads.
        daemon: make the threads daemons.
        start: start them (else the caller starts them).
        collection: the graph collection of queue runners.

    Returns:
        The list of threads.

    Raises:
        ValueError: without a session.
    """
    if sess is None:
        sess = default_session.get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    threads = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
