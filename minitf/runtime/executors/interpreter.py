"""The reference interpreter: a step is a loop over the plan's nodes.

This is the executor to read first.  An
:class:`~minitf.runtime.executors.plan.ExecutorPlan` lists a step's ops in an
order where every op comes after the ops it reads; running the step means::

    for each node, in order:
        gather its inputs (a feed, or an output of an earlier node)
        call its kernel: outputs = kernel(ctx, *inputs, **attrs)
        remember the outputs
        forget every value this node was the last to read

and finally returning the fetched values.  That is all :func:`run_plan` does.
The other executors compute exactly the same values, faster or with more
freedom: the generated step (:mod:`~minitf.runtime.executors.generated`)
compiles this loop into straight-line Python, the parallel executor runs
independent nodes at once, the control-flow executor adds frames and dead
values.  The tests use this interpreter as their oracle.

Select it with ``ConfigProto(experimental=ConfigProto.Experimental(
executor_type="INTERPRETER"))`` (TF's ``experimental.executor_type``).
"""

import time

from minitf.runtime.executors.located_errors import located_error
from minitf.runtime.executors.plan import Source
from minitf.runtime.kernel_context import check_step, set_step_deadline
from minitf.runtime.values import own


def run_plan(plan, feeds, records=None):
    """Runs ``plan`` once and returns the fetched values as a tuple.

    Args:
        plan: the ExecutorPlan.
        feeds: a mapping whose values are the fed values, in the plan's feed order.
        records: optional list receiving ``(op, start, end)`` per op run.

    Raises:
        errors.OpError: when a kernel fails; the message names its op.
    """
    values = {}
    fed_values = feeds.values() if feeds else ()
    for i, (convert, value) in enumerate(zip(plan.feed_converters, fed_values)):
        values[Source(None, i)] = convert(value)
    freed_after = _freed_after(plan)
    for index, node in enumerate(plan.nodes):
        check_step()  # the deadline passed, or the session closed: stop between ops
        inputs = [values[src].get() if deref else values[src]
                  for src, deref in zip(node.inputs, node.deref)]
        start = time.perf_counter()
        try:
            outputs = node.kernel(node.ctx, *inputs, **node.attrs)
        except Exception as error:  # re-raised naming the op and its origin
            raise located_error(error, node.op) from error
        if records is not None:
            records.append((node.op, start, time.perf_counter()))
        if node.num_outputs == 1:
            outputs = (outputs,)
        for j in range(node.num_outputs):
            values[Source(index, j)] = outputs[j]
        for src in freed_after.get(index, ()):
            del values[src]
    return tuple(own(values[src].get() if deref else values[src])
                 for src, deref in zip(plan.fetches, plan.fetch_deref))


def _freed_after(plan):
    """Node index -> the values nobody reads after that node (fetches are kept)."""
    freed = {}
    for src, last_reader in plan.last_use.items():
        freed.setdefault(last_reader, []).append(src)
    return freed


class InterpreterStep:
    """:func:`run_plan` behind the step protocol ``step(feeds, *, deadline, trace)``."""

    def __init__(self, plan, cancellation=None):
        self.plan = plan
        self._cancellation = cancellation
        self._device = plan.nodes[0].ctx.device.name if plan.nodes else ""

    def __call__(self, feeds, *, deadline=None, trace=None):
        records = None if trace is None else trace.setdefault(self._device, [])
        saved = set_step_deadline(deadline, self._cancellation)
        try:
            return run_plan(self.plan, feeds, records)
        finally:
            set_step_deadline(*saved)
