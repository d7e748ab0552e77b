"""``tf.train.Server``: one task of a cluster, serving a master and a worker over gRPC.

Every process of a distributed TF1 program creates one server for its task::

    cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"],
                                    "worker": ["localhost:2223", "localhost:2224"]})
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.Session(server.target) as sess:       # "grpc://localhost:2223"
        ...

A server owns its task's devices (``/job:worker/replica:0/task:0/device:CPU:0``
...) and the resources on them — variables, queues — which outlive client
sessions: a second client sees what a first one initialized.  It answers two
services on one gRPC port, at exactly the address the cluster gives it
(loopback stays loopback):

* the **worker service** (:mod:`~minitf.distributed.worker_rpc`): partitions of
  steps planned by any master run on this task's devices;
* the **master service** (:mod:`~minitf.distributed.master`): clients that
  connect to this task get their steps planned over the whole cluster.

Several servers may live in one process (tests and notebooks do that), or one
per process.  Mirrors ``tensorflow/python/training/server_lib.py`` and TF's
``GrpcServer``.
"""

import concurrent.futures
import secrets
import threading

import grpc

from minitf.distributed import local_master
from minitf.distributed.cluster_spec import ClusterSpec
from minitf.distributed.master import ClusterDevice, MasterService
from minitf.distributed.rpc import CHANNEL_OPTIONS
from minitf.distributed.security import ClusterCredentials
from minitf.distributed.worker_rpc import GrpcWorkerClient, WorkerServicer
from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.registry import get_registry
from minitf.runtime.config import ConfigProto
from minitf.runtime.device_set import device_specs
from minitf.runtime.resources import ResourceManager
from minitf.runtime.worker.service import WorkerService

# Threads answering RPCs: a RunGraph waiting for a tensor holds one, and the
# RecvTensor calls that feed it need others.
_RPC_THREADS = 64

# gRPC lets several servers bind one port (SO_REUSEPORT) and splits the calls
# between them; a task's address must be its own, so a port in use is an error.
_SERVER_OPTIONS = [("grpc.so_reuseport", 0)]


class ServerDef:
    """``tf.train.ServerDef``: what a server serves (cluster, job, task, protocol, config)."""

    def __init__(self, cluster, job_name, task_index, protocol="grpc",
                 default_session_config=None):
        self.cluster = cluster  # a ClusterDef protocol buffer
        self.job_name = job_name
        self.task_index = task_index
        self.protocol = protocol
        self.default_session_config = default_session_config

    def __repr__(self):
        return "ServerDef(job_name=%r, task_index=%d, protocol=%r, cluster=%s)" % (
            self.job_name, self.task_index, self.protocol,
            ClusterSpec(self.cluster).as_dict())


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    """The ServerDef of ``Server(...)``'s arguments, as TF1 builds it."""
    if isinstance(server_or_cluster_def, ServerDef):
        if job_name is not None or task_index is not None:
            raise ValueError("job_name and task_index must not be given with a ServerDef")
        return server_or_cluster_def
    cluster = ClusterSpec(server_or_cluster_def)
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    cluster.task_address(job_name, task_index)  # an unknown job or task is a ValueError
    return ServerDef(cluster.as_cluster_def(), job_name, task_index, protocol or "grpc", config)


class Server:
    """An in-process TensorFlow server, for use in distributed training.

    Args:
        server_or_cluster_def: a ClusterSpec, a dict for one, a ClusterDef or a ServerDef.
        job_name: this task's job (may be omitted when the cluster has one job).
        task_index: this task's index in its job (may be omitted for a one-task job).
        protocol: ``"grpc"`` (the only one).
        config: a ConfigProto: its ``device_count`` sets this task's devices,
            and it is the default of sessions planned by this task's master.
        start: start serving now.
        credentials: a :class:`~minitf.distributed.security.ClusterCredentials`
            (token, TLS) the server checks and serves with, and uses for the
            calls it makes to other tasks; None: those of the environment
            (``MINITF_CLUSTER_TOKEN``, ``MINITF_TLS_*``).  A minitf extension.

    Raises:
        ValueError: for an unknown job or task, or a missing job/task.
        errors.UnknownError: if the address cannot be bound (e.g. a port in use).
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True, credentials=None):
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index,
                                            protocol, config)
        if self._server_def.protocol != "grpc":
            raise ValueError("Unknown protocol %r: minitf servers speak 'grpc'"
                             % self._server_def.protocol)
        self._config = config or ConfigProto()
        self.registry = get_registry()
        self._credentials = credentials if credentials is not None \
            else ClusterCredentials.from_environment()
        self._rpc_threads = _RpcThreads(
            _RPC_THREADS, thread_name_prefix="minitf-rpc")
        self._grpc = grpc.server(
            self._rpc_threads,
            interceptors=self._credentials.server_interceptors(),
            options=CHANNEL_OPTIONS + _SERVER_OPTIONS)
        self._bind()
        job, task = self._server_def.job_name, self._server_def.task_index
        self.spec = DeviceSpec(job=job, replica=0, task=task)
        self.task_name = "/job:%s/replica:0/task:%d" % (job, task)
        self._devices = self._create_devices()
        self._clients = {}  # task name -> GrpcWorkerClient
        self._lock = threading.Lock()
        self.worker = WorkerService(
            self._devices, self.registry, peer_for=self.worker_for_device,
            resources={d.name: ResourceManager() for d in self._devices})
        incarnations = {d.name: secrets.randbits(63) for d in self._devices}
        for device in self._devices:  # what the master lists for its own task, too
            device.incarnation = incarnations[device.name]
        self._servicer = WorkerServicer(self.worker, incarnations)
        master = MasterService(self)
        self._master_methods = master.methods()
        self._handlers = [self._servicer.handler(), master.handler()]
        self._grpc.add_generic_rpc_handlers(self._handlers)
        self._started = False
        self._stopped = threading.Event()
        if start:
            self.start()

    def _bind(self):
        """Listens at this task's address; a port 0 becomes the port the system chose."""
        cluster = ClusterSpec(self._server_def.cluster)
        job, task = self._server_def.job_name, self._server_def.task_index
        address = cluster.task_address(job, task)
        try:
            port = self._credentials.add_port(self._grpc, address)
        except RuntimeError as error:
            raise errors.UnknownError(None, None, "Could not start gRPC server at %s: %s"
                                      % (address, error)) from None
        host = address.rsplit(":", 1)[0]
        self.address = "%s:%d" % (host, port)
        if address != self.address:  # "localhost:0": record the real port
            tasks = cluster.as_dict()
            tasks[job] = dict(enumerate(tasks[job])) if isinstance(tasks[job], list) \
                else dict(tasks[job])
            tasks[job][task] = self.address
            self._server_def.cluster = ClusterSpec(_dense(tasks)).as_cluster_def()

    def _create_devices(self):
        config = ConfigProto(device_count=self._config.device_count, device_processes=False)
        devices = []
        for factory, index, _ in device_specs(self.registry, config):
            name = "%s/device:%s:%d" % (self.task_name, factory.device_type, index)
            devices.append(factory.create(index, name=name, options=self._config))
        return devices

    # ---- TF1's API ----------------------------------------------------------------------
    @property
    def server_def(self):
        """The :class:`ServerDef` of this server (with the bound port)."""
        return self._server_def

    @property
    def target(self):
        """``"grpc://host:port"``: what ``tf.Session(target)`` connects to."""
        return "grpc://" + self.address

    def start(self):
        """Starts serving (a no-op when already started)."""
        if not self._started:
            self._grpc.start()
            local_master.register(self.target, self._master_methods, self._credentials)
            self._started = True

    def join(self):
        """Blocks until the server has shut down (``stop()``, from another thread)."""
        self._stopped.wait()

    def stop(self, grace=None):
        """Stops serving and frees the task's devices (minitf's; TF1 servers never stop)."""
        if self._stopped.is_set():
            return
        local_master.unregister(self.target, self._master_methods)
        self._grpc.stop(grace).wait()
        for handler in self._handlers:
            handler.close()  # replies parked for callers that never took them
        self._servicer.lender.close()  # no shared-memory segment outlives the server
        self.worker.close()  # wakes the kernels of steps still running here
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
        for device in self._devices:
            device.close()
        self._rpc_threads.shutdown(wait=False)  # they end once their calls return
        self._stopped.set()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task server on ``localhost`` at a free port (``tf.train.Server.create_local_server``)."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)

    # ---- what the master and the rendezvous need -------------------------------------------
    def cluster(self):
        return ClusterSpec(self._server_def.cluster)

    def worker_for_task(self, task_name):
        """The worker of ``task_name``: this task's own, or a client of another's."""
        if task_name == self.task_name:
            return self.worker
        with self._lock:
            client = self._clients.get(task_name)
            if client is None:
                spec = DeviceSpec.from_string(task_name)
                address = self.cluster().task_address(spec.job, spec.task)
                client = GrpcWorkerClient(address, task_name, self._credentials)
                self._clients[task_name] = client
            return client

    def worker_for_device(self, device_name):
        spec = DeviceSpec.from_string(device_name)
        return self.worker_for_task("/job:%s/replica:%d/task:%d"
                                    % (spec.job, spec.replica or 0, spec.task or 0))

    def cluster_device_attributes(self, timeout=10.0, device_filters=()):
        """Every task's devices, asked of each task's worker (``GetStatus``);
        a task that ``device_filters`` rule out entirely is not asked."""
        cluster = self.cluster()
        attributes = []
        for job in cluster.jobs:
            for task in cluster.task_indices(job):
                name = "/job:%s/replica:0/task:%d" % (job, task)
                if not _admitted(name, device_filters, self.task_name):
                    continue
                if name == self.task_name:
                    attributes += [_attributes(d) for d in self._devices]
                else:
                    attributes += self.worker_for_task(name).get_status(
                        timeout=timeout, wait_for_ready=True)  # it may still be starting
        return attributes

    def cluster_devices(self, device_filters=(), timeout=10.0):
        """The cluster's devices (those ``device_filters`` admit), this task's first."""
        local = {d.name: d for d in self._devices}
        devices = [local.get(a["name"]) or ClusterDevice(a)
                   for a in self.cluster_device_attributes(timeout, device_filters)
                   if _admitted(a["name"], device_filters, self.task_name)]
        return sorted(devices, key=lambda d: (d.name not in local, -_priority(self.registry, d)))

    def reset(self, containers):
        for job in self.cluster().jobs:
            for task in self.cluster().task_indices(job):
                self.worker_for_task("/job:%s/replica:0/task:%d" % (job, task)).reset(containers)


class _RpcThreads(concurrent.futures.ThreadPoolExecutor):
    """The threads answering RPCs; a call arriving while the server stops is dropped.

    gRPC may hand a last call to the pool after ``stop()`` has shut it down;
    the caller then sees the connection close (``UnavailableError``), instead
    of a gRPC thread dying of the pool's ``RuntimeError``.
    """

    def submit(self, fn, /, *args, **kwargs):
        try:
            return super().submit(fn, *args, **kwargs)
        except RuntimeError:  # shut down
            future = concurrent.futures.Future()
            future.cancel()
            return future


def _attributes(device):
    return {"name": device.name, "device_type": device.device_type, "index": device.index,
            "host_memory": device.host_memory,
            "memory_limit_bytes": getattr(device, "memory_limit_bytes", 0),
            "incarnation": getattr(device, "incarnation", 0)}


def _priority(registry, device):
    factory = registry.device_factory(device.device_type)
    return factory.priority if factory is not None else 0


def _admitted(device_name, device_filters, own_task):
    """Whether ``device_filters`` (TF's ConfigProto field) admit a device; the
    master's own task is always admitted."""
    if not device_filters or device_name == own_task or device_name.startswith(own_task + "/"):
        return True
    device = DeviceSpec.from_string(device_name)  # a device, or a whole task (fields None)
    for pattern in device_filters:
        wanted = DeviceSpec.from_string(pattern)
        if all(getattr(wanted, f) is None or getattr(device, f) in (None, getattr(wanted, f))
               for f in ("job", "replica", "task", "device_type", "device_index")):
            return True
    return False


def _dense(tasks):
    """Jobs whose tasks are 0..n-1 as lists again (as TF prints them)."""
    return {job: [t[i] for i in range(len(t))] if sorted(t) == list(range(len(t))) else t
            for job, t in tasks.items()}
