"""``minitf.test.opcheck``: real ops pass every check, and each check catches
the defect it exists for — in a test-only op whose parts are broken on purpose.

The broken op is ``OpcheckCube`` (``x ** 3``), declared by a plugin registered
at run time; each test breaks one part (a device's kernel, the shape function,
the gradient, the gradient's gradient, a dtype's kernel) and expects opcheck
to name exactly the check that owns that part.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, get_registry, hookimpl, register_plugin, unregister_plugin
from minitf.test import opcheck
from minitf.test.opcheck import CHECKS
from tests.plugin_fixtures import ExtraDevicePlugin

X = np.linspace(-2.0, 2.0, 6, dtype=np.float32).reshape(2, 3)
HAS_GPU = get_registry().device_factory("GPU") is not None


@pytest.mark.parametrize("op_fn, inputs", [
    (tf.nn.softplus, [X]),
    (tf.tanh, [X]),
    (lambda x: tf.reduce_sum(x, axis=1), [X]),
    (lambda x, y: x * y, [X, X[0] + 3.0]),  # broadcasting
    (lambda x, y: tf.matmul(x, y), [X, X.T.copy()]),
    (lambda x: tf.concat([x, 2.0 * x], axis=0), [X]),
], ids=["softplus", "tanh", "reduce_sum", "mul_broadcast", "matmul", "concat"])
def test_real_ops_pass_every_check(op_fn, inputs):
    report = opcheck(op_fn, inputs)
    assert report.passed and [r.name for r in report.results] == list(CHECKS)
    assert report["gradients"].status == report["gradgrad"].status == "passed"
    assert report["devices"].status == ("passed" if HAS_GPU else "skipped")


def test_dtype_coverage_runs_every_constrained_dtype():
    report = opcheck(tf.nn.relu, [X + 0.1], checks=["dtypes"])
    assert report["dtypes"].detail.startswith("ran float16, float32, float64, int8")


def test_unknown_check_and_stateful_op_are_value_errors():
    with pytest.raises(ValueError, match="not \\['shapes'\\]"):
        opcheck(tf.nn.relu, [X], checks=["shapes"])
    with pytest.raises(ValueError, match="builds the stateful op 'RandomUniform'"):
        opcheck(lambda s: tf.random_uniform(s), [np.array([2, 3], np.int32)])


# ---- a test-only op, broken on purpose ---------------------------------------------------
def _cube_kernel(ctx, x):
    return x * x * x


def _cube_grad(op, grad):
    return [grad * _cube_grad_op(op.inputs[0])]


def _cube_grad_grad(op, grad):
    return [grad * 6.0 * op.inputs[0]]


CUBE_GRAD = OpDef("OpcheckCubeGrad", inputs=("x",), shape_fn=unchanged_shape,
                  doc="3 x ** 2: the derivative of OpcheckCube.")


def _cube_grad_op(x):
    return apply_op(CUBE_GRAD, [x], name="OpcheckCubeGrad")


class CubePlugin:
    """Declares ``OpcheckCube`` with whatever parts a test passes in."""

    def __init__(self, kernel=_cube_kernel, gradient=_cube_grad, grad_grad=_cube_grad_grad,
                 shape_fn=unchanged_shape, float16_kernel=None):
        self.op_def = OpDef("OpcheckCube", inputs=("x",), shape_fn=shape_fn,
                            type_constraint=(tf.float16, tf.float32, tf.float64), doc="x ** 3")
        self.kernel, self.float16_kernel = kernel, float16_kernel
        self.gradient, self.grad_grad = gradient, grad_grad

    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(self.op_def)
        registry.register_op(CUBE_GRAD)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("OpcheckCube", "CPU", self.kernel, dtypes=["float32", "float64"])
        if self.float16_kernel is not None:
            registry.register_kernel("OpcheckCube", "CPU", self.float16_kernel, dtypes=["float16"])
        registry.register_kernel("OpcheckCubeGrad", "CPU", lambda ctx, x: 3 * x * x)

    @hookimpl
    def minitf_register_gradients(self, registry):
        if self.gradient != "unregistered":
            registry.register_gradient("OpcheckCube", self.gradient)
        registry.register_gradient("OpcheckCubeGrad", self.grad_grad)


@pytest.fixture
def install():
    """``install(*plugins)`` registers run-time plugins, removed after the test."""
    installed = []

    def register(*plugins):
        for plugin in plugins:
            register_plugin(plugin, name="opcheck_test_%d" % len(installed))
            installed.append(plugin)
    yield register
    for plugin in reversed(installed):
        unregister_plugin(plugin)


def cube(x):
    return apply_op(get_registry().op_def("OpcheckCube"), [x], name="OpcheckCube")


def test_the_intact_test_op_passes(install):
    install(CubePlugin(float16_kernel=_cube_kernel))
    report = opcheck(cube, [X])
    assert report.passed, report
    assert report["dtypes"].detail == "ran float16, float32, float64"


def test_a_device_kernel_that_disagrees_with_the_cpu_fails_devices(install):
    install(CubePlugin(), ExtraDevicePlugin("OPCHECK", -5, {"OpcheckCube": lambda ctx, x: x * x * x + 0.01}))
    report = opcheck(cube, [X], raise_on_failure=False)
    # The broken kernel takes every dtype: the only float16 kernel, dtypes catches it too.
    assert report.failed == ["devices", "dtypes"]
    assert "/device:OPCHECK:0 kernel vs CPU kernel: output 0 differs" in report["devices"].detail


def test_a_shape_function_that_disagrees_with_the_kernel_fails_shape(install):
    install(CubePlugin(shape_fn=lambda op: [TensorShape([2, 4])]))
    report = opcheck(cube, [X], checks=["shape"], raise_on_failure=False)
    assert report.failed == ["shape"]
    assert "(2, 4)" in report["shape"].detail and "(2, 3)" in report["shape"].detail


def test_a_kernel_returning_the_wrong_dtype_fails_shape(install):
    install(CubePlugin(kernel=lambda ctx, x: np.power(x, 3, dtype=np.float64)))
    report = opcheck(cube, [X], checks=["shape", "graph_def"], raise_on_failure=False)
    assert "shape" in report.failed and "float64" in report["shape"].detail


def test_a_wrong_gradient_fails_gradients(install):
    install(CubePlugin(gradient=lambda op, grad: [grad * 2.0 * op.inputs[0]]))
    with pytest.raises(AssertionError, match="failed check gradients\n") as failure:
        opcheck(cube, [X])
    assert "Gradient check failed for input 'input_0:0'" in str(failure.value)


def test_a_wrong_second_derivative_fails_gradgrad_only(install):
    install(CubePlugin(grad_grad=lambda op, grad: [grad * 5.0 * op.inputs[0]]))
    report = opcheck(cube, [X], raise_on_failure=False)
    assert report.failed == ["gradgrad"]
    assert "Second-order gradient check" in report["gradgrad"].detail


def test_a_broken_float16_kernel_fails_dtypes(install):
    install(CubePlugin(float16_kernel=lambda ctx, x: (x * x).astype(np.float16)))
    report = opcheck(cube, [X], raise_on_failure=False)
    assert report.failed == ["dtypes"]
    assert "float16 result vs float32 result: output 0 differs" in report["dtypes"].detail


def test_a_not_differentiable_op_skips_the_gradient_checks(install):
    install(CubePlugin(gradient=None))
    report = opcheck(cube, [X], raise_on_failure=False)
    assert report.passed and report["gradients"].status == report["gradgrad"].status == "skipped"
    assert "not differentiable" in report["gradients"].detail


def test_an_op_with_no_gradient_registered_fails_gradients(install):
    install(CubePlugin(gradient="unregistered"))
    report = opcheck(cube, [X], raise_on_failure=False)
    assert report.failed == ["gradients", "gradgrad"]
    assert "register one, or declare the op not differentiable" in report["gradients"].detail
