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
"""

import ctypes
import itertools
import json
import mmap
import os
import threading
import weakref

import numpy as np

INLINE_LIMIT = 1 << 20  # tensors up to 1 MiB travel inside the message
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None


def shared_memory_available():
    return _SHM_DIR is not None


class SegmentPool:
    """The shared-memory segments this process lends to others."""

    def __init__(self, prefix):
        self.prefix = "%s-%d" % (prefix, os.getpid())
        self._counter = itertools.count()
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
        name = "%s-%d" % (self.prefix, next(self._counter))
        path = os.path.join(_SHM_DIR, name)
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
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
        """A zero-copy array on the segment named in ``descriptor``."""
        name = descriptor["shm"]
        with self._lock:
            buffer = self._maps.get(name)
            if buffer is None:
                fd = os.open(os.path.join(_SHM_DIR, name), os.O_RDWR)
                try:
                    buffer = mmap.mmap(fd, 0)
                finally:
                    os.close(fd)
                self._maps[name] = buffer
        dtype = np.dtype(descriptor["dtype"])
        count = int(np.prod(descriptor["shape"], dtype=np.int64))
        window = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_buffer(buffer)
        weakref.finalize(window, self._release, descriptor["owner"], name)
        return np.frombuffer(window, dtype=dtype, count=count).reshape(descriptor["shape"])

    def _release(self, owner, name):
        with self._lock:
            self._released.setdefault(owner, []).append(name)

    def take_released(self, owner):
        """Names of ``owner``'s segments no array refers to any more (to hand back)."""
        with self._lock:
            return self._released.pop(owner, [])


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
                arrays.append(self.mapper.array(descriptor))
            else:
                data = frames[descriptor["inline"]]
                arrays.append(np.frombuffer(data, dtype=np.dtype(descriptor["dtype"]))
                              .reshape(descriptor["shape"]))
        return header, arrays

    def close(self):
        if self.pool is not None:
            self.pool.close()
