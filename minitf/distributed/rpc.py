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
from minitf.framework import errors

# gRPC caps messages at 4 MiB by default; a step may carry much more.
CHANNEL_OPTIONS = [("grpc.max_send_message_length", messages.MAX_MESSAGE_BYTES),
                   ("grpc.max_receive_message_length", messages.MAX_MESSAGE_BYTES)]

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


def _answering(service_name, fn):
    def handle(request, context):
        del context
        try:
            header, tensors = messages.decode(request)
            reply_header, reply_tensors = fn(header, tensors)
            return messages.encode(reply_header, reply_tensors)
        except Exception as error:  # reported to the caller, which raises it
            if not isinstance(error, errors.OpError):
                _log.exception("%s.%s failed", service_name, fn.__name__)
            return messages.encode(messages.error_header(error))
    return handle


class Stub:
    """Calls the methods of one service of one task.

    Args:
        address: ``"host:port"`` of the task.
        service_name: the service, e.g. ``"minitf.WorkerService"``.
        task: the task's name for error messages (``"/job:ps/replica:0/task:0"``).
    """

    def __init__(self, address, service_name, task=""):
        self.address = address
        self.task = task or address
        self._service = service_name
        self._channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        self._methods = {}
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
            reply = self._callable(method)(request, timeout=timeout)
        except grpc.RpcError as error:
            raise self._transport_error(method, error) from None
        reply_header, arrays = messages.decode(reply)
        messages.raise_if_error(reply_header)
        return reply_header, arrays

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
