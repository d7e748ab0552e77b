"""Packaging: every package is in the wheel, and a plain ``pip install .`` works."""

import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _declared_packages():
    with open(ROOT / "pyproject.toml", "rb") as f:
        tool = tomllib.load(f)["tool"]["setuptools"]
    return set(tool["packages"]), tool.get("package-dir", {})


def test_every_package_directory_is_declared():
    packages, package_dir = _declared_packages()
    roots = {"minitf": ROOT / "minitf"}
    roots.update({name: ROOT / path for name, path in package_dir.items()})
    found = set()
    for name, root in roots.items():
        for init in root.rglob("__init__.py"):
            relative = init.parent.relative_to(root).parts
            found.add(".".join((name,) + relative))
    assert found == packages


def test_core_imports_no_backend():
    offenders = []
    for path in (ROOT / "minitf").rglob("*.py"):
        for line in path.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith(("import minitf_", "from minitf_", "from plugins", "import plugins")):
                offenders.append("%s: %s" % (path.relative_to(ROOT), stripped))
    assert offenders == []


@pytest.mark.slow
def test_non_editable_install_in_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(ROOT)],
        capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    program = ("import minitf as tf\n"
               "x = tf.placeholder(tf.float32)\n"
               "y = x + 1.0\n"
               "print(tf.Session().run(y, {x: 2.0}))\n"
               "import minitf.registry.registry as r\n"
               "print(sorted(r.plugin_names()))\n"
               # the T attr comes from TF's OpDefs: package data (tf_op_defs.pb)
               "(add,) = [n for n in tf.get_default_graph().as_graph_def().node\n"
               "          if n.name == y.op.name]\n"
               "print(tf.as_dtype(add.attr['T'].type))\n")
    run = subprocess.run([str(python), "-c", program], capture_output=True, text=True,
                         cwd=str(tmp_path), env={k: v for k, v in os.environ.items()
                                                 if k != "PYTHONPATH"}, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "3.0"
    assert "core_ops" in lines[1] and "numpy_cpu" in lines[1]
    assert lines[2] == "<dtype: 'float32'>"
    assert str(ROOT) not in run.stdout
