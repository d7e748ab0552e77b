"""The parallel executor: independent ops run at the same time on a thread pool.

This is TF's executor loop (``ExecutorState::Process``): each step copies the
plan's *pending counts*; an op whose count is zero is handed to the pool;
when it finishes (``NodeDone``) its outputs are stored, each consumer's count
is decremented (``PropagateOutputs``) and consumers reaching zero are
scheduled in turn.  Every value also carries a count of the consumers still
to read it, and is dropped when that count reaches zero, so memory is released
as soon as a tensor's last consumer has run.

Kernels that release the GIL (NumPy on large arrays, sleeping, I/O, devices
computing asynchronously) genuinely overlap.  For graphs of many tiny ops the
generated step (:mod:`~minitf.runtime.executors.generated`) is faster, which is
why a session uses this one only when ``inter_op_parallelism_threads > 1``.
"""

import threading
import time

from minitf.runtime.executors.located_errors import located_error
from minitf.runtime.executors.plan import Source
from minitf.runtime.kernel_context import check_step, session_closed_error, set_step_deadline
from minitf.runtime.values import own


#: Seconds between two checks of the deadline and cancellation while waiting.
_POLL = 0.05


class _StepState:
    """The per-step state of one parallel step (TF's ``ExecutorState``)."""

    def __init__(self, plan, deadline, trace, cancellation):
        self.deadline = deadline
        self.cancellation = cancellation
        self.trace = trace
        self.pending = [node.pending_count for node in plan.nodes]
        self.readers = dict(plan.reader_counts)  # Source -> reads still to come
        self.values = {}
        self.remaining = len(plan.nodes)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error = None


class ParallelStep:
    """``step(feeds, *, deadline=None, trace=None)`` running an ExecutorPlan on ``pool``.

    Args:
        plan: the ExecutorPlan.
        pool: a ``concurrent.futures`` executor.
        cancellation: the session's
            :class:`~minitf.runtime.kernel_context.Cancellation` (None: none).

    Every node checks the step's deadline and cancellation before it runs, and
    the calling thread stops waiting when either comes, even while a kernel
    is still running (its results are then dropped).
    """

    def __init__(self, plan, pool, cancellation=None):
        self._plan = plan
        self._cancellation = cancellation
        self._pool = pool
        self._fetched = frozenset(plan.fetches)
        self._device = plan.nodes[0].ctx.device.name if plan.nodes else ""

    def __call__(self, feeds, *, deadline=None, trace=None):
        """Runs one step; returns the fetched values as a tuple.

        ``trace`` (a dict) receives ``(op, start, end)`` per op under the device's name.
        """
        plan = self._plan
        records = None if trace is None else trace.setdefault(self._device, [])
        state = _StepState(plan, deadline, records, self._cancellation)
        if plan.feeds:
            for i, (convert, value) in enumerate(zip(plan.feed_converters, feeds.values())):
                state.values[Source(None, i)] = convert(value)
        if not plan.nodes:
            state.done.set()
        self._submit(state, [index for index, node in enumerate(plan.nodes)
                             if node.pending_count == 0])
        self._wait(state)
        if state.error is not None:
            raise state.error
        return tuple(self._fetch(state, src, deref)
                     for src, deref in zip(plan.fetches, plan.fetch_deref))

    def _wait(self, state):
        """Waits for the step's end, its deadline or its session's close."""
        saved = set_step_deadline(state.deadline, state.cancellation)
        try:
            while not state.done.wait(_POLL):
                check_step()
        except Exception as error:  # the step stops here; its running kernels are dropped
            self._fail(state, error)
        finally:
            set_step_deadline(*saved)

    @staticmethod
    def _fetch(state, src, deref):
        value = state.values[src]
        # A variable's buffer (read through a reference or passed on by an
        # Identity) stays with the session: the caller gets a copy.
        return own(value.get() if deref else value)

    def _process(self, state, index):
        node = self._plan.nodes[index]
        set_step_deadline(state.deadline, state.cancellation)
        try:
            check_step()
        except Exception as error:  # the deadline passed or the session closed
            self._fail(state, error)
            return
        try:
            inputs = self._prepare_inputs(state, node)
            start = time.perf_counter()
            outputs = node.kernel(node.ctx, *inputs, **node.attrs)
            if state.trace is not None:
                state.trace.append((node.op, start, time.perf_counter()))
        except Exception as error:  # reported to the caller of the step
            self._fail(state, located_error(error, node.op))
            return
        self._node_done(state, index, node, outputs)

    @staticmethod
    def _prepare_inputs(state, node):
        values = []
        for src, deref in zip(node.inputs, node.deref):
            value = state.values[src]
            values.append(value.get() if deref else value)
        return values

    def _node_done(self, state, index, node, outputs):
        ready = []
        with state.lock:
            if state.error is not None:
                return
            if node.num_outputs == 1:
                outputs = (outputs,)
            for j in range(node.num_outputs):
                out = Source(index, j)
                if state.readers.get(out, 0) > 0 or out in self._fetched:
                    state.values[out] = outputs[j]
            for src in node.inputs:  # release values whose last reader this was
                state.readers[src] -= 1
                if state.readers[src] == 0 and src not in self._fetched:
                    state.values.pop(src, None)
            for consumer in node.out_nodes:
                state.pending[consumer] -= 1
                if state.pending[consumer] == 0:
                    ready.append(consumer)
            state.remaining -= 1
            if state.remaining == 0:
                state.done.set()
        self._submit(state, ready)

    def _submit(self, state, indices):
        """Hands the nodes ``indices`` to the pool (which a closing session shuts down)."""
        try:
            for index in indices:
                self._pool.submit(self._process, state, index)
        except RuntimeError:  # the pool is shut down: the session was closed
            self._fail(state, session_closed_error())

    @staticmethod
    def _fail(state, error):
        with state.lock:
            if state.error is None:
                state.error = error
        state.done.set()
