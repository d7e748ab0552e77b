"""Devices simulated in separate OS processes, as TF's workers are.

With ``ConfigProto(device_count={"CPU": 4})`` a session has four CPU devices.
``/cpu:0`` stays in the session's process; ``/cpu:1`` ... ``/cpu:3`` are each
served by their own process (:mod:`minitf.runtime.worker.main`), reached
through the worker-service interface.  Tensors cross between processes as
Send/Recv pairs (through shared memory when large); variables placed on a
device live in its process for the session's lifetime.  Set
``ConfigProto(device_processes=False)`` to keep every device in-process
(threads only).

:class:`DeviceProcesses` starts the processes, wires them to each other and
to the session's own devices (served by a :class:`WorkerServer` in this
process), and stops them all on ``close()``, on garbage collection and at
interpreter exit — no child process outlives its session.
"""

import os
import tempfile
import weakref

from minitf.runtime.worker.wire import Wire
from minitf.runtime.worker.client import DeviceProcess, shutdown_all
from minitf.runtime.worker.server import WorkerServer


class DeviceProcesses:
    """The device processes of one session.

    Args:
        specs: ``[(device_type, index)]`` of the devices to serve remotely.
        local_service: the session's WorkerService (its devices are served
            to the processes too).
    """

    def __init__(self, specs, local_service):
        self._wire = Wire("minitf-session")
        self._authkey = os.urandom(32)
        self._socket_dir = tempfile.mkdtemp(prefix="minitf-")
        self._processes = [DeviceProcess(t, i, self._socket_dir, self._authkey, self._wire)
                           for t, i in specs]
        self._server = None
        self.devices = []
        self._finalizer = weakref.finalize(self, shutdown_all, self._processes, [], None,
                                           self._wire, self._socket_dir)
        try:
            self.devices = [p.wait_ready() for p in self._processes]
            self._serve_local(local_service)
        except BaseException:
            self.close()
            raise
        self.clients = {d.name: d.client for d in self.devices}
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, shutdown_all, self._processes,
                                           list(self.clients.values()), self._server,
                                           self._wire, self._socket_dir)

    def _serve_local(self, local_service):
        address = os.path.join(self._socket_dir, "session.sock")
        self._server = WorkerServer(local_service, address, self._authkey, self._wire)
        self._server.start()
        peers = {name: address for name in local_service.devices}
        peers.update({d.name: p.address for d, p in zip(self.devices, self._processes)})
        for device in self.devices:
            device.client.call("Configure", peers=peers)

    def pids(self):
        return [p.process.pid for p in self._processes]

    def close(self, error=None):
        """Stops the processes.  A step still waiting on one of them raises
        ``error`` (the closing session's ``CancelledError``), if given."""
        for client in getattr(self, "clients", {}).values():
            client.close(error)
        self._finalizer()
