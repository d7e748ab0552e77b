"""The gradient-check labs: the starter generator, ``python -m minitf.labs``, every lab
run both ways, and minitf's pytest plugin as a student's test file sees it.

Every lab is run in a subprocess, as a student runs it (``pytest <folder>``
in a folder of its own, no conftest.py): the starter must fail with
NotImplementedError, the solution must pass.
"""

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

from minitf import labs
from minitf.labs import __main__ as labs_cli
from minitf.labs.starter import has_solution_markers, make_starter

LAB_ROOT = pathlib.Path(labs.__file__).parent / labs.LAB_FILES


def _pytest(folder, *args):
    """Runs pytest on ``folder`` in a fresh process, as a student would."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-W", "error::pytest.PytestUnknownMarkWarning", *args, str(folder)],
        capture_output=True, text=True, cwd=str(folder), env=env, timeout=300)


def _counts(output):
    """``{"passed": n, "failed": m, ...}`` from pytest's last summary line."""
    last = output.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last)}


# ---- the catalogue -------------------------------------------------------------------------

def test_the_labs_in_teaching_order():
    assert labs.list_labs() == ["sigmoid", "dense", "softmax_cross_entropy", "max_pool"]


def test_every_lab_folder_is_listed_and_complete():
    folders = {path.name for path in LAB_ROOT.iterdir() if path.is_dir()
               and path.name != "__pycache__"}
    assert folders == set(labs.list_labs())
    for name in labs.list_labs():
        lab = labs.get_lab(name)
        assert lab.files == ("README.md", "lab_%s.py" % name, "test_%s.py" % name)
        for file_name, resource in labs.lab_files(name).items():
            assert resource.is_file(), "%s/%s is missing" % (name, file_name)


@pytest.mark.parametrize("name", labs.list_labs())
def test_each_solution_is_marked_and_its_starter_is_valid_python(name):
    lab = labs.get_lab(name)
    shipped = {f: r.read_text(encoding="utf-8") for f, r in labs.lab_files(name).items()}
    starter = labs.starter_files(name)
    assert has_solution_markers(shipped[lab.module_file])
    module = starter[lab.module_file]
    compile(module, lab.module_file, "exec")
    assert "SOLUTION" not in module
    assert "raise NotImplementedError(" in module
    assert starter["README.md"] == shipped["README.md"]
    assert starter[lab.test_file] == shipped[lab.test_file]
    assert not has_solution_markers(shipped[lab.test_file])


@pytest.mark.parametrize("name", labs.list_labs())
def test_each_lab_registers_gradient_names_of_its_own(name):
    names = {}
    for other in labs.list_labs():
        source = labs.lab_files(other)[labs.get_lab(other).module_file].read_text()
        names[other] = set(re.findall(r'RegisterGradient\("(\w+)"\)', source))
    assert names[name], "lab %s registers no gradient" % name
    for other, registered in names.items():
        if other != name:
            assert not names[name] & registered


# ---- make_starter --------------------------------------------------------------------------

SOLUTION = '''\
import minitf as tf


class Grads:
    def method(self, op, grad):
        """Docstring stays."""
        x = op.inputs[0]
        # BEGIN SOLUTION return [dL/dx] (hint)
        y = x * 2.0
        return [grad * y]
        # END SOLUTION


def top(op, grad):
    if grad is not None:
        # BEGIN SOLUTION
        return [grad]
        # END SOLUTION
    return [None]


# BEGIN SOLUTION: a module-level region
CONSTANT = 1
# END SOLUTION
'''


def test_make_starter_replaces_each_region_by_a_todo_and_a_raise():
    assert make_starter(SOLUTION) == '''\
import minitf as tf


class Grads:
    def method(self, op, grad):
        """Docstring stays."""
        x = op.inputs[0]
        # TODO: return [dL/dx] (hint)
        raise NotImplementedError('method: not written yet (see the TODO above, and README.md)')


def top(op, grad):
    if grad is not None:
        # TODO: write this part (see README.md)
        raise NotImplementedError('top: not written yet (see the TODO above, and README.md)')
    return [None]


# TODO: a module-level region
raise NotImplementedError('this part: not written yet (see the TODO above, and README.md)')
'''


def test_make_starter_keeps_the_indentation_of_the_begin_line():
    source = "def f():\n\tif True:\n\t\t# BEGIN SOLUTION\n\t\treturn 1\n\t\t# END SOLUTION\n"
    starter = make_starter(source)
    assert starter.splitlines()[2:] == [
        "\t\t# TODO: write this part (see README.md)",
        "\t\traise NotImplementedError('f: not written yet (see the TODO above, and README.md)')"]
    compile(starter, "<starter>", "exec")


def test_make_starter_copies_everything_outside_the_regions_unchanged():
    source = "a = 1  \r\n# BEGIN SOLUTION\r\nb = 2\r\n# END SOLUTION\r\n\n\nc = 3"
    starter = make_starter(source)
    assert starter.startswith("a = 1  \r\n# TODO: write this part (see README.md)\r\nraise ")
    assert starter.endswith("README.md)')\r\n\n\nc = 3")


def test_make_starter_leaves_a_source_without_markers_alone():
    source = "x = 1\n# BEGIN SOLUTIONS is not a marker\n"
    assert make_starter(source) == source
    assert not has_solution_markers(source)


def test_make_starter_hint_is_a_safe_string_literal():
    starter = make_starter("def f():\n    # BEGIN SOLUTION it's \"quoted\" \\n\n    pass\n"
                           "    # END SOLUTION\n")
    namespace = {}
    exec(compile(starter, "<starter>", "exec"), namespace)
    with pytest.raises(NotImplementedError, match="^f: not written yet"):
        namespace["f"]()


def test_make_starter_names_the_function_of_a_multi_line_signature():
    source = "def f(\n    a,\n    b,\n):\n    # BEGIN SOLUTION\n    return a\n    # END SOLUTION\n"
    assert "raise NotImplementedError('f: " in make_starter(source)


@pytest.mark.parametrize("source, message", [
    ("x = 1\n# END SOLUTION\n", r"lab_x\.py:2: '# END SOLUTION' without a '# BEGIN SOLUTION'"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n",
     r"lab_x\.py:2: '# BEGIN SOLUTION' inside the region opened at line 1"),
    ("x = 1\n# BEGIN SOLUTION\ny = 2\n", r"lab_x\.py:2: '# BEGIN SOLUTION' is never closed"),
    ("def f():\n    # BEGIN SOLUTION\n    pass\n# END SOLUTION\n",
     r"lab_x\.py:4: '# END SOLUTION' is not indented like the '# BEGIN SOLUTION' of line 2"),
])
def test_make_starter_rejects_malformed_markers(source, message):
    with pytest.raises(ValueError, match=message):
        make_starter(source, filename="lab_x.py")


# ---- start_lab -----------------------------------------------------------------------------

def test_start_lab_writes_readme_starter_and_tests(tmp_path):
    dest = tmp_path / "course" / "my_lab"
    written = labs.start_lab("sigmoid", dest)
    assert written == [dest / "README.md", dest / "lab_sigmoid.py", dest / "test_sigmoid.py"]
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "lab_sigmoid.py",
                                                     "test_sigmoid.py"]
    assert (dest / "lab_sigmoid.py").read_text() == labs.starter_files("sigmoid")["lab_sigmoid.py"]
    assert "NotImplementedError" in (dest / "lab_sigmoid.py").read_text()


def test_start_lab_accepts_a_folder_with_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    labs.start_lab("dense", str(tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "lab_dense.py").exists()


def test_start_lab_refuses_to_overwrite_and_writes_nothing(tmp_path):
    (tmp_path / "lab_sigmoid.py").write_text("my work")
    with pytest.raises(FileExistsError, match=r"Refusing to overwrite .*lab_sigmoid\.py"):
        labs.start_lab("sigmoid", tmp_path)
    assert (tmp_path / "lab_sigmoid.py").read_text() == "my work"
    assert [p.name for p in tmp_path.iterdir()] == ["lab_sigmoid.py"]


def test_starting_a_lab_twice_refuses_the_second_time(tmp_path):
    labs.start_lab("max_pool", tmp_path)
    (tmp_path / "lab_max_pool.py").write_text("my work")
    with pytest.raises(FileExistsError):
        labs.start_lab("max_pool", tmp_path)
    assert (tmp_path / "lab_max_pool.py").read_text() == "my work"


def test_unknown_lab_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"Unknown lab 'sigmod'\. The labs are: sigmoid, dense, "
                                         r"softmax_cross_entropy, max_pool"):
        labs.start_lab("sigmod", tmp_path / "x")
    assert not (tmp_path / "x").exists()


# ---- python -m minitf.labs -----------------------------------------------------------------

def test_cli_list(capsys):
    assert labs_cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[:4]] == labs.list_labs()


def test_cli_start_and_refusal(tmp_path, capsys):
    dest = tmp_path / "my_lab"
    assert labs_cli.main(["start", "softmax_cross_entropy", str(dest)]) == 0
    out = capsys.readouterr().out
    assert "pytest %s" % dest in out
    assert (dest / "lab_softmax_cross_entropy.py").exists()
    assert labs_cli.main(["start", "softmax_cross_entropy", str(dest)]) == 1
    assert "Refusing to overwrite" in capsys.readouterr().err


def test_cli_start_defaults_to_a_folder_named_after_the_lab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert labs_cli.main(["start", "dense"]) == 0
    assert (tmp_path / "dense" / "lab_dense.py").exists()


def test_cli_unknown_lab_and_no_command(capsys):
    assert labs_cli.main(["start", "nope", "somewhere"]) == 1
    assert "Unknown lab 'nope'" in capsys.readouterr().err
    assert labs_cli.main([]) == 2
    assert "start" in capsys.readouterr().out


@pytest.mark.slow
def test_python_dash_m_minitf_labs(tmp_path):
    run = subprocess.run([sys.executable, "-m", "minitf.labs", "start", "sigmoid", "./my_lab"],
                         capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "my_lab" / "lab_sigmoid.py").exists()
    run = subprocess.run([sys.executable, "-m", "minitf.labs", "list"], capture_output=True,
                         text=True, cwd=str(tmp_path), timeout=120)
    assert run.returncode == 0 and "max_pool" in run.stdout


# ---- every lab, run both ways --------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", labs.list_labs())
def test_starter_fails_with_not_implemented_error(name, tmp_path):
    labs.start_lab(name, tmp_path)
    run = _pytest(tmp_path, "--tb=short")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out  # 1: tests failed (2+ would be a collection error)
    counts = _counts(run.stdout)
    assert counts.get("failed", 0) >= 1 and counts.get("passed", 0) >= 1, out
    assert "error" not in counts and "errors" not in counts, out
    raised = re.findall(r"^E\s+NotImplementedError: \w+: not written yet", run.stdout, re.M)
    assert len(raised) == counts["failed"], out  # every failure is a part left to write


@pytest.mark.slow
@pytest.mark.parametrize("name", labs.list_labs())
def test_solution_passes(name, tmp_path):
    for file_name, resource in labs.lab_files(name).items():
        (tmp_path / file_name).write_text(resource.read_text(encoding="utf-8"), encoding="utf-8")
    run = _pytest(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    counts = _counts(run.stdout)
    assert counts["passed"] >= 5 and not {"failed", "error", "errors"} & set(counts), run.stdout


# ---- minitf's pytest plugin, seen from a test file ------------------------------------------

def test_the_plugin_is_registered_through_the_pytest11_entry_point():
    with open(pathlib.Path(__file__).parent.parent / "pyproject.toml", "rb") as f:
        declared = tomllib.load(f)["project"]["entry-points"]["pytest11"]
    assert declared == {"minitf": "minitf.test.pytest_plugin"}
    installed = {e.name: e.value for e in importlib.metadata.entry_points(group="pytest11")}
    assert installed.get("minitf") == "minitf.test.pytest_plugin"


def test_the_plugin_is_loaded_in_this_session(pytestconfig):
    from minitf.test import pytest_plugin
    assert pytestconfig.pluginmanager.is_registered(pytest_plugin)
    markers = pytestconfig.getini("markers")
    assert any(line.startswith("gradient:") for line in markers)


PLUGIN_USER = '''\
import numpy as np
import pytest

import minitf as tf


def test_tf_graph_is_the_default_graph(tf_graph):
    assert tf.get_default_graph() is tf_graph


def test_tf_session_runs_tf_graph(tf_graph, tf_session):
    assert tf_session.graph is tf_graph
    assert tf.get_default_session() is tf_session
    x = tf.placeholder(tf.float64, [2])
    np.testing.assert_allclose(tf_session.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_each_test_gets_a_fresh_graph(tf_graph):
    assert tf_graph.get_operations() == []
    tf.constant(1.0)


@tf.RegisterGradient("PluginUserSquare")
def _square_grad(op, grad):
    return [grad * 2.0 * op.inputs[0]]


@pytest.mark.gradient
def test_gradcheck_identity(gradcheck):
    x = tf.placeholder(tf.float64, [3])
    gradcheck(tf.identity(x), x, [1.0, 2.0, 3.0])


@pytest.mark.gradient
def test_gradcheck_registered_gradient(gradcheck, tf_graph):
    x = tf.placeholder(tf.float32, [2, 2])
    with tf_graph.gradient_override_map({"Square": "PluginUserSquare"}):
        y = tf.square(x)
    gradcheck(y, x, [[1.0, -2.0], [0.5, 3.0]])
'''

PLUGIN_USER_WRONG = '''\
import pytest

import minitf as tf


@tf.RegisterGradient("PluginUserWrongSquare")
def _wrong_square_grad(op, grad):
    return [grad * op.inputs[0]]  # the factor 2 forgotten


@pytest.mark.gradient
def test_wrong_gradient(gradcheck):
    x = tf.placeholder(tf.float64, [3], name="x")
    with tf.get_default_graph().gradient_override_map({"Square": "PluginUserWrongSquare"}):
        y = tf.square(x, name="y")
    gradcheck(y, x, [1.0, 2.0, 3.0])
'''


@pytest.mark.slow
def test_plugin_fixtures_and_marker_need_no_conftest(tmp_path):
    (tmp_path / "test_plugin_user.py").write_text(PLUGIN_USER)
    run = _pytest(tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert _counts(run.stdout) == {"passed": 5}, run.stdout
    run = _pytest(tmp_path, "-m", "gradient")
    assert _counts(run.stdout) == {"passed": 2, "deselected": 3}, run.stdout


@pytest.mark.slow
def test_plugin_gradcheck_failure_says_where_and_by_how_much(tmp_path):
    (tmp_path / "test_plugin_user_wrong.py").write_text(PLUGIN_USER_WRONG)
    run = _pytest(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    message = ("Gradient check failed for input 'x:0' (shape (3,)) of 'y:0': the worst element "
               "is d y:0[2] / d x:0[2]: analytic 3 vs numeric 6 (|difference| 3 > tolerance "
               "7e-06 = atol 1e-06 + rtol 1e-06 * |numeric|)")
    assert message in run.stdout, run.stdout
