"""The executor plan: everything about a step that is fixed before it runs.

For each op of a scheduled step the plan records its kernel, its context, where
each input comes from (a feed or another node's output), how many inputs it
waits for (its *pending count*) and which nodes consume it; for each value, the
node after which nobody reads it again (its *last use*), so it can be released
at once.

A plan is built once per (fetches, feeds, targets) signature and is immutable
(TF's ``ExecutorImpl``).  Running it is the executors' business, each with its
own per-step state (TF's ``ExecutorState``): the reference interpreter
(:mod:`~minitf.runtime.executors.interpreter`) walks it node by node, the
generated step (:mod:`~minitf.runtime.executors.generated`) compiles it into
straight-line Python, the parallel and control-flow executors follow its
pending counts.
"""

import collections
import dataclasses
from typing import Callable, Optional

from minitf.runtime.executors.kernel_checks import kernel_of
from minitf.runtime.planning.schedule import consumers_of


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
        kernel: the kernel function ``kernel(ctx, *inputs, **attrs)`` (its
            results checked under ``MINITF_CHECK_KERNELS``, see
            :mod:`~minitf.runtime.executors.kernel_checks`).
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
        feed_converters: per feed, ``convert(value) -> array`` (checks a
            client's value, or copies it onto the device).
        last_use: Source -> index of the node after which it may be freed.
        reader_counts: Source -> how many node inputs read it.
    """

    nodes: tuple
    feeds: tuple
    fetches: tuple
    fetch_deref: tuple
    feed_converters: tuple
    last_use: dict
    reader_counts: dict


def build_plan(order, feeds, fetches, kernel_for, ctx_for, feed_converters=None):
    """Builds the :class:`ExecutorPlan` of one step.

    Args:
        order: the step's operations in an execution order (see :func:`schedule`).
        feeds: fed Tensors, in the order their values will be passed.
        fetches: fetched Tensors.
        kernel_for: ``kernel_for(op) -> KernelDef``.
        ctx_for: ``ctx_for(op) -> KernelContext``.
        feed_converters: per feed, ``convert(value) -> array`` (default: none).
    """
    consumers = consumers_of(order, feeds)
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
            op=op, kernel=kernel_of(kernel_for(op), op), ctx=ctx_for(op), attrs=attrs,
            inputs=inputs, deref=deref, num_outputs=len(op.outputs),
            pending_count=len({t.op for t in op.inputs if t.op in index_of and t not in feed_index}
                              | {c for c in op.control_inputs if c in index_of}),
            out_nodes=tuple(index_of[c] for c in consumers[op])))
    fetch_sources = tuple(source(t) for t in fetches)
    for src in fetch_sources:
        last_use.pop(src, None)  # fetched values live until the step returns
    readers = collections.Counter(src for node in nodes for src in node.inputs)
    return ExecutorPlan(nodes=tuple(nodes), feeds=tuple(feeds), fetches=fetch_sources,
                        fetch_deref=tuple(t.dtype.is_ref for t in fetches),
                        feed_converters=tuple(feed_converters or [_unchanged] * len(feeds)),
                        last_use=last_use,
                        reader_counts=dict(readers))


def _unchanged(value):
    return value
