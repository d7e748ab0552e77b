"""The device conformance suite, as a pytest plugin for third-party device packages.

A package that adds a device type proves that it computes what minitf's ops
promise by running this suite on its own device.  One line in the package's
top-level ``conftest.py`` turns it on, and one setting names the device::

    # tests/conftest.py
    pytest_plugins = ["minitf.test.conformance"]

    # pyproject.toml
    [tool.pytest.ini_options]
    minitf_device = "/device:TOY:0"

``pytest`` then collects, next to that ``conftest.py``, the tests of
:mod:`minitf.test.conformance.suite` — elementwise math with broadcasting,
reductions, matrix products, array and ``tf.nn`` ops, gradients, a training
step with variables, and transfers to and from the host — each building its
graph under ``tf.device(minitf_device)`` and comparing what the device
computes with NumPy.  ``--minitf-device=/device:TOY:1`` on the command line
overrides the setting.

An op the device has no kernel for cannot run there, and is reported as a
skipped test that names the op and its dtypes ("TOY has no kernel for
'Cumsum' (float32)"): what the device covers is visible at a glance.
``--minitf-conformance-strict`` (or ``minitf_conformance_strict = true``)
makes a missing kernel a failure instead.

minitf runs the same suite on its own devices (``tests/test_device_conformance.py``,
over ``MINITF_TEST_DEVICES``).  TF's counterpart is the kernel tests a
pluggable device runs against ``tensorflow/python/kernel_tests``; PyTorch's is
``instantiate_device_type_tests``.
"""

import dataclasses
import pathlib

import pytest

from minitf.framework.device_spec import DeviceSpec
from minitf.registry import get_registry

SUITE_PATH = pathlib.Path(__file__).with_name("suite.py")
PLUGIN_NAME = __name__


@dataclasses.dataclass(frozen=True)
class DeviceUnderTest:
    """The device the suite runs on.

    Attributes:
        name: its name as ``tf.device`` takes it, e.g. ``"/device:TOY:0"`` (TF1
            spells a type other than CPU and GPU in full: not ``/toy:0``).
        strict: a missing kernel fails the test instead of skipping it.
    """

    name: str
    strict: bool = False

    @property
    def device_type(self):
        """``"TOY"`` for ``"/device:TOY:0"``, ``"GPU"`` for ``"/gpu:0"``."""
        return DeviceSpec.from_string(self.name).device_type


def pytest_addoption(parser):
    group = parser.getgroup("minitf", "minitf device conformance")
    group.addoption("--minitf-device", dest="minitf_device", default=None,
                    help="the device the conformance suite runs on, e.g. /device:TOY:0")
    group.addoption("--minitf-conformance-strict", dest="minitf_conformance_strict",
                    action="store_true", default=None,
                    help="fail (instead of skip) a conformance test whose op has no kernel "
                         "on the device")
    parser.addini("minitf_device", "the device the conformance suite runs on, e.g. /device:TOY:0")
    parser.addini("minitf_conformance_strict", "fail conformance tests for missing kernels",
                  type="bool", default=False)


def pytest_collect_file(file_path, parent):
    """Collects the suite next to the ``conftest.py`` that loads this plugin."""
    if file_path.name != "conftest.py" or not _loads_this_plugin(parent.config, file_path):
        return None
    return pytest.Module.from_parent(parent, path=SUITE_PATH, name=PLUGIN_NAME)


def _loads_this_plugin(config, conftest_path):
    """True when the conftest module at ``conftest_path`` names this plugin in its
    ``pytest_plugins`` or took its hooks with ``from minitf.test.conformance import *``."""
    module = config.pluginmanager.get_plugin(str(conftest_path))
    if module is None:
        return False
    wanted = getattr(module, "pytest_plugins", ())
    wanted = [wanted] if isinstance(wanted, str) else list(wanted)
    return PLUGIN_NAME in wanted or getattr(module, "pytest_collect_file", None) is pytest_collect_file


@pytest.fixture(scope="session")
def minitf_device(request):
    """The :class:`DeviceUnderTest` named by ``--minitf-device`` or ``minitf_device``;
    a device type that no plugin registered fails every test, with the plugin's reason."""
    config = request.config
    name = config.getoption("minitf_device") or config.getini("minitf_device")
    if not name:
        pytest.fail("The minitf conformance suite needs a device: pass "
                    "--minitf-device=/device:TOY:0 or set minitf_device in "
                    "[tool.pytest.ini_options]", pytrace=False)
    strict = config.getoption("minitf_conformance_strict")
    device = DeviceUnderTest(name, config.getini("minitf_conformance_strict")
                             if strict is None else strict)
    registry = get_registry()
    factory = registry.device_factory(device.device_type)
    if factory is None or factory.count() < 1:
        _, reason = registry.unavailable_devices().get(device.device_type,
                                                       (None, "no plugin registered it"))
        pytest.fail("The conformance suite was asked to run on %s, but there is no %s device: "
                    "%s" % (name, device.device_type, reason), pytrace=False)
    return device


__all__ = ["DeviceUnderTest", "minitf_device", "pytest_addoption", "pytest_collect_file"]
