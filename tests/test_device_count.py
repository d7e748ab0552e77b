"""``ConfigProto(device_count=...)`` for any device type, not only the CPU.

A toy device type, ``TOY``, is written here the way a third-party device
package would be: host memory, the NumPy plugin's kernels reused, imports from
:mod:`minitf.plugin` only.  A host-memory type gets exactly the count asked
for (0 removes it) and its devices beyond the first run in processes of their
own, as the CPU's do; a type with device memory gets at most what the machine
has, and asking for more is an error.
"""

import os
import sys
import textwrap

import numpy as np
import pytest

import minitf as tf
from minitf.registry import register_plugin, unregister_plugin
from minitf.registry import registry as registry_lib
from minitf.registry.device import DeviceFactory
from minitf.runtime.device_set import device_specs

TOY_PLUGIN = '''
    """A third-party-style device package: the TOY device, host memory, NumPy kernels."""

    import numpy as np

    from minitf.plugin import Device, DeviceFactory, hookimpl

    OPS = ("Const", "Identity", "Add", "Mul", "_Send", "_Recv")


    class ToyDevice(Device):
        device_type = "TOY"

        def allocate(self, shape, dtype):
            return np.empty(shape, dtype=dtype)

        def from_host(self, array):
            return np.array(array, copy=True)

        def to_host(self, buffer):
            return buffer


    class ToyDeviceFactory(DeviceFactory):
        device_type = "TOY"
        priority = -1        # below the CPU: only pinned ops go there
        host_memory = True   # so any number of TOY devices, in processes of their own

        def create(self, index, name=None, options=None):
            return ToyDevice(index, name)


    @hookimpl
    def minitf_register_kernels(registry):
        for op_type in OPS:  # the CPU's kernels serve: TOY buffers are NumPy arrays
            for kernel in registry.kernel_defs(op_type):
                if kernel.device_type == "CPU":
                    registry.register_kernel(op_type, "TOY", kernel.fn, dtypes=kernel.dtypes)


    @hookimpl
    def minitf_register_devices(registry):
        registry.register_device(ToyDeviceFactory())
'''


def _toy_module(tmp_path, monkeypatch):
    """Writes the TOY package to ``tmp_path`` and imports it."""
    (tmp_path / "minitf_toy_device.py").write_text(textwrap.dedent(TOY_PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "minitf_toy_device", raising=False)
    import minitf_toy_device
    return minitf_toy_device


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The TOY plugin, registered at run time (removed again afterwards)."""
    module = _toy_module(tmp_path, monkeypatch)
    register_plugin(module, name="toy")
    yield module
    unregister_plugin(module)


@pytest.fixture
def installed_toy(tmp_path, monkeypatch):
    """The TOY plugin installed with an entry point, as ``pip install`` would:
    a ``.dist-info`` on the path of this process and of its device processes,
    and a registry loaded afresh (the real one comes back afterwards)."""
    module = _toy_module(tmp_path, monkeypatch)
    info = tmp_path / "minitf_toy_device-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: minitf-toy-device\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("[minitf]\ntoy = minitf_toy_device\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    monkeypatch.setattr(registry_lib, "_registry", None)
    monkeypatch.setattr(registry_lib, "_loader", None)
    monkeypatch.setattr(registry_lib, "_locations", None)
    registry = registry_lib.get_registry()
    assert registry.device_factory("TOY") is not None
    return module


def _config(device_count=None, **options):
    """A ConfigProto with ``device_count`` and no GPU (0 removes the type),
    so that the tests see the same devices on machines with an OpenCL driver."""
    return tf.ConfigProto(device_count=dict({"GPU": 0}, **(device_count or {})), **options)


def _device_names(config):
    with tf.Session(config=config) as sess:
        return sorted(d.name.rsplit("/", 1)[1] for d in sess.list_devices())


def _doubled_on(device):
    """Builds ``(x + x) * 1`` on ``device``, fed and fetched on the CPU."""
    x = tf.placeholder(tf.float32, [3])
    with tf.device(device):
        y = tf.identity(x) + tf.identity(x)
    return x, y * 1.0


def test_device_count_is_exact_for_a_host_memory_type(toy):
    config = _config({"TOY": 3}, device_processes=False)
    assert _device_names(config) == ["device:CPU:0", "device:TOY:0", "device:TOY:1",
                                     "device:TOY:2"]
    with tf.Graph().as_default():
        x, y = _doubled_on("/device:TOY:2")
        with tf.Session(config=config) as sess:
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])


def test_a_type_missing_from_device_count_gets_what_its_factory_offers(toy):
    assert _device_names(_config(device_processes=False)) == [
        "device:CPU:0", "device:TOY:0"]


def test_a_count_of_zero_removes_the_type(toy):
    assert _device_names(_config({"TOY": 0, "CPU": 2},
                                 device_processes=False)) == [
        "device:CPU:0", "device:CPU:1"]


def test_a_negative_count_is_an_error(toy):
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be negative"):
        device_specs(registry_lib.get_registry(), tf.ConfigProto(device_count={"TOY": -1}))


def test_a_type_no_plugin_registers_is_ignored():
    """One config serves machines with and without the device (TF's behaviour)."""
    assert _device_names(_config({"NO_SUCH_TYPE": 2})) == ["device:CPU:0"]


class _TwoBoardFactory(DeviceFactory):
    """A device type with device memory, two of which this machine has."""

    device_type = "BOARD"

    def count(self):
        return 2


def test_a_type_with_device_memory_gets_exactly_what_it_asks_up_to_what_exists(monkeypatch):
    registry = registry_lib.get_registry()
    factory = _TwoBoardFactory()
    monkeypatch.setattr(registry, "device_factories", lambda: [factory])
    specs = device_specs(registry, tf.ConfigProto(device_count={"BOARD": 1}))
    assert [(index, in_process) for _, index, in_process in specs] == [(0, True)]
    specs = device_specs(registry, tf.ConfigProto(device_count={"BOARD": 2}))
    assert [(index, in_process) for _, index, in_process in specs] == [(0, True), (1, True)]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="asks for 3 BOARD devices, but this machine has 2"):
        device_specs(registry, tf.ConfigProto(device_count={"BOARD": 3}))


def test_device_processes_need_an_installed_plugin(toy):
    """A device process loads the installed plugins only: it could not make a
    TOY device, so the session says so instead of a dead child process."""
    with pytest.raises(tf.errors.InvalidArgumentError, match="plugin 'toy' was registered "
                                                             "at run time"):
        tf.Session(config=_config({"TOY": 2}))


@pytest.mark.slow
def test_an_installed_host_memory_type_runs_in_its_own_process(installed_toy):
    config = _config({"TOY": 2})
    x, y = _doubled_on("/device:TOY:1")
    with tf.Session(config=config) as sess:
        assert len(sess._device_processes.pids()) == 1  # TOY:1; CPU:0 and TOY:0 stay here
        remote = [d.name for d in sess._device_processes.devices]
        assert remote == ["/job:localhost/replica:0/task:0/device:TOY:1"]
        np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])

