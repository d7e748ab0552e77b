"""Queue-based input pipelines: ``tf.train.batch``, ``shuffle_batch`` and the producers.

Before ``tf.data``, a TF1 program read its input through a chain of queues,
each filled by a :class:`~minitf.train.queue_runner.QueueRunner` thread.  The
functions here build the usual links of that chain, so that a course
program of that era runs unchanged::

    x, y = tf.train.slice_input_producer([features, labels], num_epochs=5)
    x_batch, y_batch = tf.train.shuffle_batch([x, y], batch_size=32,
                                              capacity=1000, min_after_dequeue=500)
    ...
    sess.run(tf.local_variables_initializer())      # the epoch counter
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)

Each function adds a queue, an enqueue op and a QueueRunner (in the
``queue_runners`` collection, started by ``tf.train.start_queue_runners``)
and returns the dequeue side:

* the **producers** (``input_producer``, ``string_input_producer``,
  ``range_input_producer``) put the rows of a tensor in a FIFOQueue, shuffled
  once per epoch, and return the queue; ``slice_input_producer`` returns one
  row of each of several tensors, dequeued together;
* the **batchers** (``batch``, ``shuffle_batch``, ``batch_join``,
  ``shuffle_batch_join``) enqueue single examples (or batches, with
  ``enqueue_many=True``) and return ``dequeue_many(batch_size)``.

``num_epochs`` is counted by :func:`limit_epochs`: a *local* variable
incremented by ``CountUpTo``, which raises ``OutOfRangeError`` after the last
epoch; the runner thread then ends and closes its queue, and the end of the
input travels down the chain until the training loop's ``sess.run`` raises
``OutOfRangeError`` too (see :mod:`minitf.train.queue_runner`).  With
``allow_smaller_final_batch=True`` the last, smaller batch is returned first
(``dequeue_up_to``) and the batch dimension is unknown.

Each queue also gets TF's scalar summary of how full it is
(``fraction_of_32_full``; for ``shuffle_batch`` the fraction above
``min_after_dequeue``, ``fraction_over_500_of_500_full``), in the
``summaries`` collection: a pipeline that cannot keep up shows as a queue
near empty in TensorBoard.

Mirrors ``tensorflow/python/training/input.py``.
"""

from minitf.api_scopes import control_dependencies, name_scope
from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import array_ops, data_flow_ops, gather_ops, math_ops, random_ops
from minitf.ops import unary_ops, variables
from minitf import summary
from minitf.train import queue_runner

__all__ = ["batch", "batch_join", "input_producer", "limit_epochs", "range_input_producer",
           "shuffle_batch", "shuffle_batch_join", "slice_input_producer",
           "string_input_producer"]


# ---- epochs and producers ----------------------------------------------------------------------
def limit_epochs(tensor, num_epochs=None, name=None):
    """Returns ``tensor``, but only ``num_epochs`` times (``tf.train.limit_epochs``).

    The result depends on a ``CountUpTo`` op on a local variable ``epochs``
    (initialize it with ``tf.local_variables_initializer()``): the
    ``num_epochs + 1``-th run raises ``OutOfRangeError``.

    Args:
        tensor: any tensor.
        num_epochs: a positive int, or None for no limit (``tensor`` is
            returned as it is).
        name: the name scope (default ``limit_epochs``).

    Raises:
        ValueError: if ``num_epochs`` is not positive.
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        zero = convert_to_tensor(0, dtype=dtypes.int64)
        epochs = variables.Variable(zero, name="epochs", trainable=False,
                                    collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled with the rows of ``input_tensor`` (``tf.train.input_producer``).

    A QueueRunner enqueues all rows at once (``enqueue_many``), again and
    again — ``num_epochs`` times, or forever — in a new random order each
    time if ``shuffle``.

    Args:
        input_tensor: a tensor of rank >= 1; its rows are the elements.
        element_shape: the shape of a row, if the static shape lacks it.
        num_epochs: how many passes before the queue closes (None: forever).
        shuffle: shuffle the rows of each pass (``tf.random_shuffle``, ``seed``).
        seed: the op seed of the shuffle.
        capacity: the queue's capacity.
        shared_name: shares the queue across sessions with this name.
        summary_name: if given, the name of a scalar summary of the fraction
            of the queue that is full.
        name: the name scope (default ``input_producer``).
        cancel_op: the QueueRunner's cancel op (default: close the queue
            cancelling pending enqueues).

    Returns:
        The :class:`~minitf.ops.data_flow_ops.FIFOQueue`; ``dequeue()`` it.

    Raises:
        ValueError: if the shape of a row is not fully known.
    """
    with name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape.with_rank_at_least(1)[1:].merge_with(
            as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = data_flow_ops.FIFOQueue(capacity, [input_tensor.dtype.base_dtype],
                                        shapes=[element_shape], shared_name=shared_name,
                                        name=scope)
        enqueue = queue.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(
            queue_runner.QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_full_summary(summary_name, queue, capacity)
        return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of strings — typically file names — for a reader
    (``tf.train.string_input_producer``).  See :func:`input_producer`.

    Raises:
        ValueError: if ``string_tensor`` is an empty Python list.
    """
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError("string_input_producer requires a non-null input tensor")
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        return input_producer(string_tensor, [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity, scope, cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the int32 indices ``0 .. limit - 1`` (``tf.train.range_input_producer``).
    See :func:`input_producer`."""
    with name_scope(name, "input_producer", [limit]) as scope:
        indices = math_ops.range(limit)
        return input_producer(indices, [], num_epochs, shuffle, seed, capacity, shared_name,
                              "fraction_of_%d_full" % capacity, scope)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of each tensor in ``tensor_list``, the same row of each
    (``tf.train.slice_input_producer``).

    An index queue (:func:`range_input_producer`) yields row numbers; each
    output is ``tf.gather(tensor, index)``, so an example's features and
    label stay together however the rows are shuffled.

    Returns:
        A list of tensors, one row of each input.

    Raises:
        ValueError: if ``tensor_list`` is empty.
    """
    if not tensor_list:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    with name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather_ops.gather(t, index) for t in tensor_list]


# ---- batching ----------------------------------------------------------------------------------
def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of ``tensors``, in order, through a FIFOQueue (``tf.train.batch``).

    ``num_threads`` runner threads each enqueue ``tensors`` (one example, or
    with ``enqueue_many`` a batch of them) as fast as the queue takes them;
    the result is ``dequeue_many(batch_size)``.

    Args:
        tensors: a list or dict of tensors (one example), or a single tensor.
        batch_size: examples per batch.
        num_threads: enqueueing threads (more than one mixes the order).
        capacity: the queue's capacity.
        enqueue_many: each of ``tensors`` is already a batch (dimension 0).
        shapes: the shape of each example component, if not statically known.
        dynamic_pad: allow unknown dimensions; each batch is zero-padded to
            its longest example (a PaddingFIFOQueue).
        allow_smaller_final_batch: return the last, smaller batch instead of
            dropping it (the batch dimension is then unknown).
        shared_name: shares the queue across sessions with this name.
        name: the name scope (default ``batch``).

    Returns:
        The batched tensors, in the structure of ``tensors``.

    Raises:
        ValueError: if a component's shape is not fully defined (and not
            ``dynamic_pad``) or ``tensors`` is empty.
    """
    return _batch([_as_tensor_list(tensors)], tensors, batch_size, num_threads, capacity,
                  enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch, shared_name,
                  name or "batch", shuffle=None)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Like :func:`batch`, with one enqueueing thread per element of
    ``tensors_list`` (e.g. one per file reader) (``tf.train.batch_join``)."""
    return _batch([_as_tensor_list(t) for t in tensors_list], tensors_list[0], batch_size, None,
                  capacity, enqueue_many, shapes, dynamic_pad, allow_smaller_final_batch,
                  shared_name, name or "batch_join", shuffle=None)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches of ``tensors`` in random order, through a RandomShuffleQueue
    (``tf.train.shuffle_batch``).

    The queue keeps at least ``min_after_dequeue`` examples (until its input
    ends) and draws each batch at random from them: the larger, the better
    mixed and the slower to start.  Other arguments as for :func:`batch`.

    Example:
        >>> x, y = tf.train.shuffle_batch([image, label], batch_size=32,
        ...                               capacity=2000, min_after_dequeue=1000)
    """
    return _batch([_as_tensor_list(tensors)], tensors, batch_size, num_threads, capacity,
                  enqueue_many, shapes, False, allow_smaller_final_batch, shared_name,
                  name or "shuffle_batch", shuffle=(min_after_dequeue, seed))


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """:func:`shuffle_batch` with one enqueueing thread per element of
    ``tensors_list`` (``tf.train.shuffle_batch_join``)."""
    return _batch([_as_tensor_list(t) for t in tensors_list], tensors_list[0], batch_size, None,
                  capacity, enqueue_many, shapes, False, allow_smaller_final_batch, shared_name,
                  name or "shuffle_batch_join", shuffle=(min_after_dequeue, seed))


def _batch(tensor_lists, original, batch_size, num_threads, capacity, enqueue_many, shapes,
           dynamic_pad, allow_smaller_final_batch, shared_name, name, shuffle):
    """The queue, its runner and the dequeue shared by the four batchers.

    ``num_threads`` None means one thread per tensor list (the ``_join``
    forms); ``shuffle`` is ``(min_after_dequeue, seed)`` or None for FIFO.
    """
    all_tensors = [t for tensors in tensor_lists for t in tensors]
    with name_scope(None, name, all_tensors) as scope:
        tensor_lists = [[convert_to_tensor(t) for t in tensors] for tensors in tensor_lists]
        types = _dtypes(tensor_lists)
        shapes = _shapes(tensor_lists, shapes, enqueue_many, dynamic_pad)
        if shuffle is not None:
            min_after_dequeue, seed = shuffle
            queue = data_flow_ops.RandomShuffleQueue(capacity, min_after_dequeue, types,
                                                     shapes=shapes, seed=seed,
                                                     shared_name=shared_name)
        elif dynamic_pad:
            queue = data_flow_ops.PaddingFIFOQueue(capacity, types, shapes=shapes,
                                                   shared_name=shared_name)
        else:
            queue = data_flow_ops.FIFOQueue(capacity, types, shapes=shapes,
                                            shared_name=shared_name)
        enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
        if num_threads is None:
            enqueue_ops = [enqueue(tensors) for tensors in tensor_lists]
        else:
            enqueue_ops = [enqueue(tensor_lists[0])] * num_threads
        queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, enqueue_ops))
        if shuffle is None:
            _fraction_full_summary("fraction_of_%d_full" % capacity, queue, capacity)
        else:
            _fraction_over_summary(queue, capacity, shuffle[0])
        if allow_smaller_final_batch:
            dequeued = queue.dequeue_up_to(batch_size, name=scope)
        else:
            dequeued = queue.dequeue_many(batch_size, name=scope)
        return _as_original_type(original, dequeued)


def _fraction_full_summary(name, queue, capacity):
    """TF's summary of a queue's fill level: ``size / capacity``."""
    fraction = unary_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity)
    summary.scalar(name, fraction)


def _fraction_over_summary(queue, capacity, min_after_dequeue):
    """``shuffle_batch``'s: the share of the room above ``min_after_dequeue`` in use."""
    room = capacity - min_after_dequeue
    over = math_ops.maximum(0, queue.size() - min_after_dequeue)
    summary.scalar("fraction_over_%d_of_%d_full" % (min_after_dequeue, room),
                   unary_ops.cast(over, dtypes.float32) * (1.0 / room))


def _as_tensor_list(tensors):
    """The components of one example: a dict's values by sorted key, a list as is."""
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, (list, tuple)):
        if not tensors:
            raise ValueError("Expected at least one tensor in batch().")
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    """The dequeued tensors in the structure the caller gave (TF's rules:
    a one-component queue dequeues a bare tensor)."""
    if isinstance(original, dict):
        dequeued = [dequeued] if len(original) == 1 else dequeued
        return dict(zip(sorted(original, key=str), dequeued))
    return dequeued


def _dtypes(tensor_lists):
    types = [t.dtype.base_dtype for t in tensor_lists[0]]
    for tensors in tensor_lists[1:]:
        if [t.dtype.base_dtype for t in tensors] != types:
            raise TypeError("Expected types to be consistent: %s vs. %s."
                            % (types, [t.dtype.base_dtype for t in tensors]))
    return types


def _shapes(tensor_lists, shapes, enqueue_many, dynamic_pad):
    """The per-example shape of each component, merged over the tensor lists."""
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    merged = [TensorShape(None)] * len(tensor_lists[0])
    for tensors in tensor_lists:
        for i, tensor in enumerate(tensors):
            shape = tensor.shape
            if enqueue_many:
                shape = shape.with_rank_at_least(1)[1:]
            merged[i] = merged[i].merge_with(shape)
    for shape in merged:
        if not shape.is_fully_defined() and not (dynamic_pad and shape.ndims is not None):
            raise ValueError("All shapes must be fully defined: %s" % merged)
    return merged
