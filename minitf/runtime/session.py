"""``tf.Session``: running parts of a graph (phase 2 of a TF1 program).

``sess.run(fetches, feed_dict)`` does, for each new (fetches, feeds) signature:

1. flatten the fetch structure (:mod:`~minitf.runtime.fetches`) and resolve the
   feed keys (:mod:`~minitf.runtime.feeds`);
2. ask the master to plan the step (:func:`~minitf.runtime.master.plan_step`:
   prune, schedule, rewrite passes, place, partition);
3. make the step that runs the plan: on one device, the executor
   :func:`~minitf.runtime.executors.step.make_step` chooses; on several, a
   :class:`~minitf.runtime.executors.multi_device.MultiDeviceStep` that runs
   each partition on the worker serving its device.

The result — the step and how to rebuild the fetch structure from its values
— is cached under the signature, so a repeated call costs one dict lookup and
the step itself.  Variables and other
state live in the session's per-device resource managers and survive across
runs until ``close()``.

Mirrors ``tensorflow/python/client/session.py`` and TF's ``DirectSession``.
"""

import concurrent.futures
import contextlib
import time

from minitf.framework import default_session, errors
from minitf.framework import graph as graph_lib
from minitf.framework.operation import Operation
from minitf.registry import get_registry
from minitf.runtime.config import ConfigProto, RunOptions, StepStats
from minitf.runtime.device_set import DeviceAttributes, device_specs
from minitf.runtime.executors.multi_device import MultiDeviceStep
from minitf.runtime.executors.plan import build_plan
from minitf.runtime.executors.step import make_step
from minitf.runtime.feeds import (expand_sparse_keys, feed_tensor, flatten_feed_dict,
                                  make_feed_converter)
from minitf.runtime.fetches import FetchMapper, structure_key
from minitf.runtime.kernel_context import (Cancellation, KernelContext, session_closed_error,
                                           set_step_deadline)
from minitf.runtime.master import plan_step
from minitf.runtime.partial_run import PartialRun
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.resources import FedRef, ResourceManager
from minitf.runtime.worker.processes import DeviceProcesses
from minitf.runtime import targets
from minitf.runtime.worker.service import WorkerService


class BaseSession:
    """A session over one graph.  See :class:`Session`."""

    def __init__(self, target="", graph=None, config=None):
        self._graph = graph if graph is not None else graph_lib.get_default_graph()
        self._config = config or ConfigProto()
        self._registry = get_registry()
        self._runners = {}
        self._traced_runners = {}
        self._partial_runs = {}  # handle -> PartialRun
        self._default_timeout_ms = self._config.operation_timeout_in_ms
        self._closed = False
        # Set by close(): the steps running in other threads stop (CancelledError).
        self._cancellation = Cancellation()
        self._context_stack = []
        self._pool = None
        self._device_processes = None
        # A server (tf.train.Server) stands for its target, "grpc://host:port".
        self._target = getattr(target, "target", target) or ""
        self._remote = targets.connect(self._target, self._graph, config) if self._target \
            else None
        if self._remote is None:
            self._start_devices()

    def _start_devices(self):
        """This process's devices, and the device processes of the others."""
        specs = device_specs(self._registry, self._config)
        local = [factory.create(index, options=self._config)
                 for factory, index, in_process in specs if in_process]
        self._resources = {device.name: ResourceManager() for device in local}
        # Clients of the device processes by device name, filled once they run:
        # the local worker pulls tensors from them (its ``peer_for``).
        self._remote_workers = {}
        self._local_worker = WorkerService(local, self._registry,
                                           peer_for=self._remote_workers.__getitem__,
                                           resources=self._resources)
        remote = [(factory.device_type, index) for factory, index, in_process in specs
                  if not in_process]
        if remote:
            self._device_processes = DeviceProcesses(remote, self._local_worker)
            self._remote_workers.update(self._device_processes.clients)
        self._devices = _in_priority_order(
            local + (self._device_processes.devices if remote else []), specs)

    # ---- properties ------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        """The session's devices (``name``, ``device_type``, ``memory_limit_bytes``);
        through a master, every device of every task of the cluster."""
        if self._remote is not None:
            return self._remote.list_devices()
        return [DeviceAttributes(d) for d in self._devices]

    # ---- running ---------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops needed to compute ``fetches`` and returns their values.

        Args:
            fetches: a graph element (Tensor, Operation, Variable, or a name),
                or a list/tuple/namedtuple/dict nesting of them.
            feed_dict: maps tensors (or names) to values that replace them; a
                key may be a nested tuple/namedtuple of tensors (an
                ``LSTMStateTuple``) fed a value of the same structure.
            options: a :class:`RunOptions`.
            run_metadata: a :class:`RunMetadata` to fill.

        Returns:
            The fetched values (NumPy arrays/scalars) in the fetches' structure;
            an Operation's value is None.

        Raises:
            RuntimeError: if the session is closed.
            TypeError: if a fetch or feed key is not a graph element, or a fed
                value does not fit its tensor's dtype.
            ValueError: if a fetch is of another graph or a fed value has the
                wrong shape.
            errors.OpError: when an op fails while running; the message names
                the op and where it was created.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if options is not None or run_metadata is not None or self._default_timeout_ms:
            return self._run_with_options(fetches, flatten_feed_dict(feed_dict), options,
                                          run_metadata)
        try:  # the fast path: a signature seen before (its keys are tensors, nothing nested)
            step, rebuild = self._runners[(fetches, tuple(feed_dict) if feed_dict else ())]
        except (KeyError, TypeError):
            feed_dict = flatten_feed_dict(feed_dict)
            step, rebuild = self._runner_for(fetches, feed_dict, self._runners, traced=False)
        values = step(feed_dict)
        return values[0] if rebuild is None else rebuild(values)

    def _run_with_options(self, fetches, feed_dict, options, run_metadata):
        """The slower path of ``run``: deadlines and step statistics."""
        timeout_ms = (options.timeout_in_ms if options is not None and options.timeout_in_ms
                      else self._default_timeout_ms)
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        traced = options is not None and options.trace_level != RunOptions.NO_TRACE
        # Registering a new step's partitions keeps the deadline too; the
        # state it replaces is put back: this run may be nested in a kernel
        # (a py_func) of a step with a deadline of its own.
        saved = set_step_deadline(deadline)
        try:
            step, rebuild = self._runner_for(fetches, feed_dict, self._traced_runners,
                                             traced=True)
        finally:
            set_step_deadline(*saved)
        trace = {} if traced else None
        values = step(feed_dict, deadline=deadline, trace=trace)
        result = values[0] if rebuild is None else rebuild(values)
        if trace is not None and run_metadata is not None:
            run_metadata.step_stats = StepStats.from_trace(trace)
            run_metadata.rewrites = list(getattr(step, "rewrites", ()))  # none from a cluster
        return result

    def _runner_for(self, fetches, feed_dict, cache, traced):
        feed_keys = tuple(feed_dict) if feed_dict else ()
        key = (structure_key(fetches), feed_keys)
        try:
            runner = cache.get(key)
        except TypeError:  # an unhashable leaf (a set): the mapper says what is wrong with it
            FetchMapper(self._graph, fetches)
            raise
        if runner is None:
            runner = self._make_runner(fetches, feed_keys, traced)
            cache[key] = runner
            try:
                cache[(fetches, feed_keys)] = runner
            except TypeError:
                pass  # unhashable structure: found by its structure key next time
        return runner

    def _make_runner(self, fetches, feed_keys, traced):
        """Plans and makes the step of one signature (prune → ... → compile)."""
        mapper = FetchMapper(self._graph, fetches)
        feeds = [feed_tensor(self._graph, k) for k in feed_keys]
        if len(set(feeds)) != len(feeds):
            raise ValueError("The same tensor is fed more than once in feed_dict: %s"
                             % (list(feed_keys),))
        step = self._make_step(mapper.tensors, feeds, mapper.operations, traced)
        if mapper.is_single_tensor:
            return step, None  # the fastest path: no structure to rebuild
        return step, _Rebuild(mapper)

    def _make_step(self, fetches, feeds, targets, traced, done_ops=()):
        """The step computing ``fetches`` from ``feeds`` and running ``targets``.

        ``done_ops`` (a partial run's) ran in earlier calls and are left out.
        """
        converters = [make_feed_converter(t) for t in feeds]
        if self._remote is not None:  # the master of a cluster plans and runs it
            return self._remote.make_step(fetches, feeds, targets, converters, traced)
        planned = plan_step(self._graph, fetches, feeds, targets, self._devices, self._config,
                            self._registry, local_devices=self._local_worker.devices,
                            done_ops=done_ops)
        if planned.partitions is not None:
            step = MultiDeviceStep(planned.partitions, self._worker_for, planned.step.feeds,
                                   planned.step.fetches, converters)
        else:
            step = make_step(self._plan(planned, converters), self._config, traced,
                             self._thread_pool, self._cancellation)
        step.rewrites = planned.rewrites  # reported in a traced run's RunMetadata
        return step

    def _plan(self, planned, converters):
        """The ExecutorPlan of a step placed on one device of this process."""
        resources = self._resources[planned.device.name]
        device_type = planned.device.device_type
        step = planned.step
        return build_plan(
            step.ops, step.feeds, step.fetches,
            kernel_for=lambda op: self._registry.kernel(op.type, device_type,
                                                        kernel_dtypes(op), node=op),
            ctx_for=lambda op: KernelContext(op, planned.device, resources),
            feed_converters=converters)

    def _worker_for(self, device_name):
        """The worker serving ``device_name`` (this process's, for local devices)."""
        if device_name in self._local_worker.devices:
            return self._local_worker
        return self._remote_workers[device_name]

    def _thread_pool(self):
        """The pool of ``inter_op_parallelism_threads`` threads running independent ops."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=self._config.inter_op_parallelism_threads,
                thread_name_prefix="minitf-inter-op")
        return self._pool

    def partition_graphs(self, fetches, feed_dict=None):
        """The per-device graphs ``run(fetches, feed_dict)`` would execute.

        Returns:
            A dict from device name to its partition Graph (with ``_Send`` and
            ``_Recv`` ops on the cut edges) — to print or draw.
        """
        mapper = FetchMapper(self._graph, fetches)
        feeds = [feed_tensor(self._graph, k) for k in (flatten_feed_dict(feed_dict) or {})]
        if self._remote is not None:  # as the cluster's master partitions it
            return self._remote.partition_graphs(mapper.tensors, feeds, mapper.operations)
        quiet = ConfigProto(allow_soft_placement=self._config.allow_soft_placement,
                            experimental=self._config.experimental,
                            graph_options=self._config.graph_options)
        planned = plan_step(self._graph, mapper.tensors, feeds, mapper.operations,
                            self._devices, quiet, self._registry)
        return {name: part.graph for name, part in planned.partitions.items()}

    # ---- partial runs ------------------------------------------------------------
    def partial_run_setup(self, fetches, feeds=None):
        """Declares the fetches and feeds of a step run over several calls.

        See :mod:`~minitf.runtime.partial_run`: each later
        :meth:`partial_run` with the returned handle feeds some of ``feeds``
        and fetches some of ``fetches``; ops run at most once per handle.

        Args:
            fetches: a graph element or a list (any fetch structure) of them;
                an Operation among them runs once the feeds it needs are given.
            feeds: a tensor or a list of tensors (or their names) to be fed.

        Returns:
            The handle, a string.

        Raises:
            RuntimeError: if the session is closed.
            TypeError, ValueError: for a fetch or feed that is not a tensor of the graph.
            errors.InvalidArgumentError: for a tensor declared twice, or both fed and fetched.
            errors.UnimplementedError: on a session with a cluster target.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._remote is not None:
            raise errors.UnimplementedError(
                None, None, "minitf runs partial runs in local sessions only, not on %s"
                % self._target)
        feeds = [] if feeds is None else feeds if isinstance(feeds, (list, tuple)) else [feeds]
        feed_tensors = [feed_tensor(self._graph, key) for key in expand_sparse_keys(feeds)]
        mapper = FetchMapper(self._graph, fetches)
        partial = PartialRun(self._graph, mapper.tensors, mapper.operations, feed_tensors)
        self._partial_runs[partial.handle] = partial
        self._partial_run_call(partial, [], {})  # targets that need no feed run now, as in TF
        return partial.handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """Continues the partial run ``handle``: feeds more tensors, fetches more.

        Values computed by earlier calls of the handle are reused, not
        computed again.

        Args:
            handle: what :meth:`partial_run_setup` returned.
            fetches: a fetch structure of tensors declared in the setup.
            feed_dict: values of tensors declared in the setup (nested keys
                as in :meth:`run`).

        Returns:
            The fetched values, in the structure of ``fetches``.

        Raises:
            RuntimeError: if the session is closed, or ``fetches`` holds an
                Operation (TF runs those only as setup fetches).
            errors.InvalidArgumentError: for an unknown or used-up handle, a
                tensor not declared in the setup, fed or fetched before, or a
                fetch that needs a feed not given yet.
            ValueError, TypeError: for a fed value, as :meth:`run`.
            errors.OpError: when an op fails; the handle is then used up.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_dict = flatten_feed_dict(feed_dict) or {}
        feeds = [feed_tensor(self._graph, key) for key in feed_dict]
        if len(set(feeds)) != len(feeds):
            raise ValueError("The same tensor is fed more than once in feed_dict: %s"
                             % (list(feed_dict),))
        values = {t: _plain(make_feed_converter(t)(v)) for t, v in zip(feeds, feed_dict.values())}
        mapper = FetchMapper(self._graph, fetches)
        if mapper.operations:
            raise RuntimeError("partial_run() requires empty target_list.")
        if not values and not mapper.elements:
            return mapper.build_results([])  # nothing to do: TF does not look at the handle
        partial = self._partial_runs.get(handle)
        if partial is None:
            raise errors.InvalidArgumentError(
                None, None, "Must run 'setup' before performing partial runs!")
        partial.check(feeds, mapper.tensors)
        results = self._partial_run_call(partial, mapper.tensors, values)
        return mapper.build_results(results)

    def _partial_run_call(self, partial, fetches, feed_values):
        """Runs what one call of ``partial`` needs; returns the fetched values."""
        step = partial.plan(list(feed_values), fetches)
        if not step.is_empty:
            run = self._make_step(step.fetches, step.feeds, step.targets, traced=False,
                                  done_ops=step.done_ops)
            values = {**partial.values, **feed_values}
            try:
                step_values = run({t: values[t] for t in step.feeds})
            except errors.OpError:
                del self._partial_runs[partial.handle]  # TF aborts the whole run
                raise
        else:
            step_values = ()
        partial.record(step, feed_values, step_values, fetches)
        computed = dict(zip(step.fetches, step_values))
        results = [computed[t] if t in computed else partial.values[t] for t in fetches]
        if partial.finished:
            del self._partial_runs[partial.handle]
        return results

    def make_callable(self, fetches, feed_list=None):
        """Returns ``fn(*feed_values)`` equivalent to ``run(fetches, dict(zip(feed_list, ...)))``."""
        feed_list = list(feed_list or [])

        def call(*values):
            if len(values) != len(feed_list):
                raise TypeError("Expected %d feed values, got %d" % (len(feed_list), len(values)))
            return self.run(fetches, dict(zip(feed_list, values)) if feed_list else None)
        return call

    # ---- lifetime ----------------------------------------------------------------
    @staticmethod
    def reset(target, containers=None, config=None):
        """Clears resource containers on the cluster ``target`` names (``tf.Session.reset``).

        Variables, queues and other resources live in a cluster's tasks and
        outlive client sessions; this frees them on every task, so the next
        session starts from uninitialized variables::

            tf.Session.reset("grpc://localhost:2222")

        Sessions open on the cluster may fail afterwards (their variables are
        gone).  A local session (empty target) owns its resources and frees
        them with ``close()``: resetting ``""`` does nothing.

        Args:
            target: ``"grpc://host:port"`` of a task's master, or a ``tf.train.Server``.
            containers: names of the containers to clear; None clears all
                (minitf keeps every resource in the default container).
            config: a ConfigProto (unused; TF1's signature).

        Raises:
            errors.NotFoundError: if no session factory handles the target.
            errors.OpError: what the cluster reports, e.g. ``UnavailableError``.
        """
        target = getattr(target, "target", target) or ""
        if target:
            targets.reset(target, containers, config)

    def close(self):
        """Frees the session's resources; later ``run`` calls raise ``RuntimeError``.

        A step that another thread is running stops at its next op with
        ``CancelledError`` (as TF's ``Session::Close`` cancels it).
        """
        if self._closed:
            return
        self._closed = True
        self._cancellation.cancel()
        self._runners.clear()
        self._traced_runners.clear()
        self._partial_runs.clear()
        if self._remote is not None:
            self._remote.close()
            return
        # The partitions of a multi-device step stop too, here and in the
        # device processes, with the same CancelledError.
        self._local_worker.close(session_closed_error())
        for resources in self._resources.values():
            resources.clear()
        for device in self._local_worker.devices.values():
            device.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        if self._device_processes is not None:
            self._device_processes.close(session_closed_error())

    def as_default(self):
        """A context manager making this the default session (for ``eval``/``run``)."""
        return _default_session_context(self)

    def __enter__(self):
        graph_context = self._graph.as_default()
        session_context = self.as_default()
        graph_context.__enter__()
        session_context.__enter__()
        self._context_stack.append((graph_context, session_context))
        return self

    def __exit__(self, exc_type, exc_value, tb):
        graph_context, session_context = self._context_stack.pop()
        session_context.__exit__(exc_type, exc_value, tb)
        graph_context.__exit__(exc_type, exc_value, tb)
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass


def _plain(value):
    """A converted feed as an array (a reference tensor's feed comes wrapped in a FedRef)."""
    return value.get() if isinstance(value, FedRef) else value


def _in_priority_order(devices, specs):
    """Devices sorted as their specs are (type priority, then index)."""
    rank = {(factory.device_type, index): i for i, (factory, index, _) in enumerate(specs)}
    return sorted(devices, key=lambda d: rank[(d.device_type, d.index)])


class _Rebuild:
    """``rebuild(values)``: a step's values (a tuple) in the fetch structure asked for.

    An Operation's place gets None; a tensor fetched twice gets its value twice.
    """

    def __init__(self, mapper):
        self._mapper = mapper
        positions = {t: i for i, t in enumerate(mapper.tensors)}
        self._slots = [None if isinstance(e, Operation) else positions[e] for e in mapper.elements]

    def __call__(self, values):
        return self._mapper.build_results([None if s is None else values[s] for s in self._slots])


@contextlib.contextmanager
def _default_session_context(session):
    default_session.push(session)
    try:
        yield session
    finally:
        default_session.pop(session)


class Session(BaseSession):
    """A class for running TensorFlow operations (``tf.Session``).

    Example:
        >>> a = tf.constant(5.0)
        >>> b = tf.constant(6.0)
        >>> with tf.Session() as sess:
        ...     print(sess.run(a * b))
        30.0

    Args:
        target: must be empty (in-process execution).
        graph: the graph to run (default: the default graph).
        config: a :class:`ConfigProto`.
    """


class InteractiveSession(BaseSession):
    """A session that installs itself as the default on construction (for shells and notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        default_session.push(self)
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()

    def close(self):
        if not self._closed:
            default_session.pop(self)
            self._graph_context.__exit__(None, None, None)
        super().close()
