"""The rendezvous: where a ``_Send`` and its ``_Recv`` meet.

Each step has one rendezvous, a table from *keys* to tensors.  A Send puts its
value under a key; the matching Recv waits until that key appears.  The key
names the source device and its *incarnation*, the destination device, the
tensor and the control-flow frame and iteration (TF's ``Rendezvous::CreateKey``)::

    /job:localhost/.../device:CPU:0;0000000000000001;/job:localhost/.../device:CPU:1;add:0;0:0

The incarnation (16 hex digits) is a number a device draws when its process
starts: a task of a cluster that restarts gets new ones, so a step planned
for the old process asks for keys the new one refuses (``AbortedError``)
instead of mixing the two.  Devices of one local session are all incarnation
1.  When any partition of the step fails the rendezvous is *aborted*: every
waiting Recv wakes up with that error, so a failed step never hangs.
"""

import collections
import threading

from minitf.framework import errors

#: The incarnation of devices that never restart apart from their session.
LOCAL_INCARNATION = 1

ParsedKey = collections.namedtuple(
    "ParsedKey", "send_device send_device_incarnation recv_device tensor_name frame_id iteration")


def create_key(send_device, send_device_incarnation, recv_device, tensor_name, frame_id=0,
               iteration=0):
    """The rendezvous key of one tensor crossing from ``send_device`` to ``recv_device``."""
    return "%s;%016x;%s;%s;%d:%d" % (send_device, send_device_incarnation, recv_device,
                                     tensor_name, frame_id, iteration)


def rendezvous_key(send_or_recv_op, frame_id=0, iteration=0):
    """The key a ``_Send``/``_Recv`` op uses in a given frame and iteration."""
    attrs = send_or_recv_op._attrs  # a graph from before incarnations: local devices
    return create_key(send_or_recv_op.get_attr("send_device"),
                      attrs.get("send_device_incarnation", LOCAL_INCARNATION),
                      send_or_recv_op.get_attr("recv_device"),
                      send_or_recv_op.get_attr("tensor_name"), frame_id, iteration)


def parse_key(key):
    """The fields of a key, as a :class:`ParsedKey` (TF's ``Rendezvous::ParseKey``).

    Raises:
        errors.InvalidArgumentError: if ``key`` is not a rendezvous key.
    """
    parts = key.split(";")
    try:
        send_device, incarnation, recv_device, tensor_name, frame_iter = parts
        frame_id, iteration = frame_iter.split(":")
        return ParsedKey(send_device, int(incarnation, 16), recv_device, tensor_name,
                         int(frame_id), int(iteration))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, "Invalid rendezvous key: %r" % (key,)) \
            from None


class Rendezvous:
    """An in-process rendezvous for one step (TF's ``IntraProcessRendezvous``)."""

    def __init__(self):
        self._table = {}
        self._condition = threading.Condition()
        self._error = None

    def send(self, key, value):
        """Publishes ``value`` under ``key``.

        Raises:
            errors.InternalError: if the key was already sent in this step.
        """
        with self._condition:
            if key in self._table:
                raise errors.InternalError(None, None, "Send of an already sent tensor: " + key)
            self._table[key] = value
            self._condition.notify_all()

    def recv(self, key, timeout=None):
        """Waits for and returns the value under ``key``.

        Raises:
            errors.OpError: the abort error, if the step was aborted.
            errors.DeadlineExceededError: if ``timeout`` seconds pass first.
        """
        with self._condition:
            ready = self._condition.wait_for(lambda: key in self._table or self._error,
                                             timeout=timeout)
            if self._error is not None:
                raise self._error
            if not ready:
                raise errors.DeadlineExceededError(None, None, "Timed out waiting for " + key)
            return self._table.pop(key)

    def recv_some(self, keys, timeout=None):
        """Waits until some of ``keys`` are sent; returns ``{key: value}`` of all
        of them sent so far (a peer that asks for a step's tensors at once
        takes each group as it becomes ready).

        Raises:
            errors.OpError: the abort error, if the step was aborted.
            errors.DeadlineExceededError: if ``timeout`` seconds pass first.
        """
        with self._condition:
            ready = self._condition.wait_for(
                lambda: self._error or any(key in self._table for key in keys), timeout=timeout)
            if self._error is not None:
                raise self._error
            if not ready:
                raise errors.DeadlineExceededError(None, None, "Timed out waiting for %s"
                                                   % ", ".join(keys))
            return {key: self._table.pop(key) for key in keys if key in self._table}

    def start_abort(self, error):
        """Fails every pending and future ``recv`` with ``error``."""
        with self._condition:
            if self._error is None:
                self._error = error
            self._condition.notify_all()

    @property
    def aborted(self):
        return self._error is not None

    @property
    def abort_error(self):
        """The error the step was aborted with (None: not aborted)."""
        return self._error
