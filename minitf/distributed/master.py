"""The master service: a task's planner for the clients that connect to it.

A client's ``Session("grpc://host:port")`` never runs ops itself.  It sends
its graph to the master of that task and asks it to run steps (TF paper §3.3,
``tensorflow/core/protobuf/master_service.proto``):

===================  ==============================================================
``CreateSession``    keep the client's graph; returns a session handle
``ExtendSession``    the client's graph grew: replace the master's copy
``RunStep``          feeds in, fetches out (the step runs on the cluster's workers)
``CloseSession``     forget the session (variables on the workers stay)
``ListDevices``      every device of every task of the cluster
``Reset``            clear resource containers on every task (``tf.Session.reset``)
``PartitionGraphs``  the per-device graphs of a step (``Session.partition_graphs``)
===================  ==============================================================

For each new (fetches, feeds, targets) signature a :class:`MasterSession`
plans the step with the same :func:`~minitf.runtime.master.plan_step` a local
session uses — over the devices of *all* tasks, with ops that name no job
placed on the master's own task — and runs it as a
:class:`~minitf.runtime.executors.multi_device.MultiDeviceStep`: each
partition is registered with the worker of its task and run there with
``RunGraph``; partitions on different tasks exchange tensors with
``RecvTensor``.

Each request and reply is a small JSON header plus tensors
(:mod:`~minitf.distributed.messages`).  Where TF's ``master_service.proto``
has a protocol buffer, its bytes travel as a tensor: ``CreateSession``
carries the client's ``GraphDef``, ``ConfigProto`` and ``GraphDebugInfo``
(where each op was created), ``ExtendSession`` the ``GraphDef`` and
``GraphDebugInfo``; ``RunStep`` sends its ``RunOptions`` before the feeds and gets
a ``RunMetadata`` (the ``StepStats`` of a traced step) before the fetches;
``PartitionGraphs`` answers one ``GraphDef`` per device.
"""

import itertools
import threading
import time

from minitf.distributed import messages
from minitf.distributed.rpc import service_handler
from minitf.framework import errors
from minitf.framework import protos
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph
from minitf.framework.graph_debug_info import creation_sites
from minitf.framework.graph_def import import_graph_def
from minitf.registry.device import Device
from minitf.runtime.config import ConfigProto, RunOptions, StepStats
from minitf.runtime.executors.multi_device import MultiDeviceStep, new_step_id
from minitf.runtime.master import plan_step

SERVICE = "minitf.MasterService"

# Seconds a task has to say which devices it has (GetStatus) when no deadline is shorter.
_LIST_TIMEOUT = 10.0

# The fields of a client's ConfigProto the master honours (the others configure
# the client's own process).
CONFIG_FIELDS = ("allow_soft_placement", "log_device_placement", "operation_timeout_in_ms",
                 "device_filters")


class ClusterDevice(Device):
    """A device of some task of the cluster, as the master's placer sees it."""

    def __init__(self, attributes):
        self.device_type = attributes["device_type"]
        super().__init__(attributes["index"], attributes["name"])
        self.host_memory = attributes["host_memory"]
        self.memory_limit_bytes = attributes["memory_limit_bytes"]
        self.incarnation = attributes["incarnation"]


class MasterService:
    """Answers the master RPCs of one task.

    Args:
        task: this task's :class:`Task` view of its server (cluster, workers).
    """

    def __init__(self, task):
        self._task = task
        self._sessions = {}
        self._handles = itertools.count(1)
        self._lock = threading.Lock()

    def methods(self):
        """``{RPC name: fn(header, tensors) -> (header, tensors)}``."""
        return {"CreateSession": self.create_session, "ExtendSession": self.extend_session,
                "RunStep": self.run_step, "CloseSession": self.close_session,
                "ListDevices": self.list_devices, "Reset": self.reset,
                "PartitionGraphs": self.partition_graphs}

    def handler(self):
        return service_handler(SERVICE, self.methods())

    def create_session(self, header, tensors):
        graph_def = _payload(tensors, 0, "graph_pb2", "GraphDef")
        client_config = ConfigProto.from_proto(_payload(tensors, 1, "config_pb2", "ConfigProto"))
        config = ConfigProto(**{k: getattr(client_config, k) for k in CONFIG_FIELDS})
        session = MasterSession(self._task, graph_def, config, _sites(tensors, 2))
        with self._lock:
            handle = "session-%d" % next(self._handles)
            self._sessions[handle] = session
        return {"session_handle": handle}, []

    def extend_session(self, header, tensors):
        self._session(header).extend(_payload(tensors, 0, "graph_pb2", "GraphDef"),
                                     _sites(tensors, 1))
        return {}, []

    def run_step(self, header, tensors):
        session = self._session(header)
        options = RunOptions.from_proto(_payload(tensors, 0, "config_pb2", "RunOptions"))
        deadline = None if not options.timeout_in_ms else \
            time.monotonic() + options.timeout_in_ms / 1000.0
        trace = {} if options.trace_level != RunOptions.NO_TRACE else None
        values = session.run(header["feed_names"], tensors[1:], header["fetch_names"],
                             header["target_names"], deadline, trace, header.on_cancel)
        metadata = protos.load("config_pb2").RunMetadata()
        if trace is not None:
            metadata.step_stats.CopyFrom(StepStats.from_trace(trace).to_proto())
        return {}, [protos.as_payload(metadata)] + list(values)

    def partition_graphs(self, header, tensors):
        graphs = self._session(header).partition_graphs(
            tuple(header["feed_names"]), tuple(header["fetch_names"]),
            tuple(header["target_names"]))
        devices = sorted(graphs)
        return {"devices": devices}, [protos.as_payload(graphs[d].as_graph_def())
                                      for d in devices]

    def close_session(self, header, tensors):
        with self._lock:
            session = self._sessions.pop(header["session_handle"], None)
        if session is not None:
            session.close()
        return {}, []

    def list_devices(self, header, tensors):
        return {"devices": self._task.cluster_device_attributes()}, []

    def reset(self, header, tensors):
        self._task.reset(header.get("containers") or [])
        return {}, []

    def _session(self, header):
        with self._lock:
            session = self._sessions.get(header.get("session_handle"))
        if session is None:
            raise errors.AbortedError(None, None, "Session %s is not found on this master: it "
                                      "was closed, or the task restarted. Create a new session."
                                      % header.get("session_handle"))
        return session


class MasterSession:
    """One client session on a master: its graph, its devices and its planned steps.

    The cluster's devices are asked for once (``GetStatus``), when the first
    step is planned, and kept — as TF's master does at ``CreateSession``.
    A step that fails because a task went away (``UnavailableError``) or came
    back as a new incarnation (``AbortedError``: its partitions and resources
    are gone) makes the session forget its planned steps, whose partitions
    were registered with the old incarnation; after an ``AbortedError`` it
    also asks for the devices again (their incarnations changed).  The next
    run of the step plans and registers it anew, as TF's client does by
    recreating its session.
    """

    def __init__(self, task, graph_def, config, sites=None):
        self._task = task
        self._config = config
        self._steps = {}
        self._devices = None
        self._running = {}  # step id -> the step running it, while it runs
        self._closed = False
        self._lock = threading.Lock()
        self._graph = _imported(graph_def, sites)

    def extend(self, graph_def, sites=None):
        graph = _imported(graph_def, sites)
        with self._lock:
            self._graph = graph
            steps, self._steps = list(self._steps.values()), {}
        _close_all(steps)

    def run(self, feed_names, feed_values, fetch_names, target_names, deadline, trace,
            on_cancel):
        """Runs one step; ``on_cancel(callback)`` registers what to do if the
        client gives up on it (its process died, it closed its channel)."""
        if deadline is None and self._config.operation_timeout_in_ms > 0:
            deadline = time.monotonic() + self._config.operation_timeout_in_ms / 1000.0
        step = self._step(tuple(feed_names), tuple(fetch_names), tuple(target_names), deadline)
        step_id = new_step_id()
        with self._lock:
            if self._closed:
                raise errors.CancelledError(None, None, "Session has been closed.")
            self._running[step_id] = step
        on_cancel(lambda: step.abort(step_id, errors.CancelledError(
            None, None, "The client abandoned step %d" % step_id)))
        try:
            return step.run(dict(zip(feed_names, feed_values)), step_id, deadline=deadline,
                            trace=trace)
        except (errors.AbortedError, errors.UnavailableError) as error:
            self._forget(step, devices=isinstance(error, errors.AbortedError))
            raise
        finally:
            with self._lock:
                self._running.pop(step_id, None)

    def _forget(self, failed_step, devices):
        """Drops the planned steps after a task failed (see the class docstring)."""
        with self._lock:
            if devices:
                self._devices = None
            if failed_step not in self._steps.values():
                return  # another thread already did
            steps, self._steps = list(self._steps.values()), {}
        _close_all(steps)

    def _step(self, feed_names, fetch_names, target_names, deadline=None):
        key = (feed_names, fetch_names, target_names)
        with self._lock:
            step = self._steps.get(key)
            if step is None:
                step = self._steps[key] = self._make_step(*key, deadline=deadline)
            return step

    def _make_step(self, feed_names, fetch_names, target_names, deadline=None):
        """Plans and registers a step; asking tasks for their devices ends at ``deadline``."""
        timeout = _LIST_TIMEOUT if deadline is None else \
            max(0.001, min(_LIST_TIMEOUT, deadline - time.monotonic()))
        graph = self._graph
        feeds = [graph.get_tensor_by_name(n) for n in feed_names]
        fetches = [graph.get_tensor_by_name(n) for n in fetch_names]
        targets = [graph.get_operation_by_name(n) for n in target_names]
        listed = self._devices is None
        if listed:
            self._devices = self._task.cluster_devices(self._config.device_filters, timeout)
        planned = plan_step(graph, fetches, feeds, targets, self._devices, self._config,
                            self._task.registry, default_task=self._task.spec)
        if not listed:
            self._check_incarnations(planned.partitions, timeout)
        return MultiDeviceStep(planned.partitions, self._task.worker_for_device,
                               planned.step.feeds, planned.step.fetches,
                               [_unchanged] * len(feeds))

    def _check_incarnations(self, partitions, timeout):
        """Fails with TF's AbortedError if a task the step uses restarted since
        the session listed its devices: a new incarnation has lost the
        resources (variables, queues) the client initialized on the old one."""
        planned = {p.device.name: p.device.incarnation for p in partitions.values()
                   if isinstance(p.device, ClusterDevice)}
        for task in sorted({task_of(name) for name in planned}):
            now = {a["name"]: a["incarnation"]
                   for a in self._task.worker_for_task(task).get_status(timeout=timeout)}
            changed = sorted(n for n in planned if task_of(n) == task and now.get(n) != planned[n])
            if changed:
                self._devices = None  # the next step lists them again
                raise errors.AbortedError(
                    None, None, "Task %s restarted since this session listed its devices (the "
                    "incarnation of %s changed): the variables, queues and partitions it held "
                    "are gone. Run the step again (re-initialize the task's variables first)."
                    % (task, ", ".join(changed)))

    def partition_graphs(self, feed_names, fetch_names, target_names):
        """Device name -> partition Graph of the step of this signature."""
        return self._step(feed_names, fetch_names, target_names).partition_graphs

    def close(self):
        """Stops the steps still running (``CancelledError``: a queue runner's
        blocked dequeue must not take an element after its session is gone)
        and deregisters the session's partitions (variables stay)."""
        with self._lock:
            self._closed = True
            running, self._running = dict(self._running), {}
            steps, self._steps = list(self._steps.values()), {}
        for step_id, step in running.items():
            step.abort(step_id, errors.CancelledError(None, None, "Session has been closed."))
        _close_all(steps)


def _close_all(steps):
    for step in steps:
        step.close()


def _payload(tensors, index, module, message):
    """The ``<module>.<message>`` protocol buffer a request carries as tensor ``index``."""
    return messages.proto_payload(tensors, index, getattr(protos.load(module), message),
                                  message)


def _sites(tensors, index):
    """``{op name: (file, line)}`` of the ``GraphDebugInfo`` a request carries as
    tensor ``index`` (none if it carries none)."""
    if index >= len(tensors):
        return {}
    return creation_sites(_payload(tensors, index, "graph_debug_info_pb2", "GraphDebugInfo"))


def _imported(graph_def, sites=None):
    """The client's graph; ``sites`` (``{op name: (file, line)}``) says where the
    user created each op, so that errors raised here (placement) name it."""
    graph = Graph()
    with graph.as_default():
        import_graph_def(graph_def, name="")
    for op in graph.get_operations():
        site = (sites or {}).get(op.name)
        if site is not None:
            op._traceback = site
    return graph


def _unchanged(value):
    return value


def task_of(device_name):
    """``/job:J/replica:R/task:T`` of a device name."""
    spec = DeviceSpec.from_string(device_name)
    return "/job:%s/replica:%d/task:%d" % (spec.job, spec.replica or 0, spec.task or 0)
