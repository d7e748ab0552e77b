"""Running one step whose ops are placed on several devices.

The partitioner gave each device its own graph, joined by Send/Recv pairs.
Each partition is compiled like a single-device step and run by its own
thread, all sharing one :class:`~minitf.runtime.rendezvous.Rendezvous` for the
step.  Each partition's schedule keeps the creation order of its copies —
the global topological order restricted to that device — which guarantees
that a blocking ``_Recv`` never waits for a ``_Send`` that is scheduled after
it on the same device, so steps cannot deadlock.

If a partition fails, the rendezvous is aborted: the other partitions' Recvs
wake up with the same error, every thread finishes, and the caller gets the
original error.
"""

import threading

from minitf.runtime import placer
from minitf.runtime.codegen import compile_plan
from minitf.runtime.executor import build_plan
from minitf.runtime.kernel_context import KernelContext, set_step_state
from minitf.runtime.rendezvous import Rendezvous


class _CompiledPartition:
    """One partition's compiled step and how its feeds and fetches map to the step's."""

    def __init__(self, session, part, traced):
        self.device = part.device
        self.arg_sources = [original for original, _ in part.feeds]
        args = [arg for _, arg in part.feeds]
        arg_ops = {arg.op for arg in args}
        # Creation order, the feeds' placeholders left out: see the module docstring.
        ops = [op for op in part.graph.get_operations() if op not in arg_ops]
        self.fetch_sources = list(part.fetches)
        resources = session._resources[part.device.name]
        registry = session._registry
        plan = build_plan(
            ops, args, list(part.fetches.values()),
            kernel_for=lambda op: registry.kernel(op.type, part.device.device_type,
                                                  placer.kernel_dtypes(op), node=op),
            ctx_for=lambda op: KernelContext(op, part.device, resources))
        self.nodes = plan.nodes
        self.step = compile_plan(plan, [_unchanged] * len(args), single_fetch=False, traced=traced)

    def run(self, values, rendezvous, deadline, trace):
        set_step_state(rendezvous, deadline)
        try:
            feed = {i: values[t] for i, t in enumerate(self.arg_sources)}
            results = self.step(feed) if trace is None else self.step(feed, trace)
            return dict(zip(self.fetch_sources, results))
        finally:
            set_step_state(None, None)


def _unchanged(value):
    return value


class MultiDeviceStep:
    """``step(feed_dict) -> fetched values`` for a partitioned step."""

    def __init__(self, session, partitions, feeds, fetches, converters, traced=False):
        self._feeds = feeds
        self._fetches = fetches
        self._converters = converters
        self._partitions = [_CompiledPartition(session, p, traced) for p in partitions.values()]
        self.partition_graphs = {name: p.graph for name, p in partitions.items()}

    def __call__(self, feed_dict, deadline=None, trace=None):
        """Runs the step; with ``trace`` (a dict), records per device the
        ``(op, start, end)`` of every op run."""
        values = {}
        if self._feeds:
            for tensor, convert, value in zip(self._feeds, self._converters, feed_dict.values()):
                values[tensor] = convert(value)
        rendezvous = Rendezvous()
        results, failures = {}, []

        def run(partition):
            records = None
            if trace is not None:
                records = trace.setdefault(partition.device.name, [])
            try:
                results.update(partition.run(values, rendezvous, deadline, records))
            except BaseException as error:  # handed to the caller below
                failures.append(error)
                rendezvous.start_abort(error)

        threads = [threading.Thread(target=run, args=(p,), daemon=True)
                   for p in self._partitions[1:]]
        for thread in threads:
            thread.start()
        run(self._partitions[0])
        for thread in threads:
            thread.join()
        if failures:
            raise failures[0]
        if trace is not None:
            for partition in self._partitions:
                records = trace[partition.device.name]
                records[:] = [(partition.nodes[i].op, start, end) for i, start, end in records]
        return tuple(values[t] if t in values else results[t] for t in self._fetches)
