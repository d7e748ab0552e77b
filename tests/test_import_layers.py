"""The layering rule of CONTRIBUTING.md, checked on every import in ``minitf/``.

The core is built in layers, and dependencies point down only::

    registry ← framework ← ops ← {autodiff, runtime} ← distributed ← libraries ← API

A module may import from its own layer or from a lower one.  ``autodiff`` and
``runtime`` sit side by side and never import each other; ``distributed`` (the
cluster runtime) sits beside ``runtime`` and builds on it, so it may import
``runtime`` but ``runtime`` never imports it.  Nothing in
``minitf/`` imports a backend (the packages in ``plugins/``): kernels and
devices arrive only through the registry.

The check reads the source with :mod:`ast` instead of importing it, so it sees
every import — at module level and inside functions, ``import x`` and
``from x import y``, relative ones resolved — except those under
``if TYPE_CHECKING:``, which never run.
"""

import ast
import pathlib
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minitf"

# The layers, lowest first.  Two layers of the same rank are siblings: they
# may not import each other.
RANKS = {"registry": 0, "framework": 1, "ops": 2, "autodiff": 3, "runtime": 3,
         "distributed": 4, "libraries": 5, "API": 6}

# Which layer each module belongs to: the longest dotted prefix of a module's
# name found here decides.  A new top-level module must be added, so that its
# author decides where it sits.
LAYER_OF = {
    "minitf.registry": "registry",
    "minitf.framework": "framework",
    "minitf.ops": "ops",
    # tf.name_scope, tf.control_dependencies, seeds: thin graph-building
    # helpers that ops such as random_ops use themselves.
    "minitf.api_scopes": "ops",
    "minitf.autodiff": "autodiff",
    "minitf.runtime": "runtime",
    # The cluster runtime (ClusterSpec, Server, master, gRPC transport): built on
    # the runtime's placer, partitioner and worker service; the runtime never
    # imports it.
    "minitf.distributed": "distributed",
    # Libraries: what is built from ops, gradients and sessions.
    "minitf.train": "libraries",
    "minitf.data": "libraries",
    "minitf.datasets": "libraries",
    "minitf.summary": "libraries",
    "minitf.estimator": "libraries",
    "minitf.layers": "libraries",
    "minitf.rnn": "libraries",
    # tf.contrib's most used names: aliases of and small layers over the libraries.
    "minitf.contrib": "libraries",
    "minitf.labs": "libraries",
    "minitf.client": "libraries",
    "minitf.platform": "libraries",
    # File formats beneath the API (the TFRecord format), read by kernels too.
    "minitf.lib": "libraries",
    "minitf.test": "libraries",
    "minitf.test.conformance": "API",  # the device conformance suite tests the tf.* API
    "minitf.losses": "libraries",
    "minitf.metrics": "libraries",
    "minitf.feature_column": "libraries",
    "minitf.draw": "libraries",
    # The API: the package itself, the namespaces that only re-export
    # (tf.nn, tf.math, ...) and the command line.
    "minitf": "API",
    "minitf.__main__": "API",
    "minitf.cli": "API",
    "minitf.templates": "API",  # python -m minitf new-plugin's package templates
    # The stable surface for plugin authors: re-exports from every layer below.
    "minitf.plugin": "API",
    # python -m minitf.cluster: a launcher of local clusters (no minitf imports).
    "minitf.cluster": "API",
    "minitf.compat": "API",
    "minitf.distribute": "API",
    "minitf.image": "API",
    "minitf.initializers": "API",
    "minitf.io": "API",
    "minitf.python_io": "API",
    "minitf.sparse": "API",
    "minitf.graph_util": "API",
    "minitf.linalg": "API",
    "minitf.math": "API",
    "minitf.nn": "API",
    "minitf.random": "API",
    "minitf.strings": "API",
    # tf.xla.experimental.jit_scope: stamps attrs on the ops a block creates.
    "minitf.xla": "API",
}


def backend_packages():
    """The top-level names a backend can be imported by: the packages that
    pyproject.toml installs from ``plugins/``, and ``plugins`` itself."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"].get("package-dir", {})
    names = {name.split(".")[0] for name, path in package_dir.items()
             if path.startswith("plugins/")}
    return names | {"plugins"}


def layer_of(name):
    """The layer of a dotted name in ``minitf``: a module, or a name defined in one.

    The longest prefix of ``name`` listed in :data:`LAYER_OF` decides, so
    ``minitf.layers.core.Dense`` is in ``libraries`` and ``minitf.__version__``
    (an attribute of the package) in ``API``.  Returns None outside ``minitf``.
    """
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYER_OF:
            return LAYER_OF[prefix]
    return None


def is_listed(module):
    """True when ``module`` or a package above it, other than ``minitf``
    itself, has an entry in :data:`LAYER_OF`."""
    return module == "minitf" or any(
        module == prefix or module.startswith(prefix + ".")
        for prefix in LAYER_OF if prefix != "minitf")


def may_import(importer, imported):
    """True when a module of layer ``importer`` may import layer ``imported``."""
    return importer == imported or RANKS[imported] < RANKS[importer]


# ---- reading the imports ----------------------------------------------------------------

def module_name(path):
    """``minitf/ops/math_ops.py`` -> ``minitf.ops.math_ops``; a package's
    ``__init__.py`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def minitf_modules():
    """Every importable module of the package.  The labs' ``lab-files`` are
    left out: they are student programs shipped as data, not modules of minitf."""
    return sorted(path for path in PACKAGE.rglob("*.py") if "lab-files" not in path.parts)


def imports_of(source, module, is_package):
    """Yields ``(line, imported name)`` for every import in ``source``.

    ``from a.b import c`` yields ``a.b.c`` — ``c`` may be a module or a name
    defined in ``a.b``; :func:`layer_of` treats both alike.  Relative imports
    are resolved against ``module``.  Imports under ``if TYPE_CHECKING:`` are
    skipped: they exist for type checkers only.
    """
    package = module if is_package else module.rpartition(".")[0]
    pending = [ast.parse(source)]
    while pending:  # walk the tree, not entering TYPE_CHECKING blocks
        node = pending.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module, node.level, package)
            for alias in node.names:
                yield node.lineno, base if alias.name == "*" else "%s.%s" % (base, alias.name)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))


def _resolve(name, level, package):
    """The absolute module of ``from <level dots><name> import ...`` in ``package``."""
    if level == 0:
        return name
    parts = package.split(".")
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _is_type_checking(test):
    """True for the test of ``if TYPE_CHECKING:`` or ``if typing.TYPE_CHECKING:``."""
    name = getattr(test, "id", None) or getattr(test, "attr", None)
    return name == "TYPE_CHECKING"


# ---- the rule ---------------------------------------------------------------------------

def violations():
    """One line per import that breaks the rule, ``file:line imports name (why)``."""
    backends = backend_packages()
    found = []
    for path in minitf_modules():
        module = module_name(path)
        layer = layer_of(module)
        where = path.relative_to(ROOT).as_posix()
        imports = imports_of(path.read_text(), module, path.name == "__init__.py")
        for line, name in sorted(imports):
            if name.split(".")[0] in backends:
                found.append("%s:%d imports %s (layer %s may not import a backend from "
                             "plugins/)" % (where, line, name, layer))
                continue
            target = layer_of(name)
            if target is not None and not may_import(layer, target):
                found.append("%s:%d imports %s (layer %s may not import layer %s)"
                             % (where, line, name, layer, target))
    return found


def test_every_module_has_a_layer():
    unplaced = [module_name(p) for p in minitf_modules() if not is_listed(module_name(p))]
    assert not unplaced, "add these modules to LAYER_OF: %s" % ", ".join(unplaced)


def test_imports_point_down_the_layers():
    found = violations()
    assert not found, "%d imports break the layering rule of CONTRIBUTING.md:\n%s" % (
        len(found), "\n".join(found))


def test_contributing_states_this_rule():
    """CONTRIBUTING.md states the same chain of layers this test enforces."""
    by_rank = {}
    for layer, rank in RANKS.items():
        by_rank.setdefault(rank, []).append(layer)
    steps = [group[0] if len(group) == 1 else "{%s}" % ", ".join(group)
             for _, group in sorted(by_rank.items())]
    chain = " ← ".join(steps)
    assert chain in (ROOT / "CONTRIBUTING.md").read_text(), chain


# ---- the checker itself -----------------------------------------------------------------

CHECKER_CASES = [
    ("import minitf.ops.math_ops", "minitf.runtime.session", False,
     ["minitf.ops.math_ops"]),
    ("from minitf.framework import errors", "minitf.registry.registry", False,
     ["minitf.framework.errors"]),
    ("from . import hookspecs", "minitf.registry.registry", False,
     ["minitf.registry.hookspecs"]),
    ("from ..framework.graph import Graph", "minitf.ops", True,
     ["minitf.framework.graph.Graph"]),
    ("def f():\n    import minitf_numpy_cpu\n", "minitf.cli", False, ["minitf_numpy_cpu"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import minitf.runtime\n",
     "minitf.autodiff.gradients", False, ["typing.TYPE_CHECKING"]),
]


@pytest.mark.parametrize("source, module, is_package, expected", CHECKER_CASES)
def test_imports_of_resolves_every_kind_of_import(source, module, is_package, expected):
    assert [name for _, name in imports_of(source, module, is_package)] == expected


@pytest.mark.parametrize("module, layer", [
    ("minitf", "API"), ("minitf.nn", "API"), ("minitf.__version__", "API"),
    ("minitf.layers", "libraries"), ("minitf.layers.core.Dense", "libraries"),
    ("minitf.api_scopes.get_seed", "ops"), ("minitf.runtime.executors.plan", "runtime"),
    ("minitf.distributed.cluster_spec", "distributed"), ("minitf.distribute", "API"),
    ("numpy", None)])
def test_layer_of(module, layer):
    assert layer_of(module) == layer


@pytest.mark.parametrize("importer, imported, allowed", [
    ("distributed", "runtime", True), ("runtime", "distributed", False),
    ("libraries", "distributed", True), ("distributed", "libraries", False)])
def test_distributed_builds_on_the_runtime(importer, imported, allowed):
    assert may_import(importer, imported) is allowed
