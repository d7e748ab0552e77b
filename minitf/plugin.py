"""The stable surface for plugin authors: everything a minitf plugin may import.

A plugin (an op package, a kernel backend, a device) imports from this module
and from nowhere else in minitf.  What is named here keeps its name and its
meaning across minitf releases of the same :data:`API_VERSION` major number;
everything else in minitf is internal and may move.  The two bundled
backends, ``plugins/numpy_cpu`` and ``plugins/opencl_gpu``, hold themselves
to this rule, and ``tests/test_plugin_api.py`` checks it.

It plays the part of TF's ``tensorflow/core/framework`` headers (``op.h``,
``op_kernel.h``, ``device_base.h``) that a custom-op library compiles
against, or of ``torch.library`` for PyTorch.

The names, by what a plugin does with them:

* declaring hooks — :data:`hookimpl`, :func:`register_plugin`,
  :func:`unregister_plugin`, :func:`get_registry`, :class:`PluginError`;
* declaring ops — :class:`OpDef`, the shape functions
  (:func:`unchanged_shape`, :func:`broadcast_binary_shape`, ...), and
  :func:`apply_op`, which a Python wrapper calls to add the op to a graph;
* writing kernels — :class:`KernelContext`, :func:`kernel_dtypes`, the error
  classes (:mod:`errors`), the dtypes (:mod:`dtypes`, :func:`as_dtype`),
  buffer forwarding (:data:`FORWARDING_MIN_ELEMENTS`), the dead value of
  control flow (:data:`DEAD`), a variable's reference (:class:`Ref`), the
  ``tf.errors`` form of a kernel's exception (:func:`located_error`), the
  ``_Send``/``_Recv`` helpers
  (:func:`send_to_rendezvous`, :func:`receive_from_rendezvous`,
  :func:`rendezvous_key`) and the helpers that shape functions and kernels
  share (:func:`get_windowed_output_size`, :func:`strided_slice_index`, ...);
* offering devices — :class:`Device`, :class:`DeviceFactory`;
* file formats kernels read and write — :mod:`checkpoint_format`,
  :func:`write_atomically`, :mod:`tf_record`, :mod:`protos`,
  :mod:`example_proto`, :func:`make_tensor_proto`.

``define_op`` is deliberately not here: it collects the *core's* op
declarations, which reach the registry when minitf's own ``core_ops`` plugin
loads — before any other plugin's module is imported.  A plugin declares its
ops in its ``minitf_register_ops`` hook with ``registry.register_op(OpDef(...))``.
"""

from minitf.data import function as _data_function
from minitf.framework import dtypes, errors, protos
from minitf.framework.dtypes import DType, as_dtype
from minitf.framework.operation import hide_from_call_site
from minitf.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from minitf.framework.tensor_util import make_tensor_proto
from minitf.lib.io import tf_record
from minitf.ops import script_ops as _script_ops
from minitf.ops.common_shapes import (
    broadcast_binary_shape, broadcast_shapes, merge_dims, same_shape_n, scalar_shape,
    unchanged_shape, unknown_shapes)
from minitf.ops.conv_ops import get_windowed_output_size
from minitf.ops.io_ops import parse_shape_and_slice
from minitf.ops.op_def_library import apply_op
from minitf.ops.slicing_ops import sliced_shape, strided_slice_index
from minitf.ops.xla_ops import parse_expression as parse_fused_expression
from minitf.platform import tf_logging
from minitf.registry import (
    OpDef, PluginError, get_registry, hookimpl, register_plugin, unregister_plugin)
from minitf.registry.device import Device, DeviceFactory
from minitf.runtime.executors.generated import FORWARDING_MIN_ELEMENTS
from minitf.runtime.executors.located_errors import located_error
from minitf.runtime.kernel_context import KernelContext
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.rendezvous import rendezvous_key
from minitf.runtime.resources import Ref
from minitf.runtime.values import DEAD
from minitf.train import checkpoint_format
from minitf.train.checkpoint_format import write_atomically

API_VERSION = "1.0"
"""The version of this surface: the major number changes when a name is
removed or changes meaning, the minor number when names are added."""

__version__ = API_VERSION


def __getattr__(name):
    """Loads :mod:`example_proto` (``tf.train.Example``'s messages) on first use:
    it loads protobuf, which a program that parses no examples never needs."""
    if name == "example_proto":
        from minitf.framework import example_proto
        return example_proto
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def api_wrapper(fn):
    """Marks ``fn`` — a plugin's Python wrapper that builds ops — as API code.

    An op remembers the line of user code that created it, and run-time errors
    point there.  Frames inside minitf and inside every loaded plugin's package
    are passed over already; a wrapper defined anywhere else (a notebook, a
    script that registers a plugin at run time) is marked with this decorator,
    or sets ``__tracebackhide__ = True`` in its body as pytest's helpers do.
    Returns ``fn`` itself.
    """
    return hide_from_call_site(fn)


def lookup_py_func(graph, token):
    """The Python function behind the ``PyFunc`` op with ``token`` (its kernel's lookup)."""
    return _script_ops.lookup(graph, token)


def lookup_dataset_function(graph, name):
    """The function ``name`` of ``graph``'s library (what a dataset kernel applies)."""
    return _data_function.lookup(graph, name)


def send_to_rendezvous(ctx, value):
    """What a ``_Send`` kernel does: hands ``value`` (host memory, or :data:`DEAD`)
    to the step's rendezvous under the op's key in its frame and iteration."""
    ctx.rendezvous.send(rendezvous_key(ctx.op, *ctx.frame_iter), value)


def receive_from_rendezvous(ctx):
    """What a ``_Recv`` kernel does: the value sent under the op's key (host
    memory, or :data:`DEAD`), waiting at most the rest of the step's deadline."""
    return ctx.rendezvous.recv(rendezvous_key(ctx.op, *ctx.frame_iter),
                               timeout=ctx.step_timeout)


__all__ = [
    "API_VERSION",
    # hooks and the registry
    "hookimpl", "register_plugin", "unregister_plugin", "get_registry", "PluginError",
    # ops
    "OpDef", "unchanged_shape", "scalar_shape", "unknown_shapes", "broadcast_shapes",
    "broadcast_binary_shape", "same_shape_n", "merge_dims",
    "TensorShape", "as_shape", "unknown_shape", "apply_op", "api_wrapper",
    # kernels
    "KernelContext", "kernel_dtypes", "errors", "dtypes", "DType", "as_dtype",
    "FORWARDING_MIN_ELEMENTS", "DEAD", "rendezvous_key", "send_to_rendezvous",
    "receive_from_rendezvous", "Ref", "located_error", "get_windowed_output_size", "sliced_shape",
    "strided_slice_index", "parse_shape_and_slice", "lookup_py_func",
    "lookup_dataset_function", "tf_logging", "parse_fused_expression",
    # devices
    "Device", "DeviceFactory",
    # file formats
    "checkpoint_format", "write_atomically", "tf_record", "protos", "example_proto",
    "make_tensor_proto",
]
