"""Every course notebook runs from top to bottom, and is stored without outputs.

Each ``notebooks/*.ipynb`` is executed with nbclient in a fresh ``python3``
kernel (this interpreter's ipykernel) whose working directory is the
notebook's own folder, as Jupyter starts it, at most 120 s per cell.  A
failure reports the failing cell and its error.  The notebooks are stored
with their exercises' starters, so every check cell must say FAIL (the
exercises' own tests are in ``test_notebook_exercises.py``).  Some notebooks
are run a second time: what they print must not change from run to run,
once temporary paths and timings are masked.  The OpenCL notebook also runs
as it does without a GPU, on its stand-in device.
"""

import pathlib
import re
import tempfile

import pytest

from minitf.labs import exercises

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 120
_ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")

# Notebooks cheap enough to run twice, whose printed numbers must be the same each time.
DETERMINISTIC = ["02_autodiff.ipynb", "03_linear_regression.ipynb",
                 "05_estimators_iris.ipynb", "08_control_flow.ipynb"]
# What legitimately differs between runs: temporary directories, durations, addresses.
_VOLATILE = [(re.compile(r"events\.out\.tfevents\.[^\s'\",]*"), "<event file>"),
             (re.compile(re.escape(tempfile.gettempdir()) + r"[^\s'\",)\]]*"), "<tmp>"),
             (re.compile(r"\d+(\.\d+)?\s*(s|ms|µs|us|sec)\b"), "<time>"),
             (re.compile(r"0x[0-9a-f]+"), "<address>")]

_executed = {}  # notebook path -> the executed notebook, from the first run


def _ids(paths):
    return [p.name for p in paths]


def _execute(path):
    """Runs the notebook in its own folder; returns the executed notebook."""
    notebook = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        # The message holds the failing cell's source and its traceback.
        pytest.fail("%s failed:\n%s" % (path.name, _ANSI_COLOUR.sub("", str(error))),
                    pytrace=False)
    except nbclient.exceptions.CellTimeoutError as error:
        pytest.fail("%s: a cell ran longer than %d s:\n%s" % (path.name, CELL_TIMEOUT_S, error),
                    pytrace=False)
    return notebook


def _printed(notebook):
    """Each code cell's text output, with the volatile parts masked."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        # Per stream: a cell's prints and its log lines (stderr) may interleave
        # differently from one run to the next.
        streams = {}
        for output in cell.outputs:
            key = output.get("name", "data")
            streams[key] = streams.get(key, "") + output.get("text", "") + \
                output.get("data", {}).get("text/plain", "")
        text = "".join(streams[key] for key in sorted(streams))
        for pattern, mask in _VOLATILE:
            text = pattern.sub(mask, text)
        texts.append(text)
    return texts


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found in %s" % (ROOT / "notebooks")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path):
    notebook = _executed[path] = _execute(path)
    for cell in notebook.cells:
        if cell.cell_type == "code" and exercises.checked_ids(cell.source):
            printed = "".join(output.get("text", "") for output in cell.outputs)
            assert set(exercises.verdicts(printed).values()) == {"FAIL"}, (
                "%s: a check cell should say FAIL on its starter, but printed:\n%s"
                % (path.name, printed))


@pytest.mark.parametrize("name", DETERMINISTIC)
def test_notebook_prints_the_same_numbers_each_run(name):
    path = ROOT / "notebooks" / name
    first = _executed.get(path) or _execute(path)
    second = _execute(path)
    for index, (a, b) in enumerate(zip(_printed(first), _printed(second))):
        assert a == b, "%s: code cell %d printed something else the second time:\n%s\n---\n%s" % (
            name, index, a, b)


def test_opencl_notebook_uses_a_stand_in_without_a_gpu(monkeypatch):
    # The kernel inherits this environment: the OpenCL plugin then chooses no device.
    monkeypatch.setenv("MINITF_OPENCL_DEVICES", "none")
    (path,) = (ROOT / "notebooks").glob("07_*.ipynb")
    printed = "".join(_printed(_execute(path)))
    assert "Using the stand-in accelerator /cpu:1" in printed
    assert "device:CPU:1" in printed and "device:GPU" not in printed.split("soft placement")[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    dirty = [i for i, cell in enumerate(notebook.cells)
             if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)]
    assert not dirty, ("%s has outputs in cells %s; clear them before committing "
                       "(Jupyter: Edit > Clear All Outputs)" % (path.name, dirty))
