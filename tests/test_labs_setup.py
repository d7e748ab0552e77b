"""The labs work after ``make install`` alone (docs/labs.rst, "Setting up").

``make install`` installs minitf with its ``labs`` extra, which brings pytest;
the commands docs/labs.rst gives a student are then run as written, with the
``pytest`` program of this environment.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _install_commands(opencl_icds):
    """The commands ``make install`` would run (a dry run: nothing is installed), with
    ``opencl_icds`` as the machine's OpenCL drivers."""
    if shutil.which("make") is None:
        pytest.skip("make is not available")
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "install", "OPENCL_ICDS=" + opencl_icds],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry_run.returncode == 0, dry_run.stderr
    return dry_run.stdout


@pytest.mark.parametrize("icds", ["", "/etc/OpenCL/vendors/pocl.icd"], ids=["no-opencl", "opencl"])
def test_make_install_installs_the_labs_extra(icds):
    commands = _install_commands(icds)
    (extras,) = re.findall(r'pip .*install -e "\.\[([\w,]+)\]"', commands)
    assert "labs" in extras.split(","), commands
    assert ("opencl" in extras.split(",")) == bool(icds), commands


def test_the_labs_extra_brings_pytest():
    with open(ROOT / "pyproject.toml", "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", requirement).group(0) for requirement in extras["labs"]}
    assert "pytest" in names


def test_the_documented_commands_run_in_this_environment(tmp_path):
    """``python -m minitf.labs start sigmoid ./my_lab`` then ``pytest ./my_lab``, as written."""
    text = (ROOT / "docs" / "labs.rst").read_text(encoding="utf-8")
    assert "$ python -m minitf.labs start sigmoid ./my_lab" in text
    assert "$ pytest ./my_lab\n" in text
    pytest_program = pathlib.Path(sys.executable).parent / "pytest"
    assert pytest_program.exists(), "no pytest program here: pip install -e '.[labs]'"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    start = subprocess.run([sys.executable, "-m", "minitf.labs", "start", "sigmoid", "./my_lab"],
                           cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert start.returncode == 0, start.stderr
    run = subprocess.run([str(pytest_program), "-p", "no:cacheprovider", "./my_lab"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    # The starter: the forward tests pass, the gradient tests wait for the student's code.
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.search(r"\d+ failed, \d+ passed", run.stdout), run.stdout
    assert "NotImplementedError: sigmoid_grad: not written yet" in run.stdout
