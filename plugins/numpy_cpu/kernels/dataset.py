"""CPU kernels of the dataset and iterator ops: datasets as Python generators.

A dataset kernel reads no data.  It returns a small Python object that
describes its dataset — its input dataset object and its arguments — and
that object is the ``variant`` value flowing to the next op.  Iterating one,
``iter(dataset)``, starts a *pass* over it: a Python generator that pulls
elements from its input's pass, so a pipeline runs lazily, one element at a
time, exactly when ``IteratorGetNext`` asks for one::

    BatchDataset.__iter__ ─next()─> MapDataset.__iter__ ─next()─> TensorSliceDataset.__iter__

An element is a tuple of NumPy values, one per component (the structure is
the Python side's business, :mod:`minitf.data.structure`).

The iterator ops that start and pull passes are in :mod:`.iterator`.

One difference from TF: an error raised while producing an element ends the
pass (a Python generator cannot resume after raising), where TF's iterators
may go on with the next element.

Mirrors the ``DatasetBase``/``IteratorBase`` kernels in
``tensorflow/core/kernels/data/``.
"""

import gzip
import os
import queue
import threading
import weakref
import zlib

import numpy as np

from minitf.plugin import as_shape, errors, lookup_dataset_function, tf_record
from minitf_numpy_cpu.kernels.table import kernel


def _own(value):
    """A value the user may keep and modify: arrays are copied, scalars are immutable."""
    return value.copy() if isinstance(value, np.ndarray) and value.ndim else value


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


# ---- sources ---------------------------------------------------------------------------
class TensorDataset:
    """One element: the given components."""

    def __init__(self, components):
        self.components = tuple(components)

    def __iter__(self):
        yield tuple(_own(c) for c in self.components)


class TensorSliceDataset:
    """The slices ``components[k][i]`` for i = 0, 1, ...: element i."""

    def __init__(self, components):
        self.components = tuple(components)

    def __iter__(self):
        for i in range(len(self.components[0])):
            yield tuple(_own(c[i]) for c in self.components)


class RangeDataset:
    """int64 scalars ``start, start + step, ...`` before ``stop``."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = int(start), int(stop), int(step)

    def __iter__(self):
        for value in range(self.start, self.stop, self.step):
            yield (np.int64(value),)


class GeneratorDataset:
    """The elements of a Python generator, converted to the declared dtypes and shapes."""

    def __init__(self, flat_elements, output_types, output_shapes):
        self.flat_elements = flat_elements
        self.np_dtypes = [t.as_numpy_dtype for t in output_types]
        self.shapes = [as_shape(s) for s in output_shapes]

    def __iter__(self):
        for flat in self.flat_elements():
            yield tuple(self._convert(value, dtype, shape)
                        for value, dtype, shape in zip(flat, self.np_dtypes, self.shapes))

    @staticmethod
    def _convert(value, dtype, shape):
        try:
            array = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError):
            raise _invalid("`generator` yielded an element that could not be converted to the "
                           "expected type. The expected type was %s, but the yielded element "
                           "was %r." % (np.dtype(dtype).name, value)) from None
        if not shape.is_compatible_with(array.shape):
            raise _invalid("`generator` yielded an element of shape %s where an element of shape "
                           "%s was expected." % (array.shape, tuple(shape.as_list())))
        return array[()] if array.ndim == 0 else array


class TextLineDataset:
    """The lines of each file in turn, as bytes without ``\\n`` (or ``\\r\\n``).

    Files are opened when the pass reaches them, so a missing file is a
    ``NotFoundError`` from ``get_next``, as in TF.
    """

    def __init__(self, filenames, compression_type):
        self.filenames = [_text(name) for name in np.reshape(filenames, -1)]
        self.compression_type = compression_type

    def __iter__(self):
        for filename in self.filenames:
            for line in _read_lines(filename, self.compression_type):
                if line.endswith(b"\n"):
                    line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                yield (line,)  # tf.string values are bytes, as in TF


def _read_lines(filename, compression_type):
    try:
        if compression_type == "GZIP":
            with gzip.open(filename, "rb") as f:
                yield from f
        elif compression_type == "ZLIB":
            with open(filename, "rb") as f:
                yield from zlib.decompress(f.read()).splitlines(keepends=True)
        else:
            with open(filename, "rb") as f:
                yield from f
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s; No such file or directory"
                                   % filename) from None
    except (OSError, EOFError, zlib.error) as error:  # damaged compressed data
        raise errors.DataLossError(None, None, "%s: %s" % (filename, error)) from None


class TFRecordDataset:
    """The records of each TFRecord file in turn (see :mod:`minitf.lib.io.tf_record`)."""

    def __init__(self, filenames, compression_type):
        self.filenames = [_text(name) for name in np.reshape(filenames, -1)]
        self.compression_type = compression_type

    def __iter__(self):
        for filename in self.filenames:
            for _, record in tf_record.read_records(filename, self.compression_type):
                yield (record,)


def _text(value):
    """A string scalar (str, bytes, or a 0-d object array of either) as str."""
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


# ---- transformations -------------------------------------------------------------------
class ZipDataset:
    """Elements of several datasets side by side; ends with the shortest."""

    def __init__(self, inputs):
        self.inputs = tuple(inputs)

    def __iter__(self):
        for parts in zip(*self.inputs):
            yield sum(parts, ())


class ConcatenateDataset:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __iter__(self):
        yield from self.first
        yield from self.second


class BatchDataset:
    """Consecutive elements stacked along a new first dimension."""

    def __init__(self, input_dataset, batch_size, drop_remainder):
        if batch_size <= 0:
            raise _invalid("Batch size must be greater than zero.")
        self.input = input_dataset
        self.batch_size = int(batch_size)
        self.drop_remainder = bool(drop_remainder)

    def __iter__(self):
        for batch in self._batches():
            yield stack_batch(batch)

    def _batches(self):
        """Lists of ``batch_size`` consecutive elements (the last one shorter,
        unless ``drop_remainder``)."""
        batch = []
        for element in self.input:
            batch.append(element)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_remainder:
            yield batch


def stack_batch(elements):
    """One element whose component k stacks component k of every element.

    Raises:
        InvalidArgumentError: if the elements' shapes differ (TF's message).
    """
    components = []
    for k, first in enumerate(elements[0]):
        shape = np.shape(first)
        for i, element in enumerate(elements[1:], 1):
            if np.shape(element[k]) != shape:
                raise _invalid("Cannot batch tensors with different shapes in component %d. "
                               "First element had shape %s and element %d had shape %s."
                               % (k, list(shape), i, list(np.shape(element[k]))))
        components.append(np.stack([_as_array(element[k]) for element in elements]))
    return tuple(components)


def _as_array(value):
    """A component as an array to stack; a ``bytes`` scalar (a ``tf.string``)
    as an object array, since NumPy's ``S`` dtype would drop trailing NUL bytes
    (and serialized protos often end in one)."""
    return np.array(value, dtype=object) if isinstance(value, bytes) else value


class PaddedBatchDataset(BatchDataset):
    """Consecutive elements, each component padded to its padded shape, then stacked."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        super().__init__(input_dataset, batch_size, drop_remainder)
        self.padded_shapes = [as_shape(s).as_list() for s in padded_shapes]
        self.padding_values = padding_values

    def __iter__(self):
        for batch in self._batches():
            yield tuple(_pad_and_stack([element[k] for element in batch], padded, value)
                        for k, (padded, value) in enumerate(zip(self.padded_shapes,
                                                                self.padding_values)))


def _pad_and_stack(values, padded_shape, padding_value):
    """``values`` (one component of a batch) zero- (``padding_value``-) padded and stacked.

    Raises:
        InvalidArgumentError: if a value is larger than its padded shape.
    """
    shapes = [np.shape(v) for v in values]
    for shape in shapes:
        if len(shape) != len(padded_shape):
            raise _invalid("Cannot pad a component of shape %s to the padded shape %s."
                           % (list(shape), padded_shape))
    target = [dim if dim is not None else max(s[d] for s in shapes)
              for d, dim in enumerate(padded_shape)]
    if any(s[d] > target[d] for s in shapes for d in range(len(target))):
        raise _invalid("Attempted to pad to a smaller size than the input element.")
    dtype = np.asarray(padding_value).dtype
    out = np.full([len(values)] + target, padding_value,
                  dtype=object if dtype.kind in "OUS" else dtype)
    for i, (value, shape) in enumerate(zip(values, shapes)):
        out[(i,) + tuple(slice(0, n) for n in shape)] = value
    return out


class ShuffleDataset:
    """Elements drawn at random from a buffer that the input keeps filling.

    The buffer holds ``buffer_size`` elements; each step yields a random one
    and refills its slot with the next input element (TF's algorithm).  A
    pass draws from its own generator: seeded by the op's seeds when the
    order must repeat (``reshuffle_each_iteration=False``), else by a new seed
    per pass drawn from a generator seeded by the op's seeds, so a seeded
    program repeats across sessions while each ``repeat()`` epoch differs.
    """

    def __init__(self, input_dataset, buffer_size, seed, seed2, reshuffle_each_iteration):
        if buffer_size <= 0:
            raise _invalid("buffer_size must be greater than zero.")
        if seed == 0 and seed2 == 0:  # unseeded: fresh randomness for this dataset
            seed, seed2 = np.random.SeedSequence().generate_state(2)
        self.input = input_dataset
        self.buffer_size = int(buffer_size)
        self.seeds = [int(seed), int(seed2)]
        self.reshuffle = reshuffle_each_iteration
        self._pass_seeds = np.random.default_rng(self.seeds)

    def __iter__(self):
        rng = np.random.default_rng(
            int(self._pass_seeds.integers(2 ** 63)) if self.reshuffle else self.seeds)
        buffer = []
        for element in self.input:
            buffer.append(element)
            if len(buffer) == self.buffer_size:
                yield _pop_random(buffer, rng)
        while buffer:
            yield _pop_random(buffer, rng)


def _pop_random(buffer, rng):
    i = int(rng.integers(len(buffer)))
    buffer[i], buffer[-1] = buffer[-1], buffer[i]
    return buffer.pop()


class RepeatDataset:
    """``count`` passes over the input (-1: forever; stops if a pass is empty)."""

    def __init__(self, input_dataset, count):
        self.input = input_dataset
        self.count = int(count)

    def __iter__(self):
        epoch = 0
        while self.count < 0 or epoch < self.count:
            empty = True
            for element in self.input:
                empty = False
                yield element
            if empty:
                return
            epoch += 1


class TakeDataset:
    def __init__(self, input_dataset, count):
        self.input = input_dataset
        self.count = int(count)

    def __iter__(self):
        if self.count == 0:
            return
        for taken, element in enumerate(self.input, 1):
            yield element
            if taken == self.count:
                return


class SkipDataset:
    def __init__(self, input_dataset, count):
        self.input = input_dataset
        self.count = int(count)

    def __iter__(self):
        for index, element in enumerate(self.input):
            if 0 <= self.count <= index:
                yield element


class ShardDataset:
    """Elements ``index``, ``index + num_shards``, ... of the input."""

    def __init__(self, input_dataset, num_shards, index):
        self.input = input_dataset
        self.num_shards, self.index = int(num_shards), int(index)

    def __iter__(self):
        for position, element in enumerate(self.input):
            if position % self.num_shards == self.index:
                yield element


class CacheDataset:
    """The input's elements; after one complete pass, replayed from memory.

    A pass abandoned half-way (the iterator re-initialized) caches nothing.
    """

    def __init__(self, input_dataset):
        self.input = input_dataset
        self._cached = None

    def __iter__(self):
        if self._cached is not None:
            yield from self._cached
            return
        elements = []
        for element in self.input:
            elements.append(element)
            yield element
        self._cached = elements


class UnbatchDataset:
    """One element per row of each input element (the inverse of batching)."""

    def __init__(self, input_dataset):
        self.input = input_dataset

    def __iter__(self):
        for element in self.input:
            sizes = [np.shape(c)[0] if np.ndim(c) else None for c in element]
            if None in sizes:
                raise _invalid("Input element must have a non-scalar value in each component.")
            if len(set(sizes)) > 1:
                raise _invalid("Input element must have the same batch size in each "
                               "component. Component 0 has batch size %d but component %d "
                               "has batch size %d."
                               % (sizes[0], next(i for i, n in enumerate(sizes)
                                                 if n != sizes[0]),
                                  next(n for n in sizes if n != sizes[0])))
            for row in range(sizes[0]):
                yield tuple(_own(c[row]) for c in element)


class _FunctionDataset:
    """Base of the datasets that run a traced function on each element.

    The function runs in a private Session on its graph, created on first use
    and kept for every later pass (``repeat`` epochs) — so once per iterator
    initialization — and closed when this dataset object is dropped (the
    iterator restarted, or its session closed).
    """

    def __init__(self, input_dataset, function, captured=()):
        self.input = input_dataset
        self.function = function
        self.captured = tuple(captured)  # the values of the tensors the function captured
        self._instance = None

    def call(self, element):
        if self._instance is None:
            self._instance = self.function.instantiate(self.captured)
            weakref.finalize(self, self._instance.close)
        return self._instance(element)


class MapDataset(_FunctionDataset):
    """``f`` applied to each element."""

    def __iter__(self):
        for element in self.input:
            yield tuple(self.call(element))


class FilterDataset(_FunctionDataset):
    """The elements for which the predicate (a traced function) is true."""

    def __iter__(self):
        for element in self.input:
            keep, = self.call(element)
            if keep:
                yield element


class FlatMapDataset(_FunctionDataset):
    """The elements of the dataset the function makes of each input element, in turn."""

    def __iter__(self):
        for element in self.input:
            dataset, = self.call(element)
            yield from dataset


class InterleaveDataset(_FunctionDataset):
    """``block_length`` elements at a time from each of ``cycle_length`` datasets
    the function makes; a finished one is replaced by the next input element's.

    The loop is TF's ``InterleaveDatasetOp::Iterator::GetNextInternal``.
    """

    def __init__(self, input_dataset, function, captured, cycle_length, block_length):
        if block_length <= 0:
            raise _invalid("block_length must be greater than zero.")
        super().__init__(input_dataset, function, captured)
        self.cycle_length = int(cycle_length) if cycle_length > 0 else (os.cpu_count() or 1)
        self.block_length = int(block_length)

    def __iter__(self):
        inputs = iter(self.input)
        cycle = [None] * self.cycle_length  # a pass over one function-made dataset, or None
        index = block = num_open = 0
        end_of_input = False
        while not end_of_input or num_open > 0:
            if cycle[index] is not None:
                try:
                    element = next(cycle[index])
                except StopIteration:
                    cycle[index] = None
                    num_open -= 1
                else:
                    yield element
                    block += 1
                    if block < self.block_length:
                        continue
            elif not end_of_input:
                try:
                    dataset, = self.call(next(inputs))
                except StopIteration:
                    end_of_input = True
                else:
                    cycle[index] = iter(dataset)
                    num_open += 1
                continue
            index, block = (index + 1) % self.cycle_length, 0


class PrefetchDataset:
    """The input's elements, produced up to ``buffer_size`` ahead on a background thread."""

    def __init__(self, input_dataset, buffer_size):
        self.input = input_dataset
        self.buffer_size = int(buffer_size) if buffer_size > 0 else 2  # AUTOTUNE (-1): 2

    def __iter__(self):
        prefetcher = _Prefetcher(self.input, self.buffer_size)
        try:
            yield from prefetcher
        finally:
            prefetcher.stop()


class _Prefetcher:
    """A thread running one pass over ``dataset`` into a bounded buffer.

    The thread puts ``("element", e)``, then ``("end", None)`` or
    ``("error", exception)``; the consumer re-raises errors in its own thread.
    ``stop()`` makes the producer quit at its next put.
    """

    def __init__(self, dataset, buffer_size):
        self._buffer = queue.Queue(maxsize=buffer_size)
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._produce, args=(dataset,), daemon=True,
                                        name="minitf-prefetch")
        self._thread.start()

    def _produce(self, dataset):
        try:
            for element in dataset:
                if not self._put(("element", element)):
                    return
            self._put(("end", None))
        except Exception as error:  # handed to the consumer
            self._put(("error", error))

    def _put(self, item):
        while not self._stopped.is_set():
            try:
                self._buffer.put(item, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    def __iter__(self):
        while True:
            kind, value = self._buffer.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value

    def stop(self):
        self._stopped.set()


# ---- dataset kernels -------------------------------------------------------------------
@kernel("TensorDataset")
def tensor_dataset(ctx, *components, output_shapes):
    return TensorDataset(components)


@kernel("TensorSliceDataset")
def tensor_slice_dataset(ctx, *components, output_shapes):
    sizes = {np.shape(c)[0] if np.ndim(c) else None for c in components}
    if None in sizes:
        raise ctx.invalid_argument("Unbatching a tensor is only supported for rank >= 1")
    if len(sizes) > 1:
        raise ctx.invalid_argument("All components of TensorSliceDataset must have the same "
                                   "size in dimension 0, got %s."
                                   % [np.shape(c)[0] for c in components])
    return TensorSliceDataset(components)


@kernel("RangeDataset")
def range_dataset(ctx, start, stop, step):
    if step == 0:
        raise ctx.invalid_argument("step must be a non-zero integer.")
    return RangeDataset(start, stop, step)


@kernel("GeneratorDataset")
def generator_dataset(ctx, output_types, output_shapes, generator):
    flat_elements = lookup_dataset_function(ctx.op.graph, generator)
    return GeneratorDataset(flat_elements, output_types, output_shapes)


@kernel("TextLineDataset")
def text_line_dataset(ctx, filenames, compression_type, buffer_size):
    compression_type = _text(compression_type)
    if compression_type not in ("", "GZIP", "ZLIB"):
        raise ctx.invalid_argument("Unsupported compression_type: %s." % compression_type)
    return TextLineDataset(filenames, compression_type)


@kernel("TFRecordDataset")
def tf_record_dataset(ctx, filenames, compression_type, buffer_size):
    compression_type = _text(compression_type)
    if compression_type not in ("", "GZIP", "ZLIB"):
        raise ctx.invalid_argument("Unsupported compression_type: %s." % compression_type)
    return TFRecordDataset(filenames, compression_type)


@kernel("ZipDataset")
def zip_dataset(ctx, *input_datasets):
    return ZipDataset(input_datasets)


@kernel("ConcatenateDataset")
def concatenate_dataset(ctx, input_dataset, another_dataset):
    return ConcatenateDataset(input_dataset, another_dataset)


@kernel("BatchDatasetV2")
def batch_dataset(ctx, input_dataset, batch_size, drop_remainder):
    return BatchDataset(input_dataset, batch_size, drop_remainder)


@kernel("PaddedBatchDatasetV2")
def padded_batch_dataset(ctx, input_dataset, batch_size, *rest, padded_shapes):
    *padding_values, drop_remainder = rest
    return PaddedBatchDataset(input_dataset, batch_size, padded_shapes, padding_values,
                              drop_remainder)


@kernel("ShuffleDataset")
def shuffle_dataset(ctx, input_dataset, buffer_size, seed, seed2, reshuffle_each_iteration):
    return ShuffleDataset(input_dataset, buffer_size, seed, seed2, reshuffle_each_iteration)


@kernel("RepeatDataset")
def repeat_dataset(ctx, input_dataset, count):
    return RepeatDataset(input_dataset, count)


@kernel("TakeDataset")
def take_dataset(ctx, input_dataset, count):
    return TakeDataset(input_dataset, count)


@kernel("SkipDataset")
def skip_dataset(ctx, input_dataset, count):
    return SkipDataset(input_dataset, count)


@kernel("ShardDataset")
def shard_dataset(ctx, input_dataset, num_shards, index):
    if num_shards <= 0:
        raise ctx.invalid_argument("Number of shards must be greater than zero (currently "
                                   "num_shards = %d)." % num_shards)
    if not 0 <= index < num_shards:
        raise ctx.invalid_argument("Index must be between 0 and %d (currently index = %d)."
                                   % (num_shards - 1, index))
    return ShardDataset(input_dataset, num_shards, index)


@kernel("CacheDataset")
def cache_dataset(ctx, input_dataset, filename):
    return CacheDataset(input_dataset)  # the Python API accepts only "" (memory)


@kernel("UnbatchDataset")
def unbatch_dataset(ctx, input_dataset):
    return UnbatchDataset(input_dataset)


@kernel("PrefetchDataset")
def prefetch_dataset(ctx, input_dataset, buffer_size):
    return PrefetchDataset(input_dataset, buffer_size)


@kernel("MapDataset")
def map_dataset(ctx, input_dataset, *other_arguments, output_types, output_shapes, f):
    return MapDataset(input_dataset, lookup_dataset_function(ctx.op.graph, f), other_arguments)


@kernel("FilterDataset")
def filter_dataset(ctx, input_dataset, *other_arguments, predicate):
    return FilterDataset(input_dataset, lookup_dataset_function(ctx.op.graph, predicate),
                         other_arguments)


@kernel("FlatMapDataset")
def flat_map_dataset(ctx, input_dataset, *other_arguments, output_types, output_shapes, f):
    return FlatMapDataset(input_dataset, lookup_dataset_function(ctx.op.graph, f), other_arguments)


@kernel("InterleaveDataset")
def interleave_dataset(ctx, input_dataset, *rest, output_types, output_shapes, f):
    *other_arguments, cycle_length, block_length = rest
    return InterleaveDataset(input_dataset, lookup_dataset_function(ctx.op.graph, f),
                             other_arguments, cycle_length, block_length)
