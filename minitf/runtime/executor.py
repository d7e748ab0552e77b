"""The executor: scheduling a step's ops by pending counts, then running them.

Like TF's executor, scheduling is a worklist.  Every op starts with a *pending
count* — how many of its inputs (data and control) are produced by ops of this
step.  Ops whose count is zero are ready; running one decrements the counts of
its consumers, which become ready in turn.  Each value's *last consumer* is
recorded so the value can be released the moment that consumer has run.

The result of this analysis, :class:`ExecutorPlan`, is built once per
(fetches, feeds, targets) signature and is immutable (TF's ``ExecutorImpl``).
How a step then runs it is a separate concern: :mod:`minitf.runtime.codegen`
compiles a plan into straight-line Python — the fastest way to run a fixed
schedule on one thread — while later executors (parallel, control-flow
frames) walk the same plan with per-step state (TF's ``ExecutorState``).
"""

import collections
import dataclasses
from typing import Callable, Optional


@dataclasses.dataclass(frozen=True)
class Source:
    """Where an input value comes from: feed ``index``, or output ``index`` of node ``node``."""

    node: Optional[int]
    index: int

    @property
    def is_feed(self):
        return self.node is None


@dataclasses.dataclass(frozen=True)
class NodeItem:
    """Everything the executor needs about one op, fixed when the plan is built.

    Attributes:
        op: the Operation.
        kernel: the kernel function ``kernel(ctx, *inputs, **attrs)``.
        ctx: its KernelContext.
        attrs: keyword attrs passed to the kernel.
        inputs: a :class:`Source` per input.
        deref: per input, True when a reference must be read (``Ref.get()``).
        num_outputs: how many outputs the kernel returns.
        pending_count: inputs and control inputs produced inside the step.
        out_nodes: indices of the nodes that consume this node (data or control).
    """

    op: object
    kernel: Callable
    ctx: object
    attrs: dict
    inputs: tuple
    deref: tuple
    num_outputs: int
    pending_count: int
    out_nodes: tuple


@dataclasses.dataclass(frozen=True)
class ExecutorPlan:
    """An immutable, scheduled step.

    Attributes:
        nodes: NodeItems in a valid execution order.
        feeds: the fed Tensors, in the order their values are passed.
        fetches: a Source per fetched tensor.
        fetch_deref: per fetch, True when it is a reference to read.
        last_use: Source -> index of the node after which it may be freed.
        reader_counts: Source -> how many node inputs read it.
    """

    nodes: tuple
    feeds: tuple
    fetches: tuple
    fetch_deref: tuple
    last_use: dict
    reader_counts: dict


def schedule(ops, fed_tensors):
    """Orders ``ops`` so that every op comes after the ops it depends on.

    Kahn's algorithm with TF's names: a ready queue fed by pending counts.

    Raises:
        ValueError: if the ops contain a cycle (only legal with control flow).
    """
    consumers = _consumers(ops, fed_tensors)
    pending = dict.fromkeys(ops, 0)
    for users in consumers.values():
        for op in users:
            pending[op] += 1
    # Start from the ready ops in creation order so schedules are deterministic.
    ready = collections.deque(sorted((op for op in ops if pending[op] == 0), key=lambda o: o._id))
    order = []
    while ready:
        op = ready.popleft()
        order.append(op)
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    if len(order) != len(ops):
        stuck = sorted(op.name for op in ops if pending[op] > 0)
        raise ValueError("Graph contains a cycle among ops: %s" % ", ".join(stuck[:10]))
    return order, consumers


def _consumers(ops, fed_tensors):
    """For each op, the ops among ``ops`` that consume it (data or control).

    The edge out of a ``NextIteration`` is a loop's *back edge*: it feeds the
    next iteration, not this one, so it is no dependency for ordering.
    """
    op_set = set(ops)
    fed = set(fed_tensors)
    consumers = collections.defaultdict(list)
    for op in ops:
        producers = {t.op for t in op.inputs if t not in fed and t.op in op_set
                     and t.op.type != "NextIteration"}
        producers.update(c for c in op.control_inputs if c in op_set)
        for producer in sorted(producers, key=lambda o: o._id):
            consumers[producer].append(op)
    return consumers


def build_plan(order, feeds, fetches, kernel_for, ctx_for):
    """Builds the :class:`ExecutorPlan` of one step.

    Args:
        order: the step's operations in an execution order (see :func:`schedule`).
        feeds: fed Tensors, in the order their values will be passed.
        fetches: fetched Tensors.
        kernel_for: ``kernel_for(op) -> KernelDef``.
        ctx_for: ``ctx_for(op) -> KernelContext``.
    """
    consumers = _consumers(order, feeds)
    index_of = {op: i for i, op in enumerate(order)}
    feed_index = {t: i for i, t in enumerate(feeds)}

    def source(tensor):
        if tensor in feed_index:
            return Source(None, feed_index[tensor])
        return Source(index_of[tensor.op], tensor.value_index)

    nodes = []
    last_use = {}
    for i, op in enumerate(order):
        inputs = tuple(source(t) for t in op.inputs)
        ref_inputs = set(op.op_def.ref_inputs)
        deref = tuple(t.dtype.is_ref and j not in ref_inputs for j, t in enumerate(op.inputs))
        for src in inputs:
            last_use[src] = i
        attrs = {name: op._attrs.get(name, default) for name, default in op.op_def.attrs.items()}
        nodes.append(NodeItem(
            op=op, kernel=kernel_for(op).fn, ctx=ctx_for(op), attrs=attrs, inputs=inputs,
            deref=deref, num_outputs=len(op.outputs),
            pending_count=len({t.op for t in op.inputs if t.op in index_of and t not in feed_index}
                              | {c for c in op.control_inputs if c in index_of}),
            out_nodes=tuple(index_of[c] for c in consumers[op])))
    fetch_sources = tuple(source(t) for t in fetches)
    for src in fetch_sources:
        last_use.pop(src, None)  # fetched values live until the step returns
    readers = collections.Counter(src for node in nodes for src in node.inputs)
    return ExecutorPlan(nodes=tuple(nodes), feeds=tuple(feeds), fetches=fetch_sources,
                        fetch_deref=tuple(t.dtype.is_ref for t in fetches), last_use=last_use,
                        reader_counts=dict(readers))
