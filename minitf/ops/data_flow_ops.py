"""Queues: ``tf.FIFOQueue``, ``tf.RandomShuffleQueue``, ``tf.PaddingFIFOQueue``.

A TF1 queue is state in the session, reached through ops.  The queue op
(``FIFOQueueV2`` ...) outputs a ``resource`` handle: its kernel finds — or on
first use creates — the queue object in the device's resource manager.  The
other ops take that handle as input 0::

    q = tf.FIFOQueue(10, [tf.float32], shapes=[[]])
    q.enqueue(x)          # QueueEnqueueV2(fifo_queue, x)
    q.dequeue_many(4)     # QueueDequeueManyV2(fifo_queue, n=4): a [4] batch
    q.close()             # QueueCloseV2(fifo_queue)

The ops *block*, as in TF: a dequeue waits while the queue has too few
elements, an enqueue while it is full.  Several ``Session.run`` calls on one
session may run at once in different threads — a producer thread enqueueing
(see :mod:`minitf.train.queue_runner`) while the training loop dequeues.  A
blocked op wakes up when:

* the queue changes so that it can proceed;
* the queue is closed: pending dequeues that cannot be served raise
  ``OutOfRangeError``, new enqueues raise ``CancelledError`` (and pending ones
  too with ``close(cancel_pending_enqueues=True)``);
* the run's deadline (``RunOptions(timeout_in_ms=...)``) passes:
  ``DeadlineExceededError``;
* the session is closed: ``CancelledError``.

An element is a tuple of *components* (``dtypes`` gives their types); with
``names`` they are enqueued and dequeued as dicts.

Mirrors ``tensorflow/python/ops/data_flow_ops.py``; kernels in
``plugins/numpy_cpu/kernels/data_flow.py``.
"""

from minitf.api_scopes import get_seed
from minitf.framework import dtypes as dtypes_lib
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


# ---- the ops -----------------------------------------------------------------------
def _scalar(op):
    return [TensorShape([])] * len(op.outputs)


def _queue_op(name, extra_attrs, doc):
    attrs = {"component_types": None, "shapes": [], "capacity": -1, "container": "",
             "shared_name": ""}
    attrs.update(extra_attrs)
    return define_op(name, outputs=("handle",), attrs=attrs, shape_fn=_scalar,
                     dtype_fn=lambda op: [dtypes_lib.resource], stateful=True, doc=doc,
                     stacklevel=2)


def _component_types(op):
    return [dtypes_lib.as_dtype(t) for t in op.get_attr("component_types")]


def _dequeue_op(name, inputs, doc):
    return define_op(name, inputs=inputs, outputs=("components",),
                     attrs={"component_types": None, "timeout_ms": -1},
                     num_outputs=lambda attrs: len(attrs["component_types"]),
                     dtype_fn=_component_types, stateful=True, doc=doc, stacklevel=2)


_fifo_queue = _queue_op("FIFOQueueV2", {}, "A queue producing elements in first-in first-out "
                        "order.")
_padding_fifo_queue = _queue_op("PaddingFIFOQueueV2", {}, "A FIFO queue whose batches are "
                                "padded to their largest element.")
_random_shuffle_queue = _queue_op(
    "RandomShuffleQueueV2", {"min_after_dequeue": 0, "seed": 0, "seed2": 0},
    "A queue producing its elements in random order.")
_enqueue = define_op(
    "QueueEnqueueV2", inputs=("handle", "components*"), outputs=(), attrs={"timeout_ms": -1},
    shape_fn=lambda op: [], stateful=True, doc="Adds one element; blocks while the queue is full.")
_enqueue_many = define_op(
    "QueueEnqueueManyV2", inputs=("handle", "components*"), outputs=(), attrs={"timeout_ms": -1},
    shape_fn=lambda op: [], stateful=True,
    doc="Adds the slices of its components along dimension 0 as elements.")
_dequeue = _dequeue_op("QueueDequeueV2", ("handle",),
                       "Removes one element; blocks while the queue is empty.")
_dequeue_many = _dequeue_op("QueueDequeueManyV2", ("handle", "n"),
                            "Removes n elements and returns them stacked.")
_dequeue_up_to = _dequeue_op("QueueDequeueUpToV2", ("handle", "n"),
                             "Like DequeueMany, but returns what is left of a closed queue.")
_close = define_op(
    "QueueCloseV2", inputs=("handle",), outputs=(), attrs={"cancel_pending_enqueues": False},
    shape_fn=lambda op: [], stateful=True, doc="Closes the queue to further enqueues.")
_size = define_op(
    "QueueSizeV2", inputs=("handle",), outputs=("size",), shape_fn=_scalar,
    dtype_fn=lambda op: [dtypes_lib.int32], stateful=True, doc="The number of queued elements.")
_is_closed = define_op(
    "QueueIsClosedV2", inputs=("handle",), outputs=("is_closed",), shape_fn=_scalar,
    dtype_fn=lambda op: [dtypes_lib.bool], stateful=True, doc="Whether the queue is closed.")
not_differentiable("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2",
                   "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
                   "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2")


# ---- the Python classes ------------------------------------------------------------
class QueueBase:
    """Base class of the queues: the ops on one queue resource (``tf.QueueBase``).

    Args:
        dtypes: the component dtypes.
        shapes: a TensorShape per component, or None (unknown).
        names: component names (elements are then dicts), or None.
        queue_ref: the queue op's resource tensor.
    """

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = dtypes
        self._shapes = shapes if shapes is not None else [TensorShape(None)] * len(dtypes)
        self._names = names
        self._queue_ref = queue_ref
        # The queue's own name, without its scope, prefixes the names of its ops
        # (``fifo_queue_enqueue``), which are built in the scope current at that time.
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self):
        return self._queue_ref

    @property
    def name(self):
        """The queue op's full name (``batch/fifo_queue``)."""
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    @property
    def names(self):
        return None if self._names is None else list(self._names)

    def _scope(self, name):
        """Builds the op in the queue's graph, colocated with the queue (as TF does)."""
        graph = self._queue_ref.graph
        return _QueueOpScope(graph, self._queue_ref.op, name)

    def _components(self, vals):
        """``vals`` (a tensor, tuple/list, or dict with names) as converted tensors."""
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(vals) != sorted(self._names):
                raise ValueError("Keys in dictionary to enqueue %s don't match the names of the "
                                 "queue %s" % (sorted(vals), sorted(self._names)))
            vals = [vals[n] for n in self._names]
        elif self._names is not None:
            raise ValueError("You must enqueue a dictionary in a Queue with names")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components to enqueue, got %d"
                             % (len(self._dtypes), len(vals)))
        return [convert_to_tensor(v, dtype=dtype, name="component_%d" % i)
                for i, (v, dtype) in enumerate(zip(vals, self._dtypes))]

    def enqueue(self, vals, name=None):
        """An op enqueueing one element ``vals``; it blocks while the queue is full.

        Raises:
            ValueError: if a component's shape is incompatible with the queue's.
            TypeError: if a component does not convert to the queue's dtype.
        """
        with self._scope(name or "%s_enqueue" % self._name) as scope:
            components = self._components(vals)
            for value, shape in zip(components, self._shapes):
                value.shape.assert_is_compatible_with(shape)
            return apply_op(_enqueue, [self._queue_ref, components], attrs={"timeout_ms": -1},
                            name=scope)

    def enqueue_many(self, vals, name=None):
        """An op enqueueing the slices of ``vals`` along dimension 0 as elements."""
        with self._scope(name or "%s_EnqueueMany" % self._name) as scope:
            components = self._components(vals)
            batch = TensorShape([None])
            for value, shape in zip(components, self._shapes):
                with_batch = value.shape.with_rank_at_least(1)
                batch = batch.merge_with(with_batch[:1])
                with_batch[1:].assert_is_compatible_with(shape)
            return apply_op(_enqueue_many, [self._queue_ref, components],
                            attrs={"timeout_ms": -1}, name=scope)

    def _dequeued(self, outputs, batch_dim=None):
        """The dequeue op's outputs with static shapes, in the queue's structure."""
        outputs = outputs if isinstance(outputs, list) else [outputs]
        for tensor, shape in zip(outputs, self._shapes):
            if batch_dim is not False:
                shape = TensorShape([batch_dim]).concatenate(shape)
            tensor.set_shape(shape)
        if self._names is not None:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def _dequeue_attrs(self):
        return {"component_types": list(self._dtypes), "timeout_ms": -1}

    def dequeue(self, name=None):
        """An op dequeueing one element; it blocks while the queue is empty.

        Running it on a closed, empty queue raises ``OutOfRangeError``.
        """
        with self._scope(None):
            outputs = apply_op(_dequeue, [self._queue_ref], attrs=self._dequeue_attrs(),
                               name=name or "%s_Dequeue" % self._name)
        return self._dequeued(outputs, batch_dim=False)

    def dequeue_many(self, n, name=None):
        """An op dequeueing ``n`` elements, stacked along a new dimension 0.

        It blocks until ``n`` elements are available; a closed queue with
        fewer raises ``OutOfRangeError``.
        """
        with self._scope(None):
            n = convert_to_tensor(n, dtype=dtypes_lib.int32, name="n")
            outputs = apply_op(_dequeue_many, [self._queue_ref, n], attrs=self._dequeue_attrs(),
                               name=name or "%s_DequeueMany" % self._name)
        known = constant_value(n)
        return self._dequeued(outputs, batch_dim=None if known is None else int(known))

    def dequeue_up_to(self, n, name=None):
        """Like :meth:`dequeue_many`, but a closed queue yields its last (fewer than
        ``n``) elements before raising ``OutOfRangeError``."""
        with self._scope(None):
            n = convert_to_tensor(n, dtype=dtypes_lib.int32, name="n")
            outputs = apply_op(_dequeue_up_to, [self._queue_ref, n],
                               attrs=self._dequeue_attrs(),
                               name=name or "%s_DequeueUpTo" % self._name)
        return self._dequeued(outputs, batch_dim=None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """An op closing the queue: later enqueues fail, dequeues drain what is left."""
        with self._scope(None):
            return apply_op(_close, [self._queue_ref],
                            attrs={"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                            name=name or "%s_Close" % self._name)

    def is_closed(self, name=None):
        """A bool tensor: whether the queue is closed."""
        with self._scope(None):
            return apply_op(_is_closed, [self._queue_ref], name=name or "%s_Is_Closed" % self._name)

    def size(self, name=None):
        """An int32 tensor: the number of elements in the queue."""
        with self._scope(None):
            return apply_op(_size, [self._queue_ref], name=name or "%s_Size" % self._name)


class _QueueOpScope:
    """``with`` block for building a queue op: the queue's graph as default,
    colocation with the queue, and (given a name) a name scope yielded as the
    op's name."""

    def __init__(self, graph, queue_op, name):
        self._contexts = [graph.as_default(), graph.colocate_with(queue_op)]
        if name is not None:
            self._contexts.append(graph.name_scope(name))

    def __enter__(self):
        value = None
        for context in self._contexts:
            value = context.__enter__()
        return value

    def __exit__(self, *exc_info):
        for context in reversed(self._contexts):
            context.__exit__(*exc_info)


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in the order they were enqueued (``tf.FIFOQueue``).

    Args:
        capacity: the most elements it holds; enqueues block beyond.
        dtypes: a DType, or a list with one per component.
        shapes: per component a fully defined shape (needed by
            ``dequeue_many``), or None.
        names: per component a name (elements are then dicts), or None.
        shared_name: share the queue among ops with this name.
        name: the queue op's name.

    Example:
        >>> q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
        >>> sess.run(q.enqueue_many([[1.0, 2.0, 3.0]]))
        >>> sess.run(q.dequeue_many(2))
        array([1., 2.], dtype=float32)
    """

    _op_def = _fifo_queue
    _unknown_dims_allowed = False

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, self._unknown_dims_allowed)
        names = _as_name_list(names, dtypes)
        ref = apply_op(self._op_def, [], attrs=self._attrs(capacity, dtypes, shapes, shared_name),
                       name=name)
        super().__init__(dtypes, shapes, names, ref)

    @staticmethod
    def _attrs(capacity, dtypes, shapes, shared_name):
        return {"component_types": dtypes, "shapes": list(shapes or []),
                "capacity": int(capacity), "container": "", "shared_name": shared_name or ""}


class PaddingFIFOQueue(FIFOQueue):
    """A FIFO queue whose ``dequeue_many`` pads components to a common shape.

    ``shapes`` is required; a dimension may be None, and a batch pads each
    component with zeros to the largest size in the batch
    (``tf.PaddingFIFOQueue``).

    Example:
        >>> q = tf.PaddingFIFOQueue(5, [tf.int32], shapes=[[None]])
        >>> # after enqueueing [1] and [1, 2, 3]:
        >>> sess.run(q.dequeue_many(2))
        array([[1, 0, 0],
               [1, 2, 3]], dtype=int32)
    """

    _op_def = _padding_fifo_queue
    _unknown_dims_allowed = True

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("PaddingFIFOQueue requires shapes (dimensions may be None).")
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues its elements in random order (``tf.RandomShuffleQueue``).

    A dequeue waits until more than ``min_after_dequeue`` elements would be
    left, so the elements are well mixed — unless the queue is closed, when
    it drains.  ``seed`` follows ``tf.set_random_seed``'s rules.

    Args:
        capacity, dtypes, shapes, names, shared_name, name: as :class:`FIFOQueue`.
        min_after_dequeue: elements kept in the queue to shuffle among.
        seed: op-level seed.
    """

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = get_seed(seed)
        attrs = FIFOQueue._attrs(capacity, dtypes, shapes, shared_name)
        attrs.update(min_after_dequeue=int(min_after_dequeue), seed=seed1 or 0, seed2=seed2 or 0)
        ref = apply_op(_random_shuffle_queue, [], attrs=attrs, name=name)
        super().__init__(dtypes, shapes, names, ref)


# ---- argument normalization (TF's _as_type_list, _as_shape_list, _as_name_list) --------
def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [dtypes_lib.as_dtype(t) for t in dtypes]


def _as_shape_list(shapes, dtypes, unknown_dims_allowed=False):
    """A TensorShape per component, or None; ``[2, 3]`` alone is one component's shape."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError("shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    shapes = [as_shape(s) for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError("Queue shapes must have the same length as dtypes")
    if any(s.ndims is None for s in shapes):
        raise ValueError("All shapes must have a defined rank: %s" % shapes)
    if not unknown_dims_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % shapes)
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)
