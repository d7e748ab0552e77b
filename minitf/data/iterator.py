"""``tf.data.Iterator``: pulling a dataset's elements into the graph.

An iterator is *state in the session*: the ``IteratorV2`` op (or
``OneShotIterator``) outputs a resource naming it, and two ops act on it:

* ``iterator.initializer`` — a ``MakeIterator(dataset, iterator)`` op —
  starts (or restarts) the iterator on the dataset.  Because the dataset
  is an ordinary input of that op, ``from_tensor_slices(placeholder)``
  reads the value fed *when the initializer runs*::

      x = tf.placeholder(tf.float32, [None])
      it = tf.data.Dataset.from_tensor_slices(x).make_initializable_iterator()
      sess.run(it.initializer, {x: [1.0, 2.0]})   # the data is captured here

* ``iterator.get_next()`` — an ``IteratorGetNext`` op — returns the next
  element, in the dataset's structure; past the end it raises
  ``tf.errors.OutOfRangeError`` ("End of sequence") until re-initialized.

A *feedable* iterator (:meth:`Iterator.from_string_handle`) reads from
whichever iterator the string fed to its handle placeholder names — the
value of that iterator's :meth:`~Iterator.string_handle` — so one
``get_next`` serves a training and a validation iterator in turn.

A *one-shot* iterator needs no initializer: its ``OneShotIterator`` kernel
starts itself on its dataset input the first time it runs.  (TF builds that
dataset from a function attr; minitf keeps the dataset an input edge, so its
cheap dataset ops run with every ``get_next`` but only the first result is
used.  As in TF, it cannot read placeholders.)

Mirrors ``tensorflow/python/data/ops/iterator_ops.py``.
"""

from minitf.data import structure
from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops import dataset_ops


class Iterator(structure.HasElementStructure):
    """Represents the state of iterating through a ``Dataset``.

    Build one with ``dataset.make_one_shot_iterator()``,
    ``dataset.make_initializable_iterator()`` or :meth:`from_structure`.

    Example:
        >>> it = tf.data.Dataset.range(3).make_initializable_iterator()
        >>> nxt = it.get_next()
        >>> sess.run(it.initializer)
        >>> [sess.run(nxt) for _ in range(3)]
        [0, 1, 2]
    """

    def __init__(self, iterator_resource, initializer, output_types, output_shapes,
                 output_classes=None):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._output_types = output_types
        self._output_shapes = output_shapes
        self._output_classes = (structure.dense_classes(output_types) if output_classes is None
                                else output_classes)
        self._string_handle = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An uninitialized iterator for any dataset of this element structure.

        Start it on a dataset with ``make_initializer(dataset)``: several
        datasets (training, validation) can feed one ``get_next``.
        """
        output_types, output_shapes, output_classes = _element_structure(
            output_types, output_shapes, output_classes)
        handle = dataset_ops.iterator(structure.flat_types(output_types, output_classes),
                                      structure.flat_shapes(output_shapes, output_classes),
                                      shared_name=shared_name or "")
        return Iterator(handle, None, output_types, output_shapes, output_classes)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None, output_classes=None):
        """A *feedable* iterator: ``get_next`` reads from the iterator whose
        :meth:`string_handle` value is fed to ``string_handle``
        (``tf.data.Iterator.from_string_handle``).

        Example:
            >>> handle = tf.placeholder(tf.string, [])
            >>> feedable = tf.data.Iterator.from_string_handle(
            ...     handle, train.output_types, train.output_shapes)
            >>> batch = feedable.get_next()
            >>> train_handle = sess.run(train_iterator.string_handle())
            >>> sess.run(batch, {handle: train_handle})

        Running ``get_next`` with a string that names no iterator of the
        session raises ``InvalidArgumentError``.
        """
        output_types, output_shapes, output_classes = _element_structure(
            output_types, output_shapes, output_classes)
        handle = dataset_ops.iterator_from_string_handle(
            string_handle, structure.flat_types(output_types, output_classes),
            structure.flat_shapes(output_shapes, output_classes))
        return Iterator(handle, None, output_types, output_shapes, output_classes)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed a :meth:`from_string_handle`
        iterator (an ``IteratorToStringHandle`` op, made once unless ``name`` is given)."""
        graph = self._iterator_resource.graph
        if name is None and self._string_handle is not None:
            return self._string_handle
        with graph.as_default(), graph.colocate_with(self._iterator_resource.op):
            handle = dataset_ops.iterator_to_string_handle(self._iterator_resource, name=name)
        if name is None:
            self._string_handle = handle
        return handle

    # ---- ops -------------------------------------------------------------------------
    @property
    def initializer(self):
        """The op that (re)starts this iterator on its dataset.

        Raises:
            ValueError: for a one-shot iterator or one made by ``from_structure``.
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """A ``MakeIterator`` op that starts this iterator on ``dataset``.

        Raises:
            TypeError: if the dataset's element types differ from the iterator's.
            ValueError: if its structure or shapes are incompatible.
        """
        structure.assert_same_structure(self._output_types, dataset.output_types)
        if structure.flatten(self._output_types) != structure.flatten(dataset.output_types):
            raise TypeError("Expected output types %r but got dataset with output types %r."
                            % (self._output_types, dataset.output_types))
        if structure.flatten(self._output_classes) != structure.flatten(dataset.output_classes):
            raise TypeError("Expected output classes %r but got dataset with output classes %r."
                            % (self._output_classes, dataset.output_classes))
        for mine, theirs in zip(structure.flatten(self._output_shapes),
                                structure.flatten(dataset.output_shapes)):
            if not mine.is_compatible_with(theirs):
                raise ValueError("Expected output shapes compatible with %r but got dataset with "
                                 "output shapes %r." % (self._output_shapes, dataset.output_shapes))
        graph = self._iterator_resource.graph
        with graph.as_default(), graph.colocate_with(self._iterator_resource.op):
            return dataset_ops.make_iterator(dataset._variant_tensor, self._iterator_resource,
                                             name=name)

    def get_next(self, name=None):
        """The next element, as a structure of tensors (an ``IteratorGetNext`` op).

        Running it past the end raises ``tf.errors.OutOfRangeError``; running
        it before the iterator was initialized, ``FailedPreconditionError``.
        """
        graph = self._iterator_resource.graph
        with graph.as_default(), graph.colocate_with(self._iterator_resource.op):
            flat = dataset_ops.iterator_get_next(
                self._iterator_resource, self._flat_types, self._flat_shapes, name=name)
            return structure.from_tensor_list(flat, self._output_types, self._output_shapes,
                                              self._output_classes)


def make_one_shot_iterator(dataset):
    """An iterator that starts itself on first use (``tf.data.make_one_shot_iterator``).

    Raises:
        ValueError: if the dataset depends on a placeholder (it could not be
            re-read later; use an initializable iterator).
    """
    _check_no_placeholders(dataset._variant_tensor)
    graph = dataset._variant_tensor.graph
    with graph.as_default():
        handle = dataset_ops.one_shot_iterator(
            dataset._variant_tensor, dataset._flat_types, dataset._flat_shapes)
    return Iterator(handle, None, dataset.output_types, dataset.output_shapes,
                    dataset.output_classes)


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator started by running its ``initializer``
    (``tf.data.make_initializable_iterator``)."""
    graph = dataset._variant_tensor.graph
    with graph.as_default():
        handle = dataset_ops.iterator(dataset._flat_types, dataset._flat_shapes,
                                      shared_name=shared_name or "")
        with graph.colocate_with(handle.op):
            initializer = dataset_ops.make_iterator(dataset._variant_tensor, handle)
    return Iterator(handle, initializer, dataset.output_types, dataset.output_shapes,
                    dataset.output_classes)


def _element_structure(output_types, output_shapes, output_classes):
    """The ``(types, shapes, classes)`` structures of ``from_structure``'s arguments:
    dtypes normalized, shapes unknown and classes ``Tensor`` where not given."""
    output_types = structure.map_structure(dtypes.as_dtype, output_types)
    if output_shapes is None:
        output_shapes = structure.map_structure(lambda _: TensorShape(None), output_types)
    else:
        output_shapes = structure.pack_sequence_as(
            output_types, [as_shape(s) for s in structure.flatten_up_to(output_types,
                                                                        output_shapes)])
    if output_classes is None:
        output_classes = structure.dense_classes(output_types)
    else:
        output_classes = structure.pack_sequence_as(
            output_types, structure.flatten_up_to(output_types, output_classes))
    return output_types, output_shapes, output_classes


def _check_no_placeholders(tensor):
    """TF's rule for one-shot iterators: their dataset may not read a placeholder."""
    seen, stack = set(), [tensor.op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder":
            raise ValueError("Cannot capture a placeholder (name:%s, type:Placeholder) by value. "
                             "Use make_initializable_iterator() and feed the placeholder when "
                             "running its initializer." % op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
