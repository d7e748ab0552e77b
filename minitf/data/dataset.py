"""``tf.data.Dataset``: input pipelines built as graph ops.

A :class:`Dataset` is a thin Python object around one graph tensor — the
``variant`` output of a dataset op (see :mod:`minitf.ops.dataset_ops`) —
plus the *structure* of its elements: their dtypes and static shapes, nested
in tuples and dicts (:mod:`minitf.data.structure`).  Each method adds one op
that takes the current dataset as input and returns a new ``Dataset``::

    dataset = (tf.data.Dataset.from_tensor_slices((features, labels))
               .shuffle(1000, seed=1)       # ShuffleDataset
               .map(lambda x, y: (x / 255.0, y))   # MapDataset (traced function)
               .batch(32)                   # BatchDatasetV2
               .repeat())                   # RepeatDataset
    images, labels = dataset.make_one_shot_iterator().get_next()

Nothing is read or computed when these ops run; an iterator
(:mod:`minitf.data.iterator`) pulls elements through the pipeline one
``get_next`` at a time.  Scalar arguments (``batch_size``, ``count``,
``buffer_size``) are int64 tensors like in TF, so they may be placeholders.

Mirrors ``tensorflow/python/data/ops/dataset_ops.py`` (``DatasetV1``).
"""

from minitf.api_scopes import get_seed
from minitf.data import function as function_lib
from minitf.data import iterator as iterator_lib
from minitf.data import structure
from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import Dimension, TensorShape, as_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import dataset_ops
from minitf.ops.op_def_library import graph_of

AUTOTUNE = -1  # prefetch(AUTOTUNE): minitf picks a small buffer


class Dataset(structure.HasElementStructure):
    """A sequence of elements, each a structure of tensors (``tf.data.Dataset``).

    Do not construct it directly: start from :meth:`from_tensor_slices`,
    :meth:`from_tensors`, :meth:`range`, :meth:`from_generator` or :meth:`zip`.

    Example:
        >>> ds = tf.data.Dataset.range(5).map(lambda x: x * 2).batch(2)
        >>> nxt = ds.make_one_shot_iterator().get_next()
        >>> sess.run(nxt), sess.run(nxt), sess.run(nxt)
        (array([0, 2]), array([4, 6]), array([8]))
    """

    def __init__(self, variant_tensor, output_types, output_shapes, output_classes=None):
        self._variant_tensor = variant_tensor
        self._output_types = output_types
        self._output_shapes = output_shapes
        self._output_classes = (structure.dense_classes(output_types) if output_classes is None
                                else output_classes)

    def __repr__(self):
        return "<Dataset shapes: %s, types: %s>" % (self._output_shapes, self._output_types)

    def __iter__(self):
        raise RuntimeError("A tf.data.Dataset is iterated in a session: use "
                           "make_one_shot_iterator() or make_initializable_iterator().")

    # ---- building ops ----------------------------------------------------------------------
    def _apply(self, op_def, inputs, output_types=None, output_shapes=None, attrs=None,
               output_classes=None):
        """Adds ``op_def`` on this dataset; returns the new Dataset (whose element
        structure is this one's, unless given)."""
        variant = dataset_ops.dataset_op(op_def, [self._variant_tensor] + list(inputs),
                                         attrs=attrs)
        return Dataset(variant, self._output_types if output_types is None else output_types,
                       self._output_shapes if output_shapes is None else output_shapes,
                       self._output_classes if output_classes is None else output_classes)

    def _scalar(self, value, dtype, name):
        """A scalar argument as a tensor of ``dtype`` in this dataset's graph."""
        with self._variant_tensor.graph.as_default():
            return convert_to_tensor(value, dtype=dtype, name=name)

    # ---- sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors):
        """A dataset with the single element ``tensors`` (a structure of tensors)."""
        element = _normalize_element(tensors)
        classes = structure.classes_of(element)
        with _graph_of_components(structure.flatten(element)).as_default():
            flat = structure.to_tensor_list(element)
        variant = dataset_ops.dataset_op(
            dataset_ops.TENSOR_DATASET, [flat],
            attrs={"output_shapes": structure.flat_shapes(_shapes_of(element), classes)})
        return Dataset(variant, _types_of(element), _shapes_of(element), classes)

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset of the slices of ``tensors`` along their first dimension.

        Example:
            ``from_tensor_slices(({"a": [1, 2]}, [3.0, 4.0]))`` has the elements
            ``({"a": 1}, 3.0)`` and ``({"a": 2}, 4.0)``.

        Raises:
            ValueError: if a component is a scalar, or their first dimensions differ.
        """
        element = _normalize_element(tensors)
        batch = Dimension(None)
        for t in structure.flatten(element):
            if t.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1; "
                                 "%s is a scalar." % getattr(t, "name", t))
            if t.shape.ndims is not None:
                if not batch.is_compatible_with(t.shape[0]):
                    raise ValueError("Dimensions %s and %s are not compatible: all components "
                                     "of from_tensor_slices need the same size in dimension "
                                     "0." % (batch, t.shape[0]))
                batch = batch.merge_with(t.shape[0])
        shapes = structure.map_structure(lambda t: t.shape[1:], element)
        classes = structure.classes_of(element)
        with _graph_of_components(structure.flatten(element)).as_default():
            flat = structure.to_batched_tensor_list(element)
        variant = dataset_ops.dataset_op(
            dataset_ops.TENSOR_SLICE_DATASET, [flat],
            attrs={"output_shapes": structure.flat_shapes(shapes, classes)})
        return Dataset(variant, _types_of(element), shapes, classes)

    @staticmethod
    def range(*args):
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)`` as int64.

        Raises:
            ValueError: for a wrong number of arguments.
        """
        if not 1 <= len(args) <= 3:
            raise ValueError("Invalid arguments to Dataset.range(): %r" % (args,))
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        values = [convert_to_tensor(v, dtype=dtypes.int64, name=n)
                  for v, n in zip((start, stop, step), ("start", "stop", "step"))]
        variant = dataset_ops.dataset_op(dataset_ops.RANGE_DATASET, values)
        return Dataset(variant, dtypes.int64, TensorShape([]))

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """A dataset of the elements a Python generator yields.

        Args:
            generator: a callable returning an iterator; called anew for every
                pass over the dataset (so ``repeat()`` works).
            output_types: the structure of the elements' dtypes, e.g.
                ``(tf.int64, tf.float32)``.
            output_shapes: their shapes (same structure; a shape may be a list
                such as ``[None]``); None: unknown shapes.
            args: Python/NumPy values passed to ``generator`` (minitf does not
                accept tensors here).

        Each yielded element is converted to ``output_types`` at run time; one
        of the wrong structure or shape raises ``InvalidArgumentError``.
        """
        output_types = structure.map_structure(dtypes.as_dtype, output_types)
        if output_shapes is None:
            output_shapes = structure.map_structure(lambda _: TensorShape(None), output_types)
        else:
            output_shapes = structure.pack_sequence_as(
                output_types,
                [as_shape(s) for s in structure.flatten_up_to(output_types, output_shapes)])
        args = tuple(args or ())
        if any(isinstance(a, Tensor) for a in structure.flatten(args)):
            raise TypeError("minitf's from_generator takes Python or NumPy args, not tensors.")

        def flat_elements():
            """The generator's elements as flat lists of components."""
            for value in generator(*args):
                if isinstance(value, list) and isinstance(output_types, tuple):
                    value = tuple(value)
                yield structure.flatten_up_to(output_types, value)

        graph = graph_lib.get_default_graph()
        name = function_lib.add_to_library(graph, "generator", flat_elements)
        variant = dataset_ops.dataset_op(
            dataset_ops.GENERATOR_DATASET, [],
            attrs={"generator": name, "output_types": structure.flatten(output_types),
                   "output_shapes": structure.flatten(output_shapes)})
        return Dataset(variant, output_types, output_shapes)

    @staticmethod
    def zip(datasets):
        """A dataset whose elements combine those of ``datasets`` (a tuple or dict
        of datasets), ending with the shortest."""
        flat = structure.flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip() takes a (nested) tuple or dict of datasets, got %r"
                            % (datasets,))
        variant = dataset_ops.dataset_op(dataset_ops.ZIP_DATASET,
                                         [[d._variant_tensor for d in flat]])
        return Dataset(variant, structure.map_structure(lambda d: d.output_types, datasets),
                       structure.map_structure(lambda d: d.output_shapes, datasets),
                       structure.map_structure(lambda d: d.output_classes, datasets))

    # ---- transformations -------------------------------------------------------------
    def concatenate(self, dataset):
        """The elements of this dataset followed by those of ``dataset``.

        Raises:
            TypeError: if the element types differ.
        """
        structure.assert_same_structure(self._output_types, dataset.output_types)
        if structure.flatten(self._output_types) != structure.flatten(dataset.output_types):
            raise TypeError("Two datasets to concatenate have different types %s and %s"
                            % (self._output_types, dataset.output_types))
        if structure.flatten(self._output_classes) != structure.flatten(dataset.output_classes):
            raise TypeError("Two datasets to concatenate have different classes %s and %s"
                            % (self._output_classes, dataset.output_classes))
        shapes = structure.map_structure(_most_specific_compatible_shape, self._output_shapes,
                                         dataset.output_shapes)
        return self._apply(dataset_ops.CONCATENATE_DATASET, [dataset._variant_tensor],
                           output_shapes=shapes)

    def batch(self, batch_size, drop_remainder=False):
        """Stacks ``batch_size`` consecutive elements into one.

        The last batch is smaller unless ``drop_remainder``; only then is the
        batch dimension of ``output_shapes`` known statically.
        """
        batch_size = self._scalar(batch_size, dtypes.int64, "batch_size")
        drop_remainder = self._scalar(drop_remainder, dtypes.bool, "drop_remainder")
        dim = _batch_dim(batch_size, drop_remainder)
        shapes = structure.map_structure(lambda s: dim.concatenate(s), self._output_shapes)
        return self._apply(dataset_ops.BATCH_DATASET, [batch_size, drop_remainder],
                           output_shapes=shapes)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None, drop_remainder=False):
        """Like :meth:`batch`, for elements of different shapes: each component is
        padded to ``padded_shapes`` (a shape per component, in the element's
        structure; a None or -1 dimension pads to the longest in the batch).

        Args:
            batch_size: elements per batch.
            padded_shapes: the structure of shapes to pad to.
            padding_values: a scalar per component (default 0, ``""`` or False).
            drop_remainder: drop a last, smaller batch.

        Raises:
            ValueError: if a padded shape does not fit its component's static shape.

        Example:
            >>> ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))
            >>> ds.padded_batch(2, padded_shapes=[None])   # [[1, 0], [2, 2]], [[3, 3, 3]]
        """
        if SparseTensor in structure.flatten(self._output_classes):
            raise TypeError("Batching of padded sparse tensors is not currently supported")
        flat_shapes = structure.flatten(self._output_shapes)
        flat_types = structure.flatten(self._output_types)
        flat_padded = [_padded_shape(shape) for shape in structure.flatten(padded_shapes)]
        if len(flat_padded) != len(flat_shapes):
            raise ValueError("padded_shapes %s does not match the structure of the elements, %s"
                             % (padded_shapes, self._output_shapes))
        for padded, shape in zip(flat_padded, flat_shapes):
            if not _fits(shape, padded):
                raise ValueError("The padded shape %s is not compatible with the corresponding "
                                 "input component shape %s." % (padded, shape))
        flat_values = (structure.flatten(padding_values) if padding_values is not None
                       else [_default_padding(dtype) for dtype in flat_types])
        batch_size = self._scalar(batch_size, dtypes.int64, "batch_size")
        values = [self._scalar(value, dtype, "padding_value")
                  for value, dtype in zip(flat_values, flat_types)]
        drop_remainder = self._scalar(drop_remainder, dtypes.bool, "drop_remainder")
        dim = _batch_dim(batch_size, drop_remainder)
        shapes = structure.pack_sequence_as(
            self._output_shapes, [dim.concatenate(padded) for padded in flat_padded])
        return self._apply(dataset_ops.PADDED_BATCH_DATASET,
                           [batch_size, values, drop_remainder], output_shapes=shapes,
                           attrs={"padded_shapes": flat_padded})

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Shuffles the elements through a buffer of ``buffer_size`` elements.

        With a seed (op-level, or the graph's via ``tf.set_random_seed``) the
        order is the same in every session; each pass over the dataset
        (``repeat``) gets a new order unless ``reshuffle_each_iteration=False``.
        ``buffer_size`` >= the dataset's size gives a uniform permutation.
        """
        with self._variant_tensor.graph.as_default():
            seed1, seed2 = get_seed(seed)
        buffer_size = self._scalar(buffer_size, dtypes.int64, "buffer_size")
        seed1 = self._scalar(seed1 or 0, dtypes.int64, "seed")
        seed2 = self._scalar(seed2 or 0, dtypes.int64, "seed2")
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._apply(dataset_ops.SHUFFLE_DATASET, [buffer_size, seed1, seed2],
                           attrs={"reshuffle_each_iteration": reshuffle})

    def repeat(self, count=None):
        """Repeats the dataset ``count`` times (None or -1: forever)."""
        count = self._scalar(-1 if count is None else count, dtypes.int64, "count")
        return self._apply(dataset_ops.REPEAT_DATASET, [count])

    def take(self, count):
        """The first ``count`` elements (-1: all)."""
        return self._apply(dataset_ops.TAKE_DATASET,
                           [self._scalar(count, dtypes.int64, "count")])

    def skip(self, count):
        """All but the first ``count`` elements (-1: skips everything)."""
        return self._apply(dataset_ops.SKIP_DATASET,
                           [self._scalar(count, dtypes.int64, "count")])

    def shard(self, num_shards, index):
        """Every ``num_shards``-th element, starting with element ``index`` — this
        worker's share when ``num_shards`` workers split one dataset.

        Raises (at run time) ``InvalidArgumentError`` unless ``num_shards > 0``
        and ``0 <= index < num_shards``.
        """
        return self._apply(dataset_ops.SHARD_DATASET,
                           [self._scalar(num_shards, dtypes.int64, "num_shards"),
                            self._scalar(index, dtypes.int64, "index")])

    def cache(self, filename=""):
        """Keeps the elements in memory once a pass has produced them all, so later
        passes (``repeat`` epochs) skip the work before the cache.

        Raises:
            NotImplementedError: for a ``filename`` (TF's on-disk cache).
        """
        if filename:
            raise NotImplementedError("Dataset.cache(filename=...) (an on-disk cache) is not "
                                      "implemented in minitf; cache() keeps elements in memory.")
        return self._apply(dataset_ops.CACHE_DATASET,
                           [self._scalar("", dtypes.string, "filename")])

    def apply(self, transformation_func):
        """``transformation_func(self)``: a transformation written as a function
        (``dataset.apply(tf.data.experimental.unbatch())``).

        Raises:
            TypeError: if the function does not return a Dataset.
        """
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a Dataset, got %r." % (dataset,))
        return dataset

    def unbatch(self):
        """The rows of each element: the inverse of ``batch``
        (``Dataset.unbatch``, TF 1.15; ``tf.data.experimental.unbatch``).

        Raises:
            ValueError: if a component is a scalar.
        """
        flat_shapes = structure.flatten(self._output_shapes)
        if any(shape.ndims == 0 for shape in flat_shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")
        shapes = structure.map_structure(lambda s: s[1:] if s.ndims is not None else s,
                                         self._output_shapes)
        return self._apply(dataset_ops.UNBATCH_DATASET, [], output_shapes=shapes)

    def prefetch(self, buffer_size):
        """Produces up to ``buffer_size`` elements ahead, on a background thread."""
        return self._apply(dataset_ops.PREFETCH_DATASET,
                           [self._scalar(buffer_size, dtypes.int64, "buffer_size")])

    def map(self, map_func, num_parallel_calls=None):
        """Applies ``map_func`` to every element.

        ``map_func`` is traced once into a function graph (see
        :mod:`minitf.data.function`): it receives tensors, not values.  A
        tuple element is passed as separate arguments.  Tensors of the outer
        graph it uses are captured (read when the iterator is initialized).
        ``num_parallel_calls`` is accepted and ignored (elements are mapped
        one at a time).

        Example:
            >>> ds = tf.data.Dataset.from_tensor_slices(([1, 2], [3, 4]))
            >>> ds = ds.map(lambda x, y: {"sum": x + y})
        """
        del num_parallel_calls
        fn = self._trace(map_func, "map")
        graph = self._variant_tensor.graph
        name = function_lib.add_to_library(graph, "Dataset_map_" + fn.name, fn)
        output_types, output_shapes = fn.output_types, fn.output_shapes
        classes = fn.output_classes
        return self._apply(dataset_ops.MAP_DATASET, [fn.captured_inputs], output_types,
                           output_shapes, output_classes=classes,
                           attrs={"f": name,
                                  "output_types": structure.flat_types(output_types, classes),
                                  "output_shapes": structure.flat_shapes(output_shapes, classes)})

    def filter(self, predicate):
        """Keeps the elements for which ``predicate`` (traced like ``map``'s
        function) returns True.

        Raises:
            ValueError: if ``predicate`` does not return a scalar bool tensor.
        """
        fn = self._trace(predicate, "filter")
        if len(fn.outputs) != 1 or not function_lib.is_bool_scalar(fn.outputs[0]):
            raise ValueError("`predicate` must return a scalar boolean tensor, got %s."
                             % (fn.outputs,))
        name = function_lib.add_to_library(self._variant_tensor.graph,
                                           "Dataset_filter_" + fn.name, fn)
        return self._apply(dataset_ops.FILTER_DATASET, [fn.captured_inputs],
                           attrs={"predicate": name})

    def _trace(self, fn, what):
        """``fn`` traced for this dataset's elements, capturing from its graph."""
        return function_lib.DatasetFunction(fn, self._output_types, self._output_shapes,
                                            what=what, outer_graph=self._variant_tensor.graph,
                                            input_classes=self._output_classes)

    def flat_map(self, map_func):
        """The elements of the datasets ``map_func`` returns for each element,
        one dataset after the other.

        Example:
            >>> ds = tf.data.Dataset.range(3).flat_map(
            ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(x))   # 1, 2, 2
        """
        return self._apply_dataset_function(map_func, "flat_map", dataset_ops.FLAT_MAP_DATASET)

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1,
                   num_parallel_calls=None):
        """Like :meth:`flat_map`, but takes ``block_length`` elements from each of
        ``cycle_length`` datasets in turn (TF's ``InterleaveDataset``; e.g. lines
        of several files mixed).  ``cycle_length`` AUTOTUNE means the number of
        CPUs; ``num_parallel_calls`` is accepted and ignored."""
        del num_parallel_calls
        inputs = [self._scalar(cycle_length, dtypes.int64, "cycle_length"),
                  self._scalar(block_length, dtypes.int64, "block_length")]
        return self._apply_dataset_function(map_func, "interleave",
                                            dataset_ops.INTERLEAVE_DATASET, inputs)

    def _apply_dataset_function(self, map_func, what, op_def, inputs=()):
        fn = self._trace(map_func, what)
        if fn.returned_dataset is None:
            raise TypeError("`map_func` of Dataset.%s must return a `Dataset` object, got %r."
                            % (what, fn.output_structure))
        name = function_lib.add_to_library(self._variant_tensor.graph,
                                           "Dataset_%s_%s" % (what, fn.name), fn)
        returned = fn.returned_dataset
        types, shapes = returned.output_types, returned.output_shapes
        return self._apply(op_def, [fn.captured_inputs] + list(inputs), types, shapes,
                           output_classes=returned.output_classes,
                           attrs={"f": name, "output_types": returned._flat_types,
                                  "output_shapes": returned._flat_shapes})

    # ---- iterators ---------------------------------------------------------------------
    def make_one_shot_iterator(self):
        """An iterator that needs no initialization (see :mod:`minitf.data.iterator`)."""
        return iterator_lib.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator started (and restarted) by running its ``initializer``."""
        return iterator_lib.make_initializable_iterator(self, shared_name)


# ---- tf.compat.v1.data.get_output_* (TF 1.15's spelling of the properties) --------------
def get_output_types(dataset_or_iterator):
    """``dataset_or_iterator.output_types`` (``tf.data.get_output_types``)."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    """``dataset_or_iterator.output_shapes`` (``tf.data.get_output_shapes``)."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """``dataset_or_iterator.output_classes`` (``tf.data.get_output_classes``)."""
    return dataset_or_iterator.output_classes


# ---- helpers ---------------------------------------------------------------------------
def _normalize_element(tensors):
    """``tensors`` (a structure) with every component converted to a Tensor,
    or to a SparseTensor when it is sparse (a SparseTensorValue)."""
    flat = structure.flatten(tensors)
    graph = _graph_of_components(flat)
    with graph.as_default(), graph.name_scope("normalize_element"):
        converted = [convert_to_tensor_or_sparse_tensor(value, name="component_%d" % i)
                     for i, value in enumerate(flat)]
    return structure.pack_sequence_as(tensors, converted)


def _graph_of_components(flat):
    """The graph of the components (a SparseTensor's is that of its values)."""
    return graph_of([t.values if isinstance(t, SparseTensor) else t for t in flat])


def _types_of(element):
    return structure.map_structure(lambda t: t.dtype.base_dtype, element)


def _shapes_of(element):
    return structure.map_structure(lambda t: t.shape, element)


def _batch_dim(batch_size, drop_remainder):
    """The static batch dimension: known only when batches are never partial."""
    known_size = constant_value(batch_size)
    static = known_size is not None and constant_value(drop_remainder) is not None \
        and bool(constant_value(drop_remainder))
    return TensorShape([int(known_size) if static else None])


def _padded_shape(shape):
    """A padded_shapes entry as a TensorShape (-1 and None: pad to the longest)."""
    if isinstance(shape, (list, tuple)):
        shape = [None if d is None or d == -1 else d for d in shape]
    return as_shape(shape)


def _fits(shape, padded):
    """Whether a component of static ``shape`` can be padded to ``padded``: same
    rank, and no known dimension larger than the padded one."""
    if shape.ndims is None or padded.ndims is None:
        return True
    return shape.ndims == padded.ndims and all(
        d is None or p is None or d <= p for d, p in zip(shape.as_list(), padded.as_list()))


def _default_padding(dtype):
    if dtype == dtypes.string:
        return ""
    return False if dtype == dtypes.bool else 0


def _most_specific_compatible_shape(a, b):
    """The shape keeping the dims on which ``a`` and ``b`` agree (None elsewhere)."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None
                        for x, y in zip(a.as_list(), b.as_list())])
