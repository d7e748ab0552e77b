"""``minitf_opencl_gpu.api``: the OpenCL plugin's public surface for kernel authors.

A test op, ``ApiAxpb`` (``a * x + b``), gets a GPU kernel written with the API
alone — a registered source, ``allocate``, ``kernel``, ``launch`` — and must
agree with NumPy on ``/gpu:0``: with float32 and float64 (one source, built
per dtype), an empty tensor, and on repeated runs of the same shapes, where
the device replays a compiled step (the launch must be recorded, or the
replay would leave the output unwritten).  Importing the module needs no
pyopencl, and its surface is the documented one.
"""

import subprocess
import sys

import numpy as np
import pytest

import minitf as tf
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, get_registry, hookimpl, register_plugin, unregister_plugin

from minitf_opencl_gpu import api

HAS_GPU = get_registry().device_factory("GPU") is not None

SOURCE = "tests.api_axpb"
api.register_source(SOURCE, """
__kernel void axpb(__global const T *x, __global T *y, const T a, const T b, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        y[i] = a * x[i] + b;
    }
}
""")

AXPB = OpDef("ApiAxpb", inputs=("x",), outputs=("y",), attrs=["a: float", "b: float = 0.0"],
             shape_fn=unchanged_shape, doc="a * x + b")


def _axpb_gpu(ctx, x, a, b):
    y = api.allocate(ctx, x.shape, x.dtype)
    if x.size:
        scalar = x.dtype.type
        api.launch(ctx, api.kernel(ctx, SOURCE, "axpb", x.dtype), (x.size,),
                   x, y, scalar(a), scalar(b), np.int32(x.size))
    return y


class _AxpbPlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(AXPB)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("ApiAxpb", "CPU", lambda ctx, x, a, b: (a * x + b).astype(x.dtype),
                                 dtypes=["float32", "float64"])
        if HAS_GPU:
            registry.register_kernel("ApiAxpb", "GPU", _axpb_gpu, dtypes=["float32", "float64"])


@pytest.fixture
def axpb():
    plugin = _AxpbPlugin()
    register_plugin(plugin, name="opencl_api_test")
    try:
        yield lambda x, a, b=0.0: apply_op(AXPB, [x], attrs={"a": a, "b": b}, name="ApiAxpb")
    finally:
        unregister_plugin(plugin)


def test_the_surface_is_the_documented_one():
    assert api.API_VERSION == 1
    assert set(api.__all__) == {"API_VERSION", "DeviceArray", "allocate", "available", "buffer",
                                "kernel", "launch", "queue", "register_source"}


def test_importing_the_api_does_not_import_pyopencl():
    code = "import sys; import minitf_opencl_gpu.api; print('pyopencl' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"


def test_a_source_name_taken_by_another_text_is_refused():
    api.register_source("tests.api_taken", "__kernel void k() {}")
    api.register_source("tests.api_taken", "__kernel void k() {}")  # the same text: fine
    with pytest.raises(KeyError, match="tests.api_taken"):
        api.register_source("tests.api_taken", "__kernel void other() {}")


@pytest.mark.skipif(not HAS_GPU, reason="OpenCL GPU tests SKIPPED: no OpenCL device")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_kernel_written_with_the_api_runs_and_replays(axpb, dtype):
    if dtype == np.float64 and not all(t.has_fp64 for t in get_registry()
                                       .device_factory("GPU").targets):
        pytest.skip("the OpenCL device has no float64")
    with tf.device("/gpu:0"):
        x = tf.placeholder(dtype, [None])
        y = axpb(x, a=2.5, b=-1.0) * 1.0  # a built-in op after it, in the same partition
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        for _ in range(4):  # the same shape again: the compiled step replays the launch
            value = rng.randn(37).astype(dtype)
            got = sess.run(y, {x: value})
            assert got.dtype == dtype
            np.testing.assert_allclose(got, 2.5 * value - 1.0, rtol=1e-6, atol=1e-6)
        assert sess.run(y, {x: np.zeros(0, dtype)}).shape == (0,)


@pytest.mark.skipif(not HAS_GPU, reason="OpenCL GPU tests SKIPPED: no OpenCL device")
def test_a_source_that_does_not_compile_is_an_internal_error_with_its_log():
    api.register_source("tests.api_broken", "__kernel void broken(__global T *x) { x[0] = ; }")

    class _Ctx:
        device = next(iter(_gpu_devices()))
    with pytest.raises(tf.errors.InternalError, match="tests.api_broken"):
        api.kernel(_Ctx, "tests.api_broken", "broken", np.float32)


def _gpu_devices():
    factory = get_registry().device_factory("GPU")
    return [factory.create(0)]
