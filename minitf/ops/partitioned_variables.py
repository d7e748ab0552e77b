"""Partitioned variables: one large variable stored as several, split along one axis.

A model with a 10-million-row embedding matrix cannot keep it on one
parameter server: the matrix may not fit, and every worker would read from
that one task.  TF1 *partitions* such a variable: ``tf.get_variable`` with a
``partitioner`` creates several ordinary variables, the *parts* (or shards),
each holding a slice of the full variable along one axis, and returns a
:class:`PartitionedVariable` that stands for the whole::

    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
    [v.name for v in emb]     # ['emb/part_0:0', 'emb/part_1:0', 'emb/part_2:0']
    [v.shape for v in emb]    # (4, 4), (3, 4), (3, 4): the first 10 % 3 parts get a row more
    [v.device for v in emb]   # /job:ps/task:0, /job:ps/task:1, /job:ps/task:0
    rows = tf.nn.embedding_lookup(emb, ids)   # each part looked up on its own task

Each part is created on its own, so a device function such as
``replica_device_setter`` places the parts on different tasks.  This module
holds the pieces the variable store (:mod:`minitf.ops.variable_scope`)
assembles:

* the **partitioners**, ``fn(shape, dtype) -> [shards per axis]``:
  :func:`fixed_size_partitioner`, :func:`min_max_variable_partitioner`,
  :func:`variable_axis_size_partitioner`; :func:`call_partitioner` checks
  what one returns;
* the **split** of the full shape, :func:`iter_slices`;
* :class:`PartitionInfo`, which tells an initializer where its part sits
  (``glorot_uniform`` computes its fans from the *full* shape);
* :class:`SaveSliceInfo`, set on every part, which tells ``tf.train.Saver``
  how the part fits in the full variable;
* :class:`PartitionedVariable`, the list of parts, which reads as the full
  tensor (their concatenation) wherever a tensor is expected.

(``tf.create_partitioned_variables``, TF1's older interface, is in
:mod:`minitf.ops.variable_scope`, beside the store it calls.)

The variables of ``tf.global_variables()`` and ``tf.trainable_variables()``
are the parts, so optimizers update each part; the gradient of the
concatenation is the split of the gradient.

Mirrors ``tensorflow/python/ops/partitioned_variables.py``, and
``PartitionedVariable`` and ``Variable.SaveSliceInfo`` (``variables.py``),
``_PartitionInfo``, ``_call_partitioner`` and ``_iter_slices``
(``variable_scope.py``).
"""

import math

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import register_tensor_conversion_function
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, joining_ops


# ---- partitioners: how many shards along which axis ------------------------------------------
def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner giving ``num_shards`` shards along ``axis`` (``tf.fixed_size_partitioner``).

    Never more shards than the axis has rows: ``[3, 4]`` in 5 shards is 3.

    Example:
        >>> tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]), dtype=tf.float32)
        [3, 1]
    """
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape[axis].value)
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner giving each shard at least ``min_slice_size`` bytes, and at
    most ``max_partitions`` shards (``tf.min_max_variable_partitioner``).

    The number of shards along ``axis`` is ``ceil(total bytes / min_slice_size)``,
    capped by ``max_partitions`` and by the length of the axis, and at least 1:
    a float32 ``[1024, 1024]`` (4 MiB) with the default 256 KiB is 16 shards.

    Args:
        max_partitions: the upper bound on the number of shards.
        axis: the axis to split.
        min_slice_size: the bytes each shard should have at least.
        bytes_per_string_element: the assumed size of one string element.

    Raises:
        ValueError: when called, if the variable has no axis ``axis``.
    """
    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError("Can not partition variable along axis %d when shape is only %s"
                             % (axis, shape))
        element_size = _element_size(dtype, bytes_per_string_element)
        wanted = math.ceil(shape.num_elements() * element_size / min_slice_size)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape[axis].value, max_partitions, int(wanted)))
        return partitions
    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner keeping each shard below ``max_shard_bytes``, if splitting
    ``axis`` alone can (``tf.variable_axis_size_partitioner``).

    A *slice* is one index of ``axis`` (a row, for axis 0).  Each shard gets
    ``max(1, floor(max_shard_bytes / bytes per slice))`` slices, so the axis
    needs ``ceil(length / slices per shard)`` shards, at most ``max_shards``.
    ``(64 << 20) - 1`` keeps every shard below protobuf's 64 MiB limit.

    Args:
        max_shard_bytes: the most bytes a shard should have.
        axis: the axis to split.
        bytes_per_string_element: the assumed size of one string element.
        max_shards: an upper bound on the number of shards (wins over
            ``max_shard_bytes``).

    Raises:
        ValueError: for a non-positive byte count or ``max_shards``; when
            called, for a shape that is not a fully defined TensorShape or a
            dtype that is not a DType.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError("shape is not a TensorShape: %s" % shape)
        if not shape.is_fully_defined():
            raise ValueError("shape is not fully defined: %s" % shape)
        if not isinstance(dtype, dtypes.DType):
            raise ValueError("dtype is not a DType: %s" % dtype)
        element_size = _element_size(dtype, bytes_per_string_element)
        bytes_per_slice = shape.num_elements() / shape[axis].value * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(shape[axis].value / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions = [1] * shape.ndims
        partitions[axis] = axis_shards
        return partitions
    return _partitioner


def _element_size(dtype, bytes_per_string_element):
    """The bytes of one element: a string's size is only an estimate."""
    if dtype.base_dtype == dtypes.string:
        return bytes_per_string_element
    return dtype.size


def call_partitioner(partitioner, shape, dtype):
    """``partitioner(shape=shape, dtype=dtype)``, checked: one entry per axis,
    each at least 1, at most one above 1.

    Raises:
        ValueError: if ``shape`` is not fully defined or is a scalar's, or the
            partitioner's answer breaks those rules.
    """
    if not shape.is_fully_defined():
        raise ValueError("Shape of a new partitioned variable must be fully defined, but "
                         "instead was %s." % (shape,))
    if shape.ndims < 1:
        raise ValueError("A partitioned Variable must have rank at least 1, shape: %s" % shape)
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError("Partitioner must return a sequence, but saw: %s" % slicing)
    if len(slicing) != shape.ndims:
        raise ValueError("Partitioner returned a partition list that does not match the "
                         "Variable's rank: %s vs. %s" % (slicing, shape))
    if any(p < 1 for p in slicing):
        raise ValueError("Partitioner returned zero partitions for some axes: %s" % slicing)
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError("Can only slice a variable along one dimension: shape: %s, "
                         "partitioning: %s" % (shape, slicing))
    return list(slicing)


# ---- the split ---------------------------------------------------------------------------------
def slice_axis_and_count(partitions):
    """``(axis, number of shards)`` of a partitioner's answer; ``(0, 1)`` when nothing is split."""
    for axis, count in enumerate(partitions):
        if count > 1:
            return axis, count
    return 0, 1


def iter_slices(full_shape, num_slices, axis):
    """Yields ``(offset, shape)`` of each of ``num_slices`` parts of ``full_shape``.

    The parts split ``axis`` as evenly as possible; the first
    ``full_shape[axis] % num_slices`` get one index more.  ``[10, 4]`` in 3
    along axis 0: ``([0, 0], [4, 4])``, ``([4, 0], [3, 4])``, ``([7, 0], [3, 4])``.
    """
    base, extra = divmod(full_shape[axis], num_slices)
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[axis] = base + (1 if i < extra else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


class PartitionInfo:
    """Where a part sits in its full variable, for initializers (TF's ``_PartitionInfo``).

    ``get_variable`` calls an initializer with the part's shape and, if the
    initializer takes it, ``partition_info=PartitionInfo(...)``: the variance
    scaling initializers compute their fans from ``full_shape``, the identity
    initializer slices the full identity matrix at ``var_offset``.

    Args:
        full_shape: the shape of the whole variable, a list of ints.
        var_offset: the part's first index in each dimension.

    Raises:
        TypeError: if either is not a list or tuple.
        ValueError: if their lengths differ, or an offset is outside the shape.
    """

    def __init__(self, full_shape, var_offset):
        for arg, value in (("full_shape", full_shape), ("var_offset", var_offset)):
            if not isinstance(value, (list, tuple)):
                raise TypeError("`%s` must be a sequence (like tuple or list) instead of %s"
                                % (arg, type(value).__name__))
        if len(var_offset) != len(full_shape):
            raise ValueError("Expected equal length, but `var_offset` is of length {} while "
                             "full_shape is of length {}.".format(len(var_offset),
                                                                 len(full_shape)))
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError("Expected 0 <= offset < shape but found offset={}, shape={} "
                                 "for var_offset={}, full_shape={}"
                                 .format(offset, dim, var_offset, full_shape))
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_slice_dim(self, shape):
        """The axis along which a part of ``shape`` is cut, None if it is whole.

        Raises:
            ValueError: if the part would not fit, or is cut along two axes.
        """
        if len(shape) != len(self.full_shape):
            raise ValueError("Expected equal length, but received shape={} of length {} while "
                             "self.full_shape={} is of length {}."
                             .format(shape, len(shape), self.full_shape, len(self.full_shape)))
        for i, (offset, dim, full) in enumerate(zip(self.var_offset, shape, self.full_shape)):
            if offset + dim > full:
                raise ValueError("With self.var_offset={}, a partition of shape={} would exceed "
                                 "self.full_shape={} in dimension {}."
                                 .format(self.var_offset, shape, self.full_shape, i))
        cut = [i for i, (dim, full) in enumerate(zip(shape, self.full_shape)) if dim != full]
        if len(cut) > 1:
            raise ValueError("Cannot use single_slice_dim() with shape={} and self.full_shape={} "
                             "since slice dim could be either dimension {} or {}."
                             .format(shape, self.full_shape, cut[1], cut[0]))
        return cut[0] if cut else None

    def single_offset(self, shape):
        """The part's offset along its cut axis (0 if it is whole)."""
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]


class SaveSliceInfo:
    """How one part fits in its full variable (TF's ``Variable.SaveSliceInfo``).

    ``tf.train.Saver`` reads it from each part (``part._save_slice_info``) to
    save the parts as one tensor named ``full_name`` and to restore each part
    from its slice.

    Attributes:
        full_name: the full variable's name (``"emb"``).
        full_shape: its shape, a list of ints.
        var_offset: the part's first index in each dimension.
        var_shape: the part's shape.
    """

    def __init__(self, full_name, full_shape, var_offset, var_shape):
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self):
        """TF's slice spec string: the full shape, then ``offset,length`` per
        dimension, ``:``-separated (``"10 4 4,3:0,4"``: rows 4-6 of a 10x4)."""
        full_shape = " ".join("%d" % d for d in self.full_shape) + " "
        return full_shape + ":".join("%d,%d" % (o, s)
                                     for o, s in zip(self.var_offset, self.var_shape))

    def __repr__(self):
        return "SaveSliceInfo(%r, %s)" % (self.full_name, self.spec)


# ---- the whole, made of its parts -------------------------------------------------------------
class PartitionedVariable:
    """A variable stored as parts (``tf.PartitionedVariable``), made by
    ``tf.get_variable`` with a partitioner.

    Iterating gives the parts (ordinary ``tf.Variable`` objects, in offset
    order); converting it to a tensor (``tf.matmul(x, pv)``,
    :meth:`as_tensor`) concatenates them.  Like TF's, it has no arithmetic
    operators: ``pv + 1`` is a TypeError, ``tf.add(pv, 1)`` works.

    Args:
        name: the full variable's name (``"emb"``, no ``:0``).
        shape: the full shape.
        dtype: the parts' dtype.
        variable_list: the parts, each with a ``_save_slice_info``.
        partitions: the number of shards per axis (the partitioner's answer).

    Raises:
        TypeError: if ``variable_list`` or ``partitions`` is not a list.
        ValueError: for no parts, a part without slice info or of another full
            shape, or a partition count below 1.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError("variable_list is not a list or tuple: %s" % variable_list)
        if not isinstance(partitions, (list, tuple)):
            raise TypeError("partitions is not a list or tuple: %s" % partitions)
        if not all(p >= 1 for p in partitions):
            raise ValueError("partition values must be positive: %s" % partitions)
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        if any(v._get_save_slice_info() is None for v in variable_list):
            raise ValueError("All variables must have a save_slice_info available: %s"
                             % [v.name for v in variable_list])
        shape = TensorShape(shape)
        if len(shape) != len(partitions):
            raise ValueError("len(shape) != len(partitions): %s vs. %s" % (shape, partitions))
        full_shapes = [v._get_save_slice_info().full_shape for v in variable_list]
        if any(full != shape for full in full_shapes):
            raise ValueError("All variables' full shapes must match shape: %s; but full shapes "
                             "were: %s" % (shape, full_shapes))
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    # ---- the parts --------------------------------------------------------------------------
    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError("Cannot get a length for %d > 1 partition axes" % len(axes))
        return len(self._variable_list)

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def _partition_axes(self):
        """The split axes; ``[0]`` when there is a single part."""
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    # ---- the whole ----------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def as_tensor(self):
        """The full value: the parts concatenated along the split axis.

        Like reading a variable, the result ignores the control dependencies
        of the block it is made in.  The ops are ``<name>/ConcatPartitions/concat``
        and an ``Identity`` named ``<name>``.
        """
        graph = self.graph
        with graph.as_default(), graph.control_dependencies(None):
            return self._concat()

    def _concat(self):
        graph = self.graph
        if len(self._variable_list) == 1:
            with graph.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError("Cannot concatenate along more than one dimension: %s.  "
                                      "Multi-axis partition concat is not supported" % axes)
        with graph.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = joining_ops.concat(self._variable_list, axes[0])
        with graph.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    # ---- assignments: one per part ------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns ``value`` (the full value, a list of part values or another
        PartitionedVariable) part by part.

        Returns:
            The list of the parts' assignments (their ops when ``read_value=False``).
        """
        return self._apply_assign_fn(
            lambda var, part: var.assign(part, use_locking=use_locking, name=name,
                                         read_value=read_value), value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, part: var.assign_add(part, use_locking=use_locking, name=name,
                                             read_value=read_value), delta)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, part: var.assign_sub(part, use_locking=use_locking, name=name,
                                             read_value=read_value), delta)

    def _apply_assign_fn(self, assign_fn, value):
        """``assign_fn(part, its piece of value)`` for every part; a full value is
        split along the partition axis into pieces the size of the parts."""
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError("Cannot do assign action along more than one dimension: "
                                      "%s.  Multi-axis partition assign action is not supported"
                                      % axes)
        if isinstance(value, (list, PartitionedVariable)):
            pieces = list(value)
            if len(pieces) != len(self._variable_list):
                raise ValueError("Assigning %d values to the %d parts of %s"
                                 % (len(pieces), len(self._variable_list), self._name))
        else:
            sizes = [v.shape[axes[0]].value for v in self._variable_list]
            with self.graph.as_default():
                pieces = joining_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(var, piece) for var, piece in zip(self._variable_list, pieces)]

    def __repr__(self):
        return "<tf.PartitionedVariable '%s' shape=%s dtype=%s partitions=%s>" % (
            self._name, self._shape, self._dtype.name, self._partitions)


def _partitioned_variable_conversion(value, dtype=None, name=None, as_ref=False):
    """A PartitionedVariable where a tensor is expected: its parts concatenated."""
    del name
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError("Incompatible type conversion requested to type '%s' for variable of "
                         "type '%s'" % (dtype.name, value.dtype.name))
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_variable_conversion,
                                    priority=10)
