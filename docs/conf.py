"""Sphinx configuration for minitf's documentation.

Built by ``make docs`` with ``-W`` (warnings are errors) and no network:
intersphinx is off and the theme is alabaster, which ships with Sphinx.
"""

import os
import sys

# minitf is installed editable in the venv; the path entries make a plain
# checkout build too (the bundled NumPy plugin installs as minitf_numpy_cpu).
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import minitf  # noqa: E402

project = "minitf"
author = "the minitf authors"
copyright = "the minitf authors, Apache-2.0"
release = minitf.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build"]
templates_path = ["_templates"]

# api.rst lists the packages; autosummary writes one page per module into
# docs/generated/ (git-ignored) at every build, so new modules appear by
# themselves.  The template (_templates/autosummary/module.rst) documents a
# module's own members and recurses into its submodules.
autosummary_generate = True
autosummary_generate_overwrite = True
nitpicky = False
html_theme = "alabaster"
html_static_path = []
html_theme_options = {
    "description": "TensorFlow 1.x's design in readable Python",
    "fixed_sidebar": True,
}

# Docstrings are Google style (STYLE.md 7).  Attributes sections become
# ``:ivar:`` fields so that a dataclass's fields are not described twice.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True
napoleon_include_init_with_doc = False

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"
# Dataclass fields also appear as undocumented class attributes; Attributes
# sections already describe them.
autodoc_class_signature = "mixed"

# Sections some modules use beyond napoleon's own (minitf.test.pytest_plugin).
napoleon_custom_sections = [("Fixtures", "params_style"), ("Marker", "params_style")]
