"""Declaring ops and adding them to graphs: ``define_op``, ``apply_op``, ``gradient``.

Each op family module declares its ops with :func:`define_op` and their
gradients with :func:`gradient` (or :func:`not_differentiable`), next to the
Python wrapper that builds the op (an op's whole story on one screen).

The core's ops are a plugin like any other (entry point ``core_ops``, module
:mod:`minitf.ops.plugin`).  The registry is loaded lazily, after ``import
minitf``, so these declarations are collected here as the modules are imported
— :data:`OP_DEFS` and :data:`GRADIENT_DECLARATIONS` — and the plugin's hooks
hand every one of them to the registry, the one table every lookup goes
through.  A gradient is declared with its site (``file:line``), so the
registry reports both sites of a duplicate exactly as for ``tf.RegisterGradient``.

:func:`apply_op` is what every wrapper calls.  Like TF's
``op_def_library._apply_op_helper`` it opens the op's name scope (so converted
constants are named ``Add/y``), converts Python values so that they adopt the
dtype of the tensor operands, and calls ``Graph.create_op``.
"""

import sys

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework import graph as graph_lib
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.registry import get_registry
from minitf.registry.op_def import OpDef
from minitf.registry.registry import definition_site

OP_DEFS = []
"""Every op the core declares, in declaration order."""

GRADIENT_DECLARATIONS = []
"""Every gradient the core declares, as the keyword arguments of
:meth:`Registry.register_gradient <minitf.registry.Registry.register_gradient>`:
``op_type``, ``fn`` (None: not differentiable), ``site`` and ``reason``."""


def define_op(name, stacklevel=1, **fields):
    """Declares an op (see :class:`~minitf.registry.OpDef`) and returns its OpDef.

    ``stacklevel`` says which caller's line is recorded as the declaration
    site: 2 when ``define_op`` is called by a helper such as ``_binary``.
    """
    op_def = OpDef(name, site=_caller_site(stacklevel), **fields)
    OP_DEFS.append(op_def)
    return op_def


def gradient(op_type):
    """Decorator: the gradient function of ``op_type`` (TF's ``@ops.RegisterGradient``).

    The function receives the op and the gradients of its outputs and returns
    one gradient per input (None for an input that gets none).  Its definition
    is the site the registry records.

    Example::

        @gradient("Square")
        def _square_grad(op, grad):
            return [grad * 2.0 * op.inputs[0]]
    """
    def declare(fn):
        GRADIENT_DECLARATIONS.append(
            dict(op_type=op_type, fn=fn, site=definition_site(fn), reason=""))
        return fn
    return declare


def not_differentiable(*op_types, reason=""):
    """Declares ops with no gradient: their inputs receive None (TF's ``ops.NotDifferentiable``).

    ``reason`` says why, for ``python -m minitf plugins --op NAME``.
    """
    site = _caller_site(1)
    for op_type in op_types:
        GRADIENT_DECLARATIONS.append(dict(op_type=op_type, fn=None, site=site, reason=reason))


def _caller_site(stacklevel):
    """``file:line`` of a caller of the function calling this one: its own caller
    for ``stacklevel=1``, that caller's caller for 2, ..."""
    caller = sys._getframe(stacklevel + 1)
    return "%s:%d" % (caller.f_code.co_filename, caller.f_lineno)


def graph_of(values):
    """The graph of the Tensor (or graph element) values, else the default graph.

    Raises:
        ValueError: if the values come from different graphs.
    """
    default = graph_lib.get_default_graph()
    graph = None
    first = None
    for v in _flatten(values):
        if isinstance(v, Tensor):
            element = v
        elif hasattr(v, "_as_graph_element") and hasattr(v, "dtype"):
            element = v._as_graph_element()
        else:
            continue
        element_graph = _capturing_graph(element.graph, default)
        if graph is None:
            graph, first = element_graph, element
        elif element_graph is not graph:
            raise ValueError("Tensor %s must be from the same graph as Tensor %s." % (element, first))
    return graph or default


def _capturing_graph(graph, default):
    """``default`` if it is a function graph inside ``graph`` (its ops capture
    ``graph``'s tensors, see :mod:`minitf.data.function`), else ``graph``."""
    outer = default.outer_graph
    while outer is not None:
        if outer is graph:
            return default
        outer = outer.outer_graph
    return graph


def _flatten(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def apply_op(op_def, inputs, attrs=None, name=None, dtypes=None):
    """Converts ``inputs`` and adds an op of ``op_def`` to their graph.

    Inputs named in ``op_def.same_dtype_inputs`` share one dtype: Python
    values among them adopt the dtype of the first Tensor among them.

    Args:
        op_def: the op's :class:`~minitf.registry.OpDef` — or its type name,
            whose declaration the registry holds, as TF1's
            ``apply_op("Sum", ...)``.  A gradient names an op this way when
            the module declaring it is built on the gradient's own module
            (``Sum``, see :mod:`~minitf.ops.gradient_util`).
        inputs: one value per input; a list for a list input.
        attrs: the op's attrs (the OpDef's defaults fill the rest).
        name: the op's name (default: its type).
        dtypes: the output dtypes, for ops whose OpDef cannot infer them.

    Returns:
        The single output Tensor, a list of outputs, or the Operation when the
        op has no outputs.
    """
    if isinstance(op_def, str):
        op_def = get_registry().op_def(op_def)
    graph = graph_of(inputs)
    with graph.as_default(), graph.name_scope(name or op_def.name) as scope:
        converted = _convert_inputs(op_def, inputs)
        op = graph.create_op(op_def.name, converted, dtypes=dtypes, name=scope, attrs=attrs,
                             op_def=op_def)
    return outputs_of(op)


def outputs_of(op):
    outputs = op.outputs
    if not outputs:
        return op
    return outputs[0] if len(outputs) == 1 else outputs


def _convert_inputs(op_def, inputs):
    names = [n.rstrip("*") for n in op_def.inputs]
    shared = _shared_dtype(op_def, names, inputs)
    converted = []
    for name, value in zip(names, inputs):
        dtype = shared if name in op_def.same_dtype_inputs else None
        if isinstance(value, (list, tuple)) and op_def.inputs[names.index(name)].endswith("*"):
            converted.append([_convert(v, dtype, name) for v in value])
        else:
            converted.append(_convert(value, dtype, name))
    return converted


def _convert(value, dtype, name):
    """Converts one input; only Python/NumPy values adopt ``dtype`` — a tensor of
    another dtype is left for ``create_op`` to reject with TF's TypeError."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value, name=name)
    return convert_to_tensor(value, dtype=dtype, name=name)


def _shared_dtype(op_def, names, inputs):
    """The dtype Python values among the same-dtype inputs must adopt: that of
    the first tensor-like (Tensor, Variable) or NumPy value among them."""
    candidates = []
    for name, value in zip(names, inputs):
        if name in op_def.same_dtype_inputs:
            is_list = op_def.inputs[names.index(name)].endswith("*")
            candidates.extend(value if is_list else [value])
    for value in candidates:
        if hasattr(value, "_as_graph_element") and hasattr(value, "dtype"):
            return value.dtype.base_dtype
    for value in candidates:
        if isinstance(value, (np.ndarray, np.generic)):
            return dtypes_lib.as_dtype(value.dtype)
    return None


def deprecated_alias(new_name, new_value, old_name, old_value):
    """The value of an argument TF1 accepts under two names (``axis``/``dim``).

    Raises:
        ValueError: if both names were given, as TF's ``deprecated_argument_lookup``.
    """
    if new_value is not None and old_value is not None:
        raise ValueError("Cannot specify both '%s' and '%s'" % (new_name, old_name))
    return new_value if new_value is not None else old_value
