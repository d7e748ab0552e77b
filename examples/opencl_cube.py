"""A third-party plugin adding an op, ``Cube``, with a NumPy and an OpenCL kernel.

The worked example of ``docs/concepts/opencl.rst``.  Install it with an entry
point (``[project.entry-points.minitf] cube = "opencl_cube"``) or, in a
notebook or test, with ``minitf.registry.register_plugin(opencl_cube)``.
"""

from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import get_registry, hookimpl
from minitf.registry.op_def import OpDef

# One OpenCL C source, written for any element type T (the GPU plugin builds
# it with -D T=float, or T=double for float64, and caches the program).
CUBE_SOURCE = """
__kernel void cube(__global T *z, __global const T *x, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = x[i] * x[i] * x[i];
}
"""


def cube(x, name=None):
    """``x ** 3``, elementwise."""
    return apply_op(get_registry().op_def("Cube"), [x], name=name)


def cube_gpu(ctx, x):
    """The GPU kernel: allocate the output from the device's pool, enqueue, return.

    Nothing waits: the output is a DeviceArray the next op on the device uses
    as it is.
    """
    from minitf_opencl_gpu.kernels.table import empty, i32, run
    out = empty(ctx, x.shape, x.dtype)
    run(ctx, "cube", "cube", x.dtype, out.size, out, x, i32(out.size))
    return out


@hookimpl
def minitf_register_ops(registry):
    registry.register_op(OpDef("Cube", inputs=("x",), shape_fn=unchanged_shape,
                               doc="x ** 3, elementwise (an example plugin's op)."))


@hookimpl
def minitf_register_kernels(registry):
    registry.register_kernel("Cube", "CPU", lambda ctx, x: x * x * x)
    if _gpu_plugin_found():
        from minitf_opencl_gpu.programs import register_source
        register_source("cube", CUBE_SOURCE)
        registry.register_kernel("Cube", "GPU", cube_gpu, dtypes=["float32"])


@hookimpl
def minitf_register_gradients(registry):
    from minitf.ops.unary_ops import square
    registry.register_gradient("Cube", lambda op, grad: [grad * 3.0 * square(op.inputs[0])])


def _gpu_plugin_found():
    """Whether the OpenCL plugin is installed and found a device.

    Asked of the plugin itself: the registry learns of devices only after
    every plugin's kernels are registered.
    """
    try:
        from minitf_opencl_gpu.platform import find_devices
    except ImportError:
        return False
    return bool(find_devices()[0])
