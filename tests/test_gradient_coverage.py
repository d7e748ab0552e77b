"""Every op with a gradient is gradient-checked, and the docs say which ops have one.

The gradient tests are driven by one table per op family (STYLE 11):
``GRADIENTS`` in ``test_math_gradients.py``, ``CASES`` in
``test_array_gradients.py`` and in ``test_nn_gradients.py``.  Each family's
file checks its own modules; this file checks their union against the whole
op library, so that an op given a gradient in *any* module, without a row
that checks it by finite differences, fails here.

It also keeps the two lists of ``docs/concepts/autodiff.rst`` — the ops with
a gradient and the ops declared not differentiable — equal to the registry.
"""

import fnmatch
import pathlib
import re

import pytest

import minitf as tf
from minitf.ops.op_def_library import OP_DEFS
from minitf.registry import get_registry
from tests import test_array_gradients, test_math_gradients, test_nn_gradients

DOCS_PAGE = pathlib.Path(__file__).parent.parent / "docs" / "concepts" / "autodiff.rst"

# The gradients of the control-flow primitives and of the TensorArray ops (a
# handle and a flow, not values) build the backward frames of tf.cond and
# tf.while_loop; they are tested with those, not op by op.
CONTROL_FLOW_PRIMITIVES = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}


def _is_control_flow(op_type):
    return op_type in CONTROL_FLOW_PRIMITIVES or op_type.startswith("TensorArray")


def _gradient_kind(op_type):
    """"gradient", "not differentiable" or "undeclared" (no registration at all)."""
    try:
        fn = get_registry().gradient(op_type)
    except LookupError:
        return "undeclared"
    return "not differentiable" if fn is None else "gradient"


def _library(kind):
    """The op types of the op library of one kind, control-flow ops aside."""
    return {d.name for d in OP_DEFS
            if not _is_control_flow(d.name) and _gradient_kind(d.name) == kind}


def _op_types_between(xs, y):
    """The types of the ops on a path from a placeholder in ``xs`` to ``y``."""
    x_ops = {x.op for x in xs}
    depends = {}
    order = [y.op]
    while order:  # depth-first, children before parents
        op = order[-1]
        pending = [t.op for t in op.inputs if t.op not in depends]
        if op in x_ops or not pending:
            order.pop()
            depends[op] = op in x_ops or any(depends[t.op] for t in op.inputs)
        else:
            order.extend(pending)
    return {op.type for op, on_path in depends.items() if on_path}


def _math_table_op_types():
    """The op types each row of the math table differentiates, built at its fixed shapes."""
    covered = set()
    for case in test_math_gradients.GRADIENTS:
        graph = tf.Graph()
        with graph.as_default():
            xs = [tf.placeholder(case.dtypes[0], shape) for shape in case.shapes[1]]
            covered |= _op_types_between(xs, case.fn(*xs))
    return covered


def _named_rows(cases):
    """Op types named by rows like ``"Transpose:matrix_transpose"`` or ``"Softmax(axis=0)"``."""
    return {re.split(r"[:(]", case.name)[0] for case in cases}


def checked_op_types():
    """Every op type some table row checks by finite differences."""
    return (_math_table_op_types() | _named_rows(test_array_gradients.CASES)
            | _named_rows(test_nn_gradients.CASES))


def test_the_path_helper_finds_only_ops_between_x_and_y():
    x = tf.placeholder(tf.float32, [2])
    y = tf.exp(x) + tf.constant(1.0) * tf.sin(tf.constant(2.0))
    assert _op_types_between([x], y) == {"Placeholder", "Exp", "Add"}


def test_every_op_with_a_gradient_has_a_row_in_a_gradient_table():
    with_gradient = _library("gradient")
    assert {"MatMul", "Conv2D", "GatherV2", "SoftmaxCrossEntropyWithLogits"} <= with_gradient
    unchecked = sorted(with_gradient - checked_op_types())
    assert not unchecked, (
        "ops with a gradient but no row in GRADIENTS (test_math_gradients.py) or CASES "
        "(test_array_gradients.py, test_nn_gradients.py): %s" % unchecked)


def test_the_tables_check_float32_and_float64():
    dtypes = set()
    for case in test_math_gradients.GRADIENTS:
        dtypes |= set(case.dtypes)
    assert set(test_math_gradients.FLOATS) <= dtypes
    for module in (test_array_gradients, test_nn_gradients):
        assert set(module.FLOATS) == {tf.float32.as_numpy_dtype, tf.float64.as_numpy_dtype}


# ---- the lists of docs/concepts/autodiff.rst -------------------------------------------------

def _documented(region):
    """The ``Names`` on the indented lines (the definitions of a definition list)
    between ``.. REGION-begin`` and ``.. REGION-end`` of the docs page."""
    text = DOCS_PAGE.read_text(encoding="utf-8")
    found = re.search(r"^\.\. %s-begin$(.*?)^\.\. %s-end$" % (region, region), text,
                      re.M | re.S)
    assert found, "%s has no '.. %s-begin' ... '.. %s-end' region" % (DOCS_PAGE, region, region)
    definitions = [line for line in found.group(1).splitlines() if line.startswith("    ")]
    return re.findall(r"``([\w*]+)``", "\n".join(definitions))


def _expand(patterns, op_types):
    """The op types the documented names stand for (``Apply*`` is every Apply op)."""
    expanded = set()
    for pattern in patterns:
        matches = fnmatch.filter(op_types, pattern)
        assert matches, "docs/concepts/autodiff.rst names %r: no such op type" % pattern
        expanded.update(matches)
    return expanded


@pytest.mark.parametrize("region, kind", [("ops-with-gradients", "gradient"),
                                          ("not-differentiable", "not differentiable")])
def test_the_docs_list_the_ops_of_each_kind(region, kind):
    all_op_types = sorted(d.name for d in OP_DEFS)
    documented = _expand(_documented(region), all_op_types)
    actual = _library(kind)
    assert not documented - actual, "listed under %s in %s but are not: %s" % (
        region, DOCS_PAGE.name, sorted(documented - actual))
    assert not actual - documented, "missing from the %s list of %s: %s" % (
        region, DOCS_PAGE.name, sorted(actual - documented))


def test_every_op_outside_control_flow_declares_its_gradient():
    """An op must have a gradient or be declared not differentiable (tf.no_gradient)."""
    assert not _library("undeclared"), (
        "ops with neither a gradient nor a not-differentiable declaration: %s"
        % sorted(_library("undeclared")))
