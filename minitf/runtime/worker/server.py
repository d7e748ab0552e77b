"""A device process: serves one device's partitions over a local socket.

``python -m minitf.runtime.worker.main --device-type CPU --index 1
--address /tmp/.../CPU_1.sock`` (which calls :func:`main` here) creates that
device from the installed plugins, wraps it in a :class:`~minitf.runtime.worker.service.WorkerService`,
prints ``READY`` and answers requests — ``RegisterGraph``, ``RunGraph``,
``RecvTensor``, ``AbortStep``, ``CleanupStep``, ``Configure``, ``Shutdown`` —
until told to stop or until its parent goes away (its stdin closes).

The same :class:`WorkerServer` also runs inside the session's process, so that
device processes can pull tensors from the session's own devices.

The server treats every peer as a stranger until it proves otherwise: each
connection is served on a thread of its own, its handshake (``multiprocessing``'s
HMAC challenge, both ways) must finish within :data:`HANDSHAKE_TIMEOUT`
seconds, and whatever a peer does wrong — the wrong key, garbage bytes,
silence, hanging up — ends that connection only, with a warning in the log
(``minitf.runtime.worker.server``); the server goes on serving the others.
:meth:`WorkerServer.stop` wakes the thread waiting for connections, so a
stopped server leaves no thread behind.
"""

import argparse
import logging
import os
import selectors
import socket
import struct
import sys
import threading
import time
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge

from minitf.framework import errors
from minitf.framework import protos
from minitf.runtime.worker.client import Peers, error_from_header, header_from_error
from minitf.runtime.values import DEAD
from minitf.runtime.worker.wire import Wire

_log = logging.getLogger(__name__)

#: Seconds a peer has to complete the authentication handshake.
HANDSHAKE_TIMEOUT = 5.0
#: Seconds :meth:`WorkerServer.stop` waits for its threads to end.
_STOP_TIMEOUT = 2.0


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
        self._authkey = authkey
        self._peers = peers
        self._on_shutdown = on_shutdown
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(address)
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            raise
        # stop() writes a byte here to wake the thread waiting in select().
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._connections = {}  # Connection -> the thread serving it
        self._accept_thread = None

    def serve_forever(self):
        """Accepts connections until :meth:`stop`; each one is served on its own thread."""
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self._listener, selectors.EVENT_READ)
                selector.register(self._wake_reader, selectors.EVENT_READ)
                while not self._stopped.is_set():
                    for key, _ in selector.select():
                        if key.fileobj is self._listener and not self._stopped.is_set():
                            self._accept()
        finally:
            self._close_listener()

    def start(self):
        """Serves on a thread of its own."""
        self._accept_thread = threading.Thread(target=self.serve_forever, daemon=True,
                                               name="minitf-worker-server")
        self._accept_thread.start()

    def stop(self):
        """Stops accepting, hangs up on every peer and waits (boundedly) for the threads."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
            for connection in self._connections:
                _hang_up(connection)  # its thread wakes from recv and ends
            threads = list(self._connections.values())
        try:
            self._wake_writer.send(b"x")
        except OSError:
            pass
        if self._accept_thread is not None:
            threads.append(self._accept_thread)
        current, give_up = threading.current_thread(), time.monotonic() + _STOP_TIMEOUT
        for thread in threads:
            if thread is not current:
                thread.join(max(0.0, give_up - time.monotonic()))
        self._close_listener()

    def _close_listener(self):
        for sock in (self._listener, self._wake_reader, self._wake_writer):
            sock.close()
        try:
            os.unlink(self.address)
        except OSError:
            pass  # gone already (or its directory)

    def _accept(self):
        try:
            sock, _ = self._listener.accept()
        except OSError:  # the peer left at once, or no file descriptor is left
            return
        sock.setblocking(True)
        threading.Thread(target=self._serve, args=(sock,), daemon=True,
                         name="minitf-worker-connection").start()

    def _serve(self, sock):
        """Serves one connection; nothing a peer does here reaches the server."""
        connection = None
        try:
            connection = self._handshake(sock)
            with self._lock:
                if self._stopped.is_set():
                    return
                self._connections[connection] = threading.current_thread()
            self._answer(connection)
        except Exception as error:  # pylint: disable=broad-except
            _log.warning("Worker server %s dropped a connection: %s: %s",
                         self.address, type(error).__name__, error)
        finally:
            with self._lock:
                if connection is not None:
                    self._connections.pop(connection, None)
                    connection.close()
                else:
                    sock.close()

    def _handshake(self, sock):
        """The HMAC handshake of ``multiprocessing.connection.Listener``, both
        ways, with :data:`HANDSHAKE_TIMEOUT` on every read and write."""
        _set_io_timeout(sock, HANDSHAKE_TIMEOUT)
        connection = Connection(sock.detach())
        try:
            deliver_challenge(connection, self._authkey)
            answer_challenge(connection, self._authkey)
            with _socket_of(connection) as handle:
                _set_io_timeout(handle, 0)  # an idle pooled connection may wait for ever
        except BaseException:
            connection.close()
            raise
        return connection

    def _answer(self, connection):
        """Answers requests until the peer hangs up."""
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
            if header.get("method") == "Shutdown" and self._on_shutdown is not None:
                self.stop()
                self._on_shutdown()

    def _dispatch(self, header, tensors):
        try:
            method = getattr(self, "_" + str(header.get("method")), None)
            if method is None:
                raise errors.UnimplementedError(None, None, "No worker method %r"
                                                % (header.get("method"),))
            return method(header, tensors)
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


def _set_io_timeout(sock, seconds):
    """Makes blocking reads and writes on ``sock`` fail after ``seconds`` (0: never).

    ``SO_RCVTIMEO``/``SO_SNDTIMEO`` rather than ``settimeout``: the socket stays
    blocking, as ``multiprocessing``'s Connection needs it.
    """
    whole = int(seconds)
    timeval = struct.pack("ll", whole, int((seconds - whole) * 1e6))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)


def _socket_of(connection):
    """A socket object on a duplicate of ``connection``'s descriptor (close it after use)."""
    handle = socket.socket(fileno=os.dup(connection.fileno()))
    handle.setblocking(True)  # as the Connection needs it, whatever socket's default timeout
    return handle


def _hang_up(connection):
    """Shuts ``connection``'s socket down, waking the thread reading from it."""
    with _socket_of(connection) as handle:
        try:
            handle.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # the peer hung up first


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

