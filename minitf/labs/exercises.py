"""The exercises at the end of each course notebook: starter cells, check cells, solutions.

An exercise in ``notebooks/NN_topic.ipynb`` is two code cells:

* a **starter cell**, whose first line is ``# Exercise N.M: <what to do>``: a
  function for the student to complete, each part to write being a
  ``# TODO`` comment followed by ``raise NotImplementedError(...)``;
* a **check cell** that calls the function inside ``with check("N.M"):``
  and prints one line, ``Exercise N.M: PASS`` or ``Exercise N.M: FAIL -
  <what is wrong>``.  It never raises, so *Run All* goes on to the next
  exercise.

Exactly as for the gradient labs (:mod:`minitf.labs`), the solution is
written once, as complete code, and the starter is generated from it: the
solutions of ``notebooks/NN_topic.ipynb`` are the sections of
``notebooks/solutions/NN_topic.py``, each headed by a ``# %% Exercise N.M``
line (the "percent" cell format that Jupytext, VS Code and PyCharm read),
with the student's part fenced by ``# BEGIN SOLUTION`` / ``# END
SOLUTION``.  :func:`starter_cell` turns a solution into the starter cell's
text with :func:`minitf.labs.starter.make_starter`.

The project's tests (``tests/test_notebook_exercises.py``) run every
exercise both ways: its check must say FAIL on the starter, PASS on the
stored solution, and the notebook's starter cell must be the one generated
from the solution.
"""

import contextlib
import json
import os
import pathlib
import re

from minitf.labs.starter import make_starter

SECTION = re.compile(r"^# %% Exercise (?P<id>\d+\.\d+)[ \t]*$", re.MULTILINE)
STARTER_FIRST_LINE = re.compile(r"^# Exercise (?P<id>\d+\.\d+): ")
CHECK_CALL = re.compile(r"""check\(["'](?P<id>\d+\.\d+)["']\)""")
RESULT_LINE = re.compile(r"^Exercise (?P<id>\d+\.\d+): (?P<verdict>PASS|FAIL)", re.MULTILINE)

NOT_WRITTEN = "not written yet (see the TODO in the exercise's cell)"
DEFAULT_HINT = "write this part"


@contextlib.contextmanager
def check(exercise):
    """Runs the block as the check of exercise ``exercise`` and prints its verdict.

    The block calls the student's function and asserts on the result; an
    ``assert``'s message is what the student reads.  Nothing escapes the
    block: a starter's ``NotImplementedError``, a failed assertion or any
    other error becomes a ``FAIL`` line, so that running all the cells of
    a notebook reaches every exercise.

    Example:
        >>> with check("0.1"):
        ...     assert 1 + 1 == 3, "1 + 1 should be 3"
        Exercise 0.1: FAIL - 1 + 1 should be 3
    """
    try:
        yield
    except NotImplementedError as error:
        print("Exercise %s: FAIL - %s" % (exercise, error))
    except AssertionError as error:
        print("Exercise %s: FAIL - %s" % (exercise, error or "a check did not hold"))
    except Exception as error:  # the student's code failed: say how, and go on
        print("Exercise %s: FAIL - your code raised %s: %s"
              % (exercise, type(error).__name__, error))
    else:
        print("Exercise %s: PASS" % exercise)


def read_solutions(text, filename="<solutions>"):
    """The solutions of one notebook: ``{exercise id: cell source}``, in file order.

    ``text`` is a solutions file: a module docstring or comments, then one
    section per exercise headed by ``# %% Exercise N.M``.  A section's
    source is what follows its heading, without surrounding blank lines.

    Raises:
        ValueError: if an exercise appears twice, or a section's first line
            is not ``# Exercise N.M: ...`` with the same N.M.
    """
    headings = list(SECTION.finditer(text))
    solutions = {}
    for heading, following in zip(headings, headings[1:] + [None]):
        exercise = heading.group("id")
        end = following.start() if following else len(text)
        source = text[heading.end():end].strip("\n") + "\n"
        first = STARTER_FIRST_LINE.match(source)
        if exercise in solutions:
            raise ValueError("%s: exercise %s appears twice" % (filename, exercise))
        if not first or first.group("id") != exercise:
            raise ValueError("%s: the section of exercise %s must start with '# Exercise %s: "
                             "<what to do>'" % (filename, exercise, exercise))
        solutions[exercise] = source
    return solutions


def starter_cell(solution, filename="<solution>"):
    """The starter cell of a solution: its fenced regions become TODOs that raise."""
    return make_starter(solution, filename=filename, default_hint=DEFAULT_HINT,
                        not_written=NOT_WRITTEN)


def starter_id(source):
    """The exercise a code cell starts, from its first line; None for other cells."""
    match = STARTER_FIRST_LINE.match(source)
    return match.group("id") if match else None


def checked_ids(source):
    """The exercises a code cell checks (its ``check("N.M")`` calls)."""
    return [match.group("id") for match in CHECK_CALL.finditer(source)]


def verdicts(output):
    """``{exercise id: "PASS" or "FAIL"}`` from the printed output of check cells."""
    return {match.group("id"): match.group("verdict") for match in RESULT_LINE.finditer(output)}


def solutions_path(notebook_path):
    """Where a notebook's solutions are kept: ``solutions/<notebook stem>.py`` beside it."""
    notebook_path = pathlib.Path(notebook_path)
    return notebook_path.parent / "solutions" / (notebook_path.stem + ".py")


def sync_notebook(notebook_path):
    """Rewrites the starter cells of a notebook from its solutions file (for instructors).

    Each code cell whose first line is ``# Exercise N.M: ...`` gets the
    starter generated from solution N.M; the rest of the notebook is
    untouched.  Run it after editing a solution::

        python -c "from minitf.labs.exercises import sync_notebook; \\
                   sync_notebook('notebooks/03_linear_regression.ipynb')"

    Returns:
        The ids of the exercises whose starter cell changed.

    Raises:
        ValueError: if a starter cell has no solution.
    """
    notebook_path = pathlib.Path(notebook_path)
    solutions_file = solutions_path(notebook_path)
    solutions = read_solutions(solutions_file.read_text(encoding="utf-8"), str(solutions_file))
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    changed = []
    for cell in notebook["cells"]:
        exercise = starter_id("".join(cell["source"])) if cell["cell_type"] == "code" else None
        if exercise is None:
            continue
        if exercise not in solutions:
            raise ValueError("%s: exercise %s has no solution in %s"
                             % (notebook_path, exercise, solutions_file))
        starter = starter_cell(solutions[exercise], "%s (exercise %s)" % (solutions_file,
                                                                          exercise)).rstrip("\n")
        if "".join(cell["source"]) != starter:
            cell["source"] = starter.splitlines(keepends=True)
            changed.append(exercise)
    if changed:
        # Jupyter's own layout (nbformat's writer), so that a diff shows only the cells.
        text = json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        temporary = notebook_path.with_name(notebook_path.name + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, notebook_path)
    return changed
