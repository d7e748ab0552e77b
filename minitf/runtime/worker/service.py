"""The worker service: what a process offers to run its devices' partitions.

TF splits a distributed runtime into a *master* (the session: prunes, places,
partitions) and *workers* (each runs the partitions of its own devices).  The
interface between them is TF's ``WorkerService``:

* ``register_graph(graph, device)`` — keep a partition and return a handle;
* ``run_graph(handle, step_id, feeds, fetches)`` — run one step of it;
* ``recv_tensor(step_id, key)`` — hand over a tensor a local ``_Send`` put in
  this step's rendezvous (how a remote ``_Recv`` pulls it);
* ``abort_step`` / ``cleanup_step`` — fail or forget a step.

The same class serves the session's own process (called directly) and each
device process (called over a socket through :mod:`minitf.runtime.worker.server`),
so multi-process and in-process runs share every line of this logic.  A
partition is planned with :func:`~minitf.runtime.executors.plan.build_plan` and
run by the step :func:`~minitf.runtime.executors.step.make_step` chooses —
the same two calls the session makes for a step on one device.
"""

import collections
import concurrent.futures
import itertools
import secrets
import threading
import time

from minitf.framework import errors
from minitf.framework.graph import Graph
from minitf.framework.graph_def import import_graph_def
from minitf.runtime.config import ConfigProto
from minitf.runtime.executors.plan import build_plan
from minitf.runtime.executors.step import make_step
from minitf.runtime.kernel_context import KernelContext, StepAborted, set_step_state
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.rendezvous import LOCAL_INCARNATION, Rendezvous, parse_key, rendezvous_key
from minitf.runtime.resources import ResourceManager


class StepRendezvous(Rendezvous):
    """A step's rendezvous in one process: local Sends, local or remote Recvs.

    A Recv whose ``send_device`` lives in this process waits on the local
    table; otherwise it pulls the tensor from the owning process with
    ``recv_tensor`` (TF's ``RemoteRendezvous``).
    """

    def __init__(self, step_id, local_devices, peer_for):
        super().__init__()
        self.step_id = step_id
        self._local = local_devices
        self._peer_for = peer_for
        self._prefetched = {}  # key -> (the pool's Future of the job, Future of the value)
        self._prefetch_lock = threading.Lock()

    def prefetch(self, keys, timeout, pool):
        """Starts pulling the remote tensors of ``keys`` now, all at once.

        TF's ``_Recv`` is an asynchronous kernel: every ``RecvTensor`` of a
        step is in flight together and the producer answers each as soon as
        its ``_Send`` runs.  minitf's executors run a partition's ops one
        after another, so without this the round trips of its Recvs would
        add up (a training step pulls every variable, then waits for every
        update: a dozen round trips).

        A peer that streams (a task over gRPC, ``recv_tensors``) sends all the
        tensors this step wants of it in one call, each as soon as its Send
        runs; other peers are asked once per tensor.
        """
        by_peer = {}
        with self._prefetch_lock:
            for key in keys:
                device = parse_key(key).send_device
                if device not in self._local and key not in self._prefetched:
                    by_peer.setdefault(self._peer_for(device), []).append(key)
            for peer, peer_keys in by_peer.items():
                if len(peer_keys) > 1 and hasattr(peer, "recv_tensors"):
                    fetch = _Stream(peer, self.step_id, peer_keys, timeout)
                    self._prefetched.update((key, fetch) for key in peer_keys)
                else:
                    for key in peer_keys:
                        self._prefetched[key] = _Pull(peer, self.step_id, key, timeout)
            for fetch in set(self._prefetched.values()):
                fetch.start(pool)

    def recv(self, key, timeout=None):
        send_device = parse_key(key).send_device
        if send_device in self._local or self.aborted:
            return super().recv(key, timeout)
        with self._prefetch_lock:
            fetch = self._prefetched.pop(key, None)
        if fetch is not None:
            return fetch.result(key)
        return self._peer_for(send_device).recv_tensor(self.step_id, key, timeout)

    def forget_prefetched(self):
        """Cancels the pulls not started (the step is over; the others end with it)."""
        with self._prefetch_lock:
            fetches, self._prefetched = set(self._prefetched.values()), {}
        for fetch in fetches:
            fetch.cancel()


class _Pull:
    """One tensor pulled early by a thread of the pool (``recv_tensor``)."""

    def __init__(self, peer, step_id, key, timeout):
        self._call = lambda: peer.recv_tensor(step_id, key, timeout)
        self._job = None

    def start(self, pool):
        if self._job is None:
            self._job = pool.submit(self._call)

    def result(self, key):
        # A pull still queued behind others is done here instead: the pool's
        # threads may all wait for tensors that need this one first.
        if self._job.cancel():
            return self._call()
        return self._job.result()

    def cancel(self):
        self._job.cancel()


class _Stream:
    """A step's tensors from one peer, streamed by one ``recv_tensors`` call.

    The pool's thread reads the stream and resolves one future per key.  A
    Recv that finds the stream still not started after a moment (the pool
    busy) moves it to a thread of its own rather than waiting: the tensors
    the pool's threads wait for may need this Recv's partition to go on first.
    """

    def __init__(self, peer, step_id, keys, timeout):
        self._peer, self._step_id, self._timeout = peer, step_id, timeout
        self._values = {key: concurrent.futures.Future() for key in keys}
        self._job = None
        self._started = threading.Event()
        self._moved = False
        self._lock = threading.Lock()

    def start(self, pool):
        if self._job is None:
            self._job = pool.submit(self._read)

    def result(self, key):
        if self._started.wait(_POOL_START_SECONDS):
            return self._values[key].result()
        with self._lock:
            if not self._moved and self._job.cancel():
                self._moved = True
                threading.Thread(target=self._read, name="minitf-stream", daemon=True).start()
        return self._values[key].result()

    def cancel(self):
        with self._lock:
            if not self._moved:
                self._job.cancel()

    def _read(self):
        self._started.set()
        error = None
        try:
            for key, value in self._peer.recv_tensors(self._step_id, list(self._values),
                                                      self._timeout):
                self._values[key].set_result(value)
        except Exception as failure:  # pylint: disable=broad-except
            error = failure
        for key, future in self._values.items():
            if not future.done():
                future.set_exception(error or errors.InternalError(
                    None, None, "The stream of step %d's tensors ended without %s"
                    % (self._step_id, key)))


# The cancellation a worker's steps are made with: :meth:`WorkerService.abort_step`
# and :meth:`WorkerService.close` abort a step's rendezvous, and its executors
# stop between ops with the error saying why.
_STEP_ABORTED = StepAborted()


class _RegisteredGraph:
    """A partition kept by a worker, with its compiled steps per signature."""

    def __init__(self, graph, device, resources, registry, config, thread_pool):
        self.graph = graph
        self.device = device
        self.resources = resources
        self.registry = registry
        self.config = config
        self.thread_pool = thread_pool
        self.steps = {}
        self.lock = threading.Lock()
        # The keys of the Recvs to pull at the start of a step: those outside
        # loops (a Recv inside one has a key per iteration, known only then).
        looping = any(op.type == "Enter" for op in graph.get_operations())
        self.prefetched_keys = [] if looping else [
            rendezvous_key(op) for op in graph.get_operations() if op.type == "_Recv"]

    def step(self, feed_names, fetch_names, traced):
        key = (feed_names, fetch_names, traced)
        with self.lock:
            if key not in self.steps:
                self.steps[key] = self._compile(feed_names, fetch_names, traced)
            return self.steps[key]

    def _compile(self, feed_names, fetch_names, traced):
        feeds = [self.graph.get_tensor_by_name(n) for n in feed_names]
        fetches = [self.graph.get_tensor_by_name(n) for n in fetch_names]
        fed_ops = {t.op for t in feeds}
        # The partition's creation order is its schedule (see multi_device.py).
        ops = [op for op in self.graph.get_operations() if op not in fed_ops]
        device, resources, registry = self.device, self.resources, self.registry
        # A device with its own memory receives feeds through from_host (the
        # fetches leave through to_host in run_graph): copies at the partition's edge only.
        convert = _unchanged if device.host_memory else device.from_host
        plan = build_plan(
            ops, feeds, fetches,
            kernel_for=lambda op: registry.kernel(op.type, device.device_type,
                                                  kernel_dtypes(op), node=op),
            ctx_for=lambda op: KernelContext(op, device, resources),
            feed_converters=[convert] * len(feeds))
        return make_step(plan, self.config, traced, self.thread_pool, _STEP_ABORTED)


# How many cleaned-up step ids a worker remembers (see WorkerService.rendezvous).
_FINISHED_STEPS = 4096

# The threads running the kernels of partitions whose loop frames are cut
# across devices (their _Recvs wait on threads of their own).
_LOOP_THREADS = 8

# The threads pulling remote tensors ahead of the _Recvs that take them.
_PULL_THREADS = 32
# Seconds a Recv gives the pool to start a stream it waits for (see _Stream).
_POOL_START_SECONDS = 0.005


def _unchanged(value):
    return value


class WorkerService:
    """Runs partitions on the devices of this process.

    Args:
        devices: the devices this process owns.
        registry: the kernel registry.
        peer_for: ``peer_for(device_name)`` -> an object with
            ``recv_tensor(step_id, key, timeout)`` for devices of other processes.
        resources: optional ``{device name: ResourceManager}`` to share.
        config: the ConfigProto its steps are made with (default: TF's defaults).
    """

    def __init__(self, devices, registry, peer_for=None, resources=None, config=None):
        self.devices = {d.name: d for d in devices}
        self._registry = registry
        self._peer_for = peer_for
        self._config = config or ConfigProto()
        self.resources = resources or {d.name: ResourceManager() for d in devices}
        self._graphs = {}
        self._steps = {}
        self._finished = collections.OrderedDict()  # recently cleaned-up step ids
        # Handles are never reused by a restarted worker (as TF's random ones).
        self._incarnation = secrets.token_hex(4)
        self._handles = itertools.count(1)
        self._lock = threading.Lock()
        self._loop_pool = None
        self._pull_pool = None

    def register_graph(self, graph, device_name):
        """Keeps a partition (a Graph or GraphDef) for ``device_name``; returns its handle."""
        if device_name not in self.devices:
            raise errors.InvalidArgumentError(None, None, "Device %s is not served here; this "
                                              "worker has %s" % (device_name, list(self.devices)))
        if not isinstance(graph, Graph):
            imported = Graph()
            with imported.as_default():
                import_graph_def(graph, name="")
            graph = imported
        handle = "graph-%s-%d" % (self._incarnation, next(self._handles))
        self._graphs[handle] = _RegisteredGraph(
            graph, self.devices[device_name], self.resources[device_name], self._registry,
            self._config, self._thread_pool)
        return handle

    def _thread_pool(self):
        """The threads running the kernels of partitions that need them (made once)."""
        with self._lock:
            if self._loop_pool is None:
                self._loop_pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=_LOOP_THREADS, thread_name_prefix="minitf-loop")
            return self._loop_pool

    def _recv_pool(self):
        """The threads pulling the remote tensors of steps early (made once)."""
        with self._lock:
            if self._pull_pool is None:
                self._pull_pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=_PULL_THREADS, thread_name_prefix="minitf-pull")
            return self._pull_pool

    def deregister_graph(self, handle):
        self._graphs.pop(handle, None)

    def reset(self, containers=()):
        """Clears the resources (variables, queues, ...) of this process's devices.

        minitf keeps every resource in one default container, so any request
        clears it (``tf.Session.reset(target, containers)``).
        """
        del containers
        for resources in self.resources.values():
            resources.clear()

    def rendezvous(self, step_id):
        """This process's rendezvous for ``step_id`` (created on first use).

        A step already cleaned up gets an aborted rendezvous that is not kept:
        a ``RunGraph``, ``RecvTensor`` or ``AbortStep`` arriving late (from a
        master whose step failed while this task was slow) fails at once
        instead of waiting, or leaving an entry behind forever.
        """
        with self._lock:
            rendezvous = self._steps.get(step_id)
            if rendezvous is None:
                rendezvous = StepRendezvous(step_id, self.devices, self._peer_for)
                if step_id in self._finished:
                    rendezvous.start_abort(errors.AbortedError(
                        None, None, "Step %d was already aborted or cleaned up on %s"
                        % (step_id, self._task_name())))
                else:
                    self._steps[step_id] = rendezvous
            return rendezvous

    def run_graph(self, handle, step_id, feeds, fetch_names, deadline=None, trace=None):
        """Runs one step of a registered partition.

        Args:
            handle: from :meth:`register_graph`.
            step_id: the step (shared by all partitions of one ``Session.run``).
            feeds: ``{tensor name: array}``.
            fetch_names: tensor names to return.
            deadline: ``time.monotonic()`` deadline, or None.
            trace: a list receiving ``(op, start, end)`` per op, or None.

        Returns:
            The fetched arrays, in order.
        """
        registered = self._graphs.get(handle)
        if registered is None:
            raise errors.AbortedError(
                None, None, "Graph handle %s is not found on the worker of %s. Possibly, this "
                "worker just restarted (or the graph was deregistered): partitions registered "
                "with it, and its resources (variables, queues), are gone. Run the step again "
                "to register its partitions anew." % (handle, self._task_name()))
        step = registered.step(tuple(feeds), tuple(fetch_names), trace is not None)
        rendezvous = self.rendezvous(step_id)
        if registered.prefetched_keys and not rendezvous.aborted:
            timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
            rendezvous.prefetch(registered.prefetched_keys, timeout, self._recv_pool())
        saved = set_step_state(rendezvous, deadline)
        try:
            results = step(feeds, deadline=deadline,
                           trace=None if trace is None else {registered.device.name: trace})
        finally:
            set_step_state(*saved)
        if not registered.device.host_memory:
            return [registered.device.to_host(value) for value in results]
        return list(results)

    def recv_tensor(self, step_id, key, timeout=None):
        """The tensor a local ``_Send`` published under ``key`` in ``step_id``.

        Raises:
            errors.AbortedError: if the key names another incarnation of the
                sending device: the step was planned before this process
                (re)started, and its Send will never come (TF's check).
        """
        self._check_sender(key)
        return Rendezvous.recv(self.rendezvous(step_id), key, timeout)

    def recv_some_tensors(self, step_id, keys, timeout=None):
        """``{key: tensor}`` of those of ``keys`` the local ``_Send``\\ s of ``step_id``
        published, once there is at least one (see :meth:`recv_tensor`)."""
        for key in keys:
            self._check_sender(key)
        return Rendezvous.recv_some(self.rendezvous(step_id), keys, timeout)

    def _check_sender(self, key):
        """Raises unless ``key``'s sending device is this process's, in this incarnation."""
        parsed = parse_key(key)
        device = self.devices.get(parsed.send_device)
        if device is None:
            raise errors.InvalidArgumentError(None, None, "RecvTensor of %s: device %s is not "
                                              "served here" % (key, parsed.send_device))
        incarnation = getattr(device, "incarnation", LOCAL_INCARNATION)
        if parsed.send_device_incarnation != incarnation:
            raise errors.AbortedError(
                None, None, "RecvTensor expects a different device incarnation: %016x vs. %016x "
                "of %s. Your worker job (%s) was probably restarted. Check your worker job for "
                "the reason why it was restarted." % (parsed.send_device_incarnation,
                                                      incarnation, parsed.send_device,
                                                      self._task_name()))

    def abort_step(self, step_id, error):
        self.rendezvous(step_id).start_abort(error)

    def cleanup_step(self, step_id):
        with self._lock:
            rendezvous = self._steps.pop(step_id, None)
            if rendezvous is not None:
                rendezvous.forget_prefetched()
                # A peer's RecvTensors still waiting here (its caller gave up) wakes up.
                rendezvous.start_abort(errors.AbortedError(
                    None, None, "Step %d was cleaned up on %s" % (step_id, self._task_name())))
            self._finished[step_id] = True
            while len(self._finished) > _FINISHED_STEPS:
                self._finished.popitem(last=False)

    def close(self, error=None):
        """Stops this worker: steps still running fail with ``error`` (default: a
        ``CancelledError`` saying the worker shuts down), kernels blocked on
        queues wake up, resources are freed and its threads end."""
        with self._lock:
            steps, self._steps = list(self._steps.values()), {}
            pools = [self._loop_pool, self._pull_pool]
            self._loop_pool = self._pull_pool = None
        if error is None:
            error = errors.CancelledError(
                None, None, "The worker of %s is shutting down" % self._task_name())
        for rendezvous in steps:
            rendezvous.start_abort(error)
            rendezvous.forget_prefetched()
        self.reset()
        self._graphs.clear()
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=False)

    def _task_name(self):
        """This worker's task (``/job:ps/replica:0/task:0``), for messages."""
        names = sorted(self.devices)
        return names[0].rsplit("/device:", 1)[0] if names else "(no devices)"
