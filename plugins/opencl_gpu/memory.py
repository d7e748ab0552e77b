"""Device memory: the tensors of a GPU device and the pooling allocator behind them.

A tensor on the GPU device is a :class:`DeviceArray`: a shape, a NumPy dtype
and an OpenCL buffer.  Reshaping makes a new ``DeviceArray`` over the *same*
buffer (no copy); no kernel ever writes into its inputs, so sharing is safe.

Buffers come from a :class:`BufferPool` (TF's ``BFCAllocator`` in spirit):
when the last array viewing a buffer dies, CPython's reference counting hands
the buffer back to the pool at once, and the next allocation of that size
class reuses it — a training step after the first allocates nothing from the
driver.  The queue is in order, so a buffer reused by a later kernel is only
written after every earlier kernel reading it has run.

``GPUOptions`` shape the pool as in TF: ``per_process_gpu_memory_fraction``
caps the bytes the device may hold (default: all of the device's memory), and
``allow_growth`` chooses the size classes — False (TF's default) rounds every
request up to a power of two, which wastes memory but lets buffers of nearby
sizes share one class; True takes only what each tensor needs (rounded to 256
bytes).  Running past the cap first releases the cached free buffers, then
raises ``ResourceExhaustedError`` naming the size (the runtime adds the op).
"""

import math

import numpy as np

from minitf.plugin import errors

_MIN_BYTES = 256


class _Allocation:
    """One pooled buffer; handed back to its pool when garbage."""

    __slots__ = ("mem", "size", "pool", "__weakref__")

    def __init__(self, mem, size, pool):
        self.mem = mem
        self.size = size
        self.pool = pool

    def __del__(self):
        pool = self.pool
        if pool is not None and self.mem is not None:
            pool.release(self.mem, self.size)


class DeviceArray:
    """A tensor held in OpenCL device memory.

    Attributes:
        shape: a tuple of ints.
        dtype: the NumPy dtype of its elements.
        allocation: the pooled buffer (shared by reshaped views); None if empty.
        event: the pending upload that filled it, if any (keeps its host array alive).
    """

    __slots__ = ("shape", "dtype", "allocation", "event")

    def __init__(self, shape, dtype, allocation, event=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.allocation = allocation
        self.event = event

    @property
    def data(self):
        """The ``pyopencl.Buffer`` (None for an empty tensor)."""
        return None if self.allocation is None else self.allocation.mem

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def reshape(self, shape):
        """The same buffer seen with another shape of equal size (no copy); one -1 is inferred."""
        shape = [int(d) for d in shape]
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1]))
            shape[shape.index(-1)] = self.size // known if known else 0
        return DeviceArray(shape, self.dtype, self.allocation, self.event)

    def __repr__(self):
        return "<DeviceArray shape=%s dtype=%s>" % (list(self.shape), self.dtype.name)


class BufferPool:
    """A size-class free list of OpenCL buffers for one device.

    Args:
        context: the ``pyopencl.Context``.
        limit_bytes: the most bytes the pool may hold (in use plus cached).
        max_alloc_bytes: the device's largest single buffer.
        exact: True (``allow_growth``): size classes of 256 bytes, not powers of two.
    """

    def __init__(self, context, limit_bytes, max_alloc_bytes, exact=False):
        self.context = context
        self.limit_bytes = int(limit_bytes)
        self.max_alloc_bytes = int(max_alloc_bytes)
        self.exact = exact
        self._free = {}
        self.bytes_held = 0
        self.bytes_cached = 0
        self.peak_bytes = 0
        self.driver_allocations = 0
        self.closed = False

    def size_class(self, nbytes):
        """The number of bytes actually reserved for a request of ``nbytes``."""
        nbytes = max(int(nbytes), _MIN_BYTES)
        if self.exact:
            return -(-nbytes // _MIN_BYTES) * _MIN_BYTES
        return 1 << (nbytes - 1).bit_length()

    def allocate(self, nbytes, shape, dtype):
        """An :class:`_Allocation` of at least ``nbytes`` for a tensor of ``shape`` and ``dtype``.

        Raises:
            errors.ResourceExhaustedError: past the pool's cap or the device's largest buffer.
        """
        size = self.size_class(nbytes)
        free = self._free.get(size)
        if free:
            self.bytes_cached -= size
            return _Allocation(free.pop(), size, self)
        if size > self.max_alloc_bytes or self.bytes_held + size > self.limit_bytes:
            self.trim()
        if size > self.max_alloc_bytes or self.bytes_held + size > self.limit_bytes:
            raise errors.ResourceExhaustedError(
                None, None,
                "OOM when allocating tensor with shape [%s] and type %s: %d bytes (%.1f MiB) on "
                "an OpenCL device with a limit of %d bytes, %d in use, largest buffer %d bytes. "
                "Use smaller batches, or raise GPUOptions.per_process_gpu_memory_fraction."
                % (",".join(map(str, shape)), np.dtype(dtype).name, nbytes, nbytes / 2.0 ** 20,
                   self.limit_bytes, self.bytes_held, self.max_alloc_bytes))
        import pyopencl as cl
        mem = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size)
        self.bytes_held += size
        self.peak_bytes = max(self.peak_bytes, self.bytes_held)
        self.driver_allocations += 1
        return _Allocation(mem, size, self)

    def release(self, mem, size):
        """Takes back a buffer whose last array died."""
        if self.closed:
            mem.release()
            self.bytes_held -= size
            return
        self._free.setdefault(size, []).append(mem)
        self.bytes_cached += size

    def trim(self):
        """Gives every cached free buffer back to the driver."""
        for size, buffers in list(self._free.items()):
            while buffers:
                buffers.pop().release()
                self.bytes_held -= size
                self.bytes_cached -= size

    def close(self):
        """Releases the cached buffers; buffers still in use are released when they die."""
        self.trim()
        self.closed = True

    def stats(self):
        """``{"bytes_in_use", "bytes_cached", "peak_bytes_held", "driver_allocations", ...}``."""
        return {"bytes_in_use": self.bytes_held - self.bytes_cached,
                "bytes_cached": self.bytes_cached, "peak_bytes_held": self.peak_bytes,
                "driver_allocations": self.driver_allocations, "limit_bytes": self.limit_bytes}
