"""The plugin registry: discovery, run-time plugins, duplicates, missing kernels."""

import subprocess
import sys

import numpy as np
import pytest

import minitf as tf
from minitf.registry import OpDef, get_registry, hookimpl, register_plugin, unregister_plugin
from tests.plugin_fixtures import TestPlugin, cube


@pytest.fixture
def test_plugin():
    plugin = TestPlugin()
    register_plugin(plugin, name="test_plugin")
    yield plugin
    unregister_plugin(plugin)


def test_bundled_plugins_arrive_through_entry_points():
    registry = get_registry()
    assert registry.op_origin("Add")[0] == "core_ops"
    assert registry.kernel("Add", "CPU", (tf.float32,)).plugin == "numpy_cpu"
    assert registry.device_factory("CPU") is not None


def test_import_loads_no_plugin():
    code = ("import minitf, minitf.registry.registry as r; "
            "assert r._registry is None, 'plugins loaded at import'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_runtime_plugin_adds_op_and_kernel(test_plugin, sess):
    x = tf.placeholder(tf.float32, [3])
    y = cube(x)
    assert y.op.type == "Cube" and y.shape.as_list() == [3]
    np.testing.assert_allclose(sess.run(y, {x: [1, 2, 3]}), [1, 8, 27])


def test_unregister_removes_everything(test_plugin):
    unregister_plugin(test_plugin)
    assert not get_registry().has_op("Cube")
    assert not get_registry().has_kernel("Cube", "CPU", (tf.float32,))
    register_plugin(test_plugin, name="test_plugin")  # the fixture unregisters it again


def test_missing_kernel_is_not_found_naming_op_device_dtypes(test_plugin, sess):
    x = tf.placeholder(tf.int32, [3])
    y = cube(x)  # the Cube kernel only takes floats
    with pytest.raises(tf.errors.NotFoundError) as info:
        sess.run(y, {x: [1, 2, 3]})
    message = str(info.value)
    assert "Cube" in message and "CPU" in message and "int32" in message
    assert "float32" in message  # lists the kernels that do exist
    assert "plugin_fixtures.py:" in message  # where the op was created (its wrapper)


def test_duplicate_registration_reports_both_sites():
    class Dup:
        @hookimpl
        def minitf_register_ops(self, registry):
            registry.register_op(OpDef("Add", inputs=("x", "y")))

    with pytest.raises(KeyError) as info:
        register_plugin(Dup(), name="dup")
    message = str(info.value)
    assert "core_ops" in message and "dup" in message
    assert "math_ops.py" in message and "test_registry.py" in message
    assert get_registry().op_origin("Add")[0] == "core_ops"


def test_unknown_op_type():
    with pytest.raises(KeyError, match="Op type not registered 'Nope'"):
        tf.get_default_graph().create_op("Nope", [])
