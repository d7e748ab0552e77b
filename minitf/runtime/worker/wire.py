"""The wire format between minitf processes: JSON headers, raw tensor bytes, shared memory.

Processes exchange *messages* over ``multiprocessing.connection`` sockets
using only ``send_bytes``/``recv_bytes`` — never pickle.  A message is one
JSON header frame followed by one raw frame per small tensor.  A large tensor
does not travel through the socket at all: the sender copies it into a
shared-memory segment and the header names the segment; the receiver maps the
segment and uses it in place (zero copies on its side).  A protocol buffer
(``RegisterGraph``'s ``GraphDef``) travels the same way, as its serialized
bytes in a ``uint8`` tensor (:func:`minitf.framework.protos.as_payload`),
never inside the JSON header.

Shared memory is slow the first time it is touched (the kernel must allocate
and zero each page: under 1 GB/s here), so segments are pooled: the sender
reuses warm segments, copying at memcpy speed, and the receiver keeps its
mappings open.  A segment is *lent* until every array the receiver built on
it has been garbage-collected; a finalizer then queues its name, and the
receiver hands the names back with its next message (``released``).

Segments are treated as what they are, files in a directory every local
user can list: their names end in a random suffix (``secrets``), so no other
process can guess one and create it first; a name received is used only if
it is a plain ``minitf-...`` name of the sender's pool (no ``/``, no ``..``);
and the receiver maps a segment read-only (``PROT_READ``), since it only
reads it — its arrays are not writeable, and a kernel that writes makes its
own copy (as it does for the read-only arrays of small tensors, which are
views of the received bytes).
"""

import json
import mmap
import os
import re
import secrets
import socket
import struct
import threading
import weakref

import numpy as np

from minitf.framework import errors

INLINE_LIMIT = 1 << 20  # tensors up to 1 MiB travel inside the message
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
#: What a segment's name may be: ``minitf-``, then letters, digits, ``-`` and ``_``.
_SEGMENT_NAME = re.compile(r"minitf-[A-Za-z0-9_-]+")
#: The dtypes of tensors that cross as raw bytes (no object or string arrays).
_RAW_KINDS = "biufc"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def shared_memory_available():
    return _SHM_DIR is not None


class SegmentPool:
    """The shared-memory segments this process lends to others."""

    def __init__(self, prefix):
        # The pid lets whoever reaps a killed process find its segments
        # (:func:`minitf.distributed.shared_memory.unlink_segments_of`).
        self.prefix = "%s-%d" % (prefix, os.getpid())
        self._free = {}      # size -> [name]
        self._maps = {}      # name -> (mmap, size)
        self._lock = threading.Lock()

    def lend(self, array):
        """Copies ``array`` into a free segment and returns its descriptor."""
        size = _size_class(array.nbytes)
        with self._lock:
            names = self._free.get(size)
            name = names.pop() if names else self._create(size)
        buffer, _ = self._maps[name]
        target = np.frombuffer(buffer, dtype=array.dtype, count=array.size)
        np.copyto(target.reshape(array.shape), array, casting="no")
        return {"shm": name, "owner": self.prefix, "dtype": array.dtype.str,
                "shape": list(array.shape)}

    def release(self, names):
        """Returns segments a receiver no longer uses to the free lists."""
        with self._lock:
            for name in names:
                if name in self._maps:
                    self._free.setdefault(self._maps[name][1], []).append(name)

    def _create(self, size):
        """A new segment of ``size`` bytes, under a name no other process can guess."""
        while True:  # O_EXCL: a name that is taken (by chance or on purpose) is never reused
            name = "%s-%s" % (self.prefix, secrets.token_hex(8))
            try:
                fd = os.open(os.path.join(_SHM_DIR, name),
                             os.O_CREAT | os.O_EXCL | os.O_RDWR | _NOFOLLOW, 0o600)
                break
            except FileExistsError:
                continue
        try:
            os.ftruncate(fd, size)
            buffer = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        self._maps[name] = (buffer, size)
        return name

    def close(self):
        """Unlinks every segment (mappings already handed out stay valid)."""
        with self._lock:
            for name, (buffer, _) in self._maps.items():
                try:
                    os.unlink(os.path.join(_SHM_DIR, name))
                except FileNotFoundError:
                    pass
            self._maps.clear()
            self._free.clear()


def unlink_segments_of(pid):
    """Removes the segments process ``pid`` lent: those named ``<pool>-<pid>-<suffix>``.

    A process killed with ``SIGKILL`` had no chance to unlink them itself;
    whoever reaps it calls this (the session, for its device processes).
    """
    if _SHM_DIR is None:
        return
    for name in os.listdir(_SHM_DIR):
        parts = name.rsplit("-", 2)
        if is_segment_name(name) and len(parts) == 3 and parts[1] == str(pid):
            try:
                os.unlink(os.path.join(_SHM_DIR, name))
            except FileNotFoundError:
                pass  # unlinked meanwhile


def _size_class(nbytes):
    """Segment sizes are powers of two (at least one page) so they can be reused."""
    return max(mmap.PAGESIZE, 1 << max(0, (nbytes - 1).bit_length()))


class SegmentMapper:
    """The receiving side: maps borrowed segments and reports when they are free."""

    def __init__(self):
        self._maps = {}
        self._released = {}  # owner's pool prefix -> segment names
        self._lock = threading.Lock()

    def array(self, descriptor):
        """A zero-copy, read-only array on the segment named in ``descriptor``.

        Raises:
            errors.InvalidArgumentError: if the descriptor names no segment of
                its sender's pool, a dtype that is not raw numbers, or more
                bytes than the segment holds.
        """
        name, owner = descriptor.get("shm"), descriptor.get("owner")
        checked_segment_name(name, owner)
        dtype = np.dtype(descriptor["dtype"])
        shape = [int(d) for d in descriptor["shape"]]
        if dtype.kind not in _RAW_KINDS or any(d < 0 for d in shape):
            raise errors.InvalidArgumentError(
                None, None, "Malformed shared-memory tensor: dtype %s, shape %s" % (dtype, shape))
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        with self._lock:
            buffer = self._maps.get(name)
            if buffer is None:
                fd = os.open(os.path.join(_SHM_DIR, name), os.O_RDONLY | _NOFOLLOW)
                try:
                    buffer = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                finally:
                    os.close(fd)
                self._maps[name] = buffer
        if nbytes > len(buffer):
            raise errors.InvalidArgumentError(
                None, None, "A shared-memory tensor of %d bytes in segment %s of %d bytes"
                % (nbytes, name, len(buffer)))
        # ``window`` is this tensor's own array on the mapping: every array
        # made from it keeps it alive, and when the last one goes the segment
        # is handed back.
        window = np.frombuffer(buffer, dtype=np.uint8, count=max(nbytes, 1))
        weakref.finalize(window, self._release, owner, name)
        return window[:nbytes].view(dtype).reshape(shape)

    def _release(self, owner, name):
        with self._lock:
            self._released.setdefault(owner, []).append(name)

    def take_released(self, owner):
        """Names of ``owner``'s segments no array refers to any more (to hand back)."""
        with self._lock:
            return self._released.pop(owner, [])


def is_segment_name(name):
    """Whether ``name`` is a plain segment name: ``minitf-``, then letters,
    digits, ``-`` and ``_`` — no ``/``, no ``..``: a received name becomes a
    path under ``/dev/shm`` and must not reach any other file."""
    return isinstance(name, str) and _SEGMENT_NAME.fullmatch(name) is not None


def checked_segment_name(name, owner_prefix):
    """``name`` if it is a segment of the pool ``owner_prefix``; else raises
    ``InvalidArgumentError``."""
    if not (is_segment_name(name) and isinstance(owner_prefix, str)
            and name.startswith(owner_prefix + "-")):
        raise errors.InvalidArgumentError(
            None, None, "Malformed shared-memory segment name %r: expected a name of the form "
            "minitf-<letters, digits, - and _> in the sender's pool %r" % (name, owner_prefix))
    return name


def set_send_timeout(connection, seconds):
    """Makes each blocking write on ``connection`` give up after ``seconds``
    without progress (``SO_SNDTIMEO``): it then raises ``BlockingIOError``.

    A message of small tensors crosses the socket itself, up to 1 MiB a
    tensor, more than a Unix socket buffers: a peer that does not read (a
    stopped process) would block its sender for as long as it stays stopped.
    ``SO_SNDTIMEO`` rather than a non-blocking socket: ``multiprocessing``'s
    Connection writes with plain blocking ``os.write`` calls.  A timed-out
    write may have sent part of a frame: the caller must drop the connection.
    """
    seconds = max(seconds, 0.001)  # 0 would mean "never"
    whole = int(seconds)
    timeval = struct.pack("ll", whole, int((seconds - whole) * 1e6))
    handle = socket.socket(fileno=os.dup(connection.fileno()))
    try:
        handle.setblocking(True)  # as the Connection needs it, whatever the default timeout
        handle.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
    finally:
        handle.close()


class Wire:
    """Encodes and decodes messages for one process (its pool and its mapper).

    Every header names the sender's pool (``pool``), so each end of a
    connection knows whose segments to hand back on it.
    """

    def __init__(self, prefix="minitf"):
        self.pool = SegmentPool(prefix) if shared_memory_available() else None
        self.mapper = SegmentMapper() if shared_memory_available() else None
        self._peer_pools = weakref.WeakKeyDictionary()  # connection -> its peer's pool prefix

    def send(self, connection, header, tensors=()):
        """Sends ``header`` (a JSON-compatible dict) and the NumPy ``tensors``."""
        frames, descriptors = [], []
        for tensor in tensors:
            array = np.asarray(tensor)
            if array.dtype.kind == "O":
                raise TypeError("string tensors cannot cross processes in minitf")
            if self.pool is not None and array.nbytes > INLINE_LIMIT:
                descriptors.append(self.pool.lend(array))
            else:
                contiguous = np.require(array, requirements="C")
                descriptors.append({"inline": len(frames), "dtype": contiguous.dtype.str,
                                    "shape": list(contiguous.shape)})
                frames.append(contiguous)
        header = dict(header, tensors=descriptors)
        if self.pool is not None:
            header["pool"] = self.pool.prefix
            peer = self._peer_pools.get(connection)
            if peer is not None:
                header["released"] = self.mapper.take_released(peer)
        connection.send_bytes(json.dumps(header).encode())
        for frame in frames:
            connection.send_bytes(memoryview(frame).cast("B") if frame.nbytes else b"")

    def receive(self, connection):
        """Receives one message: ``(header, [arrays])``."""
        header = json.loads(connection.recv_bytes())
        frames = [connection.recv_bytes() for d in header["tensors"] if "inline" in d]
        if "pool" in header:
            self._peer_pools[connection] = header["pool"]
        if header.get("released") and self.pool is not None:
            self.pool.release(header["released"])
        arrays = []
        for descriptor in header["tensors"]:
            if "shm" in descriptor:
                if self.mapper is None:
                    raise errors.InvalidArgumentError(
                        None, None, "A tensor arrived in shared memory, which this process "
                        "does not map")
                arrays.append(self.mapper.array(descriptor))
            else:
                data = frames[descriptor["inline"]]
                dtype = np.dtype(descriptor["dtype"])
                if dtype.kind not in _RAW_KINDS:
                    raise errors.InvalidArgumentError(
                        None, None, "A tensor of dtype %s cannot cross processes" % dtype)
                arrays.append(np.frombuffer(data, dtype=dtype).reshape(descriptor["shape"]))
        return header, arrays

    def close(self):
        if self.pool is not None:
            self.pool.close()
