"""The step graph: the ops one ``Session.run`` needs, copied into a graph of their own.

TF's master never runs the client's graph itself.  For each new (fetches,
feeds, targets) signature it builds a graph holding only what the step needs,
with every fed tensor replaced by an argument node
(``subgraph::RewriteGraphForExecution`` in TF), and hands *that* graph to the
rewrite passes (Grappler), the placer and the partitioner.  minitf does the
same, so a pass may rewrite the step freely — fold a subgraph into a constant,
drop an op — while the user's graph stays exactly as the user built it::

    user's graph                        step graph of run(y, {x: ...})
    x = placeholder ─┐                  x   (Placeholder standing for the feed)
    w = Variable ────┼─ y = x @ w  ──▶  w ── y      (copies; unneeded ops left out)
    unused = ... ────┘

Every copy keeps its original's name, attrs, requested device, colocation
groups and control-flow context, and remembers the original
(``_original_op``): run-time errors and traces name the user's op.
"""

import dataclasses

from minitf.framework.graph import Graph, nest_list_input
from minitf.runtime.planning.schedule import schedule
from minitf.runtime.planning.subgraph import prune


def user_op(op):
    """The op of the user's graph that ``op`` is a copy of (``op`` itself if none):
    errors name the user's op, whichever copy of it failed."""
    return getattr(op, "_original_op", op)


@dataclasses.dataclass(frozen=True)
class StepGraph:
    """The graph of one step signature.

    Attributes:
        graph: the Graph holding the step's ops.
        ops: the ops to run, producers before consumers (argument nodes excluded).
        feeds: per fed tensor of the client, in order, the tensor standing for it.
        fetches: per fetched tensor of the client, in order, its counterpart here.
        targets: the ops to run for their effects.
    """

    graph: Graph
    ops: tuple
    feeds: tuple
    fetches: tuple
    targets: tuple

    def rescheduled(self):
        """The same step with its op list pruned and scheduled anew (after a rewrite)."""
        needed = prune(self.fetches, self.targets, self.feeds)
        order, _ = schedule(needed, self.feeds)
        return dataclasses.replace(self, ops=tuple(order))

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def copy_step(graph, order, feeds, fetches, targets):
    """Copies a pruned, scheduled step of the user's graph into a :class:`StepGraph`.

    Args:
        graph: the user's graph.
        order: the ops the step needs, in a topological order.
        feeds: the fed Tensors of the user's graph.
        fetches: the fetched Tensors.
        targets: the target Operations.
    """
    copier = _Copier(graph, feeds)
    for op in order:
        copier.copy(op)
    copier.wire_back_edges()
    return StepGraph(graph=copier.graph, ops=tuple(copier.copies[op] for op in order),
                     feeds=tuple(copier.args[t] for t in feeds),
                     fetches=tuple(copier.tensor(t) for t in fetches),
                     targets=tuple(copier.copies[op] for op in targets))


class _Copier:
    """Copies ops one by one, each after the ops it reads (loop back edges aside)."""

    def __init__(self, source_graph, feeds):
        self.graph = Graph()
        self.graph.copied_from = source_graph
        self.copies = {}
        self.back_edges = []  # (Merge copy, input index, NextIteration output)
        self.args = {tensor: self._argument(tensor, feeds) for tensor in feeds}

    def _argument(self, tensor, feeds):
        """A Placeholder standing for a fed tensor (named like it when that is possible)."""
        name = tensor.op.name if tensor.value_index == 0 else None
        if name is None or any(f.op is tensor.op and f is not tensor for f in feeds):
            name = "_arg_%s" % tensor.name.replace("/", "_").replace(":", "_")
        arg = self.graph.create_op(
            "Placeholder", [], dtypes=[tensor.dtype], name=name + "/",
            attrs={"dtype": tensor.dtype.base_dtype, "shape": tensor.shape},
            compute_shapes=False).outputs[0]
        arg._shape = tensor.shape
        return arg

    def tensor(self, original):
        """The step's tensor for a tensor of the user's graph (a fed one: its argument)."""
        if original in self.args:
            return self.args[original]
        return self.copies[original.op].outputs[original.value_index]

    def copy(self, op):
        inputs = []
        for i, tensor in enumerate(op.inputs):
            if tensor not in self.args and tensor.op not in self.copies:
                # A loop's back edge (NextIteration -> Merge): wired once copied.
                self.back_edges.append((op, i, tensor))
                inputs.append(None)
            else:
                inputs.append(self.tensor(tensor))
        placeholder = next((t for t in inputs if t is not None), None)
        inputs = [placeholder if t is None else t for t in inputs]
        copy = self.graph.create_op(
            op.type, nest_list_input(op.op_def, inputs), dtypes=[t.dtype for t in op.outputs],
            name=op.name + "/", attrs=op._attrs, op_def=op.op_def, compute_shapes=False)
        # A control input left out of the step ran in an earlier partial run.
        copy._control_inputs.extend(self.copies[c] for c in op.control_inputs
                                    if c in self.copies)
        copy._set_device(op.device)
        copy._traceback = op._traceback
        copy._colocation_groups = list(op._colocation_groups)
        copy._control_flow_context = op._control_flow_context
        copy._original_op = getattr(op, "_original_op", op)
        for original, copied in zip(op.outputs, copy.outputs):
            copied._shape = original.shape
        self.copies[op] = copy

    def wire_back_edges(self):
        for op, index, tensor in self.back_edges:
            self.copies[op]._update_input(index, self.tensor(tensor))
