"""``tf.xla.experimental.jit_scope``: mark the ops built in a block for fusion.

With ``OptimizerOptions.global_jit_level`` off, only ops made inside a
``jit_scope()`` are fused (:mod:`minitf.runtime.passes.xla_fusion`); with it
on, ``jit_scope(compile_ops=False)`` keeps ops out.  As in TF, the scope
stamps attrs on each op it sees created: ``_XlaCompile`` (whether it may be
compiled) and ``_XlaScope`` (``"jit_scope_<n>"``, the outermost scope's
number: ops of two scopes are not fused together)::

    with tf.xla.experimental.jit_scope():
        y = tf.nn.relu(x + b) * s           # Add, Relu, Mul: fused on /gpu:0
    with tf.xla.experimental.jit_scope(compile_ops=lambda node_def: node_def.op != "Mul"):
        z = y * 2.0 + 1.0                   # only the Add may be fused

The innermost scope decides for an op.  ``separate_compiled_gradients`` is
accepted and has no effect (gradients join the clusters their ops fall in).
"""

import contextlib

from minitf.framework.graph import get_default_graph

_SCOPE_KEY = ("__xla_scope",)


class _ScopeCounter:
    """How many outermost jit scopes a graph has had, and how deep the current one is."""

    def __init__(self):
        self.count = 0
        self.depth = 0


@contextlib.contextmanager
def jit_scope(compile_ops=True, separate_compiled_gradients=False):
    """Marks the ops created in the block as (not) to be compiled (``tf.xla.experimental.jit_scope``).

    Args:
        compile_ops: a bool, or a callable ``compile_ops(node_def) -> bool``
            asked per op (``node_def.op`` is its type, ``node_def.name`` its name).
        separate_compiled_gradients: accepted for TF's signature; no effect.
    """
    del separate_compiled_gradients
    graph = get_default_graph()
    counters = graph.get_collection(_SCOPE_KEY)
    if not counters:
        graph.add_to_collection(_SCOPE_KEY, _ScopeCounter())
        counters = graph.get_collection(_SCOPE_KEY)
    counter = counters[0]
    scope = None
    if counter.depth == 0:
        scope = "jit_scope_%d" % counter.count
        counter.count += 1
    counter.depth += 1
    first = len(graph.get_operations())
    try:
        yield
    finally:
        counter.depth -= 1
        for op in graph.get_operations()[first:]:
            _mark(op, compile_ops, scope)


def _mark(op, compile_ops, scope):
    """Stamps the scope's attrs on ``op`` where an inner scope has not already."""
    if "_XlaCompile" not in op._attrs:
        wanted = compile_ops(op.node_def) if callable(compile_ops) else compile_ops
        op._attrs["_XlaCompile"] = bool(wanted)
    if scope is not None and "_XlaScope" not in op._attrs:
        op._attrs["_XlaScope"] = scope
