"""Dataset and iterator ops: the graph side of ``tf.data``.

A dataset is a *value* in the graph: every dataset op outputs one scalar
tensor of dtype ``variant`` whose run-time value is a Python dataset object
built by the op's kernel.  Transformations take their input dataset as an
ordinary input edge, so a pipeline is a chain of ops::

    TensorSliceDataset(components...) -> BatchDatasetV2(ds, batch_size, drop_remainder)
        -> RepeatDataset(ds, count)

Running such a chain does no work on the data: it only builds the (cheap)
description of the pipeline.  Data flows when an *iterator* pulls from it:

* ``IteratorV2`` outputs a ``resource``: the session's iterator state for this
  op (created on first use, kept in the device's ResourceManager);
* ``MakeIterator(dataset, iterator)`` (re)starts that iterator on a dataset —
  the ``initializer`` of ``make_initializable_iterator``;
* ``OneShotIterator(dataset)`` is an iterator that starts itself on first use;
* ``IteratorGetNext(iterator)`` returns the next element's components, or
  raises ``OutOfRangeError("End of sequence")``.

Per-element computations (``map``, ``filter``) are Python functions traced
into a separate graph, named by a string attr (``f``, ``predicate``) and kept
in the graph's function library (:mod:`minitf.data.function`), as TF keeps
``FunctionDef``\\ s in the ``GraphDef``'s library.

The Python API (``tf.data.Dataset``) is :mod:`minitf.data.dataset`; the
kernels are ``plugins/numpy_cpu/kernels/dataset.py``.  Op names and inputs
mirror TF's (``tensorflow/core/ops/dataset_ops.cc``).
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _scalar(op):
    return [TensorShape([])] * len(op.outputs)


def _variant(op):
    return [dtypes.variant]


def _dataset_op(name, inputs, doc, attrs=None):
    """Declares a dataset op: its output is one scalar ``variant`` (the dataset)."""
    op_def = define_op(name, inputs=inputs, outputs=("handle",), attrs=dict(attrs or {}),
                       shape_fn=_scalar, dtype_fn=_variant, doc=doc, stacklevel=2)
    not_differentiable(name)
    return op_def


_ELEMENT_ATTRS = {"output_types": None, "output_shapes": None}

# ---- sources ---------------------------------------------------------------------------
TENSOR_DATASET = _dataset_op(
    "TensorDataset", ("components*",), "A dataset of one element: its inputs.",
    attrs={"output_shapes": None})
TENSOR_SLICE_DATASET = _dataset_op(
    "TensorSliceDataset", ("components*",),
    "A dataset of the slices of its inputs along their first dimension.",
    attrs={"output_shapes": None})
RANGE_DATASET = _dataset_op(
    "RangeDataset", ("start", "stop", "step"), "The int64 values start, start+step, ... < stop.")
GENERATOR_DATASET = _dataset_op(
    "GeneratorDataset", (), "The elements a Python generator yields (from the function library).",
    attrs=dict(_ELEMENT_ATTRS, generator=None))
TEXT_LINE_DATASET = _dataset_op(
    "TextLineDataset", ("filenames", "compression_type", "buffer_size"),
    "The lines of text files, without their line endings.")
TF_RECORD_DATASET = _dataset_op(
    "TFRecordDataset", ("filenames", "compression_type", "buffer_size"),
    "The records of TFRecord files.")

# ---- transformations -------------------------------------------------------------------
ZIP_DATASET = _dataset_op(
    "ZipDataset", ("input_datasets*",), "Elements of several datasets side by side.")
CONCATENATE_DATASET = _dataset_op(
    "ConcatenateDataset", ("input_dataset", "another_dataset"),
    "The elements of one dataset, then those of another.")
BATCH_DATASET = _dataset_op(
    "BatchDatasetV2", ("input_dataset", "batch_size", "drop_remainder"),
    "Stacks consecutive elements into batches.")
PADDED_BATCH_DATASET = _dataset_op(
    "PaddedBatchDatasetV2", ("input_dataset", "batch_size", "padding_values*", "drop_remainder"),
    "Stacks consecutive elements into batches, padding each component to padded_shapes.",
    attrs={"padded_shapes": None})
SHUFFLE_DATASET = _dataset_op(
    "ShuffleDataset", ("input_dataset", "buffer_size", "seed", "seed2"),
    "Shuffles elements through a buffer of buffer_size.",
    attrs={"reshuffle_each_iteration": True})
REPEAT_DATASET = _dataset_op(
    "RepeatDataset", ("input_dataset", "count"), "Repeats a dataset count times (-1: forever).")
TAKE_DATASET = _dataset_op(
    "TakeDataset", ("input_dataset", "count"), "The first count elements (-1: all).")
SKIP_DATASET = _dataset_op(
    "SkipDataset", ("input_dataset", "count"), "All but the first count elements (-1: none).")
SHARD_DATASET = _dataset_op(
    "ShardDataset", ("input_dataset", "num_shards", "index"),
    "Every num_shards-th element, starting at index.")
CACHE_DATASET = _dataset_op(
    "CacheDataset", ("input_dataset", "filename"),
    "The input's elements, kept in memory after the first complete pass.")
UNBATCH_DATASET = _dataset_op(
    "UnbatchDataset", ("input_dataset",), "The rows of each element, one element per row.")
PREFETCH_DATASET = _dataset_op(
    "PrefetchDataset", ("input_dataset", "buffer_size"),
    "Produces elements ahead of time on a background thread.")
MAP_DATASET = _dataset_op(
    "MapDataset", ("input_dataset", "other_arguments*"),
    "Applies the traced function f (other_arguments: its captured tensors) to every element.",
    attrs=dict(_ELEMENT_ATTRS, f=None))
FILTER_DATASET = _dataset_op(
    "FilterDataset", ("input_dataset", "other_arguments*"),
    "Keeps the elements for which predicate is true.",
    attrs={"predicate": None})
FLAT_MAP_DATASET = _dataset_op(
    "FlatMapDataset", ("input_dataset", "other_arguments*"),
    "The elements of the datasets that f makes of each element, one after the other.",
    attrs=dict(_ELEMENT_ATTRS, f=None))
INTERLEAVE_DATASET = _dataset_op(
    "InterleaveDataset", ("input_dataset", "other_arguments*", "cycle_length", "block_length"),
    "The elements of the datasets f makes, block_length at a time from cycle_length of them.",
    attrs=dict(_ELEMENT_ATTRS, f=None))


def dataset_op(op_def, inputs, attrs=None, name=None):
    """Adds a dataset op (one of the OpDefs above); returns its variant tensor.

    Example:
        >>> components = [tf.constant([1, 2, 3])]
        >>> dataset_op(TENSOR_SLICE_DATASET, [components],
        ...            attrs={"output_shapes": [tf.TensorShape([])]})
        <tf.Tensor 'TensorSliceDataset:0' shape=() dtype=variant>
    """
    return apply_op(op_def, inputs, attrs=attrs, name=name or op_def.name)


# ---- iterators -------------------------------------------------------------------------
def _resource(op):
    return [dtypes.resource]


def _element_dtypes(op):
    return [dtypes.as_dtype(t) for t in op.get_attr("output_types")]


def _element_shapes(op):
    return [as_shape(s) for s in op.get_attr("output_shapes")]


_iterator = define_op(
    "IteratorV2", outputs=("handle",), attrs={"shared_name": "", "container": "",
                                              "output_types": None, "output_shapes": None},
    shape_fn=_scalar, dtype_fn=_resource, stateful=True,
    doc="The session's iterator state for this op (a resource).")
_one_shot_iterator = define_op(
    "OneShotIterator", inputs=("dataset",), outputs=("handle",),
    attrs={"shared_name": "", "container": "", "output_types": None, "output_shapes": None},
    shape_fn=_scalar, dtype_fn=_resource, stateful=True,
    doc="An iterator that starts itself on its dataset the first time it runs.")
_make_iterator = define_op(
    "MakeIterator", inputs=("dataset", "iterator"), outputs=(), shape_fn=lambda op: [],
    stateful=True, doc="(Re)starts an iterator on a dataset.")
_iterator_get_next = define_op(
    "IteratorGetNext", inputs=("iterator",), attrs={"output_types": None, "output_shapes": None},
    num_outputs=lambda attrs: len(attrs["output_types"]),
    shape_fn=_element_shapes, dtype_fn=_element_dtypes, stateful=True,
    doc="The next element of an iterator; OutOfRangeError at the end.")
_iterator_to_string_handle = define_op(
    "IteratorToStringHandle", inputs=("resource_handle",), outputs=("string_handle",),
    shape_fn=_scalar, dtype_fn=lambda op: [dtypes.string], stateful=True,
    doc="A string naming an iterator's state in the session (its feedable handle).")
_iterator_from_string_handle = define_op(
    "IteratorFromStringHandleV2", inputs=("string_handle",), outputs=("resource_handle",),
    attrs={"output_types": None, "output_shapes": None},
    shape_fn=_scalar, dtype_fn=_resource, stateful=True,
    doc="The iterator a string handle names; InvalidArgumentError if it names none.")
not_differentiable("IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
                   "IteratorToStringHandle", "IteratorFromStringHandleV2")


def _element_attrs(output_types, output_shapes):
    return {"output_types": [dtypes.as_dtype(t) for t in output_types],
            "output_shapes": [as_shape(s) for s in output_shapes]}


def iterator(output_types, output_shapes, shared_name="", name=None):
    """An ``IteratorV2`` op; returns its resource handle."""
    attrs = dict(_element_attrs(output_types, output_shapes), shared_name=shared_name,
                 container="")
    return apply_op(_iterator, [], attrs=attrs, name=name or "IteratorV2")


def one_shot_iterator(dataset, output_types, output_shapes, name=None):
    """A ``OneShotIterator`` op on ``dataset``; returns its resource handle."""
    attrs = dict(_element_attrs(output_types, output_shapes), shared_name="", container="")
    return apply_op(_one_shot_iterator, [dataset], attrs=attrs, name=name or "OneShotIterator")


def make_iterator(dataset, iterator_handle, name=None):
    """A ``MakeIterator`` op; returns the Operation."""
    return apply_op(_make_iterator, [dataset, iterator_handle], name=name or "MakeIterator")


def iterator_to_string_handle(iterator_handle, name=None):
    """An ``IteratorToStringHandle`` op; returns its string tensor."""
    return apply_op(_iterator_to_string_handle, [iterator_handle],
                    name=name or "IteratorToStringHandle")


def iterator_from_string_handle(string_handle, output_types, output_shapes, name=None):
    """An ``IteratorFromStringHandleV2`` op; returns its resource handle."""
    return apply_op(_iterator_from_string_handle, [string_handle],
                    attrs=_element_attrs(output_types, output_shapes),
                    name=name or "IteratorFromStringHandleV2")


def iterator_get_next(iterator_handle, output_types, output_shapes, name=None):
    """An ``IteratorGetNext`` op; returns the list of its output tensors."""
    op_outputs = apply_op(_iterator_get_next, [iterator_handle],
                          attrs=_element_attrs(output_types, output_shapes),
                          name=name or "IteratorGetNext")
    return list(op_outputs) if isinstance(op_outputs, list) else [op_outputs]
