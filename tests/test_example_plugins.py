"""The two third-party-style packages of ``examples/plugins/``, installed and exercised.

* ``minitf-swish`` (an op package): the op runs, its gradient is right, its
  own tests (``opcheck``, the gradient fixtures) pass;
* ``minitf-toy-device`` (a device package): the device is listed, a pinned op
  runs on it, and minitf's conformance suite — turned on by one line of the
  package's ``conftest.py`` — passes on it; the same suite fails a device
  whose ``Add`` kernel is broken, naming the add tests only.

Both are copied to a temporary folder and installed there with pip
(``--target``): the ``dist-info`` with their entry points lands in that
folder, so programs run with it on ``PYTHONPATH`` find the plugins exactly as
after ``pip install``, and the shared environment never sees them.
"""

import ast
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "plugins"
PACKAGES = ("minitf-swish", "minitf-toy-device")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(site folder, {package: its copied source folder})`` with both packages installed."""
    work = tmp_path_factory.mktemp("example_plugins")
    sources = {}
    for name in PACKAGES:
        sources[name] = work / name
        shutil.copytree(EXAMPLES / name, sources[name],
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = work / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--target", str(site), *map(str, sources.values())],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return site, sources


def run(site, args, cwd=None, env=None):
    """Runs ``python args...`` with the installed packages on the path."""
    environment = dict(os.environ, PYTHONPATH=str(site))
    environment.update(env or {})
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=600)


def test_the_swish_op_runs_and_differentiates(installed):
    site, _ = installed
    program = textwrap.dedent("""
        import minitf as tf
        from minitf_swish import swish
        x = tf.placeholder(tf.float64, [4])
        y = swish(x, beta=1.5)
        (dx,) = tf.gradients(y, [x])
        with tf.Session() as sess:
            values = sess.run([y, dx], {x: [-2.0, -0.5, 0.0, 3.0]})
        print(y.op.type, dx.op.type)
        print(repr(values[0].tolist()))
        print(repr(values[1].tolist()))
    """)
    result = run(site, ["-c", program])
    assert result.returncode == 0, result.stderr
    types, y, dx = result.stdout.splitlines()
    assert types == "Swish SwishGrad"
    x = np.array([-2.0, -0.5, 0.0, 3.0])
    s = 1 / (1 + np.exp(-1.5 * x))
    np.testing.assert_allclose(eval(y), x * s, rtol=1e-12)  # noqa: S307 - our own repr
    np.testing.assert_allclose(eval(dx), s + 1.5 * x * s * (1 - s), rtol=1e-12)  # noqa: S307


def test_the_toy_device_is_listed_and_runs_a_pinned_op(installed):
    site, _ = installed
    program = textwrap.dedent("""
        import minitf as tf
        with tf.device("/device:TOY:0"):
            y = tf.reduce_sum(tf.constant([1.0, 2.0]) * 3.0)
        with tf.Session() as sess:
            print([d.name for d in sess.list_devices() if d.device_type == "TOY"])
            print(sess.run(y), y.device)
    """)
    result = run(site, ["-c", program], env={"MINITF_TOY_DEVICES": "2"})
    assert result.returncode == 0, result.stderr
    devices, value = result.stdout.splitlines()
    assert devices == str(["/job:localhost/replica:0/task:0/device:TOY:%d" % i for i in (0, 1)])
    assert value == "9.0 /device:TOY:0"


def test_minitf_plugins_lists_both_packages(installed):
    site, _ = installed
    result = run(site, ["-m", "minitf", "plugins"])
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert "minitf-swish 0.1.0" in rows["swish"] and "loaded" in rows["swish"]
    assert "minitf-toy-device 0.1.0" in rows["toy"] and "loaded" in rows["toy"]
    assert "TOY:0 (a toy device in host memory" in result.stdout
    assert "Swish " in result.stdout and "SwishGrad " in result.stdout


def test_the_swish_package_tests_pass(installed):
    site, sources = installed
    result = run(site, ["-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=sources["minitf-swish"])
    assert result.returncode == 0, result.stdout[-4000:]
    assert "9 passed" in result.stdout


def test_the_conformance_suite_passes_on_the_toy_device(installed):
    site, sources = installed
    result = run(site, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"],
                 cwd=sources["minitf-toy-device"])
    assert result.returncode == 0, result.stdout[-4000:]
    summary = result.stdout.strip().splitlines()[-1]
    passed = int(summary.split()[0])
    assert passed > 300 and "skipped" not in summary and "failed" not in summary
    collected = run(site, ["-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"],
                    cwd=sources["minitf-toy-device"]).stdout
    assert "tests::minitf.test.conformance::test_matmul[" in collected


BROKEN_DEVICE = '''
"""A device BROKEN whose Add kernels are off by one; every other kernel is the CPU's."""

import numpy as np

from minitf.plugin import Device, DeviceFactory, hookimpl, register_plugin


class BrokenDevice(Device):
    device_type = "BROKEN"

    def allocate(self, shape, dtype):
        return np.empty(shape, dtype)

    def from_host(self, array):
        return np.array(array)

    def to_host(self, buffer):
        return buffer


class BrokenFactory(DeviceFactory):
    device_type = "BROKEN"
    priority = -20

    def create(self, index, name=None, options=None):
        return BrokenDevice(index, name)


def add_off_by_one(ctx, x, y):
    return (np.add(x, y) + 1).astype(ctx.output_dtypes[0])


class BrokenPlugin:
    @hookimpl
    def minitf_register_kernels(self, registry):
        for op_type in registry.op_types():
            for kernel in registry.kernel_defs(op_type):
                if kernel.device_type == "CPU":
                    fn = add_off_by_one if op_type in ("Add", "AddV2") else kernel.fn
                    registry.register_kernel(op_type, "BROKEN", fn, dtypes=kernel.dtypes)

    @hookimpl
    def minitf_register_devices(self, registry):
        registry.register_device(BrokenFactory())


def pytest_configure(config):
    register_plugin(BrokenPlugin(), name="broken")
'''


def test_the_conformance_suite_catches_a_broken_kernel(installed, tmp_path):
    site, sources = installed
    (tmp_path / "broken_device.py").write_text(BROKEN_DEVICE)
    result = run(site, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "broken_device",
                        "--minitf-device=/device:BROKEN:0",
                        "-k", "test_binary and not pow"],  # the pow test adds too
                 cwd=sources["minitf-toy-device"],
                 env={"PYTHONPATH": "%s%s%s" % (site, os.pathsep, tmp_path)})
    assert result.returncode == 1, result.stdout[-4000:]
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert failed and all("-add]" in line or "[add]" in line for line in failed), failed
    assert any("test_binary_on_integers[add]" in line for line in failed)


def test_the_examples_import_only_the_public_minitf_modules():
    """Third-party code imports minitf.plugin, minitf and minitf.test: the stable surface;
    of the OpenCL plugin, only its kernel API ``minitf_opencl_gpu.api``."""
    allowed = {"minitf", "minitf.plugin", "minitf.test"}
    files = sorted(EXAMPLES.rglob("*.py"))
    assert len(files) >= 8
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module and module.split(".")[0] == "minitf":
                    assert module in allowed, "%s imports %s" % (path, module)
                if module and module.split(".")[0] == "minitf_opencl_gpu":
                    names = [module] if isinstance(node, ast.Import) else [
                        module + "." + a.name for a in node.names]
                    assert names == ["minitf_opencl_gpu.api"], "%s imports %s" % (path, names)
