"""The rendezvous: where a ``_Send`` and its ``_Recv`` meet.

Each step has one rendezvous, a table from *keys* to tensors.  A Send puts its
value under a key; the matching Recv waits until that key appears.  The key
names both devices, the tensor and the control-flow frame and iteration:
``/job:localhost/.../device:CPU:0;/job:localhost/.../device:CPU:1;add:0;0:0``
(TF's ``Rendezvous::CreateKey``).  When any partition of the step fails the
rendezvous is *aborted*: every waiting Recv wakes up with that error, so a
failed step never hangs.
"""

import threading

from minitf.framework import errors


def create_key(send_device, recv_device, tensor_name, frame_id=0, iteration=0):
    """The rendezvous key of one tensor crossing from ``send_device`` to ``recv_device``."""
    return "%s;%s;%s;%d:%d" % (send_device, recv_device, tensor_name, frame_id, iteration)


def rendezvous_key(send_or_recv_op, frame_id=0, iteration=0):
    """The key a ``_Send``/``_Recv`` op uses in a given frame and iteration."""
    return create_key(send_or_recv_op.get_attr("send_device"),
                      send_or_recv_op.get_attr("recv_device"),
                      send_or_recv_op.get_attr("tensor_name"), frame_id, iteration)


def parse_key(key):
    """``(send_device, recv_device, tensor_name, frame_id, iteration)`` of a key."""
    send_device, recv_device, tensor_name, frame_iter = key.split(";")
    frame_id, iteration = frame_iter.split(":")
    return send_device, recv_device, tensor_name, int(frame_id), int(iteration)


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

    def start_abort(self, error):
        """Fails every pending and future ``recv`` with ``error``."""
        with self._condition:
            if self._error is None:
                self._error = error
            self._condition.notify_all()

    @property
    def aborted(self):
        return self._error is not None
