"""CPU kernels of the queue ops, and the queues themselves.

A queue lives in the session's resource manager, one per queue op (or per
``shared_name``); the queue op's kernel returns it as the ``resource`` value
its other ops receive.  Every operation takes the queue's condition
variable, so ``Session.run`` calls in several threads may enqueue and
dequeue at once; an operation that cannot proceed *waits* on the condition
until another one notifies it (TF's ``QueueBase`` keeps lists of pending
enqueue/dequeue attempts instead; a condition variable is the Python idiom).

A waiting kernel gives up with

* ``DeadlineExceededError`` when the run's deadline passes (``ctx.step_timeout``);
* ``CancelledError`` when the session closes (:meth:`Queue.close_for_shutdown`),
  when its step is aborted (``ctx.cancelled``: another partition of the step
  failed, or the master running it went away — a waiting dequeue must not
  take a later step's element) or, for enqueues, when the queue is closed
  with ``cancel_pending_enqueues``.

Mirrors ``tensorflow/core/kernels/{fifo_queue,random_shuffle_queue,padding_fifo_queue}.cc``.
"""

import collections
import itertools
import math
import threading

import numpy as np

from minitf.plugin import errors
from minitf_numpy_cpu.kernels.blocking import wait_until
from minitf_numpy_cpu.kernels.table import kernel

def _shape_text(dims):
    """A shape as TF prints it in queue errors: ``[2,-1]``."""
    return "[%s]" % ",".join("-1" if d is None else str(d) for d in dims)


class FIFOQueue:
    """A bounded first-in first-out queue of elements (tuples of arrays).

    Args:
        name: the queue's name in messages (``_0_fifo_queue``).
        component_types: a DType per component.
        shapes: a TensorShape per component, or ``[]`` when unspecified.
        capacity: the most elements held (-1: unbounded).
    """

    kind = "FIFOQueue"

    def __init__(self, name, component_types, shapes, capacity):
        self.name = name
        self.np_dtypes = [t.as_numpy_dtype for t in component_types]
        self.shapes = list(shapes)
        self.capacity = capacity if capacity >= 0 else math.inf
        self._elements = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self._cancel_enqueues = False
        self._shutdown = False

    # ---- waiting ---------------------------------------------------------------------------
    def _wait_until(self, ctx, ready, what):
        """Waits (holding ``self._cond``) until ``ready()`` (see :mod:`.blocking`)."""
        wait_until(ctx, self._cond, ready, lambda: self._shutdown, what)

    # ---- enqueue -----------------------------------------------------------------------------
    def enqueue(self, ctx, element):
        """Adds one element, waiting while the queue is full."""
        self._check_shapes(ctx, element)
        element = tuple(np.array(c, copy=True) if isinstance(c, np.ndarray) else c
                        for c in element)
        with self._cond:
            self._check_open(ctx)
            self._wait_until(ctx, lambda: len(self._elements) < self.capacity
                             or self._cancel_enqueues, "Enqueue")
            if self._cancel_enqueues:
                raise ctx.error(errors.CancelledError, "Enqueue operation was cancelled")
            self._elements.append(element)
            self._cond.notify_all()

    def enqueue_many(self, ctx, components):
        """Adds the slices along dimension 0 one by one, each as space frees up."""
        sizes = {np.shape(c)[0] if np.ndim(c) else None for c in components}
        if None in sizes or len(sizes) != 1:
            raise ctx.invalid_argument(
                "EnqueueMany requires all components to have the same size in dimension 0, "
                "got shapes %s" % [list(np.shape(c)) for c in components])
        elements = [tuple(c[i] for c in components) for i in range(sizes.pop())]
        for element in elements:
            self._check_shapes(ctx, element)
        with self._cond:
            self._check_open(ctx)
        for element in elements:
            self.enqueue(ctx, element)

    def _check_open(self, ctx):
        if self._closed:
            raise ctx.error(errors.CancelledError, "%s '%s' is closed." % (self.kind, self.name))

    def _check_shapes(self, ctx, element):
        for k, (value, shape) in enumerate(zip(element, self.shapes)):
            if not shape.is_compatible_with(np.shape(value)):
                raise ctx.invalid_argument("Shape mismatch in tuple component %d. Expected %s, "
                                           "got %s" % (k, _shape_text(shape.as_list()),
                                                       _shape_text(np.shape(value))))

    # ---- dequeue -----------------------------------------------------------------------------
    def _can_take(self, n):
        """Whether ``n`` elements may be dequeued now (the shuffle queue keeps a reserve)."""
        return len(self._elements) >= n

    def _take(self, n):
        return [self._elements.popleft() for _ in range(n)]

    def dequeue(self, ctx, n, up_to=False):
        """Removes ``n`` elements, waiting until there are enough or the queue closes.

        With ``up_to``, a closed queue holding fewer (but some) gives what it has.

        Raises:
            OutOfRangeError: if the queue is closed with too few elements.
        """
        with self._cond:
            self._wait_until(ctx, lambda: self._closed or self._can_take(n), "Dequeue")
            if not self._can_take(n):
                size = len(self._elements)
                if not (up_to and size > 0):
                    raise ctx.error(errors.OutOfRangeError,
                                    "%s '%s' is closed and has insufficient elements (requested "
                                    "%d, current size %d)" % (self.kind, self.name, n, size))
                n = size
            elements = self._take(n)
            self._cond.notify_all()
        return elements

    def check_batchable(self, ctx):
        """Batches need known component shapes (checked before dequeuing anything)."""
        if not self.shapes:
            raise ctx.invalid_argument("%s's DequeueMany and DequeueUpTo require the components "
                                       "to have specified shapes." % self.kind)

    def batch(self, elements):
        """Stacks elements into one batch per component (``dequeue_many``)."""
        return tuple(np.stack([e[k] for e in elements]) if elements else
                     np.zeros([0] + shape.as_list(), dtype=dtype)
                     for k, (shape, dtype) in enumerate(zip(self.shapes, self.np_dtypes)))

    # ---- state ---------------------------------------------------------------------------
    def size(self):
        with self._cond:
            return len(self._elements)

    def is_closed(self):
        return self._closed

    def close(self, cancel_pending_enqueues):
        with self._cond:
            self._closed = True
            self._cancel_enqueues = self._cancel_enqueues or cancel_pending_enqueues
            self._cond.notify_all()

    def close_for_shutdown(self):
        """The session is closing: every waiting op raises ``CancelledError``."""
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()


class PaddingFIFOQueue(FIFOQueue):
    """A FIFO queue whose batches pad every component to the batch's largest shape."""

    kind = "PaddingFIFOQueue"

    def batch(self, elements):
        components = []
        for k, (shape, dtype) in enumerate(zip(self.shapes, self.np_dtypes)):
            values = [np.asarray(e[k]) for e in elements]
            padded_shape = [max([v.shape[d] for v in values], default=0) if dim is None else dim
                            for d, dim in enumerate(shape.as_list())]
            batch = np.zeros([len(values)] + padded_shape, dtype=dtype)
            if batch.dtype == object:
                batch.fill(b"")
            for i, value in enumerate(values):
                batch[(i,) + tuple(slice(0, d) for d in value.shape)] = value
            components.append(batch)
        return tuple(components)


class RandomShuffleQueue(FIFOQueue):
    """A queue dequeuing uniformly at random, keeping ``min_after_dequeue`` elements
    to shuffle among until it is closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, component_types, shapes, capacity, min_after_dequeue, seed, seed2):
        super().__init__(name, component_types, shapes, capacity)
        self.min_after_dequeue = min_after_dequeue
        self._rng = (np.random.default_rng([seed, seed2]) if seed or seed2
                     else np.random.default_rng())

    def _can_take(self, n):
        reserve = 0 if self._closed else self.min_after_dequeue
        return len(self._elements) >= n + reserve

    def _take(self, n):
        taken = []
        for _ in range(n):
            i = int(self._rng.integers(len(self._elements)))
            self._elements[i], self._elements[-1] = self._elements[-1], self._elements[i]
            taken.append(self._elements.pop())
        return taken


# ---- kernels -------------------------------------------------------------------------
def _queue(ctx, shared_name, make):
    """The queue of this op (or ``shared_name``), created on first use.

    An unshared queue is named as TF names it in messages: ``_<n>_<op name>``,
    n counting the queues of this device.
    """
    ids = ctx.resources.kernel_state(("queue_ids",), itertools.count)
    return ctx.resources.kernel_state(
        ("queue", shared_name or ctx.op.name),
        lambda: make(shared_name or "_%d_%s" % (next(ids), ctx.op.name)))


@kernel("FIFOQueueV2")
def fifo_queue(ctx, component_types, shapes, capacity, container, shared_name):
    return _queue(ctx, shared_name,
                  lambda name: FIFOQueue(name, component_types, shapes, capacity))


@kernel("PaddingFIFOQueueV2")
def padding_fifo_queue(ctx, component_types, shapes, capacity, container, shared_name):
    return _queue(ctx, shared_name,
                  lambda name: PaddingFIFOQueue(name, component_types, shapes, capacity))


@kernel("RandomShuffleQueueV2")
def random_shuffle_queue(ctx, component_types, shapes, capacity, container, shared_name,
                         min_after_dequeue, seed, seed2):
    return _queue(ctx, shared_name, lambda name: RandomShuffleQueue(
        name, component_types, shapes, capacity, min_after_dequeue, seed, seed2))


@kernel("QueueEnqueueV2")
def queue_enqueue(ctx, queue, *components, timeout_ms):
    queue.enqueue(ctx, components)


@kernel("QueueEnqueueManyV2")
def queue_enqueue_many(ctx, queue, *components, timeout_ms):
    queue.enqueue_many(ctx, components)


def _outputs(components):
    return components[0] if len(components) == 1 else components


@kernel("QueueDequeueV2")
def queue_dequeue(ctx, queue, component_types, timeout_ms):
    element, = queue.dequeue(ctx, 1)
    return _outputs(element)


@kernel("QueueDequeueManyV2")
def queue_dequeue_many(ctx, queue, n, component_types, timeout_ms):
    if n < 0:
        raise ctx.invalid_argument("DequeueManyOp requested %d < 0 elements" % n)
    queue.check_batchable(ctx)
    return _outputs(queue.batch(queue.dequeue(ctx, int(n))))


@kernel("QueueDequeueUpToV2")
def queue_dequeue_up_to(ctx, queue, n, component_types, timeout_ms):
    if n < 0:
        raise ctx.invalid_argument("DequeueUpToOp requested %d < 0 elements" % n)
    queue.check_batchable(ctx)
    return _outputs(queue.batch(queue.dequeue(ctx, int(n), up_to=True)))


@kernel("QueueCloseV2")
def queue_close(ctx, queue, cancel_pending_enqueues):
    queue.close(cancel_pending_enqueues)


@kernel("QueueSizeV2")
def queue_size(ctx, queue):
    return np.int32(queue.size())


@kernel("QueueIsClosedV2")
def queue_is_closed(ctx, queue):
    return np.bool_(queue.is_closed())
