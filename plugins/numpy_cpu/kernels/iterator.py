"""CPU kernels of the iterator ops: the session state that pulls a dataset's elements.

The iterator ops keep an :class:`IteratorResource` per iterator op in the
session's resource manager: ``MakeIterator`` starts a new pass over a dataset
object (:mod:`.dataset`) on it, ``IteratorGetNext`` takes the next element
under a lock (several threads may share an iterator) and turns the pass's
end into ``OutOfRangeError``.  ``IteratorToStringHandle`` names an iterator's
state by a string, and ``IteratorFromStringHandleV2`` finds the state a fed
string names: the *feedable iterator* that switches one ``get_next`` between
a training and a validation iterator.

Mirrors ``tensorflow/core/kernels/data/iterator_ops.cc``.
"""

import threading

import numpy as np

from minitf.plugin import errors
from minitf_numpy_cpu.kernels.table import kernel


class IteratorResource:
    """The session state of one iterator op: the pass it is in, if any.

    Thread-safe: ``get_next`` from several threads each get distinct elements.
    """

    def __init__(self, name):
        self.name = name  # its key in the resource manager, the string handle's text
        self._lock = threading.Lock()
        self._elements = None  # the generator of the current pass
        self._started = False

    def start(self, dataset):
        """Begins a new pass over ``dataset`` (dropping the previous one)."""
        with self._lock:
            self._close_pass()
            self._elements = iter(dataset)
            self._started = True

    def start_once(self, dataset):
        """Begins a pass over ``dataset`` unless one was ever begun (one-shot iterators)."""
        if not self._started:
            with self._lock:
                if not self._started:
                    self._elements = iter(dataset)
                    self._started = True

    def get_next(self):
        """The next element.

        Raises:
            FailedPreconditionError: if no pass was started.
            OutOfRangeError: at the end of the pass.
        """
        with self._lock:
            if self._elements is None:
                raise errors.FailedPreconditionError(
                    None, None, "GetNext() failed because the iterator has not been initialized. "
                    "Ensure that you have run the initializer operation for this iterator "
                    "before getting the next element.")
            try:
                return next(self._elements)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def _close_pass(self):
        if self._elements is not None:
            self._elements.close()  # ends the pass (stopping prefetch threads)
            self._elements = None

    def close_for_shutdown(self):
        """Session close: ends the current pass, unless a thread is inside ``get_next``."""
        if self._lock.acquire(blocking=False):
            try:
                self._close_pass()
            finally:
                self._lock.release()


def _iterator_resource(ctx, shared_name):
    name = shared_name or ctx.op.name
    return ctx.resources.kernel_state(("iterator", name), lambda: IteratorResource(name))


@kernel("IteratorV2")
def iterator_v2(ctx, shared_name, container, output_types, output_shapes):
    return _iterator_resource(ctx, shared_name)


@kernel("OneShotIterator")
def one_shot_iterator(ctx, dataset, shared_name, container, output_types, output_shapes):
    resource = _iterator_resource(ctx, shared_name)
    resource.start_once(dataset)
    return resource


@kernel("MakeIterator")
def make_iterator(ctx, dataset, iterator):
    iterator.start(dataset)


@kernel("IteratorToStringHandle")
def iterator_to_string_handle(ctx, resource_handle):
    return np.array(resource_handle.name.encode("utf-8"), dtype=object)


@kernel("IteratorFromStringHandleV2")
def iterator_from_string_handle(ctx, string_handle, output_types, output_shapes):
    name = string_handle.item() if isinstance(string_handle, np.ndarray) else string_handle
    name = name.decode("utf-8") if isinstance(name, bytes) else str(name)

    def no_such_iterator():
        raise errors.InvalidArgumentError(
            None, None, "The string handle %r names no iterator of this session: pass the "
            "value of iterator.string_handle() run in the same session." % name)
    return ctx.resources.kernel_state(("iterator", name), no_such_iterator)


@kernel("IteratorGetNext")
def iterator_get_next(ctx, iterator, output_types, output_shapes):
    element = iterator.get_next()
    return element[0] if len(element) == 1 else element
