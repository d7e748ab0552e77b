"""gRPC plumbing: services whose methods take and return one message.

Each RPC of the cluster carries one request message and one reply message,
both in the format of :mod:`~minitf.distributed.messages`.  gRPC carries them
as raw bytes (no serializer), so this module only

* turns a table ``{method name: fn(header, tensors) -> (header, tensors)}``
  into a gRPC service (:func:`service_handler`), reporting any exception of
  ``fn`` to the caller as an error header — a bad request never stops a server;
* calls a method of a remote service (:class:`Stub`) and turns both kinds of
  failure back into TF's error classes: an error the service reported, or a
  transport failure (an unreachable task is ``UnavailableError``, a missed
  deadline ``DeadlineExceededError``);
* moves a large message as a stream of chunks.

**Small messages are unary, large ones stream.**  A unary gRPC call is the
cheapest there is in grpcio (a streaming one costs about twice as much per
call, which a tiny step would feel), but one gRPC message is capped (4 MiB by
default, 2 GiB at most).  So every method ``M`` is served three ways::

    M            unary -> unary      a request of at most STREAM_THRESHOLD bytes
    MChunks      stream -> stream    a larger request; the reply comes in chunks too
    TakeReply    unary -> stream     (one per service) a reply too large for M

A :class:`Stub` sends a request of up to :data:`STREAM_THRESHOLD` bytes to
``M``.  If its reply is larger, the service *parks* it and answers
``{"parked_reply": ticket}``; the stub then takes it with ``TakeReply`` (one
more round trip, small beside the transfer).  A parked reply nobody takes is
dropped after :data:`PARKED_REPLY_SECONDS`.  A larger request goes to
``MChunks``, whose reply always streams.

A chunked message is the message's bytes cut into chunks of at most
:data:`CHUNK_BYTES`; the first chunk starts with the message's total size (8
bytes, little-endian).  The receiver checks that size against
``messages.MAX_MESSAGE_BYTES`` *before* it allocates one buffer of exactly
that size, copies the chunks into it, and decodes the message from it (the
arrays are views of that buffer: no other copy).  A stream that announces too
much, or brings more or fewer bytes than it announced, is an
``InvalidArgumentError``; the server answers it and serves on.  No gRPC
message is larger than :data:`GRPC_MESSAGE_LIMIT`, so a peer cannot make a
task allocate more than that on its word alone.

Mirrors TF's ``grpc_util`` / ``GrpcRemoteWorker`` plumbing (TF streams a
large ``RecvTensor`` reply as gRPC byte-buffer slices).
"""

import concurrent.futures
import itertools
import logging
import secrets
import struct
import threading
import time

import grpc
import numpy as np

from minitf.distributed import messages
from minitf.distributed.security import ClusterCredentials
from minitf.framework import errors

#: Milliseconds between keepalive pings, and to wait for their answer.
KEEPALIVE_MS = 5000

#: A message of more bytes than this travels in chunks (see the module docstring).
STREAM_THRESHOLD = 4 << 20
#: The largest chunk of a chunked message.
CHUNK_BYTES = 4 << 20
#: The largest single gRPC message a task sends or accepts: a unary message or
#: a chunk, with room to spare.  Larger messages are chunked, not refused.
GRPC_MESSAGE_LIMIT = 16 << 20
#: Seconds a parked reply waits for its ``TakeReply``.
PARKED_REPLY_SECONDS = 60.0

_TOTAL = struct.Struct("<Q")

CHANNEL_OPTIONS = [("grpc.max_send_message_length", GRPC_MESSAGE_LIMIT),
                   ("grpc.max_receive_message_length", GRPC_MESSAGE_LIMIT),
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

    Each method is served unary (``M``) and chunked (``MChunks``), and the
    service has ``TakeReply`` for parked replies (see the module docstring).

    Args:
        service_name: e.g. ``"minitf.WorkerService"``.
        methods: ``{name: fn(header, tensors) -> (reply header, reply tensors)}``.

    Returns:
        A ``grpc.GenericRpcHandler`` whose ``close()`` drops the parked replies.
    """
    return _Service(service_name, methods)


class _Service(grpc.GenericRpcHandler):
    """The gRPC handlers of one service, and the replies it parked."""

    def __init__(self, service_name, methods):
        self._parked = {}  # ticket -> (parts, total bytes, time.monotonic() when parked)
        self._lock = threading.Lock()
        handlers = {"TakeReply": grpc.unary_stream_rpc_method_handler(self._take_reply)}
        for name, fn in methods.items():
            answer = _answering(service_name, fn)
            handlers[name] = grpc.unary_unary_rpc_method_handler(self._unary(answer))
            handlers[name + "Chunks"] = grpc.stream_stream_rpc_method_handler(
                self._streamed(answer))
        self._generic = grpc.method_handlers_generic_handler(service_name, handlers)

    def service(self, handler_call_details):
        return self._generic.service(handler_call_details)

    def _unary(self, answer):
        def handle(request, context):
            parts, total = answer(lambda: request, context)
            if total <= STREAM_THRESHOLD:
                return b"".join(parts)
            return messages.encode({"parked_reply": self._park(parts, total)})
        return handle

    @staticmethod
    def _streamed(answer):
        def handle(request_chunks, context):
            parts, total = answer(lambda: joined(request_chunks), context)
            yield from chunked(parts, total)
        return handle

    def _park(self, parts, total):
        ticket = secrets.token_hex(16)
        now = time.monotonic()
        with self._lock:
            for old in [t for t, (_, _, when) in self._parked.items()
                        if now - when > PARKED_REPLY_SECONDS]:
                del self._parked[old]
            self._parked[ticket] = (parts, total, now)
        return ticket

    def _take_reply(self, request, context):
        try:
            header, _ = messages.decode(request)
            with self._lock:
                parked = self._parked.pop(header.get("ticket"), None)
            if parked is None:
                raise errors.InvalidArgumentError(
                    None, None, "TakeReply: no reply is parked under ticket %r (taken "
                    "already, or dropped after %.0f s)" % (header.get("ticket"),
                                                          PARKED_REPLY_SECONDS))
            parts, total, _ = parked
        except errors.OpError as error:
            parts, total = messages.encode_parts(messages.error_header(error))
        yield from chunked(parts, total)

    def close(self):
        """Drops the replies nobody took."""
        with self._lock:
            self._parked.clear()


def chunked(parts, total):
    """The chunks of a message given as ``messages.encode_parts`` buffers.

    The first chunk starts with ``total`` (8 bytes); no chunk is larger than
    :data:`CHUNK_BYTES`.
    """
    pending, size = [_TOTAL.pack(total)], _TOTAL.size
    for part in parts:
        view = memoryview(part)
        while len(view):
            take = min(CHUNK_BYTES - size, len(view))
            pending.append(view[:take])
            size += take
            view = view[take:]
            if size == CHUNK_BYTES:
                yield b"".join(pending)
                pending, size = [], 0
    if pending:
        yield b"".join(pending)


def joined(chunks):
    """The message whose chunks are ``chunks``, in one buffer of the size announced.

    Raises:
        errors.InvalidArgumentError: if the stream announces no size or more than
            ``messages.MAX_MESSAGE_BYTES`` (nothing is allocated then), or brings
            more or fewer bytes than it announced.
    """
    chunks = iter(chunks)
    first = next(chunks, None)
    if first is None or len(first) < _TOTAL.size:
        raise _malformed_stream("its first chunk does not announce the message's size")
    (total,) = _TOTAL.unpack_from(first)
    if total > messages.MAX_MESSAGE_BYTES:
        raise _malformed_stream("it announces %d bytes; a message may have %d at most "
                                "(MINITF_MAX_MESSAGE_BYTES)" % (total, messages.MAX_MESSAGE_BYTES))
    buffer = np.empty(total, dtype=np.uint8)
    offset = 0
    for chunk in itertools.chain([memoryview(first)[_TOTAL.size:]], chunks):
        if len(chunk) > total - offset:
            raise _malformed_stream("it brings more than the %d bytes it announced" % total)
        buffer[offset:offset + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
        offset += len(chunk)
    if offset != total:
        raise _malformed_stream("it ended after %d of the %d bytes it announced"
                                % (offset, total))
    return buffer


def _malformed_stream(what):
    return errors.InvalidArgumentError(None, None, "Malformed message stream: %s" % what)


class Request(dict):
    """A request's header: a field it lacks is the caller's error, not the server's.

    ``context`` is the gRPC call's (None for a call within the process).
    """

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
    """``answer(read_request, context) -> (reply parts, total bytes)``: calls
    ``fn`` on the request ``read_request()`` returns; any failure is the reply."""
    def answer(read_request, context):
        header = None
        try:
            fields, tensors = messages.decode(read_request())
            header = Request(fields, context)
            reply_header, reply_tensors = fn(header, tensors)
            return messages.encode_parts(reply_header, reply_tensors)
        except Exception as error:  # reported to the caller, which raises it
            if not isinstance(error, errors.OpError):
                _log.exception("%s.%s failed", service_name, fn.__name__)
            return messages.encode_parts(messages.error_header(error))
        finally:
            if header is not None:
                header.answered = True
    return answer


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
        self._notices = None  # the thread sending call_soon's notices (made on first use)
        self._closed = False
        self._lock = threading.Lock()

    def call(self, method, header=None, tensors=(), timeout=None, wait_for_ready=False):
        """Sends one request; returns ``(reply header, reply tensors)``.

        Args:
            timeout: seconds to wait at most (None: no limit).
            wait_for_ready: wait (up to ``timeout``) for a task that is not
                listening yet, instead of failing at once (small requests only).

        Raises:
            errors.OpError: what the service reported, or ``UnavailableError``
                / ``DeadlineExceededError`` when the task cannot answer in time.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        parts, total = messages.encode_parts(header or {}, tensors)
        try:
            if total <= STREAM_THRESHOLD:
                reply = self._callable("unary_unary", method)(
                    b"".join(parts), timeout=timeout, metadata=self._metadata,
                    wait_for_ready=wait_for_ready)
            else:
                reply = joined(self._callable("stream_stream", method + "Chunks")(
                    chunked(parts, total), timeout=timeout, metadata=self._metadata))
            reply_header, arrays = messages.decode(reply)
            if "parked_reply" in reply_header:
                reply = joined(self._callable("unary_stream", "TakeReply")(
                    messages.encode({"ticket": reply_header["parked_reply"]}),
                    timeout=_remaining(deadline), metadata=self._metadata))
                reply_header, arrays = messages.decode(reply)
        except grpc.RpcError as error:
            raise self._transport_error(method, error) from None
        messages.raise_if_error(reply_header)
        return reply_header, arrays

    def call_soon(self, method, header=None, timeout=5.0):
        """Sends one request without waiting for the reply (TF's async cleanup calls).

        For notices whose failure changes nothing (``AbortStep``,
        ``CleanupGraph``): a task that is gone or hung must not hold up the
        step that failed because of it.  The stub's one notice thread sends
        them in order (gRPC's own asynchronous calls would start a polling
        thread per call); an unanswered call ends at ``timeout``.
        """
        request = messages.encode(header or {})
        with self._lock:
            if self._closed:
                return  # nobody left to tell
            if self._notices is None:
                self._notices = concurrent.futures.ThreadPoolExecutor(
                    1, thread_name_prefix="minitf-notice")
            self._notices.submit(self._notify, method, request, timeout)

    def _notify(self, method, request, timeout):
        try:
            self._callable("unary_unary", method)(request, timeout=timeout,
                                                  metadata=self._metadata)
        except (grpc.RpcError, ValueError):  # a task that is gone has nothing to be told
            pass

    def _callable(self, kind, method):
        """The channel's callable of ``method``, of ``kind`` (e.g. ``"unary_unary"``)."""
        with self._lock:
            if (kind, method) not in self._methods:
                self._methods[kind, method] = getattr(self._channel, kind)(
                    "/%s/%s" % (self._service, method))
            return self._methods[kind, method]

    def _transport_error(self, method, error):
        cls = _ERROR_OF_STATUS.get(error.code(), errors.UnknownError)
        return cls(None, None, "%s to task %s (%s) failed: %s" % (
            method, self.task, self.address, error.details()))

    def close(self):
        with self._lock:
            self._closed = True
            notices, self._notices = self._notices, None
        if notices is not None:
            notices.shutdown(wait=False, cancel_futures=True)
        self._channel.close()


def _remaining(deadline):
    """Seconds left until a ``time.monotonic()`` deadline (None: no deadline)."""
    return None if deadline is None else max(0.001, deadline - time.monotonic())
