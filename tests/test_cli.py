"""``python -m minitf plugins``: the registry, as a user sees it from a shell."""

import pathlib
import subprocess
import sys

import pytest

from minitf import cli
from minitf.registry import OpDef, hookimpl, register_plugin, unregister_plugin

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _rows(output, first_cell):
    """The table rows of ``output`` whose first cell is ``first_cell``."""
    return [line.split() for line in output.splitlines()
            if line.split()[:1] == [first_cell]]


def test_plugins_command_lists_plugins_devices_and_kernels():
    run = subprocess.run([sys.executable, "-m", "minitf", "plugins"], capture_output=True,
                         text=True, cwd=str(ROOT), timeout=120)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "numpy_cpu" in out and "core_ops" in out
    assert [row[:2] for row in _rows(out, "numpy_cpu")] == [["numpy_cpu", "minitf"]]
    assert _rows(out, "CPU"), "the CPU device type is not listed:\n" + out
    add = _rows(out, "Add")
    # The first device type with a kernel (others follow when e.g. OpenCL is installed).
    assert len(add) == 1 and add[0][1].rstrip(",") == "CPU", out
    assert _rows(out, "Const")[0][1].rstrip(",") == "CPU"


def test_no_command_prints_usage():
    run = subprocess.run([sys.executable, "-m", "minitf"], capture_output=True, text=True,
                         cwd=str(ROOT), timeout=120)
    assert run.returncode == 2
    assert "plugins" in run.stdout


class _ThirdPartyPlugin:
    """Declares an op with no kernel and a device type it cannot offer."""

    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(OpDef("CliOnlyDeclared", inputs=("x",), doc="Declared, no kernel."))

    @hookimpl
    def minitf_register_devices(self, registry):
        registry.note_unavailable("FPGA", "no FPGA board found on this machine")


@pytest.fixture
def third_party_plugin():
    plugin = _ThirdPartyPlugin()
    register_plugin(plugin, name="cli_test_plugin")
    yield plugin
    unregister_plugin(plugin)


def test_runtime_plugin_unavailable_device_and_kernelless_op(third_party_plugin, capsys):
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "cli_test_plugin" in out and "(registered at run time)" in out
    assert ["FPGA", "cli_test_plugin", "no", "FPGA", "board", "found", "on", "this",
            "machine"] in _rows(out, "FPGA")
    assert _rows(out, "CliOnlyDeclared")[0][1:3] == ["-", "cli_test_plugin"]


def test_op_filter(capsys):
    assert cli.main(["plugins", "--op", "assign"]) == 0
    out = capsys.readouterr().out
    assert _rows(out, "AssignAdd") and not _rows(out, "Add")
