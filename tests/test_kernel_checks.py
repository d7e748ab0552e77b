"""``MINITF_CHECK_KERNELS``: kernel results checked against the op's declaration.

A test plugin registers kernels that break their promise (a float64 result
for a float32 op, a wrong shape, a wrong dtype among several outputs); with
the mode on, each is an ``InternalError`` naming the kernel, its plugin and
the op, on every executor; with it off they pass unnoticed, as before.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, hookimpl, register_plugin, unregister_plugin
from minitf.runtime.executors import kernel_checks
from minitf.runtime.passes import constant_folding

WIDENS = OpDef("WidensToFloat64", inputs=("x",), shape_fn=unchanged_shape,
               doc="Returns x as float64: a kernel bug.")
FLATTENS = OpDef("AddsADimension", inputs=("x",), shape_fn=unchanged_shape,
                 doc="Returns x with a trailing dimension of 1: a kernel bug.")
PAIR = OpDef("PairWithIntCount", inputs=("x",), outputs=("y", "count"),
             shape_fn=lambda op: [op.inputs[0].shape, tf.TensorShape([])],
             dtype_fn=lambda op: [op.inputs[0].dtype, tf.int32],
             doc="(x, number of elements), the count as int64: a kernel bug.")
HONEST = OpDef("HonestIdentity", inputs=("x",), doc="x, with an unknown static shape.")


def honest(ctx, x):
    return x.reshape(-1) if x.ndim == 2 else x


class BadKernelsPlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        for op_def in (WIDENS, FLATTENS, PAIR, HONEST):
            registry.register_op(op_def)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("WidensToFloat64", "CPU", widen)
        registry.register_kernel("AddsADimension", "CPU", lambda ctx, x: x[..., None])
        registry.register_kernel("PairWithIntCount", "CPU",
                                 lambda ctx, x: (x, np.int64(x.size)))
        registry.register_kernel("HonestIdentity", "CPU", honest)


def widen(ctx, x):
    return x.astype(np.float64)


@pytest.fixture
def bad_kernels(monkeypatch):
    monkeypatch.setenv(kernel_checks.ENV_VAR, "1")
    plugin = BadKernelsPlugin()
    register_plugin(plugin, name="bad_kernels")
    yield plugin
    unregister_plugin(plugin)


EXECUTORS = ["generated", "interpreter", "parallel", "control_flow"]


def _config(executor):
    """The session options that pick ``executor`` (the generated step is the default)."""
    config = tf.ConfigProto()
    if executor == "interpreter":
        config.experimental.executor_type = "INTERPRETER"
    elif executor == "parallel":
        config.inter_op_parallelism_threads = 2
    return config


def _run(fetch, feed, executor="generated"):
    if executor == "control_flow":  # a cond around it: the control-flow executor runs it
        fetch = tf.cond(tf.constant(True), lambda: tf.identity(fetch), lambda: fetch)
    with tf.Session(config=_config(executor)) as sess:
        return sess.run(fetch, feed)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_float64_result_of_a_float32_op_is_an_internal_error(bad_kernels, executor):
    x = tf.placeholder(tf.float32, [2])
    y = apply_op(WIDENS, [x], name="widened")
    with pytest.raises(tf.errors.InternalError) as info:
        _run(y, {x: [1.0, 2.0]}, executor)
    message = str(info.value)
    assert "returned dtype float64, but the op's output is float32" in message
    assert "Kernel widen of plugin 'bad_kernels'" in message
    assert "test_kernel_checks.py:" in message  # the kernel's site
    assert "op 'widened' of type WidensToFloat64" in message


def test_a_result_of_the_wrong_shape_is_an_internal_error(bad_kernels):
    x = tf.placeholder(tf.float32, [None, 3])
    y = apply_op(FLATTENS, [x], name="grown")
    with pytest.raises(tf.errors.InternalError,
                       match=r"returned shape \(2, 3, 1\), but the op's output was inferred "
                             r"as \(\?, 3\)"):
        _run(y, {x: np.zeros((2, 3), np.float32)})


def test_each_output_is_checked(bad_kernels):
    y, count = apply_op(PAIR, [tf.constant([1.0, 2.0])], name="pair")
    with pytest.raises(tf.errors.InternalError,
                       match="returned dtype int64, but the op's output is int32 for output 1 "
                             "of op 'pair'"):
        _run(count, None)


def test_a_result_that_fits_a_partial_or_unknown_shape_passes(bad_kernels):
    x = tf.placeholder(tf.float32, None)
    y = apply_op(HONEST, [x])
    assert _run(y, {x: np.ones((2, 2), np.float32)}).shape == (4,)


def test_folded_constants_are_checked_too(bad_kernels, monkeypatch):
    """Constant folding runs kernels before any executor: unchecked, it would store
    the float64 result as a float32 constant, and the bug would vanish."""
    monkeypatch.setattr(constant_folding, "FOLDABLE_OPS",
                        constant_folding.FOLDABLE_OPS | {"WidensToFloat64"})
    y = tf.identity(apply_op(WIDENS, [tf.constant([1.0, 2.0])], name="folded"))
    with pytest.raises(tf.errors.InternalError, match="op 'folded'"):
        _run(y, None)


def test_without_the_mode_nothing_is_checked(bad_kernels, monkeypatch):
    monkeypatch.setenv(kernel_checks.ENV_VAR, "0")
    x = tf.placeholder(tf.float32, [2])
    assert _run(apply_op(WIDENS, [x]), {x: [1.0, 2.0]}).dtype == np.float64


def test_the_test_suite_runs_with_the_mode_on():
    assert kernel_checks.enabled()
