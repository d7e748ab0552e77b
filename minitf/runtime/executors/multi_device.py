"""Running one step whose ops are placed on several devices.

The partitioner gave each device its own graph, joined by Send/Recv pairs.
At plan time each partition is registered with the *worker* serving its
device — the session's own :class:`~minitf.runtime.worker.service.WorkerService`
for devices in this process, a device process for the others — and each step
then calls ``run_graph`` on every partition at once (one thread each), all
with the same ``step_id`` so their Sends and Recvs meet.

Each partition's schedule keeps the creation order of its ops — the global
topological order restricted to that device — so a blocking ``_Recv`` never
waits for a ``_Send`` scheduled after it on the same device: steps cannot
deadlock.  If a partition fails, the step is aborted on every worker: waiting
Recvs wake up with that error, every thread finishes, and the caller gets the
original error.
"""

import itertools
import secrets
import threading

from minitf.runtime.executors.located_errors import relocated_error
from minitf.runtime.values import own

# Step ids start at a random point: partitions of steps from different clients
# (processes) may meet on one worker, whose rendezvous is keyed by step id.
_step_ids = itertools.count(secrets.randbits(62))


def new_step_id():
    """A fresh step id: the key that makes the Sends and Recvs of one run meet."""
    return next(_step_ids)


class _PartitionEntry:
    """A registered partition: its worker, handle, and feed/fetch name mapping."""

    def __init__(self, part, worker):
        self.device = part.device
        self.worker = worker
        self.handle = worker.register_graph(part.graph, part.device.name)
        self.args = [(original, arg.name) for original, arg in part.feeds]
        self.fetch_sources = list(part.fetches)
        self.fetch_names = [t.name for t in part.fetches.values()]


class MultiDeviceStep:
    """``step(feeds, *, deadline=None, trace=None)`` for a partitioned step.

    Args:
        partitions: device name -> Partition.
        worker_for: ``worker_for(device name)`` -> the worker serving it.
        feeds, fetches: the step's fed and fetched Tensors.
        converters: per feed, the function checking and converting its value.
    """

    def __init__(self, partitions, worker_for, feeds, fetches, converters):
        self._feeds = feeds
        self._fetches = fetches
        self._converters = converters
        self._entries = []
        self._registered = self._entries  # until close()
        try:
            for name, part in partitions.items():
                self._entries.append(_PartitionEntry(part, worker_for(name)))
        except BaseException:  # a worker refused or is gone: undo the others
            self.close()
            raise
        self._registered = list(self._entries)
        self._workers = list({id(e.worker): e.worker for e in self._entries}.values())
        self.partition_graphs = {name: p.graph for name, p in partitions.items()}

    def __call__(self, feeds, *, deadline=None, trace=None):
        """Runs the step; with ``trace`` (a dict) records ``(op, start, end)`` per device."""
        return self.run(feeds, new_step_id(), deadline=deadline, trace=trace)

    def run(self, feeds, step_id, *, deadline=None, trace=None):
        """Runs the step as ``step_id`` (from :func:`new_step_id`), which
        :meth:`abort` names to stop it from another thread."""
        values = {}
        if self._feeds:
            for tensor, convert, value in zip(self._feeds, self._converters, feeds.values()):
                values[tensor] = convert(value)
        results, failures = {}, []

        def run(entry):
            records = None if trace is None else trace.setdefault(entry.device.name, [])
            feeds = {name: values[original] for original, name in entry.args}
            try:
                out = entry.worker.run_graph(entry.handle, step_id, feeds, entry.fetch_names,
                                             deadline, records)
                results.update(zip(entry.fetch_sources, out))
            except BaseException as error:  # handed to the caller below
                failures.append(error)
                for worker in self._workers:
                    worker.abort_step(step_id, error)

        threads = [threading.Thread(target=run, args=(e,), daemon=True) for e in self._entries[1:]]
        try:
            for thread in threads:
                thread.start()
            if self._entries:  # none when every fetch is fed
                run(self._entries[0])
            for thread in threads:
                thread.join()
        finally:
            for worker in self._workers:
                worker.cleanup_step(step_id)
        if failures:
            raise relocated_error(failures[0], self.partition_graphs.values())
        # The caller's own, writeable copies: a result may be a variable's
        # buffer, or shared memory another process wrote (read-only here).
        return tuple(own(values[t] if t in values else results[t]) for t in self._fetches)

    def abort(self, step_id, error):
        """Stops ``step_id`` on every worker: its blocked kernels and Recvs wake up
        with ``error``, which the step raises (a session closed or a client gone)."""
        for worker in self._workers:
            try:
                worker.abort_step(step_id, error)
            except Exception:  # pylint: disable=broad-except
                pass  # a worker that is gone runs nothing of the step any more

    def close(self):
        """Deregisters the partitions from their workers (TF's ``DeregisterGraph``).

        A cluster's master calls it when it forgets a step; a worker that
        cannot be reached any more has nothing left to deregister.
        """
        entries, self._registered = self._registered, []
        for entry in entries:
            try:
                entry.worker.deregister_graph(entry.handle)
            except Exception:  # pylint: disable=broad-except
                pass
