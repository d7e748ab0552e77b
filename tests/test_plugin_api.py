"""The stable plugin surface, :mod:`minitf.plugin`, and the rule that plugins use only it.

A plugin that reaches into ``minitf.runtime.*`` breaks the day that module
moves; the bundled backends show third-party authors the way by importing
nothing from minitf but ``minitf.plugin`` — checked here on the source, with
:mod:`ast`, for every import (nested ones included) of every file in ``plugins/``.
"""

import ast
import pathlib
import subprocess
import sys

import pytest

import minitf.plugin

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "plugins"


def forbidden_imports(source):
    """``(line, name)`` of every import of a ``minitf`` module other than ``minitf.plugin``.

    Imports of the plugins' own packages (``minitf_numpy_cpu``...) are fine:
    only the name ``minitf`` and names below it count.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, name) for name in names
                  if (name == "minitf" or name.startswith("minitf.")) and name != "minitf.plugin"]
    return found


def plugin_files():
    return sorted(PLUGINS.rglob("*.py"))


def test_the_scanner_sees_every_kind_of_import():
    source = ("import minitf\n"
              "import minitf.runtime.values as values\n"
              "from minitf.framework import errors\n"
              "from minitf.plugin import errors\n"
              "import minitf_numpy_cpu\n"
              "def f():\n"
              "    from minitf.runtime import rendezvous\n")
    assert forbidden_imports(source) == [
        (1, "minitf"), (2, "minitf.runtime.values"), (3, "minitf.framework"),
        (7, "minitf.runtime")]


def test_there_are_plugin_files_to_check():
    names = {path.relative_to(PLUGINS).parts[0] for path in plugin_files()}
    assert {"numpy_cpu", "opencl_gpu"} <= names


@pytest.mark.parametrize("path", plugin_files(), ids=lambda p: p.relative_to(PLUGINS).as_posix())
def test_bundled_plugins_import_only_the_plugin_surface(path):
    bad = forbidden_imports(path.read_text())
    assert not bad, "%s imports from minitf outside minitf.plugin: %s" % (
        path.relative_to(ROOT), ", ".join("line %d: %s" % b for b in bad))


def test_every_exported_name_resolves():
    assert len(set(minitf.plugin.__all__)) == len(minitf.plugin.__all__)
    missing = [name for name in minitf.plugin.__all__ if not hasattr(minitf.plugin, name)]
    assert not missing


def test_the_surface_has_a_version():
    major, minor = minitf.plugin.API_VERSION.split(".")
    assert major.isdigit() and minor.isdigit()
    assert minitf.plugin.__version__ == minitf.plugin.API_VERSION


def test_the_surface_offers_what_a_plugin_needs():
    """The names the issue promises plugin authors, by their meaning."""
    from minitf.registry import OpDef, hookimpl
    from minitf.registry.device import DeviceFactory
    from minitf.runtime.values import DEAD
    plugin = minitf.plugin
    assert plugin.hookimpl is hookimpl and plugin.OpDef is OpDef
    assert plugin.DEAD is DEAD and plugin.DeviceFactory is DeviceFactory
    assert plugin.unchanged_shape.__name__ == "unchanged_shape"
    assert plugin.example_proto.Example.__name__ == "Example"  # loaded on first use
    with pytest.raises(AttributeError, match="no_such_name"):
        plugin.no_such_name  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize("module", ["minitf.plugin", "minitf_numpy_cpu"])
def test_imports_first_in_a_fresh_interpreter(module):
    """No import cycle: the surface (and a plugin through it) imports before
    anything else, and pulls in no protobuf until a plugin asks for it."""
    code = ("import sys, %s; assert 'google.protobuf' not in sys.modules, 'protobuf loaded'"
            % module)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr


def test_every_exported_name_is_described_in_the_plugin_guide():
    """docs/plugins.rst ("The stable plugin surface") says what each name is for."""
    guide = (ROOT / "docs" / "plugins.rst").read_text()
    section = guide[guide.index("The stable plugin surface"):
                    guide.index("A complete plugin: the op ``Cube``")]
    missing = [name for name in minitf.plugin.__all__
               if "``%s``" % name not in section and name != "API_VERSION"]
    assert not missing, "describe these in docs/plugins.rst: %s" % ", ".join(missing)
