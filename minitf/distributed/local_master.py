"""The master of a server in the client's own process, called without gRPC.

Most distributed TF1 programs run their client in a task's own process::

    server = tf.train.Server(cluster, "worker", 0)
    with tf.Session(server.target) as sess:   # the master is in this process
        ...

Sending every ``RunStep`` through the loopback socket would serialize the
feeds, wake gRPC's threads and parse the reply, only to reach an object
in the same address space.  TF avoids that: each server registers its
master under its target (``LocalMaster::Register`` in
``tensorflow/core/distributed_runtime/local_master.cc``), and a session
whose target is registered calls the master directly.  minitf does the
same, through :class:`LocalMasterStub`, which has :class:`~minitf.
distributed.rpc.Stub`'s ``call`` so the session cannot tell the two apart.

The master still answers the same requests (headers and tensors) with the
same errors; only the transport is gone.  A client whose credentials are
not the server's (another cluster token, TLS on one side only) is not
given the shortcut: it goes through the server's port, where it is checked
like any other caller.
"""

import threading

from minitf.distributed import messages
from minitf.distributed.rpc import Request

_masters = {}  # target -> (method table, the server's ClusterCredentials)
_lock = threading.Lock()


def register(target, methods, credentials):
    """Makes the master ``methods`` (``{name: fn(header, tensors)}``) of the
    server at ``target`` callable from this process."""
    with _lock:
        _masters[target] = (methods, credentials)


def unregister(target, methods):
    """Forgets the master of ``target`` (its server stopped)."""
    with _lock:
        if _masters.get(target, (None,))[0] is methods:
            del _masters[target]


def lookup(target, credentials):
    """A :class:`LocalMasterStub` for ``target`` if its server is in this process
    and ``credentials`` are the ones it serves with; None otherwise."""
    with _lock:
        methods, served = _masters.get(target, (None, None))
    if methods is None or credentials.token != served.token \
            or credentials.calls_tls != served.serves_tls:
        return None
    return LocalMasterStub(methods)


class LocalMasterStub:
    """A master in this process, with the ``call`` of a gRPC :class:`~minitf.distributed.rpc.Stub`."""

    def __init__(self, methods):
        self._methods = methods

    def call(self, method, header=None, tensors=(), timeout=None, wait_for_ready=False):
        """Calls ``method``; returns ``(reply header, reply tensors)``.

        ``timeout`` bounds a gRPC call's transport; here there is none (the
        master enforces a step's own deadline).  A failure reaches the caller
        as the wire would bring it: the error's class and message, with no
        link to the master's copy of the graph (the session names the op
        of its own graph), and any other exception as an ``InternalError``.
        """
        del timeout, wait_for_ready
        try:
            return self._methods[method](Request(header or {}), list(tensors))
        except Exception as error:  # pylint: disable=broad-except
            messages.raise_if_error(messages.error_header(error))
            raise  # not reached: raise_if_error raised

    def close(self):
        """Nothing to close: no channel was opened."""
