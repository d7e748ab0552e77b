"""Every course notebook runs from top to bottom, and is stored without outputs.

Each ``notebooks/*.ipynb`` is executed with nbclient in a fresh ``python3``
kernel (this interpreter's ipykernel), working directory the repository root,
at most 120 s per cell.  A failure reports the failing cell and its error.
"""

import pathlib
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 120
_ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _ids(paths):
    return [p.name for p in paths]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found in %s" % (ROOT / "notebooks")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path):
    notebook = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        # The message holds the failing cell's source and its traceback.
        pytest.fail("%s failed:\n%s" % (path.name, _ANSI_COLOUR.sub("", str(error))),
                    pytrace=False)
    except nbclient.exceptions.CellTimeoutError as error:
        pytest.fail("%s: a cell ran longer than %d s:\n%s" % (path.name, CELL_TIMEOUT_S, error),
                    pytrace=False)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    dirty = [i for i, cell in enumerate(notebook.cells)
             if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)]
    assert not dirty, ("%s has outputs in cells %s; clear them before committing "
                       "(Jupyter: Edit > Clear All Outputs)" % (path.name, dirty))
