"""The Python code blocks of the plugin and lab pages run, as a reader would run them.

Every ``.. code-block:: python`` block, and every ``::`` literal block that
is Python (it parses, and is not a shell session or a program's output), is
run as a script in a fresh interpreter whose working directory is shared by
the page's blocks, in page order.  Two reST comments, placed on the line
before a block's directive (or before the paragraph that ends in ``::``), or
on the first line after the block, at its paragraph's indentation, say how a
block is used:

``.. docs-test: file NAME.py``
    The block is a module the reader saves as ``NAME.py``: it is written
    there (and imported once, to check it), and later blocks may import it.
``.. docs-test: fragment -- why``
    The block is part of a larger program (a function body shown alone, a
    line to put into a test file); it must still be valid Python, but it is
    not run.
"""

import ast
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = ["docs/plugins.rst", "docs/labs.rst"]

_DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\S+)")
_MARKER = re.compile(r"^\s*\.\. docs-test:\s*(file|fragment)\s*(.*)$")


def _indent(line):
    return len(line) - len(line.lstrip())


def _block_after(lines, start, indent):
    """The indented block beginning after line ``start`` (skipping blank lines
    and directive options), dedented; and the index after it."""
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith(":")
                              and _indent(lines[i]) > indent):
        i += 1
    body = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    depth = min(_indent(line) for line in body if line.strip())
    return "\n".join(line[depth:] for line in body) + "\n", i


def _paragraph_start(lines, i):
    while i > 0 and lines[i - 1].strip():
        i -= 1
    return i


def _marker(lines, before, after):
    """The ``docs-test`` marker on the line before line ``before`` or on the
    line from ``after`` on (blank lines skipped): ``(kind, argument)``."""
    i = before - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    j = after
    while j < len(lines) and not lines[j].strip():
        j += 1
    for candidate in (lines[i] if i >= 0 else "", lines[j] if j < len(lines) else ""):
        match = _MARKER.match(candidate)
        if match:
            return match.group(1), match.group(2).strip()
    return "run", ""


def is_python(code):
    """True for a literal block of Python: it parses and is not a shell session
    (``$ ...``), a traceback or other output that happens to parse."""
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if first.startswith(("$", ">>>", "Traceback")):
        return False
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    # Lone expressions and bare annotations ("KeyError: 'x'") are output, not a program.
    return not all(isinstance(node, ast.Expr) or isinstance(node, ast.AnnAssign)
                   and node.value is None for node in tree.body)


def code_blocks(text):
    """``[(line, kind, argument, code)]`` of a page's Python blocks, in order;
    ``kind`` is ``"run"``, ``"file"`` or ``"fragment"``."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive:
            code, end = _block_after(lines, i, _indent(line))
            if directive.group(2) == "python":
                blocks.append((i + 1, *_marker(lines, i, end), code))
            i = end
        elif line.rstrip().endswith("::") and not line.strip().startswith(".."):
            code, end = _block_after(lines, i, _indent(line))
            if is_python(code):
                blocks.append((i + 2, *_marker(lines, _paragraph_start(lines, i), end), code))
            i = end
        else:
            i += 1
    return blocks


def page_blocks():
    for page in PAGES:
        for line, kind, argument, code in code_blocks((ROOT / page).read_text()):
            yield pytest.param(page, line, kind, argument, code, id="%s:%d" % (page, line))


def test_the_extractor_finds_both_kinds_of_block_and_honours_markers():
    text = ("Intro::\n\n    x = 1\n    print(x)\n\nShell::\n\n    $ pytest\n\n"
            ".. docs-test: fragment -- a body\n\nA body::\n\n    return x\n\n"
            "Another::\n\n    y = x\n\n.. docs-test: fragment\n\n"
            ".. docs-test: file mod.py\n\n.. code-block:: python\n\n    VALUE = 2\n\n"
            ".. code-block:: toml\n\n    [project]\n\nOutput::\n\n    KeyError: 'x'\n")
    blocks = [(kind, argument, code) for _, kind, argument, code in code_blocks(text)]
    assert blocks == [("run", "", "x = 1\nprint(x)\n"), ("fragment", "-- a body", "return x\n"),
                      ("fragment", "", "y = x\n"), ("file", "mod.py", "VALUE = 2\n")]


@pytest.fixture(scope="module")
def workdirs(tmp_path_factory):
    """One working directory per page, shared by its blocks in page order."""
    return {page: tmp_path_factory.mktemp(pathlib.Path(page).stem) for page in PAGES}


@pytest.mark.parametrize("page, line, kind, argument, code", list(page_blocks()))
def test_code_block_runs(page, line, kind, argument, code, workdirs):
    if kind == "fragment":
        ast.parse(code, "%s:%d" % (page, line))  # still Python, though not run
        return
    workdir = workdirs[page]
    if kind == "file":
        (workdir / argument).write_text(code)
        script = "import %s\n" % pathlib.Path(argument).stem
    else:
        script = code
    result = subprocess.run([sys.executable, "-c", script], cwd=workdir, capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, "the block at %s:%d failed:\n%s\n%s" % (
        page, line, code, result.stderr[-3000:])
