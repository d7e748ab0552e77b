"""The minimal protocol a device must implement — named in one place.

A device owns memory and runs kernels.  The runtime moves tensors between
devices only through these four methods (TF's ``Device``/``Allocator`` split,
tinygrad's allocator); everything else a backend does lives in its kernels.
A backend plugin subclasses :class:`Device` and registers a
:class:`DeviceFactory` through ``minitf_register_devices``.
"""


class Device:
    """One device instance, e.g. ``/job:localhost/replica:0/task:0/device:CPU:0``.

    Attributes:
        device_type: ``"CPU"``, ``"GPU"``, ...
        index: the number in ``device:CPU:<index>``.
        name: the fully qualified TF device name.
    """

    device_type = None

    #: True when the device's buffers are host NumPy arrays (the CPU).  A device
    #: with its own memory sets it False: the runtime then copies fed values in
    #: with :meth:`from_host` and fetched values out with :meth:`to_host` at the
    #: edge of its partition (TF's ``_Arg``/``_Retval`` copies), and inside a
    #: step its kernels see only its own buffers.
    host_memory = True

    #: The dtypes its tensors can have (None: any).  The placer puts no op on
    #: the device whose outputs it cannot hold — a cast to float16 on a device
    #: without float16 tensors goes elsewhere (soft placement) or fails there,
    #: as a missing kernel does.
    dtypes = None

    def __init__(self, index=0, name=None, options=None):
        self.index = index
        self.name = name or "/job:localhost/replica:0/task:0/device:%s:%d" % (
            self.device_type, index)
        self.options = options or {}

    def allocate(self, shape, dtype):
        """Returns an uninitialised buffer of ``shape`` and NumPy ``dtype``."""
        raise NotImplementedError

    def from_host(self, array):
        """Returns a device buffer holding a copy of the NumPy ``array``."""
        raise NotImplementedError

    def to_host(self, buffer):
        """Returns the NumPy array held by a device buffer."""
        raise NotImplementedError

    def sync(self):
        """Blocks until all work queued on the device has finished."""

    def close(self):
        """Releases the device's resources (memory pools, queues)."""

    def can_fuse(self, op):
        """Whether ``op`` may join a fused elementwise kernel on this device.

        Optional: the fusion pass (:mod:`minitf.runtime.passes.xla_fusion`)
        asks it of each op placed here, and a device that answers True for
        some ops runs the ``_FusedElementwise`` op made of them.  A device
        without generated kernels fuses nothing.
        """
        del op
        return False

    def fused_kernel_source(self, op):
        """The source of the kernel this device generates for ``_FusedElementwise``
        op ``op``, for people to read (None: it shows none)."""
        del op
        return None

    def compile_partition(self, plan, compile_step):
        """A step running ``plan`` (a partition on this device alone) this device's
        own way, or None for the generated step.

        Optional: :func:`~minitf.runtime.executors.step.make_step` asks it of
        every one-device plan it would compile; ``compile_step(plan)`` makes
        the generated step, to fall back on.  The OpenCL device replays
        prepared kernel launches; the CPU device compiles nothing.
        """
        del plan, compile_step
        return None

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, self.name)


class DeviceFactory:
    """Creates the devices of one type.

    Attributes:
        device_type: the type this factory makes.
        priority: higher wins when the placer chooses among types (GPU > CPU).
        host_memory: True when its devices keep their buffers in host memory
            (NumPy arrays), as the CPU's do.  Such a type can have any number
            of devices — ``ConfigProto(device_count={"CPU": 4})`` makes
            exactly four — and each one beyond the first runs in an OS
            process of its own (minitf's multi-device simulation), since host
            arrays are what crosses between processes.  A factory with device
            memory (False, the default) makes at most :meth:`count` devices.
    """

    device_type = None
    priority = 0
    host_memory = False

    def count(self):
        """How many devices of this type this machine offers."""
        return 1

    def create(self, index, name=None, options=None):
        """Creates device number ``index``."""
        raise NotImplementedError

    def describe(self, index):
        """One human-readable line about device ``index``."""
        return "%s:%d" % (self.device_type, index)
