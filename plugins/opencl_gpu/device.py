"""The OpenCL device, type ``GPU``: device buffers, uploads and downloads.

The four methods of the device protocol (:class:`minitf.registry.device.Device`)
are where data crosses between host and device — and the only places:

* ``from_host`` — a fed value or a ``_Recv`` on a cross-device edge comes in;
* ``to_host`` — a fetched value or a ``_Send`` to another device goes out;
* ``allocate`` — kernels take their outputs from the pooling allocator;
* ``sync`` — waits for the queue (the runtime never needs it inside a step).

It also answers the core's ``compile_partition`` hook: a partition on this
device runs as replayed, pre-bound launches where it can
(:mod:`~minitf_opencl_gpu.compiled_step`).

Kernels only *enqueue* work on the device's in-order queue; nothing waits
between the ops of a step.  ``host_memory = False`` tells the runtime to copy
feeds and fetches at the partition's edge.

Small integer tensors (shapes, axes, sizes) stay in *host memory* even on
this device, as TF's GPU kernels declare them ``HostMemory``: see
:mod:`minitf_opencl_gpu.kernels.table`.
"""

import math

import numpy as np

from minitf.plugin import Device, DeviceFactory

from minitf_opencl_gpu import compiled_step, programs
from minitf_opencl_gpu.kernels.table import GROUPS, expand_groups
from minitf_opencl_gpu.memory import BufferPool, DeviceArray, _Allocation
from minitf_opencl_gpu.platform import find_devices


class OpenCLDevice(Device):
    """One OpenCL device seen as ``/device:GPU:<index>``.

    Attributes:
        target: its :class:`~minitf_opencl_gpu.platform.OpenCLTarget`.
        memory_limit_bytes: the cap of its allocator.
        host_uploads: how many host-memory values kernels had to upload
            (small shape-derived scalars; see ``ensure_device``).
    """

    device_type = "GPU"
    host_memory = False

    def __init__(self, target, index=0, name=None, options=None):
        super().__init__(index, name, options)
        self.target = target
        # The dtypes its kernels are registered for: no float16, no strings.
        self.dtypes = frozenset(expand_groups(GROUPS, target.has_fp64))
        gpu_options = getattr(options, "gpu_options", None)
        fraction = getattr(gpu_options, "per_process_gpu_memory_fraction", 0.0) or 1.0
        self.allow_growth = bool(getattr(gpu_options, "allow_growth", False))
        self.memory_limit_bytes = int(target.cl_device.global_mem_size * min(fraction, 1.0))
        self._pool = None
        self.host_uploads = 0

    @property
    def queue(self):
        return self.target.queue

    @property
    def pool(self):
        """The device's :class:`~minitf_opencl_gpu.memory.BufferPool` (made on first use)."""
        if self._pool is None:
            self._pool = BufferPool(self.target.context, self.memory_limit_bytes,
                                    self.target.cl_device.max_mem_alloc_size,
                                    exact=self.allow_growth)
        return self._pool

    # ---- the device protocol ------------------------------------------------------------
    def allocate(self, shape, dtype):
        """An uninitialised :class:`DeviceArray` from the pool (no driver call when reused)."""
        shape = tuple(map(int, shape))
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes == 0:
            return DeviceArray(shape, dtype, None)
        array = DeviceArray(shape, dtype, self.pool.allocate(nbytes, shape, dtype))
        recorder = programs.recorder()
        if recorder is not None:
            recorder.allocated(array)
        return array

    def from_host(self, array):
        """Uploads a NumPy array; the copy is enqueued, not waited for."""
        import pyopencl as cl
        array = np.asarray(array, order="C")
        out = self.allocate(array.shape, array.dtype)
        recorder = programs.recorder()
        if recorder is not None:
            recorder.uploaded()
        if array.size:
            out.event = cl.enqueue_copy(self.queue, out.data, array, is_blocking=False)
        return out

    def to_host(self, buffer):
        """Downloads a DeviceArray into a new NumPy array (waits for it).

        A value already in host memory (a shape, see ``ensure_device``) is returned as is.
        """
        import pyopencl as cl
        if not isinstance(buffer, DeviceArray):
            return buffer
        recorder = programs.recorder()
        if recorder is not None:
            recorder.downloaded()
        array = np.empty(buffer.shape, buffer.dtype)
        if array.size:
            cl.enqueue_copy(self.queue, array, buffer.data, is_blocking=True)
        return array

    def sync(self):
        self.queue.finish()

    def close(self):
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # ---- helpers for kernels ----------------------------------------------------------
    def ensure_device(self, value, dtype=None):
        """``value`` as a DeviceArray, uploading a host-memory value.

        Host-memory values on this device are the small integer tensors that
        shape arithmetic produces (TF's ``HostMemory``), and what is computed
        from them alone (a count cast to float for ``reduce_mean``'s gradient).
        Uploading one is a few bytes, enqueued without a wait; it is counted
        in ``host_uploads`` so a test can see it.
        """
        if isinstance(value, DeviceArray):
            return value
        import pyopencl as cl
        self.host_uploads += 1
        array = np.asarray(value, dtype=dtype, order="C")
        if not array.size:
            return DeviceArray(array.shape, array.dtype, None)
        # A buffer created from the host array copies it at once, without
        # queueing (so without waiting for the queue); it is not pooled.
        mem = cl.Buffer(self.target.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=array)
        return DeviceArray(array.shape, array.dtype, _Allocation(mem, array.nbytes, None))

    # ---- fusion (XLA in miniature) ------------------------------------------------------
    def can_fuse(self, op):
        """Whether ``op`` has an expression template here (see
        :mod:`minitf_opencl_gpu.kernels.fusion`); asked by the core's fusion pass."""
        from minitf_opencl_gpu.kernels import fusion
        return fusion.can_fuse(op, self.target.has_fp64)

    def fused_kernel_source(self, op):
        """The OpenCL C this device generates for ``_FusedElementwise`` op ``op``."""
        from minitf_opencl_gpu.kernels import fusion
        return fusion.planned_source(op)

    def compile_partition(self, plan, compile_step):
        """The core's hook: this partition as replayed launches
        (:class:`~minitf_opencl_gpu.compiled_step.CompiledStep`), or None."""
        return compiled_step.compile_partition(self, plan, compile_step)

    def memory_stats(self):
        """The allocator's counters (bytes in use, cached, peak, driver allocations)."""
        return self.pool.stats()


class OpenCLDeviceFactory(DeviceFactory):
    """Offers one ``GPU`` device per chosen OpenCL device.

    Its placement priority is above the CPU's for a real GPU; when every
    OpenCL device is a CPU device (PoCL), it is below, so unconstrained ops
    stay on the NumPy CPU device and ``/gpu:0`` is used where asked for with
    ``tf.device`` — an emulated GPU on the same cores is rarely faster.
    """

    device_type = "GPU"

    def __init__(self, targets):
        self.targets = list(targets)
        self.priority = 10 if any(t.is_gpu for t in self.targets) else -1

    def count(self):
        return len(self.targets)

    def create(self, index, name=None, options=None):
        return OpenCLDevice(self.targets[index], index, name, options)

    def describe(self, index):
        return "GPU:%d %s" % (index, self.targets[index].describe())


def make_factory():
    """``(factory, None)``, or ``(None, reason)`` when no OpenCL device can be used."""
    targets, reason = find_devices()
    if not targets:
        return None, reason
    return OpenCLDeviceFactory(targets), None
