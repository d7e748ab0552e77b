"""CPU kernels of ``tf.TensorArray``: the handle's value is the array itself.

A ``TensorArrayV3`` run creates a fresh :class:`_TensorArray` (so an array
lives for one step, or one iteration of an enclosing loop); writes and reads
go through it, ordered by the flow tensors.  A *gradient* array (from
``TensorArrayGradV3``) sums repeated writes and reads unwritten elements as
zeros shaped like the forward element — as TF's do.
"""

import numpy as np

from minitf_numpy_cpu.kernels.table import kernel

_FLOW = np.float32(0.0)


_CLEARED = object()  # an element already read from an array with clear_after_read


class _TensorArray:
    """The elements, and what TF's ``TensorArray`` resource knows about them.

    ``element_shape`` is the shape every element has (a tuple), once known:
    from the op's attr when fully defined, else from the first write.  Reading
    an element never written then gives zeros of that shape, as in TF.
    """

    def __init__(self, name, dtype, size, dynamic_size, element_shape=None,
                 clear_after_read=False, forward=None):
        self.name = name
        self.dtype = dtype
        self.elements = [None] * size
        self.dynamic_size = dynamic_size
        self.element_shape = element_shape
        self.clear_after_read = clear_after_read
        self.forward = forward  # the forward array, for a gradient array
        self.grads = {}         # gradient source -> gradient array

    def write(self, ctx, index, value):
        if index < 0:
            raise ctx.invalid_argument("TensorArray %s: index %d is negative" % (self.name, index))
        if index >= len(self.elements):
            if not self.dynamic_size and self.forward is None:
                raise ctx.invalid_argument(
                    "Tried to write to index %d but array is not resizeable and size is: %d"
                    % (index, len(self.elements)))
            self.elements.extend([None] * (index + 1 - len(self.elements)))
        value = np.asarray(value, dtype=self.dtype)
        if self.element_shape is None:
            self.element_shape = value.shape
        if self.elements[index] is not None:
            if self.forward is None:
                raise ctx.invalid_argument(
                    "Could not write to TensorArray index %d because it has already been "
                    "written to." % index)
            value = self.elements[index] + value  # gradients of repeated reads add up
        self.elements[index] = value

    def read(self, ctx, index):
        if not 0 <= index < len(self.elements):
            if self.forward is not None and 0 <= index < len(self.forward.elements):
                return self._zeros(ctx, index)
            raise ctx.invalid_argument("Tried to read from index %d but array size is: %d"
                                       % (index, len(self.elements)))
        value = self.elements[index]
        if value is _CLEARED:
            raise ctx.invalid_argument(
                "TensorArray %s: Could not read index %d twice because it was cleared after a "
                "previous read (perhaps try setting clear_after_read = false?)"
                % (self.name, index))
        if value is None:
            return self._zeros(ctx, index)
        if self.clear_after_read:
            self.elements[index] = _CLEARED
        return value

    def _zeros(self, ctx, index):
        """An unwritten element: zeros, when the element shape is known."""
        shape = self.element_shape
        if shape is None and self.forward is not None:
            shape = self.forward.element_shape
        if shape is None:
            raise ctx.invalid_argument(
                "TensorArray %s: Could not read from TensorArray index %d because it has not "
                "yet been written to and no element shape was specified." % (self.name, index))
        return np.zeros(shape, dtype=self.dtype)


@kernel("TensorArrayV3")
def tensor_array(ctx, size, dtype, element_shape, dynamic_size, clear_after_read,
                 tensor_array_name):
    known = element_shape is not None and element_shape.is_fully_defined()
    array = _TensorArray(tensor_array_name or ctx.op.name, np.dtype(dtype.as_numpy_dtype),
                         int(size), dynamic_size,
                         tuple(element_shape.as_list()) if known else None, clear_after_read)
    return array, _FLOW


@kernel("TensorArrayWriteV3")
def write(ctx, handle, index, value, flow_in):
    handle.write(ctx, int(index), value)
    return _FLOW


@kernel("TensorArrayReadV3")
def read(ctx, handle, index, flow_in, dtype, element_shape):
    return handle.read(ctx, int(index))


@kernel("TensorArrayGatherV3")
def gather(ctx, handle, indices, flow_in, dtype, element_shape):
    values = [handle.read(ctx, int(i)) for i in np.asarray(indices).reshape(-1)]
    for i, value in zip(np.asarray(indices).reshape(-1), values):
        if np.shape(value) != np.shape(values[0]):
            raise ctx.invalid_argument(
                "TensorArray has inconsistent shapes.  Index 0 has shape: %s but index %d has "
                "shape: %s" % (list(np.shape(values[0])), i, list(np.shape(value))))
    if not values:
        shape = [0] + [d if d is not None else 0 for d in (element_shape.as_list()
                                                          if element_shape.ndims else [])]
        return np.zeros(shape, dtype=handle.dtype)
    return np.stack(values).reshape(np.shape(indices) + np.shape(values[0]))


@kernel("TensorArrayScatterV3")
def scatter(ctx, handle, indices, value, flow_in):
    value = np.asarray(value)
    for k, i in enumerate(np.asarray(indices).reshape(-1)):
        handle.write(ctx, int(i), value[k])
    return _FLOW


@kernel("TensorArrayConcatV3")
def concat(ctx, handle, flow_in, dtype, element_shape_except0):
    values = [handle.read(ctx, i) for i in range(len(handle.elements))]
    for i, value in enumerate(values):
        if np.ndim(value) == 0 or np.shape(value)[1:] != np.shape(values[0])[1:]:
            raise ctx.invalid_argument(
                "TensorArray %s: concat needs elements of rank >= 1 and equal shapes beyond "
                "axis 0; element 0 has shape %s, element %d has shape %s"
                % (handle.name, list(np.shape(values[0])), i, list(np.shape(value))))
    lengths = np.array([np.shape(v)[0] for v in values], dtype=np.int64)
    if not values:
        rest = [d or 0 for d in element_shape_except0.as_list()] \
            if element_shape_except0.ndims is not None else []
        return np.zeros([0] + rest, dtype=handle.dtype), lengths
    return np.concatenate(values), lengths


@kernel("TensorArraySplitV3")
def split(ctx, handle, value, lengths, flow_in):
    value = np.asarray(value)
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.sum() != value.shape[0]:
        raise ctx.invalid_argument(
            "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is %d "
            "and value's shape is: %s" % (lengths.sum(), list(value.shape)))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for k, (start, length) in enumerate(zip(starts, lengths)):
        handle.write(ctx, k, value[start:start + length])
    return _FLOW


@kernel("TensorArraySizeV3")
def size(ctx, handle, flow_in):
    return np.int32(len(handle.elements))


@kernel("TensorArrayGradV3")
def grad(ctx, handle, flow_in, source):
    if source not in handle.grads:
        handle.grads[source] = _TensorArray(handle.name + "@" + source, handle.dtype,
                                            len(handle.elements), True,
                                            handle.element_shape, forward=handle)
    return handle.grads[source], _FLOW
