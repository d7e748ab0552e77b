"""``python -m minitf new-plugin NAME``: a ready plugin package, written from templates.

The files under ``plugin-package/`` are the package, with ``${name}`` placeholders
(:class:`string.Template`) in their text and ``__package__``/``__base__`` in
their paths; each ends in ``.tmpl`` so that no tool takes a template for
minitf's own code, and the folder's name is no identifier, so that setuptools
does not take its folders for packages either.  For ``NAME`` = ``soft-clip`` they become:

============  =====================  =========================================
placeholder   example                what
============  =====================  =========================================
``base``      ``soft_clip``          file names; the entry-point name
``dist``      ``minitf-soft-clip``   the distribution (``pip install``) name
``package``   ``minitf_soft_clip``   the import name
``entry``     ``soft_clip``          the name in entry-point group ``minitf``
``op_type``   ``SoftClip``           the op's type
``func``      ``soft_clip``          the Python wrapper
``const``     ``SOFT_CLIP``          the module constant holding its OpDef
============  =====================  =========================================

The package is the recipe of ``docs/plugin_tools.rst`` made concrete: an op
with typed attrs, a shape function, a CPU kernel, an OpenCL kernel registered
only where ``pyopencl`` exists, a gradient, and tests that use
:func:`minitf.test.opcheck` and the ``gradcheck`` fixtures.  Its tests pass as
written (``tests/test_new_plugin_template.py`` installs it and runs them).
"""

import importlib.resources
import os
import re
import string

TEMPLATE = "plugin-package"
_NAME = re.compile(r"^[a-z][a-z0-9]*([_-][a-z0-9]+)*$")


def names(name):
    """The names of the package for plugin ``name`` (see the table above).

    Raises:
        ValueError: if ``name`` is not lower-case letters and digits,
            words separated by ``-`` or ``_``.
    """
    base = re.sub(r"^minitf[-_]", "", name.strip())
    if not _NAME.match(base):
        raise ValueError("A plugin name is lower-case letters and digits, words separated "
                         "by '-' or '_' (e.g. 'soft-clip'), not %r" % name)
    words = re.split(r"[-_]", base)
    snake = "_".join(words)
    return {"base": snake, "dist": "minitf-" + "-".join(words), "package": "minitf_" + snake,
            "entry": snake, "op_type": "".join(w.capitalize() for w in words), "func": snake,
            "const": snake.upper()}


def render(name):
    """``{relative path: text}`` of every file of the package for ``name``."""
    values = names(name)
    files = {}
    for path, template in _templates(importlib.resources.files(__package__) / TEMPLATE, ""):
        target = (path.removesuffix(".tmpl").replace("__package__", values["package"])
                  .replace("__base__", values["base"]))
        files[target] = string.Template(template).substitute(values)
    return files


def _templates(folder, prefix):
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        path = prefix + entry.name
        if entry.is_dir():
            yield from _templates(entry, path + "/")
        elif entry.name.endswith(".tmpl"):
            yield path, entry.read_text()


def write_plugin(name, directory="."):
    """Writes the package for plugin ``name`` into ``directory/<dist>``; returns that path.

    Raises:
        ValueError: for a bad name (see :func:`names`).
        FileExistsError: if the package folder already exists: nothing is overwritten.
    """
    root = os.path.join(directory, names(name)["dist"])
    files = render(name)  # first, so that a bad name or template writes nothing
    if os.path.exists(root):
        raise FileExistsError("%s already exists; nothing was written" % root)
    os.makedirs(root)
    for relative, text in files.items():
        path = os.path.join(root, *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return root
