"""The session's side of device processes: starting them and calling them.

:class:`DeviceProcess` starts ``python -m minitf.runtime.worker.main`` for
one device and owns its lifetime; :class:`WorkerClient` sends it requests over
pooled Unix-socket connections (one request at a time per connection, so a
blocking ``RunGraph`` never delays a ``RecvTensor``) and offers the same
methods as an in-process :class:`~minitf.runtime.worker.service.WorkerService`;
:class:`Peers` is a process's address book of the others.

When a device process dies, its sockets close: every call waiting on it fails
at once with ``UnavailableError`` naming the device — a step never hangs on a
dead device.  A process that is alive but does not answer (stopped with
``SIGSTOP``, swapped out) is waited for until the step's deadline and
:data:`REPLY_GRACE` seconds more, then the call fails with
``DeadlineExceededError`` and drops its connection.  *Sending* a request
to it is bounded the same way — a request carrying a tensor of up to 1 MiB
fills the socket's buffer, and a stopped process does not empty it — and,
for a call without a deadline, by :data:`SEND_TIMEOUT` seconds without
progress, after which the call fails with ``UnavailableError`` naming the
device.  Registering a step's
partitions (``RegisterGraph``, when a ``run`` signature is first seen) waits
until the step's deadline too, or for :data:`REGISTER_TIMEOUT` seconds when
the step has none; then it fails naming the device.

Once the session is closed (:meth:`WorkerClient.close` with the session's
``CancelledError``), a call still waiting on the process it is shutting down
raises that error: the step that was running ends as TF's does when its
session closes.
"""

import os
import queue
import select
import subprocess
import sys
import threading
import time
import types
from multiprocessing.connection import Client

from minitf.framework import errors
from minitf.framework import protos
from minitf.registry.device import Device
from minitf.runtime.kernel_context import step_deadline
from minitf.runtime.values import DEAD
from minitf.runtime.worker.wire import set_send_timeout, unlink_segments_of

STARTUP_TIMEOUT = 60.0

#: Seconds a call waits past its step's deadline for a reply: the worker
#: enforces the deadline itself, and its own DeadlineExceededError is the
#: better message, so the client gives it this long to arrive.
REPLY_GRACE = 0.5

#: Seconds a device process has to answer ``RegisterGraph`` when the step
#: has no deadline (it only imports the partition's GraphDef).
REGISTER_TIMEOUT = 60.0

#: Seconds a request may wait without progress to be written to the socket
#: of a device process, for a call without a deadline: a live process reads
#: its requests at once; one that does not is stopped or hung.
SEND_TIMEOUT = 60.0


def header_from_error(error):
    """An OpError as a JSON-compatible dict."""
    return {"code": error.error_code, "message": error.message}


def error_from_header(record):
    """The OpError a dict from :func:`header_from_error` describes."""
    cls = errors.exception_type_from_error_code(record["code"])
    return cls(None, None, record["message"])


class WorkerClient:
    """Calls one worker process.

    Args:
        address: its Unix socket path.
        authkey: the shared key.
        wire: this process's Wire.
        device_name: the device it serves (for error messages).
        pid: its process id, if known (for error messages).
    """

    def __init__(self, address, authkey, wire, device_name, pid=None):
        self._address = address
        self._authkey = authkey
        self._wire = wire
        self.device_name = device_name
        self.pid = pid
        self._idle = queue.SimpleQueue()
        # Set when a call got no reply in time, cleared by the next reply: the
        # step's clean-up calls then leave the silent process alone.
        self.unresponsive = False
        self._closed = False
        self._closed_with = None  # the error calls raise once closed (None: Unavailable)

    def call(self, method, tensors=(), reply_by=None, **params):
        """Sends one request and returns ``(reply header, reply tensors)``.

        Args:
            reply_by: a ``time.monotonic()`` deadline for the reply (None:
                wait as long as the process lives).

        Raises:
            errors.UnavailableError: if the process cannot be reached, or
                (without ``reply_by``) did not take the request within
                :data:`SEND_TIMEOUT` seconds.
            errors.DeadlineExceededError: if the request could not be sent or
                no reply came by ``reply_by`` (plus :data:`REPLY_GRACE`).
            errors.OpError: the error the worker reported.
        """
        if self._closed:
            raise self._unavailable(EOFError("the session closed this client"))
        try:
            connection = self._idle.get_nowait()
        except queue.Empty:
            connection = self._connect(method, reply_by)
        try:
            self._send(connection, method, params, tensors, reply_by)
            if reply_by is not None and not connection.poll(
                    max(0.0, reply_by - time.monotonic()) + REPLY_GRACE):
                connection.close()  # its reply, if one ever comes, belongs to nobody
                self.unresponsive = True
                raise self._no_reply(method)
            header, arrays = self._wire.receive(connection)
        except (EOFError, OSError) as error:
            connection.close()
            raise self._unavailable(error) from None
        self.unresponsive = False
        if self._closed:
            connection.close()
        else:
            self._idle.put(connection)
        if "error" in header:
            raise error_from_header(header["error"])
        return header, arrays

    def _send(self, connection, method, params, tensors, reply_by):
        """Writes the request, giving up once the step's deadline (plus
        :data:`REPLY_GRACE`) or, without one, :data:`SEND_TIMEOUT` seconds
        pass with the process not reading."""
        timeout = (SEND_TIMEOUT if reply_by is None
                   else max(0.0, reply_by - time.monotonic()) + REPLY_GRACE)
        set_send_timeout(connection, timeout)
        try:
            self._wire.send(connection, dict(params, method=method), tensors)
        except BlockingIOError:
            connection.close()  # part of a frame may have gone: the stream is unusable
            self.unresponsive = True
            if reply_by is not None:
                raise self._no_reply(method) from None
            where = "" if self.pid is None else " (process %d)" % self.pid
            raise errors.UnavailableError(
                None, None, "Device %s%s did not take a %s request within %g seconds: its "
                "process is stopped or hung. Close this session and start a new one, or "
                "resume the process." % (self.device_name, where, method, SEND_TIMEOUT)) from None

    def _connect(self, method, reply_by=None):
        """A new connection.  Its handshake needs the process to answer, so
        with a deadline it runs on a helper thread that the call stops waiting
        for once the deadline (plus :data:`REPLY_GRACE`) passes."""
        if reply_by is None:
            return self._handshake()
        result = queue.SimpleQueue()
        abandoned = threading.Event()

        def connect():
            try:
                connection = self._handshake()
            except errors.UnavailableError as error:
                result.put(error)
                return
            result.put(connection)
            if abandoned.is_set():
                connection.close()  # the call gave up on it

        threading.Thread(target=connect, daemon=True, name="minitf-connect").start()
        try:
            outcome = result.get(timeout=max(0.0, reply_by - time.monotonic()) + REPLY_GRACE)
        except queue.Empty:
            abandoned.set()
            self.unresponsive = True
            raise self._no_reply(method) from None
        if isinstance(outcome, errors.UnavailableError):
            raise outcome
        return outcome

    def _handshake(self):
        try:
            return Client(self._address, family="AF_UNIX", authkey=self._authkey)
        except (EOFError, OSError) as error:
            raise self._unavailable(error) from None

    def _unavailable(self, error):
        if self._closed_with is not None:  # the session closed: its own error, not ours
            return error_from_header(header_from_error(self._closed_with))
        where = "" if self.pid is None else " (process %d)" % self.pid
        return errors.UnavailableError(
            None, None, "Device %s%s is unavailable: %s: %s. Its process has died or stopped "
            "answering; close this session and start a new one." % (
                self.device_name, where, type(error).__name__, error))

    def _no_reply(self, method):
        where = "" if self.pid is None else " (process %d)" % self.pid
        return errors.DeadlineExceededError(
            None, None, "Timed out waiting for notification: device %s%s did not answer %s "
            "before the step's deadline" % (self.device_name, where, method))

    def close(self, error=None):
        """Closes the idle connections; later calls fail at once.

        Args:
            error: the OpError that calls waiting on the process (and later
                ones) raise when its connections close — the session's
                ``CancelledError`` when ``Session.close()`` stops a running
                step — instead of ``UnavailableError``.
        """
        if error is not None:
            self._closed_with = error
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    # The WorkerService methods, over the wire ------------------------------------
    def register_graph(self, graph, device_name):
        """Registers a partition; waits until the deadline of the step being made
        (``RunOptions.timeout_in_ms``), or :data:`REGISTER_TIMEOUT` seconds.

        Raises:
            errors.DeadlineExceededError: no answer by the step's deadline.
            errors.UnavailableError: no answer within :data:`REGISTER_TIMEOUT`
                seconds (no deadline), or the process is gone.
        """
        deadline = step_deadline()
        reply_by = deadline if deadline is not None else time.monotonic() + REGISTER_TIMEOUT
        try:
            # The GraphDef crosses as its serialized bytes, a raw frame after the header.
            header, _ = self.call("RegisterGraph", [protos.as_payload(graph.as_graph_def())],
                                  device=device_name, reply_by=reply_by)
        except errors.DeadlineExceededError:
            if deadline is not None:
                raise
            where = "" if self.pid is None else " (process %d)" % self.pid
            raise errors.UnavailableError(
                None, None, "Device %s%s did not answer RegisterGraph within %g seconds: its "
                "process is stopped or overloaded. Close this session and start a new one, "
                "or resume the process." % (self.device_name, where, REGISTER_TIMEOUT)) from None
        return header["handle"]

    def run_graph(self, handle, step_id, feeds, fetch_names, deadline=None, trace=None):
        header, arrays = self.call("RunGraph", list(feeds.values()), handle=handle,
                                   step_id=step_id, feed_names=list(feeds),
                                   fetch_names=list(fetch_names), deadline=deadline,
                                   trace=trace is not None, reply_by=deadline)
        if trace is not None:
            trace.extend((types.SimpleNamespace(name=name, type=op_type), start, end)
                         for name, op_type, start, end in header["trace"])
        return arrays

    def recv_tensor(self, step_id, key, timeout=None):
        reply_by = None if timeout is None else time.monotonic() + timeout
        header, tensors = self.call("RecvTensor", step_id=step_id, key=key, timeout=timeout,
                                    reply_by=reply_by)
        return DEAD if header.get("is_dead") else tensors[0]

    def abort_step(self, step_id, error):
        if not isinstance(error, errors.OpError):
            error = errors.InternalError(None, None, "%s: %s" % (type(error).__name__, error))
        if self.unresponsive or self._closed:
            return  # a stopped worker would block the step that gave up on it
        try:
            self.call("AbortStep", step_id=step_id, error=header_from_error(error),
                      reply_by=time.monotonic())
        except (errors.UnavailableError, errors.DeadlineExceededError):
            pass  # a dead or silent worker has nothing left to abort

    def cleanup_step(self, step_id):
        if self.unresponsive or self._closed:
            return  # its step's state stays behind: better than a step that hangs
        try:
            self.call("CleanupStep", step_id=step_id, reply_by=time.monotonic())
        except (errors.UnavailableError, errors.DeadlineExceededError):
            pass


class Peers:
    """The other processes of a session, by device name: their addresses and clients.

    A worker process learns the addresses from the session (``Configure``)
    and opens a client to a peer the first time one of its ``_Recv`` s needs
    a tensor from it.  Its :class:`~minitf.runtime.worker.service.WorkerService`
    is given :meth:`worker_for` as its ``peer_for``.
    """

    def __init__(self, authkey, wire):
        self._authkey = authkey
        self._wire = wire
        self._addresses = {}
        self._clients = {}
        self._lock = threading.Lock()

    def configure(self, addresses):
        """Records the socket address of every device of the session."""
        with self._lock:
            self._addresses = dict(addresses)

    def worker_for(self, device_name):
        """The client of the process serving ``device_name``."""
        with self._lock:
            if device_name not in self._clients:
                self._clients[device_name] = WorkerClient(
                    self._addresses[device_name], self._authkey, self._wire, device_name)
            return self._clients[device_name]


class RemoteDevice(Device):
    """A device served by another process (its kernels run there)."""

    def __init__(self, device_type, index, client):
        self.device_type = device_type
        super().__init__(index)
        self.client = client

    def to_host(self, buffer):
        return buffer

    def from_host(self, array):
        return array


class DeviceProcess:
    """One device process: started, configured, and shut down with the session."""

    def __init__(self, device_type, index, socket_dir, authkey, wire):
        self.address = os.path.join(socket_dir, "%s_%d.sock" % (device_type, index))
        env = dict(os.environ, MINITF_WORKER_AUTHKEY=authkey.hex())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "minitf.runtime.worker.main", "--device-type", device_type,
             "--index", str(index), "--address", self.address],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.device_type = device_type
        self.index = index
        self._authkey = authkey
        self._wire = wire

    def wait_ready(self):
        """Waits for ``READY``; returns the RemoteDevice.  Raises ``UnavailableError``."""
        ready, _, _ = select.select([self.process.stdout], [], [], STARTUP_TIMEOUT)
        line = self.process.stdout.readline() if ready else b""
        if line.strip() != b"READY":
            self.kill()
            raise errors.UnavailableError(None, None, "The process of device %s:%d did not start "
                                          "(exit code %s)" % (self.device_type, self.index,
                                                              self.process.poll()))
        client = WorkerClient(self.address, self._authkey, self._wire, "", self.process.pid)
        device = RemoteDevice(self.device_type, self.index, client)
        client.device_name = device.name
        return device

    def shutdown(self, timeout=2.0):
        """Asks the process to exit, then kills it if it does not."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()  # EOF: the worker exits on its own
            except OSError:
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process.stdout.close()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def shutdown_all(processes, clients, server, wire, socket_dir):
    """Stops device processes and the local server; safe to call more than once."""
    for client in clients:
        client.close()
    threads = [threading.Thread(target=p.shutdown) for p in processes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for process in processes:
        if process.process.returncode != 0:  # killed: its segments are still there
            unlink_segments_of(process.process.pid)
    processes.clear()
    if server is not None:
        server.stop()
    wire.close()
    if os.path.isdir(socket_dir):
        for name in os.listdir(socket_dir):
            os.unlink(os.path.join(socket_dir, name))
        os.rmdir(socket_dir)
