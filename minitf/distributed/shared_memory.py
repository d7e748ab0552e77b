"""The same-host path of ``RecvTensor`` and ``RunGraph``: large tensors lent in shared memory.

Two tasks on one machine need not push a large tensor through gRPC's
socket: the task that has it copies it into a pooled ``/dev/shm`` segment
and its reply names the segment; the caller maps the segment and uses it in
place (the :class:`~minitf.runtime.worker.wire.SegmentPool` /
``SegmentMapper`` of minitf's device processes).

**Which tasks share memory.**  A caller that can map segments says so in
its request: ``"shm": {"host": <boot id>, "fs": [st_dev, st_ino]}``, the
kernel's ``/proc/sys/kernel/random/boot_id`` and the identity of its
``/dev/shm``.  A task lends segments only to a caller whose boot id *and*
``/dev/shm`` are its own: the same machine and the same shared-memory file
system (two containers on one host share a boot id, not their
``/dev/shm``).  Host names and addresses are not trusted for this.

**Lending and handing back.**  A tensor of more than
:data:`LEND_THRESHOLD` bytes (64 KiB) is lent:
the reply's ``"shm_tensors"`` lists ``[position, descriptor]`` pairs and the
tensor is left out of the reply's tensors.  Once the caller's arrays on a
segment are garbage-collected, the caller hands its name back on its next
``RunGraph`` or ``RecvTensor`` to that task (``"shm_released"``).  Names
received are checked (no ``/`` or ``..``, the expected prefix) before they
are used, and mapped read-only; names end in a random suffix, so no other
process can guess one (see :mod:`~minitf.runtime.worker.wire`).  A lending
task unlinks its segments when its server stops; the segments of a
task that was killed are removed by whoever reaps it (:func:`unlink_segments_of`).

Off with ``MINITF_SHM=0``, and when ``/dev/shm`` is absent: tensors then
cross as bytes, as between hosts.
"""

import os
import secrets
import threading

import numpy as np

from minitf.framework import errors
from minitf.runtime.worker import wire

#: Every segment a task lends starts with this.
PREFIX = "minitf-grpc"
#: A tensor of more bytes than this is lent.  Lower than a device process's
#: 1 MiB: a tensor in a gRPC message is copied four times on its way (into the
#: message, into gRPC, out of gRPC, into an array), a lent one once.
LEND_THRESHOLD = 64 << 10
_CROSSING_KINDS = "biufc"


def enabled():
    """Whether this process lends and maps segments (``MINITF_SHM`` not ``0``, ``/dev/shm`` there)."""
    return os.environ.get("MINITF_SHM", "1") != "0" and wire.shared_memory_available()


def _identity():
    """This machine's boot id and its ``/dev/shm``'s device and inode (None if unknown)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot_id = f.read().strip()
        shm = os.stat("/dev/shm")
    except OSError:
        return None
    return {"host": boot_id, "fs": [shm.st_dev, shm.st_ino]}


class Lender:
    """The serving side: lends large reply tensors to callers on this host."""

    def __init__(self):
        self._identity = _identity() if enabled() else None
        # Several servers may share a process: each pool's names are its own.
        self._pool = wire.SegmentPool("%s-%s" % (PREFIX, secrets.token_hex(4))) \
            if self._identity is not None else None

    def reply(self, request, header, tensors):
        """``(header, tensors)`` of a reply to ``request``, large tensors lent if the
        caller shares this host's memory; takes back the segments it released."""
        if self._pool is None:
            return header, tensors
        released = request.get("shm_released") or []
        if released:
            self._pool.release(_checked_names(released, self._pool.prefix + "-"))
        if request.get("shm") != self._identity:
            return header, tensors
        lent, kept = [], []
        for position, tensor in enumerate(tensors):
            array = np.asarray(tensor)
            if array.dtype.kind in _CROSSING_KINDS and array.nbytes > LEND_THRESHOLD:
                lent.append([position, self._pool.lend(array)])
            else:
                kept.append(array)
        if lent:
            header = dict(header, shm_tensors=lent)
        return header, kept

    def close(self):
        """Unlinks every segment (callers' mappings stay valid)."""
        if self._pool is not None:
            self._pool.close()


class Borrower:
    """The calling side, for one peer task: maps lent tensors, hands segments back."""

    def __init__(self):
        self._identity = _identity() if enabled() else None
        self._mapper = wire.SegmentMapper() if self._identity is not None else None
        self._owners = set()
        self._lock = threading.Lock()

    def request(self, header):
        """``header`` with this caller's identity and the segments it released."""
        if self._mapper is None:
            return header
        with self._lock:
            owners = list(self._owners)
        released = [name for owner in owners for name in self._mapper.take_released(owner)]
        return dict(header, shm=self._identity, shm_released=released)

    def arrays(self, header, tensors):
        """The reply's tensors, those lent in shared memory mapped in their places."""
        lent = header.get("shm_tensors")
        if not lent:
            return tensors
        if self._mapper is None:
            raise errors.InvalidArgumentError(None, None, "A reply lends tensors in shared "
                                              "memory, which this caller did not ask for")
        arrays = list(tensors)
        try:
            for position, descriptor in sorted(lent, key=lambda pair: pair[0]):
                _checked_names([descriptor["shm"]], PREFIX + "-")
                owner = descriptor["owner"]
                if not isinstance(owner, str) or not descriptor["shm"].startswith(owner + "-"):
                    raise ValueError("segment %r is not %r's" % (descriptor["shm"], owner))
                dtype = np.dtype(descriptor["dtype"])
                shape = [int(d) for d in descriptor["shape"]]
                if dtype.kind not in _CROSSING_KINDS or any(d < 0 for d in shape):
                    raise ValueError("bad descriptor %r" % (descriptor,))
                with self._lock:
                    self._owners.add(owner)
                arrays.insert(position, self._mapper.array(
                    dict(descriptor, dtype=dtype.str, shape=shape)))
        except (KeyError, TypeError, ValueError, OSError) as error:
            raise errors.InvalidArgumentError(
                None, None, "Malformed shared-memory tensor in a reply: %s" % error) from None
        return arrays


def unlink_segments_of(pid):
    """Removes the segments process ``pid`` lent (their names carry its pid).

    A task killed with SIGKILL — or with SIGTERM while it only ``join()``\\ s
    its server, which Python's default handler ends at once — had no chance
    to unlink them; whoever reaps it (a launcher, a test) calls this.
    """
    wire.unlink_segments_of(pid)


def _checked_names(names, prefix):
    """``names`` if each is a plain segment name starting with ``prefix``."""
    if not isinstance(names, list) or not all(
            wire.is_segment_name(n) and n.startswith(prefix) for n in names):
        raise errors.InvalidArgumentError(None, None, "Malformed shared-memory segment names "
                                          "%r (expected names starting with %r)"
                                          % (names, prefix))
    return names
