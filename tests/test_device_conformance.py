"""The device conformance suite (:mod:`minitf.test.conformance`) on minitf's own devices.

The suite is what a third-party device package runs on its device; here it
runs on each device of ``conftest.DEVICES`` (``MINITF_TEST_DEVICES=cpu,gpu``
adds the OpenCL device).  The CPU is the reference: it must have a kernel for
every op of the suite (strict), while another device reports the ops it lacks
as skipped tests naming them.  Below the suite: its own behaviour (a missing
kernel, a wrong value, the pytest plugin's ``--minitf-device``).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import minitf as tf
from minitf.registry import register_plugin, unregister_plugin
from minitf.test.conformance import DeviceUnderTest, suite
from minitf.test.conformance.suite import *  # noqa: F401,F403 - the suite's tests
from tests.plugin_fixtures import ExtraDevicePlugin


@pytest.fixture
def minitf_device(device):
    return DeviceUnderTest(device, strict=device == "/cpu:0")


# ---- the suite's own behaviour -------------------------------------------------------------


@pytest.fixture
def kernel_less_device():
    """A registered device type BARE with no kernels but Const, _Send and _Recv."""
    plugin = ExtraDevicePlugin("BARE", -5, {})
    register_plugin(plugin, name="bare_device")
    yield "/device:BARE:0"
    unregister_plugin(plugin)


def test_conformance_a_missing_kernel_is_a_skip_that_names_it(kernel_less_device):
    x = np.ones(3, np.float32)
    with pytest.raises(pytest.skip.Exception, match=r"BARE has no kernel for 'Add' \(float32, float32\)"):
        suite.run(DeviceUnderTest(kernel_less_device), tf.add, x, x)
    with pytest.raises(pytest.fail.Exception, match="BARE has no kernel for 'Add'"):
        suite.run(DeviceUnderTest(kernel_less_device, strict=True), tf.add, x, x)


def test_conformance_a_wrong_value_fails():
    with pytest.raises(AssertionError):
        suite.assert_matches(np.float32([1.0, 2.0]), [1.0, 2.1], np.float32)
    with pytest.raises(AssertionError, match="dtype int64, expected int32"):
        suite.assert_matches(np.int64([1]), np.int32([1]))


def _pytest_in(folder, *args):
    (folder / "conftest.py").write_text('pytest_plugins = ["minitf.test.conformance"]\n')
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-k", "crosses_to_the_device", *args], cwd=str(folder),
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))


def test_conformance_plugin_needs_a_device_that_exists(tmp_path):
    result = _pytest_in(tmp_path)
    assert result.returncode == 1 and "needs a device: pass --minitf-device" in result.stdout
    result = _pytest_in(tmp_path, "--minitf-device=/device:NOPE:0")
    assert result.returncode == 1 and "there is no NOPE device" in result.stdout
    result = _pytest_in(tmp_path, "--minitf-device=/cpu:0")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout
