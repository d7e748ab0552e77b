"""A device process: serves one device's partitions over a local socket.

``python -m minitf.runtime.worker.main --device-type CPU --index 1
--address /tmp/.../CPU_1.sock`` (which calls :func:`main` here) creates that
device from the installed plugins, wraps it in a :class:`~minitf.runtime.worker.service.WorkerService`,
prints ``READY`` and answers requests — ``RegisterGraph``, ``RunGraph``,
``RecvTensor``, ``AbortStep``, ``CleanupStep``, ``Configure``, ``Shutdown`` —
until told to stop or until its parent goes away (its stdin closes).

The same :class:`WorkerServer` also runs inside the session's process, so that
device processes can pull tensors from the session's own devices.
"""

import argparse
import os
import sys
import threading
from multiprocessing.connection import Listener

from minitf.framework import errors
from minitf.framework import protos
from minitf.runtime.worker.client import Peers, error_from_header, header_from_error
from minitf.runtime.values import DEAD
from minitf.runtime.worker.wire import Wire


class WorkerServer:
    """Answers worker-service requests arriving on a Unix socket.

    Args:
        service: the WorkerService to call.
        address: the socket path to listen on.
        authkey: bytes both ends share (checked by ``multiprocessing``'s HMAC
            handshake; no pickle is ever used on these connections).
        wire: this process's :class:`~minitf.runtime.worker.wire.Wire`.
        peers: the :class:`~minitf.runtime.worker.client.Peers` that
            ``Configure`` fills (None: this process pulls from no one).
        on_shutdown: called after answering ``Shutdown`` (device processes exit).
    """

    def __init__(self, service, address, authkey, wire, peers=None, on_shutdown=None):
        self.service = service
        self.address = address
        self.wire = wire
        self._peers = peers
        self._on_shutdown = on_shutdown
        self._listener = Listener(address, family="AF_UNIX", authkey=authkey)
        self._stopped = threading.Event()

    def serve_forever(self):
        while not self._stopped.is_set():
            try:
                connection = self._listener.accept()
            except (OSError, EOFError):
                if self._stopped.is_set():
                    return
                continue
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def start(self):
        threading.Thread(target=self.serve_forever, daemon=True,
                         name="minitf-worker-server").start()

    def stop(self):
        self._stopped.set()
        self._listener.close()

    def _serve(self, connection):
        with connection:
            while True:
                try:
                    header, tensors = self.wire.receive(connection)
                except (EOFError, OSError):
                    return
                reply, out = self._dispatch(header, tensors)
                try:
                    self.wire.send(connection, reply, out)
                except (EOFError, OSError):
                    return
                if header["method"] == "Shutdown" and self._on_shutdown is not None:
                    self.stop()
                    self._on_shutdown()

    def _dispatch(self, header, tensors):
        try:
            return getattr(self, "_" + header["method"])(header, tensors)
        except errors.OpError as error:
            return {"error": header_from_error(error)}, []
        except Exception as error:  # reported to the caller, which raises it
            return {"error": {"code": errors.INTERNAL,
                              "message": "%s: %s" % (type(error).__name__, error)}}, []

    def _Configure(self, header, tensors):  # noqa: N802 - TF's method names
        if self._peers is not None:
            self._peers.configure(header["peers"])
        return {}, []

    def _RegisterGraph(self, header, tensors):  # noqa: N802
        graph_def = protos.from_payload(protos.load("graph_pb2").GraphDef, tensors[0])
        return {"handle": self.service.register_graph(graph_def, header["device"])}, []

    def _RunGraph(self, header, tensors):  # noqa: N802
        records = [] if header["trace"] else None
        out = self.service.run_graph(header["handle"], header["step_id"],
                                     dict(zip(header["feed_names"], tensors)),
                                     header["fetch_names"], header["deadline"], records)
        trace = [[op.name, op.type, start, end] for op, start, end in records or []]
        return {"trace": trace}, out

    def _RecvTensor(self, header, tensors):  # noqa: N802
        value = self.service.recv_tensor(header["step_id"], header["key"], header["timeout"])
        if value is DEAD:  # the untaken branch of a cond: TF's RecvTensor sends is_dead
            return {"is_dead": True}, []
        return {}, [value]

    def _AbortStep(self, header, tensors):  # noqa: N802
        self.service.abort_step(header["step_id"], error_from_header(header["error"]))
        return {}, []

    def _CleanupStep(self, header, tensors):  # noqa: N802
        self.service.cleanup_step(header["step_id"])
        return {}, []

    def _Ping(self, header, tensors):  # noqa: N802
        return {"pid": os.getpid()}, []

    def _Shutdown(self, header, tensors):  # noqa: N802
        return {}, []


def _exit_when_parent_goes(shutdown):
    """Our stdin is a pipe from the session: EOF means the session's process is gone."""
    sys.stdin.buffer.read()
    shutdown()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device-type", required=True)
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--address", required=True)
    args = parser.parse_args(argv)
    authkey = bytes.fromhex(os.environ.pop("MINITF_WORKER_AUTHKEY"))
    from minitf.registry import get_registry
    from minitf.runtime.worker.service import WorkerService
    registry = get_registry()
    device = registry.device_factory(args.device_type).create(args.index)
    wire = Wire("minitf-%s%d" % (args.device_type.lower(), args.index))

    def shutdown():
        wire.close()  # unlink this process's shared-memory segments
        os._exit(0)
    peers = Peers(authkey, wire)
    service = WorkerService([device], registry, peer_for=peers.worker_for)
    server = WorkerServer(service, args.address, authkey, wire, peers, on_shutdown=shutdown)
    threading.Thread(target=_exit_when_parent_goes, args=(shutdown,), daemon=True).start()
    print("READY", flush=True)
    try:
        server.serve_forever()
    finally:
        wire.close()

