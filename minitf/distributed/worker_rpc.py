"""The worker service over gRPC: one task's devices, served to the cluster.

A task's :class:`~minitf.runtime.worker.service.WorkerService` is the same
class that serves a session's device processes; this module only carries its
calls between tasks, with TF's method names (``tensorflow/core/protobuf/
worker_service.proto``):

===================  ==============================================================
``GetStatus``        the task's devices (what the master places ops on)
``RegisterGraph``    keep a partition for one of its devices; returns a handle
``RunGraph``         run one step of a registered partition (feeds in, fetches out)
``RecvTensor``       hand over a tensor a local ``_Send`` published (remote ``_Recv``)
``RecvTensors``      hand over those of several tensors that are ready (minitf's, below)
``CleanupGraph``     forget a step's rendezvous
``AbortStep``        fail a step's waiting Recvs (minitf's; TF aborts through CleanupGraph)
``DeregisterGraph``  drop a partition
``Reset``            clear resource containers
===================  ==============================================================

:class:`WorkerServicer` answers these on a task's gRPC server;
:class:`GrpcWorkerClient` calls them and offers the same methods as an
in-process WorkerService, so the master's multi-device step and a task's
rendezvous use a remote worker exactly like a local one.

``RecvTensors`` is minitf's: TF sends one ``RecvTensor`` per tensor, which
its C++ runtime answers in microseconds; a Python gRPC call costs a few
hundred, so a task asks a peer for all the tensors a step needs of it (the
keys of the partition's Recvs, known when the step starts).  The peer answers
as soon as one of them is ready, with all those ready then; the caller asks
again for the rest.  A step that pulls six variables from a parameter server
makes one call instead of six; the gradients it sends back go in as many
calls as there are moments they become ready.

Between two tasks of one host, the large tensors of ``RunGraph`` and
``RecvTensor`` replies are lent in shared memory rather than sent
(:mod:`~minitf.distributed.shared_memory`).
"""


import time

from minitf.distributed import messages
from minitf.distributed.rpc import Stub, service_handler
from minitf.distributed.shared_memory import Borrower, Lender
from minitf.framework import errors
from minitf.framework import protos
from minitf.runtime.config import StepStats
from minitf.runtime.values import DEAD

SERVICE = "minitf.WorkerService"

# Seconds a task has, past a step's deadline, to report how the step ended.
_ANSWER_SECONDS = 0.5


class WorkerServicer:
    """Answers the worker RPCs of one task by calling its WorkerService."""

    def __init__(self, service, incarnations):
        self.service = service
        self._incarnations = incarnations  # device name -> this task's incarnation of it
        self.lender = Lender()  # large replies to callers on this host

    def handler(self):
        return service_handler(SERVICE, {
            "GetStatus": self.get_status, "RegisterGraph": self.register_graph,
            "DeregisterGraph": self.deregister_graph, "RunGraph": self.run_graph,
            "RecvTensor": self.recv_tensor, "CleanupGraph": self.cleanup_graph,
            "AbortStep": self.abort_step, "Reset": self.reset,
            "RecvTensors": self.recv_tensors})

    def get_status(self, header, tensors):
        devices = [{"name": d.name, "device_type": d.device_type, "index": d.index,
                    "host_memory": d.host_memory,
                    "memory_limit_bytes": getattr(d, "memory_limit_bytes", 0),
                    "incarnation": self._incarnations[d.name]}
                   for d in self.service.devices.values()]
        return {"devices": devices}, []

    def register_graph(self, header, tensors):
        graph_def = messages.proto_payload(tensors, 0, protos.load("graph_pb2").GraphDef,
                                           "graph_def")
        return {"handle": self.service.register_graph(graph_def, header["device"])}, []

    def deregister_graph(self, header, tensors):
        self.service.deregister_graph(header["handle"])
        return {}, []

    def run_graph(self, header, tensors):
        records = [] if header.get("trace") else None
        timeout = header.get("timeout")
        deadline = None if timeout is None else time.monotonic() + timeout
        step_id = header["step_id"]
        # A master that gives up (it died, its deadline passed) aborts the step
        # here too: no kernel keeps waiting for a step nobody wants any more.
        header.on_cancel(lambda: self._abandon(step_id))
        out = self.service.run_graph(header["handle"], step_id,
                                     dict(zip(header["feed_names"], tensors)),
                                     header["fetch_names"], deadline, records)
        if records is None:
            return self.lender.reply(header, {}, out)
        # The timings travel as TF's StepStats (wall-clock microseconds), after the fetches.
        stats = StepStats.from_trace({header["device"]: records}).to_proto()
        return self.lender.reply(header, {"step_stats": True}, out + [protos.as_payload(stats)])

    def _abandon(self, step_id):
        self.service.abort_step(step_id, errors.CancelledError(
            None, None, "RunGraph of step %d was abandoned by its caller" % step_id))
        self.service.cleanup_step(step_id)

    def recv_tensor(self, header, tensors):
        value = self.service.recv_tensor(header["step_id"], header["key"], header.get("timeout"))
        if value is DEAD:  # the untaken branch of a cond: TF's RecvTensor sends is_dead
            return self.lender.reply(header, {"is_dead": True}, [])
        return self.lender.reply(header, {}, [value])

    def recv_tensors(self, header, tensors):
        """The tensors of ``header["keys"]`` that are ready, once one of them is."""
        keys = header["keys"]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            raise errors.InvalidArgumentError(None, None, "RecvTensors: keys must be a list "
                                              "of rendezvous keys, not %r" % (keys,))
        ready = self.service.recv_some_tensors(header["step_id"], keys, header.get("timeout"))
        return self.lender.reply(
            header, {"keys": list(ready), "dead": [k for k, v in ready.items() if v is DEAD]},
            [value for value in ready.values() if value is not DEAD])

    def cleanup_graph(self, header, tensors):
        self.service.cleanup_step(header["step_id"])
        return {}, []

    def abort_step(self, header, tensors):
        try:
            messages.raise_if_error(header)
        except Exception as error:  # the error the step failed with
            self.service.abort_step(header["step_id"], error)
        return {}, []

    def reset(self, header, tensors):
        self.service.reset(header.get("containers") or [])
        return {}, []


class GrpcWorkerClient:
    """A remote task's worker, with the methods of a local WorkerService.

    Args:
        address: the task's ``"host:port"``.
        task: its name, ``/job:NAME/replica:0/task:N`` (for error messages).
        credentials: the calls' ClusterCredentials (None: the environment's).
    """

    def __init__(self, address, task, credentials=None):
        self.task = task
        self._stub = Stub(address, SERVICE, task, credentials)
        self._borrower = Borrower()  # tensors the task lends in shared memory
        self._devices_of_handles = {}  # a registered partition's handle -> its device

    def get_status(self, timeout=None, wait_for_ready=False):
        """The task's devices.

        With ``wait_for_ready`` (a session's first look at the cluster) it
        waits up to ``timeout`` seconds for a task that is still starting, as
        TF's master does, then reports it ``UnavailableError``; otherwise a
        task that is not listening is unavailable at once.
        """
        try:
            header, _ = self._stub.call("GetStatus", timeout=timeout,
                                        wait_for_ready=wait_for_ready)
        except errors.DeadlineExceededError as error:
            raise errors.UnavailableError(
                None, None, "Task %s did not answer within %s s: is it running? (%s)"
                % (self.task, timeout, error.message)) from None
        return header["devices"]

    def register_graph(self, graph, device_name):
        header, _ = self._stub.call("RegisterGraph", {"device": device_name},
                                    [protos.as_payload(graph.as_graph_def())])
        self._devices_of_handles[header["handle"]] = device_name  # named in its timings
        return header["handle"]

    def deregister_graph(self, handle):
        self._devices_of_handles.pop(handle, None)
        self._stub.call_soon("DeregisterGraph", {"handle": handle})  # not waited for

    def run_graph(self, handle, step_id, feeds, fetch_names, deadline=None, trace=None):
        timeout = _remaining(deadline)
        device_name = self._devices_of_handles.get(handle, "")
        # The task stops its step at the deadline and says which op was
        # running; the call's own deadline, a moment later, is for a task
        # that cannot answer at all.
        header, arrays = self._stub.call(
            "RunGraph", self._borrower.request(
                {"handle": handle, "step_id": step_id, "feed_names": list(feeds),
                 "fetch_names": list(fetch_names), "timeout": timeout,
                 "trace": trace is not None, "device": device_name}),
            list(feeds.values()), timeout=None if timeout is None else timeout + _ANSWER_SECONDS)
        arrays = self._borrower.arrays(header, arrays)
        if header.get("step_stats"):
            stats = messages.proto_payload(arrays, len(arrays) - 1,
                                           protos.load("step_stats_pb2").StepStats, "step_stats")
            for records in StepStats.trace_from_proto(stats).values():
                trace.extend(records)
            arrays = arrays[:-1]
        return arrays

    def recv_tensor(self, step_id, key, timeout=None):
        header, tensors = self._stub.call(
            "RecvTensor", self._borrower.request({"step_id": step_id, "key": key,
                                                  "timeout": timeout}), timeout=timeout)
        return DEAD if header.get("is_dead") else self._borrower.arrays(header, tensors)[0]

    def recv_tensors(self, step_id, keys, timeout=None):
        """Yields ``(key, tensor)`` for each of ``keys``, as the task's Sends publish them."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pending = list(keys)
        while pending:
            timeout = _remaining(deadline)
            header, tensors = self._stub.call(
                "RecvTensors", self._borrower.request({"step_id": step_id, "keys": pending,
                                                       "timeout": timeout}), timeout=timeout)
            values = iter(self._borrower.arrays(header, tensors))
            dead = set(header["dead"])
            for key in header["keys"]:
                pending.remove(key)  # a key not asked for: ValueError, the step fails
                yield key, DEAD if key in dead else next(values)

    def abort_step(self, step_id, error):
        # Not waited for: the task may be the one that died or hangs, and a
        # task that cannot be reached has nothing left to abort.
        self._stub.call_soon("AbortStep", dict(messages.error_header(error), step_id=step_id))

    def cleanup_step(self, step_id):
        self._stub.call_soon("CleanupGraph", {"step_id": step_id})  # dies with the task anyway

    def reset(self, containers):
        self._stub.call("Reset", {"containers": list(containers)})

    def close(self):
        self._stub.close()


def _remaining(deadline):
    """Seconds left until a ``time.monotonic()`` deadline (None: no deadline)."""
    return None if deadline is None else max(0.001, deadline - time.monotonic())
