"""Finding the OpenCL devices this machine offers, once per process.

``pyopencl`` is imported here and nowhere in the core.  Every OpenCL device
of every platform becomes one minitf ``GPU`` device, in platform order —
PoCL's CPU device on a laptop, an NVIDIA, AMD or Intel GPU through its
vendor's ICD.  The environment variable ``MINITF_OPENCL_DEVICES`` chooses:

* unset or ``all``: every device;
* ``none``: no device (the plugin registers none and says so);
* a comma-separated list of ``platform:device`` indices or substrings of the
  device or platform name, e.g. ``0:0,1:0`` or ``NVIDIA``.

Each chosen device gets one context and one in-order command queue, shared
by all sessions of the process (TF likewise creates one stream group per
GPU): programs built for a context are cached with it (see
:mod:`minitf_opencl_gpu.programs`).
"""

import os
import threading

ENV_VAR = "MINITF_OPENCL_DEVICES"

_lock = threading.Lock()
_found = None


class OpenCLTarget:
    """One chosen OpenCL device with its shared context and queue.

    Attributes:
        cl_device: the ``pyopencl.Device``.
        platform_name: its platform's name.
        is_gpu: True for a real GPU or accelerator (not a CPU device like PoCL's).
        has_fp64: whether it supports ``double`` (``cl_khr_fp64``).
    """

    def __init__(self, cl_device):
        import pyopencl as cl
        self.cl_device = cl_device
        self.platform_name = cl_device.platform.name
        self.is_gpu = bool(cl_device.type & (cl.device_type.GPU | cl.device_type.ACCELERATOR))
        self.has_fp64 = "cl_khr_fp64" in cl_device.extensions
        self._context = None
        self._queue = None

    @property
    def context(self):
        """The device's ``pyopencl.Context`` (created on first use)."""
        self._open()
        return self._context

    @property
    def queue(self):
        """The device's in-order ``pyopencl.CommandQueue`` (created on first use)."""
        self._open()
        return self._queue

    def _open(self):
        if self._context is None:
            import pyopencl as cl
            with _lock:
                if self._context is None:
                    context = cl.Context([self.cl_device])
                    self._queue = cl.CommandQueue(context)
                    self._context = context

    def describe(self):
        d = self.cl_device
        return "%s (%s, OpenCL %s, %d compute units, %d MiB%s)" % (
            d.name.strip(), self.platform_name, d.version.split()[1], d.max_compute_units,
            d.global_mem_size // 2 ** 20, ", fp64" if self.has_fp64 else "")


def _selected(entries, spec):
    """The entries ``(platform index, device index, target)`` that ``spec`` chooses."""
    spec = spec.strip()
    if spec.lower() in ("", "all"):
        return entries
    if spec.lower() == "none":
        return []
    chosen = []
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        for p, d, target in entries:
            name = "%s %s" % (target.platform_name, target.cl_device.name)
            if item == "%d:%d" % (p, d) or item.lower() in name.lower():
                if target not in chosen:
                    chosen.append(target)
    return [(None, None, t) for t in chosen]


def find_devices():
    """``(targets, reason)``: the chosen OpenCL devices, or ``[]`` and why there are none.

    Probes once per process; never raises.
    """
    global _found
    with _lock:
        if _found is None:
            _found = _probe()
        return _found


def _probe():
    try:
        import pyopencl as cl
    except ImportError as error:
        return [], ("pyopencl is not installed (%s); install the extra: "
                    "pip install 'minitf[opencl]'" % error)
    try:
        platforms = cl.get_platforms()
    except cl.Error as error:
        return [], ("no OpenCL platform found (%s); install a driver, e.g. Debian's "
                    "pocl-opencl-icd, or your GPU vendor's ICD" % error)
    entries = []
    for p, platform in enumerate(platforms):
        try:
            devices = platform.get_devices()
        except cl.Error:
            continue
        entries.extend((p, d, OpenCLTarget(device)) for d, device in enumerate(devices))
    if not entries:
        return [], ("the OpenCL platforms (%s) offer no device"
                    % ", ".join(p.name for p in platforms))
    chosen = [t for _, _, t in _selected(entries, os.environ.get(ENV_VAR, ""))]
    if not chosen:
        return [], ("%s=%r chose none of the OpenCL devices: %s"
                    % (ENV_VAR, os.environ.get(ENV_VAR), "; ".join(
                        "%d:%d %s" % (p, d, t.cl_device.name.strip()) for p, d, t in entries)))
    return chosen, None
