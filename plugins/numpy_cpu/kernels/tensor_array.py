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


class _TensorArray:
    def __init__(self, name, dtype, size, dynamic_size, forward=None):
        self.name = name
        self.dtype = dtype
        self.elements = [None] * size
        self.dynamic_size = dynamic_size
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
                return np.zeros_like(self.forward.read(ctx, index))
            raise ctx.invalid_argument("Tried to read from index %d but array size is: %d"
                                       % (index, len(self.elements)))
        value = self.elements[index]
        if value is None:
            if self.forward is not None:
                return np.zeros_like(self.forward.read(ctx, index))
            raise ctx.invalid_argument(
                "Could not read from TensorArray index %d because it has not yet been written "
                "to." % index)
        return value


@kernel("TensorArrayV3")
def tensor_array(ctx, size, dtype, element_shape, dynamic_size, clear_after_read,
                 tensor_array_name):
    array = _TensorArray(tensor_array_name or ctx.op.name, np.dtype(dtype.as_numpy_dtype),
                         int(size), dynamic_size)
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


@kernel("TensorArraySizeV3")
def size(ctx, handle, flow_in):
    return np.int32(len(handle.elements))


@kernel("TensorArrayGradV3")
def grad(ctx, handle, flow_in, source):
    if source not in handle.grads:
        handle.grads[source] = _TensorArray(handle.name + "@" + source, handle.dtype,
                                            len(handle.elements), True, forward=handle)
    return handle.grads[source], _FLOW
