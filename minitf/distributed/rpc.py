"""gRPC plumbing: services whose methods take and return one message.

Every RPC of the cluster is *unary*: one request message, one reply message,
both in the format of :mod:`~minitf.distributed.messages`.  gRPC carries them
as raw bytes (no serializer), so this module only

* turns a table ``{method name: fn(header, tensors) -> (header, tensors)}``
  into a gRPC service (:func:`service_handler`), reporting any exception of
  ``fn`` to the caller as an error header — a bad request never stops a server;
* calls a method of a remote service (:class:`Stub`) and turns both kinds of
  failure back into TF's error classes: an error the service reported, or a
  transport failure (an unreachable task is ``UnavailableError``, a missed
  deadline ``DeadlineExceededError``).

Mirrors TF's ``grpc_util`` / ``GrpcRemoteWorker`` plumbing.
"""

import logging
import threading

import grpc

from minitf.distributed import messages
from minitf.distributed.security import ClusterCredentials
from minitf.framework import errors

#: Milliseconds between keepalive pings, and to wait for their answer.
KEEPALIVE_MS = 5000

# gRPC caps messages at 4 MiB by default; a step may carry much more.
CHANNEL_OPTIONS = [("grpc.max_send_message_length", messages.MAX_MESSAGE_BYTES),
                   ("grpc.max_receive_message_length", messages.MAX_MESSAGE_BYTES),
                   # A task that went away is tried again within a second, so a
                   # restarted task serves the next step (gRPC's backoff grows to 2 min).
                   ("grpc.initial_reconnect_backoff_ms", 200),
                   ("grpc.max_reconnect_backoff_ms", 1000),
                   # A task that hangs (stopped, its host gone) fails the calls
                   # waiting on it within ~10 s, deadline or not: HTTP/2 pings
                   # every 5 s must be answered within 5 s, also while a long
                   # call (a RunGraph waiting on a queue) sends no data.  The
                   # servers accept pings that often.
                   ("grpc.keepalive_time_ms", KEEPALIVE_MS),
                   ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
                   ("grpc.http2.max_pings_without_data", 0),
                   ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
                   ("grpc.http2.ping_timeout_ms", KEEPALIVE_MS),
                   ("grpc.http2.max_ping_strikes", 0)]

_log = logging.getLogger("minitf.distributed")

_ERROR_OF_STATUS = {
    grpc.StatusCode.UNAVAILABLE: errors.UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: errors.DeadlineExceededError,
    grpc.StatusCode.CANCELLED: errors.CancelledError,
    grpc.StatusCode.UNAUTHENTICATED: errors.UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: errors.PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: errors.ResourceExhaustedError,
    grpc.StatusCode.INVALID_ARGUMENT: errors.InvalidArgumentError,
    grpc.StatusCode.UNIMPLEMENTED: errors.UnimplementedError,
}


def service_handler(service_name, methods):
    """A gRPC handler serving ``methods`` under ``/service_name/method``.

    Args:
        service_name: e.g. ``"minitf.WorkerService"``.
        methods: ``{name: fn(header, tensors) -> (reply header, reply tensors)}``.
    """
    return grpc.method_handlers_generic_handler(
        service_name, {name: grpc.unary_unary_rpc_method_handler(_answering(service_name, fn))
                       for name, fn in methods.items()})


class _Request(dict):
    """A request's header: a field it lacks is the caller's error, not the server's."""

    def __init__(self, header, context=None):
        super().__init__(header)
        self._context = context
        self.answered = False

    def __missing__(self, key):
        raise errors.InvalidArgumentError(None, None, "Malformed request: it has no field %r"
                                          % (key,))

    def on_cancel(self, callback):
        """Calls ``callback()`` (in another thread) if the caller gives up before
        the answer: it cancelled the call, its deadline passed, its process
        died or its connection broke."""
        if self._context is not None:
            self._context.add_callback(lambda: None if self.answered else callback())


def _answering(service_name, fn):
    def handle(request, context):
        header = None
        try:
            fields, tensors = messages.decode(request)
            header = _Request(fields, context)
            reply_header, reply_tensors = fn(header, tensors)
            return messages.encode(reply_header, reply_tensors)
        except Exception as error:  # reported to the caller, which raises it
            if not isinstance(error, errors.OpError):
                _log.exception("%s.%s failed", service_name, fn.__name__)
            return messages.encode(messages.error_header(error))
        finally:
            if header is not None:
                header.answered = True
    return handle


class Stub:
    """Calls the methods of one service of one task.

    Args:
        address: ``"host:port"`` of the task.
        service_name: the service, e.g. ``"minitf.WorkerService"``.
        task: the task's name for error messages (``"/job:ps/replica:0/task:0"``).
        credentials: the :class:`~minitf.distributed.security.ClusterCredentials`
            of the calls (token, TLS); None: those of the environment.
    """

    def __init__(self, address, service_name, task="", credentials=None):
        self.address = address
        self.task = task or address
        self._service = service_name
        if credentials is None:
            credentials = ClusterCredentials.from_environment()
        self._channel = credentials.channel(address, CHANNEL_OPTIONS)
        self._metadata = credentials.call_metadata()
        self._methods = {}
        self._pending = set()  # calls sent by call_soon, not answered yet
        self._lock = threading.Lock()

    def call(self, method, header=None, tensors=(), timeout=None):
        """Sends one request; returns ``(reply header, reply tensors)``.

        Args:
            timeout: seconds to wait at most (None: no limit).

        Raises:
            errors.OpError: what the service reported, or ``UnavailableError``
                / ``DeadlineExceededError`` when the task cannot answer in time.
        """
        request = messages.encode(header or {}, tensors)
        try:
            reply = self._callable(method)(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise self._transport_error(method, error) from None
        reply_header, arrays = messages.decode(reply)
        messages.raise_if_error(reply_header)
        return reply_header, arrays

    def call_soon(self, method, header=None, timeout=5.0):
        """Sends one request without waiting for the reply (TF's async cleanup calls).

        For notices whose failure changes nothing (``AbortStep``,
        ``CleanupGraph``): a task that is gone or hung must not hold up the
        step that failed because of it.  An unanswered call ends at ``timeout``.
        """
        try:
            future = self._callable(method).future(messages.encode(header or {}),
                                                   timeout=timeout, metadata=self._metadata)
        except (grpc.RpcError, ValueError):  # a closed channel: nobody left to tell
            return
        # gRPC cancels a call whose future is garbage: keep it until it is done.
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future):
        with self._lock:
            self._pending.discard(future)

    def _callable(self, method):
        with self._lock:
            if method not in self._methods:
                self._methods[method] = self._channel.unary_unary(
                    "/%s/%s" % (self._service, method))
            return self._methods[method]

    def _transport_error(self, method, error):
        cls = _ERROR_OF_STATUS.get(error.code(), errors.UnknownError)
        return cls(None, None, "%s to task %s (%s) failed: %s" % (
            method, self.task, self.address, error.details()))

    def close(self):
        self._channel.close()
