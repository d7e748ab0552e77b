"""``python -m minitf plugins``: the registry, as a user sees it from a shell."""

import ast
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


def test_match_filters_the_ops_table(capsys):
    assert cli.main(["plugins", "--match", "assign"]) == 0
    out = capsys.readouterr().out
    assert _rows(out, "AssignAdd") and not _rows(out, "Add")


# ---- python -m minitf plugins --op NAME ---------------------------------------------------

def _plugins_op(name):
    """Runs ``python -m minitf plugins --op name`` from a shell, as a maintainer would."""
    return subprocess.run([sys.executable, "-m", "minitf", "plugins", "--op", name],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=120)


def _op_map(output):
    """``{WHAT: (WHERE, PLUGIN)}`` from the table of ``plugins --op``."""
    rows = {}
    for line in output.splitlines()[2:]:
        cells = line.split("  ")
        cells = [c.strip() for c in cells if c.strip()]
        rows[cells[0]] = tuple(cells[1:3])
    return rows


def _declares(site, function, op_type):
    """True when a call ``function("op_type", ...)`` starts at ``site`` (``file:line``):
    a ``define_op``, a ``@kernel`` or ``@gradient`` decorator naming the op."""
    path, line = site.rsplit(":", 1)
    for node in ast.walk(ast.parse(pathlib.Path(path).read_text())):
        if (isinstance(node, ast.Call) and node.lineno == int(line)
                and getattr(node.func, "id", None) == function and node.args
                and getattr(node.args[0], "value", None) == op_type):
            return True
    return False


@pytest.mark.parametrize("op_type, declared_in, declared_by, kernel_in", [
    ("Add", "minitf/ops/math_ops.py", "_binary", "plugins/numpy_cpu/kernels/math.py"),
    ("MatMul", "minitf/ops/linalg_ops.py", "define_op", "plugins/numpy_cpu/kernels/linalg.py"),
])
def test_op_map_points_at_the_declaration_kernel_and_gradient(op_type, declared_in,
                                                               declared_by, kernel_in):
    run = _plugins_op(op_type)
    assert run.returncode == 0, run.stderr
    where = _op_map(run.stdout)
    expected = {"declared": (declared_in, declared_by, "core_ops"),
                "kernel CPU": (kernel_in, "kernel", "numpy_cpu"),
                "gradient": (declared_in, "gradient", "core_ops")}
    for what, (path, function, plugin) in expected.items():
        site, by = where[what]
        assert pathlib.Path(site.rsplit(":", 1)[0]).resolve() == ROOT / path, run.stdout
        assert _declares(site, function, op_type), "%s does not declare %s" % (site, op_type)
        assert by == plugin


def test_unknown_op_is_an_error_naming_close_ops():
    run = _plugins_op("matmull")
    assert run.returncode == 2
    assert "no op named 'matmull'" in run.stderr and "MatMul" in run.stderr
    assert run.stdout == ""


def _step_kernel(ctx, x):
    return x > 0


class _UnfinishedOpsPlugin:
    """One op with nothing but its declaration, one with a kernel and no gradient."""

    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(OpDef("CliBare", inputs=("x",)))
        registry.register_op(OpDef("CliStep", inputs=("x",)))

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("CliStep", "CPU", _step_kernel)

    @hookimpl
    def minitf_register_gradients(self, registry):
        registry.register_gradient("CliStep", None)


def _line_at(site):
    """The source line a ``file:line`` site points at."""
    path, line = site.rsplit(":", 1)
    return pathlib.Path(path).read_text().splitlines()[int(line) - 1]


def test_op_map_of_unfinished_ops(capsys):
    plugin = _UnfinishedOpsPlugin()
    register_plugin(plugin, name="cli_unfinished")
    try:
        assert cli.main(["plugins", "--op", "CliBare"]) == 0
        bare = capsys.readouterr().out
        assert cli.main(["plugins", "--op", "CliStep"]) == 0
        step = capsys.readouterr().out
    finally:
        unregister_plugin(plugin)
    kernel_row, gradient_row = bare.splitlines()[-2:]
    assert kernel_row.split()[:3] == ["kernel", "-", "-"] and "no kernel registered" in kernel_row
    assert gradient_row.split() == ["gradient", "-", "-", "no", "gradient", "registered"]
    kernel_site, by = _op_map(step)["kernel CPU"]
    assert "def _step_kernel(" in _line_at(kernel_site) and by == "cli_unfinished"
    gradient_site, by = _op_map(step)["gradient"]
    assert 'register_gradient("CliStep", None)' in _line_at(gradient_site)
    assert "not differentiable" in step.splitlines()[-1]


# Written apart from its register_op call, as plugins do (``ops.py`` / ``__init__.py``).
_APART = OpDef("CliDeclaredApart", inputs=("x",),
               doc="An OpDef made here, registered in a hook below.")


class _ApartPlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(_APART)


def test_declared_row_points_at_the_opdef_not_at_register_op(capsys):
    plugin = _ApartPlugin()
    register_plugin(plugin, name="cli_apart")
    try:
        assert cli.main(["plugins", "--op", "CliDeclaredApart"]) == 0
        out = capsys.readouterr().out
    finally:
        unregister_plugin(plugin)
    site, by = _op_map(out)["declared"]
    assert by == "cli_apart"
    assert _line_at(site).startswith('_APART = OpDef("CliDeclaredApart"'), site
