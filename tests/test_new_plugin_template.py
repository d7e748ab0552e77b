"""``python -m minitf new-plugin NAME``: the package it writes installs and its tests pass.

The package is installed with pip into a folder of its own (``--target``) and
its tests run in a subprocess with that folder on ``PYTHONPATH``: pip writes
the ``dist-info`` holding the entry point there, so minitf finds the plugin
exactly as after ``pip install``, while the shared environment (and every
other test running beside this one) never sees it.
"""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

from minitf import cli, templates

PLUGIN_IMPORTS = {"minitf", "minitf.plugin", "minitf.test"}


def test_names_of_the_package():
    assert templates.names("soft-clip") == {
        "base": "soft_clip", "dist": "minitf-soft-clip", "package": "minitf_soft_clip",
        "entry": "soft_clip", "op_type": "SoftClip", "func": "soft_clip", "const": "SOFT_CLIP"}
    assert templates.names("minitf_mish")["op_type"] == "Mish"


@pytest.mark.parametrize("name", ["Soft Clip", "9lives", "soft--clip", "", "minitf-"])
def test_a_bad_name_is_rejected(name):
    with pytest.raises(ValueError, match="lower-case letters and digits"):
        templates.names(name)


def test_every_placeholder_is_filled_and_every_python_file_parses():
    files = templates.render("soft-clip")
    assert sorted(files) == [
        "README.md", "pyproject.toml", "src/minitf_soft_clip/__init__.py",
        "src/minitf_soft_clip/kernels.py", "src/minitf_soft_clip/opencl.py",
        "src/minitf_soft_clip/ops.py", "src/minitf_soft_clip/soft_clip.cl",
        "tests/test_soft_clip.py"]
    for path, text in files.items():
        assert "${" not in text and "__package__/" not in path, path
        if path.endswith(".py"):
            ast.parse(text, path)
    assert 'soft_clip = "minitf_soft_clip"' in files["pyproject.toml"]


def test_the_package_imports_only_the_public_minitf_modules():
    """A plugin imports from minitf.plugin, minitf and minitf.test only: the stable surface;
    of the OpenCL plugin, only its kernel API ``minitf_opencl_gpu.api``."""
    for path, text in templates.render("soft-clip").items():
        if not path.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(text)):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module.split(".")[0] == "minitf":
                    assert module in PLUGIN_IMPORTS, "%s imports %s" % (path, module)
                if module.split(".")[0] == "minitf_opencl_gpu":
                    names = [module] if isinstance(node, ast.Import) else [
                        module + "." + a.name for a in node.names]
                    assert names == ["minitf_opencl_gpu.api"], "%s imports %s" % (path, names)


def test_the_command_writes_the_package_and_refuses_to_overwrite(tmp_path, capsys):
    assert cli.main(["new-plugin", "soft-clip", "--dir", str(tmp_path)]) == 0
    root = tmp_path / "minitf-soft-clip"
    assert "pip install -e ." in capsys.readouterr().out
    assert (root / "src" / "minitf_soft_clip" / "ops.py").is_file()
    (root / "README.md").write_text("mine")
    assert cli.main(["new-plugin", "soft-clip", "--dir", str(tmp_path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert (root / "README.md").read_text() == "mine"
    assert cli.main(["new-plugin", "Soft Clip", "--dir", str(tmp_path)]) == 2


def install_into(package, target):
    """``pip install --no-deps --no-build-isolation --target target package``."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--no-deps", "--no-build-isolation", "--target", str(target), str(package)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def run_pytest(package, site, *args):
    """Runs pytest on an installed package's tests in a subprocess; returns the result."""
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=str(package), env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_generated_tests_pass_as_generated(tmp_path):
    assert cli.main(["new-plugin", "soft-clip", "--dir", str(tmp_path)]) == 0
    package = tmp_path / "minitf-soft-clip"
    install_into(package, tmp_path / "site")
    result = run_pytest(package, tmp_path / "site", "-W", "error::pytest.PytestUnknownMarkWarning")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "6 passed" in result.stdout
    installed = pathlib.Path(tmp_path / "site" / "minitf_soft_clip" / "soft_clip.cl")
    assert installed.is_file()  # the OpenCL source is package data
