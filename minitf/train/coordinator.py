"""``tf.train.Coordinator``: stopping a set of threads together.

Input pipelines of TF1 run in Python threads — queue runners enqueueing while
the main thread trains.  A coordinator is the flag they share:

* every thread loops ``while not coord.should_stop(): ...``;
* any thread may call ``coord.request_stop()`` — e.g. because its input is
  exhausted, or with the exception that broke it;
* the main thread calls ``coord.join(threads)``, which waits for all of them
  and re-raises the first exception reported to ``request_stop``.

``OutOfRangeError`` is a *clean* stop (the input ran out), not an error.

Example::

    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while not coord.should_stop():
            sess.run(train_op)
    except tf.errors.OutOfRangeError:
        pass                      # the input pipeline is exhausted
    finally:
        coord.request_stop()
    coord.join(threads)

Mirrors ``tensorflow/python/training/coordinator.py``.
"""

import contextlib
import logging
import sys
import threading
import time

from minitf.framework import errors

_log = logging.getLogger("minitf")


class Coordinator:
    """A coordinator for threads (``tf.train.Coordinator``).

    Args:
        clean_stop_exception_types: exception types that stop the threads
            without being re-raised by :meth:`join` (default ``OutOfRangeError``).
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exception = None  # the first exception reported, raised by join()
        self._joined = False
        self._registered_threads = set()

    def _filter_exception(self, ex):
        """``ex`` as an exception instance, or None for a clean stop."""
        if isinstance(ex, tuple):  # sys.exc_info()
            ex = ex[1]
        if isinstance(ex, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None):
        """Asks all threads to stop; the first ``ex`` given is re-raised by :meth:`join`.

        Args:
            ex: an exception, or a ``sys.exc_info()`` tuple, or None.

        Raises:
            ``ex``: if the coordinator was already joined (the exception
            would otherwise be lost).
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if ex is not None:
                    raise ex
                return
            if not self._stop_event.is_set():
                if ex is not None and self._exception is None:
                    _log.info("Error reported to Coordinator: %s", ex)
                    self._exception = ex
                self._stop_event.set()

    def clear_stop(self):
        """Clears the stop request (and any recorded exception) to reuse the coordinator."""
        with self._lock:
            self._joined = False
            self._exception = None
            self._stop_event.clear()

    def should_stop(self):
        """True once a stop was requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A context manager that reports any exception raised inside to :meth:`request_stop`.

        Example::

            with coord.stop_on_exception():
                while not coord.should_stop():
                    ...work...
        """
        try:
            yield
        except BaseException:  # reported, re-raised later by join()
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits until a stop is requested; returns True if it was (False on timeout)."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread):
        """Adds ``thread`` to those :meth:`join` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for ``threads`` (and the registered ones) to terminate.

        Waits until they all finish or a stop is requested; then gives the
        live ones ``stop_grace_period_secs`` to finish.

        Raises:
            the first exception passed to :meth:`request_stop`, if any;
            RuntimeError: if threads are still alive after the grace period
                (unless ``ignore_live_threads``).
        """
        with self._lock:
            threads = set(threads or ()) | self._registered_threads

        def alive():
            return [t for t in threads if t.is_alive()]

        while alive() and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        while alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        stragglers = [t.name for t in alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exception is not None:
                raise self._exception
        if stragglers:
            if ignore_live_threads:
                _log.info("Coordinator stopped with threads still running: %s",
                          " ".join(stragglers))
            else:
                raise RuntimeError("Coordinator stopped with threads still running: %s"
                                   % " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        """Raises the exception reported to :meth:`request_stop`, if any."""
        with self._lock:
            if self._exception is not None:
                raise self._exception


class LooperThread(threading.Thread):
    """A daemon thread calling ``target`` repeatedly until the coordinator stops
    (``tf.train.LooperThread``).

    Args:
        coord: a Coordinator.
        timer_interval_secs: call ``target`` every this many seconds; None:
            call it again as soon as it returns.
        target, args, kwargs: the function to call (or override :meth:`run_loop`).
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread calling ``target``; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args,
                              kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the loop starts."""

    def stop_loop(self):
        """Called once after the loop ends."""

    def run_loop(self):
        """One iteration: calls ``target``."""
        if self._target:
            self._target(*self._args, **self._kwargs)
