"""Turning a lab's complete solution into the student's starter file.

A lab is written once, as complete and working code.  The lines a student is
to write are fenced by two comment lines::

    def sigmoid_grad(op, grad):
        # BEGIN SOLUTION return [dL/dx], built from y = op.outputs[0] and grad
        y = op.outputs[0]
        return [grad * y * (1.0 - y)]
        # END SOLUTION

:func:`make_starter` replaces each fenced region, markers included, by a hint
comment and a ``raise NotImplementedError`` at the indentation of its
``BEGIN`` line; everything outside the regions is copied unchanged::

    def sigmoid_grad(op, grad):
        # TODO: return [dL/dx], built from y = op.outputs[0] and grad
        raise NotImplementedError('sigmoid_grad: not written yet (see the TODO above, ...)')

The text after ``# BEGIN SOLUTION`` (optional) becomes the TODO's hint; the
error names the enclosing function, and pytest's traceback of a failing test
shows both lines.

So a starter is always generated from code that the project's tests have
run, never the other way round (nbgrader's ``### BEGIN SOLUTION`` convention,
in plain Python files).
"""

import re

BEGIN_MARKER = "# BEGIN SOLUTION"
END_MARKER = "# END SOLUTION"

_BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION(?:$|[ \t:]+(?P<hint>.*?))[ \t]*$")
_END = re.compile(r"^(?P<indent>[ \t]*)# END SOLUTION[ \t]*$")
_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)")

DEFAULT_HINT = "write this part (see README.md)"
_NOT_WRITTEN = "not written yet (see the TODO above, and README.md)"


def make_starter(source, filename="<lab>", default_hint=DEFAULT_HINT, not_written=_NOT_WRITTEN):
    """Returns ``source`` with every solution region replaced by a ``raise``.

    Args:
        source: the text of a complete lab module.
        filename: named in error messages.
        default_hint: the TODO of a ``BEGIN`` line that gives no hint.
        not_written: what the ``NotImplementedError`` says after the
            function's name (a notebook's exercises point at the cell
            rather than at a README).

    Returns:
        The starter text.  A source without markers is returned unchanged.

    Raises:
        ValueError: for an ``END`` without a ``BEGIN``, a ``BEGIN`` inside a
            region or never closed, or an ``END`` indented differently from
            its ``BEGIN`` — the message names the file and line.

    Example:
        >>> print(make_starter("def f():\\n    # BEGIN SOLUTION\\n    return 1\\n"
        ...                    "    # END SOLUTION\\n"), end="")
        def f():
            # TODO: write this part (see README.md)
            raise NotImplementedError('f: not written yet (see the TODO above, and README.md)')
    """
    out = []
    region = None  # (line number, indent, hint, enclosing function) while inside one
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        begin, end = _BEGIN.match(text), _END.match(text)
        if region is None:
            if end:
                raise ValueError("%s:%d: '%s' without a '%s' before it"
                                 % (filename, number, END_MARKER, BEGIN_MARKER))
            if begin:
                function = _enclosing_function(lines[:number - 1], begin.group("indent"))
                region = (number, begin.group("indent"), begin.group("hint") or default_hint,
                          function)
            else:
                out.append(line)
            continue
        start, indent, hint, function = region
        if begin:
            raise ValueError("%s:%d: '%s' inside the region opened at line %d (regions do "
                             "not nest)" % (filename, number, BEGIN_MARKER, start))
        if end:
            if end.group("indent") != indent:
                raise ValueError("%s:%d: '%s' is not indented like the '%s' of line %d"
                                 % (filename, number, END_MARKER, BEGIN_MARKER, start))
            newline = line[len(text):] or "\n"
            out.append("%s# TODO: %s%s" % (indent, hint, newline))
            message = "%s: %s" % (function or "this part", not_written)
            out.append("%sraise NotImplementedError(%r)%s" % (indent, message, newline))
            region = None
    if region is not None:
        raise ValueError("%s:%d: '%s' is never closed by '%s'"
                         % (filename, region[0], BEGIN_MARKER, END_MARKER))
    return "".join(out)


def has_solution_markers(source):
    """True when ``source`` has at least one ``# BEGIN SOLUTION`` line."""
    return any(_BEGIN.match(line) for line in source.splitlines())


def _enclosing_function(previous_lines, indent):
    """The name of the innermost ``def`` enclosing a line indented by ``indent``, or None.

    Walks back over the lines before it: each less indented statement is a
    block that encloses it, until one is a ``def`` (or the module level is
    reached).  Blank lines, comments and the closing bracket of a multi-line
    signature are skipped.
    """
    threshold = len(indent)
    for line in reversed(previous_lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ")", "]", "}")):
            continue
        line_indent = len(line) - len(line.lstrip(" \t"))
        if line_indent >= threshold:
            continue
        match = _DEF.match(line)
        if match:
            return match.group("name")
        threshold = line_indent
        if threshold == 0:
            return None
    return None
