"""OpenCL programs: the sources in ``opencl_kernels/*.cl``, built once and cached.

Every ``.cl`` file is written once for an element type ``T`` (and, for casts,
``DST``); building it with ``-D T=float`` or ``-D T=double`` makes the float32
or float64 program.  A program is built the first time an op needs it and
cached per (context, file, types), so each (device, dtype) pays the compiler
once per process — and PoCL also keeps compiled kernels on disk between runs.

The sources ship inside the wheel as package data of
``minitf_opencl_gpu.opencl_kernels`` (the top-level ``opencl_kernels/``
folder) and are read with :mod:`importlib.resources`.

A build failure is an ``InternalError`` carrying the compiler's build log;
the runtime adds the op that needed the program.
"""

import contextlib
import importlib.resources
import threading
import warnings

import numpy as np

from minitf.plugin import errors

SOURCE_PACKAGE = "minitf_opencl_gpu.opencl_kernels"

#: NumPy dtype -> OpenCL C type of its elements (bool is stored as uchar).
CL_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double",
            np.dtype(np.int32): "int", np.dtype(np.int64): "long",
            np.dtype(np.bool_): "uchar", np.dtype(np.uint8): "uchar",
            np.dtype(np.int8): "char", np.dtype(np.int16): "short",
            np.dtype(np.uint16): "ushort"}

_lock = threading.Lock()
_programs = {}   # (context, file, defines) -> Program
_kernels = {}    # (target, file, kernel name, dtype, defines) -> Kernel
_sources = {}
launch_lock = threading.Lock()
_typed_kernels = set()   # kernels whose scalar argument dtypes are fixed

#: ``recording.recorder``: the :class:`~minitf_opencl_gpu.compiled_step.Recorder`
#: listening to this thread's launches and allocations while a step is
#: compiled, else None (see :mod:`~minitf_opencl_gpu.compiled_step`).
recording = threading.local()
recording.recorder = None


def recorder():
    """This thread's active recorder, or None."""
    return getattr(recording, "recorder", None)


@contextlib.contextmanager
def not_recording():
    """Work inside the block is not part of the step being recorded (GEMM tuning)."""
    active = recorder()
    recording.recorder = None
    try:
        yield
    finally:
        recording.recorder = active


def cl_type(dtype):
    """The OpenCL C type of NumPy ``dtype``; TypeError for types without kernels."""
    try:
        return CL_TYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError("The OpenCL backend has no kernels for dtype %s" % np.dtype(dtype))


def register_source(name, text):
    """Makes ``text`` the OpenCL source called ``name``, for another plugin's kernels.

    A third-party plugin ships its own ``.cl`` text and registers it once;
    :func:`get_kernel` then builds and caches it like the bundled files.

    Raises:
        KeyError: if ``name`` is already a source with another text.
    """
    if _sources.get(name, text) != text:
        raise KeyError("OpenCL source '%s' is already registered with another text" % name)
    _sources[name] = text


def source(name):
    """The text of ``opencl_kernels/<name>.cl`` (or of a registered source)."""
    if name not in _sources:
        _sources[name] = importlib.resources.files(SOURCE_PACKAGE).joinpath(
            name + ".cl").read_text()
    return _sources[name]


def _options(dtype, extra):
    t = cl_type(dtype)
    defines = {"T": t}
    if t in ("float", "double"):
        defines["IS_FLOAT"] = "1"
    elif t == "uchar" and np.dtype(dtype) == np.bool_:
        defines["IS_BOOL"] = "1"
    else:
        defines["IS_INT"] = "1"
    defines.update(extra)
    return tuple(sorted(defines.items()))


def get_kernel(target, name, kernel_name, dtype, **defines):
    """The ``pyopencl.Kernel`` ``kernel_name`` of ``<name>.cl`` built for ``dtype``.

    Args:
        target: the :class:`~minitf_opencl_gpu.platform.OpenCLTarget`.
        name: the source file's name, without ``.cl``.
        kernel_name: the ``__kernel`` function.
        dtype: the NumPy dtype that ``T`` stands for.
        **defines: more ``-D`` macros (``DST="float"`` ...).

    Raises:
        errors.InternalError: with the build log, if the program does not compile.
    """
    key = (target, name, kernel_name, dtype, tuple(defines.items()))
    kernel = _kernels.get(key)
    if kernel is None:
        program = _program(target, name, _options(dtype, defines))
        with _lock:
            kernel = _kernels.setdefault(key, getattr(program, kernel_name))
    return kernel


def _program(target, name, options):
    import pyopencl as cl
    key = (target.context, name, options)
    with _lock:
        program = _programs.get(key)
        if program is not None:
            return program
        flags = ["-D%s=%s" % item for item in options] + ["-cl-mad-enable"]
        if dict(options)["T"] != "double":
            flags.append("-cl-single-precision-constant")
        try:
            with warnings.catch_warnings():
                # A successful build's log holds only the compiler's remarks (e.g.
                # PoCL on vector ABIs); a failed build's log is in the error below.
                warnings.simplefilter("ignore", cl.CompilerWarning)
                program = cl.Program(target.context, source(name)).build(options=flags)
        except cl.RuntimeError as error:
            raise errors.InternalError(
                None, None, "OpenCL build of opencl_kernels/%s.cl (%s) failed on %s. Build log:\n%s"
                % (name, " ".join(flags), target.cl_device.name.strip(), error)) from None
        _programs[key] = program
        return program


def launch(queue, kernel, global_size, args, local_size=None):
    """Enqueues ``kernel(*args)`` over ``global_size`` work items, without waiting.

    The first launch of a kernel fixes its scalar argument types from the
    NumPy scalars it is given (``set_scalar_arg_dtypes``; buffers are None).
    With them, pyopencl's generated invoker packs a scalar with one
    ``struct.pack`` instead of inspecting it on every call: setting the
    arguments drops from ~10 us to ~1 us on PoCL, the largest host cost of a
    tiny op.  A kernel is always called with the same argument types (its
    element type is fixed by its program), so fixing them once is safe.

    ``pyopencl.Kernel`` objects keep their arguments, so setting them and
    enqueueing is one critical section (ops of one step may run on several
    threads).  While a step is recorded, the launch is also told to the
    thread's recorder.
    """
    active = getattr(recording, "recorder", None)
    if active is not None:
        active.launched(kernel, global_size, local_size, args)
    with launch_lock:
        if kernel not in _typed_kernels:
            kernel.set_scalar_arg_dtypes(
                [arg.dtype if isinstance(arg, np.generic) else None for arg in args])
            _typed_kernels.add(kernel)
        return kernel(queue, global_size, local_size, *args)
