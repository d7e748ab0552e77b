"""The client's side of ``tf.Session("grpc://host:port")``: steps run by a remote master.

The session keeps doing what a local one does with fetches and feeds
(flattening, checking, rebuilding the results), but its steps are
:class:`RemoteStep`\\ s: each call is one ``RunStep`` to the master, which
plans and runs the step over the cluster (:mod:`~minitf.distributed.master`).
A master in the client's own process (``tf.Session(server.target)`` next to
its server) is called directly rather than over gRPC
(:mod:`~minitf.distributed.local_master`).
The master holds a copy of the client's graph: its ``GraphDef`` is sent with
``CreateSession`` (with the session's ``ConfigProto`` and the ops' creation
sites, a ``GraphDebugInfo``) and again with ``ExtendSession`` when the graph
has grown since (TF sends only the new
nodes; minitf sends the graph).  Each step sends TF's ``RunOptions`` and gets
a ``RunMetadata`` back, whose ``StepStats`` a traced run reports.

Errors come back as TF's classes.  The master's copy of the graph does not
know where the user created an op, so the client names the op's creation
site from its own graph.
"""

import math
import threading
import time

from minitf.distributed import local_master
from minitf.distributed.master import SERVICE
from minitf.distributed.rpc import Stub
from minitf.distributed.security import ClusterCredentials
from minitf.framework import protos
from minitf.framework.graph import Graph
from minitf.framework.graph_debug_info import create_graph_debug_info_def
from minitf.framework.graph_def import import_graph_def
from minitf.runtime.config import ConfigProto, RunOptions, StepStats
from minitf.runtime.device_set import DeviceAttributes
from minitf.runtime.executors.located_errors import relocated_error
from minitf.runtime.values import own

SCHEME = "grpc://"

# Seconds the master has to reset every task (tf.Session.reset).
_RESET_TIMEOUT = 60.0


class GrpcTarget:
    """A session's connection to the master at ``target`` (``"grpc://host:port"``)."""

    def __init__(self, target, graph, config):
        self._graph = graph
        self._config = config or ConfigProto()
        credentials = ClusterCredentials.from_environment()
        # A master in this process is called directly, as TF's LocalMaster.
        self._master = local_master.lookup(target, credentials) or \
            Stub(target[len(SCHEME):], SERVICE, target, credentials)
        self._handle = None
        self._sent_version = None
        self._lock = threading.Lock()

    def make_step(self, fetches, feeds, targets, converters, traced):
        """A :class:`RemoteStep` for one signature (the master plans it on first use)."""
        self._send_graph()
        return RemoteStep(self, [t.name for t in feeds], [t.name for t in fetches],
                          [op.name for op in targets], converters)

    def _send_graph(self):
        """Creates the master's session, or extends it when the graph has grown."""
        with self._lock:
            version = len(self._graph.get_operations())
            if version == self._sent_version:
                return
            graph_def = protos.as_payload(self._graph.as_graph_def())  # raw bytes after the header
            # Where the user created each op: the master's errors name it.
            sites = protos.as_payload(create_graph_debug_info_def(self._graph.get_operations()))
            if self._handle is None:
                config = protos.as_payload(self._config.to_proto())
                header, _ = self._master.call("CreateSession", {}, [graph_def, config, sites])
                self._handle = header["session_handle"]
            else:
                self._master.call("ExtendSession", {"session_handle": self._handle},
                                  [graph_def, sites])
            self._sent_version = version

    def run_step(self, feed_names, feed_values, fetch_names, target_names, timeout, traced):
        """One ``RunStep``: returns the step's ``RunMetadata`` message and the fetched values."""
        options = RunOptions(
            trace_level=RunOptions.FULL_TRACE if traced else RunOptions.NO_TRACE,
            timeout_in_ms=0 if timeout is None else max(1, math.ceil(timeout * 1000)))
        _, tensors = self._master.call(
            "RunStep", {"session_handle": self._handle, "feed_names": feed_names,
                        "fetch_names": fetch_names, "target_names": target_names},
            [protos.as_payload(options.to_proto())] + list(feed_values),
            timeout=None if timeout is None else timeout + 5.0)
        metadata = protos.from_payload(protos.load("config_pb2").RunMetadata, tensors[0])
        return metadata, tensors[1:]

    def partition_graphs(self, fetches, feeds, targets):
        """Device name -> the Graph the master runs there for this signature."""
        self._send_graph()
        header, graph_defs = self._master.call("PartitionGraphs", {
            "session_handle": self._handle, "feed_names": [t.name for t in feeds],
            "fetch_names": [t.name for t in fetches], "target_names": [op.name for op in targets]})
        graph_def_class = protos.load("graph_pb2").GraphDef
        return {device: _imported(protos.from_payload(graph_def_class, graph_def))
                for device, graph_def in zip(header["devices"], graph_defs)}

    def relocated(self, error):
        return relocated_error(error, [self._graph])

    def list_devices(self):
        header, _ = self._master.call("ListDevices", timeout=30.0)
        return [_Attributes(d) for d in header["devices"]]

    def reset(self, containers):
        """Clears ``containers`` (all of them: minitf has one) on every task of the cluster."""
        self._master.call("Reset", {"containers": list(containers)}, timeout=_RESET_TIMEOUT)

    def close(self):
        if self._handle is not None:
            try:
                self._master.call("CloseSession", {"session_handle": self._handle}, timeout=5.0)
            except Exception:  # pylint: disable=broad-except
                pass  # a master that is gone has nothing to forget
        self._master.close()


class RemoteStep:
    """``step(feeds, *, deadline=None, trace=None)``: one ``RunStep`` per call."""

    def __init__(self, target, feed_names, fetch_names, target_names, converters):
        self._target = target
        self._feed_names = feed_names
        self._fetch_names = fetch_names
        self._target_names = target_names
        self._converters = converters

    def __call__(self, feeds, *, deadline=None, trace=None):
        values = [convert(v) for convert, v in zip(self._converters,
                                                   feeds.values() if feeds else ())]
        timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
        try:
            metadata, results = self._target.run_step(self._feed_names, values,
                                                      self._fetch_names, self._target_names,
                                                      timeout, trace is not None)
        except Exception as error:
            relocated = self._target.relocated(error)
            if relocated is error:
                raise
            raise relocated from None
        if trace is not None:
            for device, records in StepStats.trace_from_proto(metadata.step_stats).items():
                trace.setdefault(device, []).extend(records)
        return tuple(own(value) for value in results)


def _imported(graph_def):
    graph = Graph()
    with graph.as_default():
        import_graph_def(graph_def, name="")
    return graph


class _Attributes(DeviceAttributes):
    def __init__(self, record):  # pylint: disable=super-init-not-called
        self.name = record["name"]
        self.device_type = record["device_type"]
        self.memory_limit_bytes = record["memory_limit_bytes"]
        self.incarnation = record["incarnation"]

