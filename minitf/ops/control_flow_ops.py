"""Grouping and ordering ops: ``no_op``, ``group``, ``tuple``.

(Dynamic control flow lives beside this module: the primitives in
:mod:`~minitf.ops.control_flow_primitives`, ``tf.cond``/``tf.case`` in
:mod:`~minitf.ops.cond`, ``tf.while_loop`` in :mod:`~minitf.ops.while_loop`.)
``group`` runs several ops for their effects as one target;
``tuple`` returns tensors that are only available once *all* the given tensors
are computed.

Mirrors parts of ``tensorflow/python/ops/control_flow_ops.py``.
"""

import builtins

from minitf.framework import graph as graph_lib
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor import Tensor
from minitf.ops import array_ops
from minitf.ops.op_def_library import apply_op, define_op, graph_of, not_differentiable

_no_op = define_op("NoOp", outputs=(), shape_fn=lambda op: [],
                   doc="Does nothing; useful as a target carrying control dependencies.")
not_differentiable("NoOp")


def no_op(name=None):
    """An op that does nothing (``tf.no_op``)."""
    return apply_op(_no_op, [], name=name or "NoOp")


def _as_ops(inputs):
    ops = []
    for x in inputs:
        element = x._as_graph_element() if hasattr(x, "_as_graph_element") else x
        op = element.op if isinstance(element, Tensor) else element
        if not hasattr(op, "control_inputs"):
            raise TypeError("Expected a Tensor, Operation or Variable, got %r" % (x,))
        ops.append(op)
    return ops


def group(*inputs, **kwargs):
    """An op that runs all ``inputs`` (``tf.group``).

    Args:
        *inputs: Tensors, Operations or Variables (a list is accepted too).
        name: keyword-only op name.

    Returns:
        A NoOp with a control dependency on every input.
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Unknown keyword arguments: " + ", ".join(kwargs))
    if len(inputs) == 1 and isinstance(inputs[0], (list, builtins.tuple)):
        inputs = inputs[0]
    ops = _as_ops(inputs)
    graph = ops[0].graph if ops else graph_lib.get_default_graph()
    if any(op.graph is not graph for op in ops):
        raise ValueError("tf.group inputs must be from the same graph.")
    with graph.as_default(), graph.control_dependencies(ops):
        return no_op(name=name or "group_deps")


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's name
    """Returns ``tensors``, each available only after all of them are computed.

    An ``IndexedSlices`` stays one: its values are gated (TF's ``with_dependencies``).
    """
    graph = graph_of([t.values if isinstance(t, IndexedSlices) else t for t in tensors])
    with graph.as_default(), graph.name_scope(name or "tuple") as scope:
        gate = group(*[t.op if isinstance(t, IndexedSlices) else t
                       for t in tensors if t is not None], *(control_inputs or []), name=scope)
        outputs = []
        for t in tensors:
            if t is None:
                outputs.append(None)
                continue
            with graph.control_dependencies([gate]):  # TF's with_dependencies
                if isinstance(t, IndexedSlices):
                    outputs.append(IndexedSlices(
                        array_ops.identity(t.values, name="control_dependency"), t.indices,
                        t.dense_shape))
                else:
                    outputs.append(array_ops.identity(t, name="control_dependency"))
        return outputs


__all__ = ["no_op", "group", "tuple"]
