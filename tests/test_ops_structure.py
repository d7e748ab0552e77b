"""The structural promises of the ops layer and the registry, read from the source.

* The op family modules import one another at module level only, and those
  imports form a chain with no loop: a gradient that needs an op declared in
  a module built on its own names it by type (``apply_op("Sum", ...)``, see
  :mod:`minitf.ops.gradient_util`) instead of importing it inside a function.
* ``minitf.registry`` imports nothing from ``minitf.framework``: the
  framework lends it DTypes and ``tf.errors`` (``use_framework_types``).
* Gradients, core and user alike, live in the registry with their sites: the
  ``@gradient`` declarations next to the ops and ``tf.RegisterGradient`` reach
  the same table, and lookups go through it.
"""

import ast
import inspect
import pathlib

import pytest

import minitf as tf
from minitf.framework import errors as framework_errors
from minitf.ops import math_ops
from minitf.registry import get_registry

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPS = ROOT / "minitf" / "ops"
REGISTRY = ROOT / "minitf" / "registry"


def _imported_modules(node, package):
    """The dotted modules an ``import`` or ``from ... import`` node names.

    ``from minitf.ops import math_ops`` names ``minitf.ops.math_ops`` (the
    name may be a module); relative imports are resolved against ``package``.
    """
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        base = ".".join(parts + ([base] if base else []))
    return [base] + ["%s.%s" % (base, alias.name) for alias in node.names]


def _imports(path, package, nested):
    """``(line, module)`` of the imports of ``path``: those at module level, or
    (``nested=True``) those inside a function or class."""
    tree = ast.parse(path.read_text())
    top = set(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and (node not in top) == nested:
            for module in _imported_modules(node, package):
                yield node.lineno, module


def _op_modules():
    return sorted(p for p in OPS.glob("*.py") if p.name != "__init__.py")


def test_no_op_module_imports_an_op_module_inside_a_function():
    found = ["%s:%d imports %s" % (path.name, line, module)
             for path in _op_modules()
             for line, module in _imports(path, "minitf.ops", nested=True)
             if module == "minitf.ops" or module.startswith("minitf.ops.")]
    assert not found, "function-level imports in minitf/ops:\n%s" % "\n".join(found)


def _op_module_graph():
    """``{module: {op modules it imports at module level}}`` over minitf/ops."""
    names = {p.stem for p in _op_modules()}
    graph = {}
    for path in _op_modules():
        imported = {module.split(".")[2] for _, module in _imports(path, "minitf.ops", False)
                    if module.startswith("minitf.ops.")}
        graph[path.stem] = imported & names
    return graph


def _find_cycle(graph):
    """A list of modules forming an import loop, or None (depth-first search)."""
    state = {}   # module -> "open" while on the current path, "done" after

    def visit(module, path):
        state[module] = "open"
        for child in sorted(graph[module]):
            if state.get(child) == "open":
                return path[path.index(child):] + [child]
            if child not in state:
                cycle = visit(child, path + [child])
                if cycle:
                    return cycle
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module, [module])
            if cycle:
                return cycle
    return None


def test_the_op_modules_import_each_other_without_a_loop():
    cycle = _find_cycle(_op_module_graph())
    assert cycle is None, "import loop among op modules: %s" % " -> ".join(cycle)


def test_the_cycle_finder_finds_a_loop():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_registry_imports_nothing_from_the_framework():
    found = ["%s:%d imports %s" % (path.name, line, module)
             for path in sorted(REGISTRY.glob("*.py"))
             for nested in (False, True)
             for line, module in _imports(path, "minitf.registry", nested)
             if module == "minitf.framework" or module.startswith("minitf.framework.")]
    assert not found, "\n".join(found)


def test_the_framework_lends_the_registry_its_error_class():
    error = get_registry().missing_kernel_error("NoSuchOp", "CPU", (tf.float32,))
    assert type(error) is tf.errors.NotFoundError
    assert tf.errors.NotFoundError is framework_errors.NotFoundError


def test_math_ops_opens_with_the_arithmetic():
    source = inspect.getsource(math_ops)
    first_ops = [call.args[0].value for call in ast.walk(ast.parse(source))
                 if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "_binary"]
    assert first_ops[:4] == ["Add", "AddV2", "Sub", "Mul"]
    header = source[:source.index('_add = _binary("Add"')]
    assert header.count("\ndef ") == 1, "only the _binary helper comes before Add"


# ---- gradients: one table, with sites --------------------------------------------------

def _site_of(fn):
    code = inspect.unwrap(fn).__code__
    return "%s:%d" % (code.co_filename, code.co_firstlineno)


def _line_at(site):
    path, line = site.rsplit(":", 1)
    return pathlib.Path(path).read_text().splitlines()[int(line) - 1].strip()


def test_a_gradient_declared_next_to_its_op_is_found_through_the_registry():
    registry = get_registry()
    add = registry.gradient_def("Add")
    assert add.fn is math_ops._add_grad is registry.gradient("Add")
    assert add.plugin == "core_ops"
    assert add.site == _site_of(math_ops._add_grad)
    assert _line_at(add.site) == '@gradient("Add")'


def test_a_not_differentiable_op_has_its_reason_and_site():
    floor_div = get_registry().gradient_def("FloorDiv")
    assert floor_div.fn is None and "step function" in floor_div.reason
    assert _line_at(floor_div.site).startswith('not_differentiable("FloorDiv"')


def test_register_gradient_reaches_the_same_table():
    @tf.RegisterGradient("OpsStructureTestGradient")
    def _gradient(op, grad):
        return [grad]

    found = get_registry().gradient_def("OpsStructureTestGradient")
    assert found.fn is _gradient and found.site == _site_of(_gradient)
    assert found.plugin == "<runtime>"
    with pytest.raises(KeyError, match="registered twice") as raised:
        tf.RegisterGradient("OpsStructureTestGradient")(_gradient)
    assert str(raised.value).count(found.site) == 2


def test_the_registry_gives_every_site_of_an_op():
    registry = get_registry()
    plugin, op_site = registry.op_origin("Add")
    assert plugin == "core_ops" and _line_at(op_site).startswith('_add = _binary("Add"')
    cpu = [k for k in registry.kernel_defs("Add") if k.device_type == "CPU"]
    assert len(cpu) == 1 and cpu[0].plugin == "numpy_cpu"
    assert _line_at(cpu[0].site) == '@kernel("Add")'
    assert registry.gradient_def("NoSuchOp") is None


def test_kernel_defs_are_sorted_by_device_type():
    device_types = [k.device_type for k in get_registry().kernel_defs("MatMul")]
    assert device_types == sorted(device_types) and "CPU" in device_types
