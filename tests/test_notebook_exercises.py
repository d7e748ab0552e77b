"""The exercises of the course notebooks: the starter fails its check, the solution passes.

Each notebook ends with 2-4 exercises (:mod:`minitf.labs.exercises`): a
starter cell generated from the solution stored in
``notebooks/solutions/<notebook>.py``, and a check cell printing
``Exercise N.M: PASS`` or ``FAIL``.  For each notebook this runs, in one fresh
kernel started in the notebook's folder (as Jupyter starts it), the cells
tagged ``exercise-setup`` and then, per exercise, the starter, its check
(which must say FAIL), the stored solution in the starter's place, and the
check again (which must say PASS).  Only the tagged cells run, so the
exercises must not depend on the rest of the notebook: that keeps this fast.
"""

import pathlib
import re

import pytest

from minitf.labs import exercises

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 120
SETUP_TAG = "exercise-setup"
_ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _ids(paths):
    return [p.name for p in paths]


def _solutions(path):
    solutions_file = exercises.solutions_path(path)
    assert solutions_file.is_file(), "%s has no solutions file %s" % (path.name, solutions_file)
    return exercises.read_solutions(solutions_file.read_text(encoding="utf-8"),
                                    str(solutions_file))


def _code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _starters(notebook):
    """``{exercise id: starter cell}``, in notebook order."""
    return {exercises.starter_id(cell.source): cell for cell in _code_cells(notebook)
            if exercises.starter_id(cell.source)}


def _checks(notebook):
    """``{exercise id: check cell}``."""
    return {exercise: cell for cell in _code_cells(notebook)
            for exercise in exercises.checked_ids(cell.source)}


def _stdout(cell):
    return "".join(output.get("text", "") for output in cell.outputs
                   if output.output_type == "stream" and output.name == "stdout")


def test_there_is_a_solutions_file_for_each_notebook_and_no_other():
    files = {path.stem for path in (NOTEBOOK_DIR / "solutions").glob("*.py")}
    assert files == {path.stem for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_two_to_four_exercises_each_with_a_solution_and_a_check(path):
    notebook = nbformat.read(str(path), as_version=4)
    starters, checks, solutions = _starters(notebook), _checks(notebook), _solutions(path)
    assert 2 <= len(starters) <= 4, "%s has %d exercises" % (path.name, len(starters))
    assert list(starters) == list(solutions), "the starter cells and the solutions differ"
    assert set(checks) == set(starters), "every exercise needs exactly its check cell"
    number = str(int(path.name[:2]))
    assert all(exercise.split(".")[0] == number for exercise in starters), (
        "the exercises of %s are numbered %s.1, %s.2, ..." % (path.name, number, number))
    cells = notebook.cells
    for exercise, starter in starters.items():
        assert cells.index(checks[exercise]) > cells.index(starter), (
            "the check of %s comes after its starter" % exercise)
    assert any(SETUP_TAG in cell.metadata.get("tags", []) for cell in cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_starter_cells_are_generated_from_the_solutions(path):
    notebook = nbformat.read(str(path), as_version=4)
    for exercise, solution in _solutions(path).items():
        starter = _starters(notebook)[exercise].source
        assert "# TODO" in starter and "NotImplementedError" in starter
        assert starter == exercises.starter_cell(solution).rstrip("\n"), (
            "the starter of exercise %s is not the one generated from its solution: run "
            "minitf.labs.exercises.sync_notebook(%r)" % (exercise, str(path)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_each_check_fails_on_the_starter_and_passes_on_the_solution(path):
    notebook = nbformat.read(str(path), as_version=4)
    starters, checks, solutions = _starters(notebook), _checks(notebook), _solutions(path)
    new_cell = nbformat.v4.new_code_cell
    cells = [new_cell(cell.source) for cell in notebook.cells
             if SETUP_TAG in cell.metadata.get("tags", [])]
    expected = []  # (check cell run, exercise, verdict)
    for exercise, starter in starters.items():
        for source, verdict in ((starter.source, "FAIL"), (solutions[exercise], "PASS")):
            check = new_cell(checks[exercise].source)
            cells += [new_cell(source), check]
            expected.append((check, exercise, verdict))
    run = nbformat.v4.new_notebook(cells=cells, metadata=notebook.metadata)
    client = nbclient.NotebookClient(run, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        pytest.fail("%s: an exercise cell failed:\n%s"
                    % (path.name, _ANSI_COLOUR.sub("", str(error))), pytrace=False)
    for check, exercise, verdict in expected:
        output = _stdout(check)
        assert exercises.verdicts(output).get(exercise) == verdict, (
            "%s, exercise %s: the check should say %s on the %s, but printed:\n%s"
            % (path.name, exercise, verdict,
               "starter" if verdict == "FAIL" else "stored solution", output))


# ---- minitf.labs.exercises on its own ------------------------------------------------------

def test_check_prints_pass_or_fail_and_never_raises(capsys):
    with exercises.check("0.1"):
        assert 1 + 1 == 2
    with exercises.check("0.2"):
        raise AssertionError("1 + 1 is not 3")   # what a failed assert in a check cell raises
    with exercises.check("0.3"):
        raise NotImplementedError("f: not written yet")
    with exercises.check("0.4"):
        {}["missing"]
    printed = capsys.readouterr().out
    assert printed.splitlines() == [
        "Exercise 0.1: PASS",
        "Exercise 0.2: FAIL - 1 + 1 is not 3",
        "Exercise 0.3: FAIL - f: not written yet",
        "Exercise 0.4: FAIL - your code raised KeyError: 'missing'"]
    assert exercises.verdicts(printed) == {"0.1": "PASS", "0.2": "FAIL", "0.3": "FAIL",
                                           "0.4": "FAIL"}


def test_check_lets_keyboard_interrupt_through():
    with pytest.raises(KeyboardInterrupt):
        with exercises.check("0.1"):
            raise KeyboardInterrupt


SOLUTIONS = '''"""Solutions."""

import minitf as tf

# %% Exercise 3.1
# Exercise 3.1: add one.
def add_one(x):
    # BEGIN SOLUTION return x + 1
    return x + 1
    # END SOLUTION

# %% Exercise 3.2
# Exercise 3.2: nothing to write.
print("hello")
'''


def test_read_solutions_splits_the_sections_and_starters_raise():
    solutions = exercises.read_solutions(SOLUTIONS)
    assert list(solutions) == ["3.1", "3.2"]
    assert solutions["3.2"] == '# Exercise 3.2: nothing to write.\nprint("hello")\n'
    starter = exercises.starter_cell(solutions["3.1"])
    assert starter == (
        "# Exercise 3.1: add one.\n"
        "def add_one(x):\n"
        "    # TODO: return x + 1\n"
        "    raise NotImplementedError(\"add_one: not written yet (see the TODO in the "
        "exercise's cell)\")\n")
    assert exercises.starter_id(starter) == "3.1"
    assert exercises.checked_ids('with check("3.1"):\n    pass') == ["3.1"]


@pytest.mark.parametrize("text, message", [
    ("# %% Exercise 1.1\n# Exercise 1.2: wrong number\n", "must start with '# Exercise 1.1"),
    ("# %% Exercise 1.1\nprint(1)\n", "must start with '# Exercise 1.1"),
    ("# %% Exercise 1.1\n# Exercise 1.1: a\n# %% Exercise 1.1\n# Exercise 1.1: b\n",
     "appears twice"),
])
def test_read_solutions_rejects_malformed_sections(text, message):
    with pytest.raises(ValueError, match=message):
        exercises.read_solutions(text, "solutions.py")


def test_sync_notebook_rewrites_only_the_starter_cells(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "03_x.py").write_text(SOLUTIONS, encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Exercise 3.1: not code, left alone"),
        nbformat.v4.new_code_cell("# Exercise 3.1: add one.\nold text"),
        nbformat.v4.new_code_cell('with check("3.1"):\n    assert add_one(1) == 2')])
    path = tmp_path / "03_x.ipynb"
    nbformat.write(notebook, str(path))
    assert exercises.sync_notebook(path) == ["3.1"]
    synced = nbformat.read(str(path), as_version=4)
    assert synced.cells[0].source == notebook.cells[0].source
    assert synced.cells[1].source == exercises.starter_cell(
        exercises.read_solutions(SOLUTIONS)["3.1"]).rstrip("\n")
    assert synced.cells[2].source == notebook.cells[2].source
    assert exercises.sync_notebook(path) == []            # already in sync: nothing written
    nbformat.validate(synced)


def test_sync_notebook_refuses_a_starter_without_solution(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "03_x.py").write_text(SOLUTIONS, encoding="utf-8")
    path = tmp_path / "03_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("# Exercise 3.9: no such solution\n")]), str(path))
    with pytest.raises(ValueError, match="exercise 3.9 has no solution"):
        exercises.sync_notebook(path)
