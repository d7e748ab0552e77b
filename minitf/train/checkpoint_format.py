"""The checkpoint files on disk: a tensor *bundle* of an index and a data file.

``Saver.save(sess, "model.ckpt")`` writes, through the ``SaveV2`` kernel,
two files that together hold every saved tensor (TF's "V2" checkpoint
layout, ``tensorflow/core/util/tensor_bundle``, with our own encoding):

``model.ckpt.data-00000-of-00001`` — the raw bytes::

    b"MTFDATA\\x00"          8-byte magic
    bundle id               16 random bytes, also recorded in the index
    tensor bytes ...        each tensor in C order, little-endian, back to back

  A numeric or bool tensor is its ``tobytes()``; a string tensor is, per
  element, a little-endian uint32 byte length followed by the UTF-8 bytes.

``model.ckpt.index`` — one header line, then JSON::

    minitf-checkpoint-index 1 crc32=<8 hex digits of the JSON bytes>
    {"bundle_id": "<32 hex>", "num_shards": 1, "shard_sizes": [<bytes>],
     "tensors": {"v": {"dtype": "float32", "shape": [2], "shard": 0,
                       "offset": 24, "length": 8, "crc32": <int>}, ...}}

Every piece is checked when read: the index's own CRC-32, the bundle id and
size of the data file, and each tensor's CRC-32 (``zlib.crc32``; TF uses a
masked CRC-32C).  A mismatch, a truncated file or bad JSON is a
``DataLossError``; a missing index or data file is a ``NotFoundError``, as in TF.  No pickle: the
files hold only JSON and raw numbers, so loading one cannot run code.

Writes are atomic (:func:`write_atomically`): each file goes to a temporary
name in the same directory, is flushed and fsync'ed, then renamed over its
final name with ``os.replace``.  The data file is committed before the index,
so an index on disk always describes a complete data file.  Saving to a
*new* prefix therefore never damages any existing checkpoint.  (Re-saving to
the very same prefix replaces its two files one after the other; a crash
between the two renames leaves an index and a data file of different saves,
which the bundle id detects as ``DataLossError`` instead of mixing them.)
"""

import binascii
import json
import os
import tempfile
import zlib

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework import errors

INDEX_SUFFIX = ".index"
DATA_MAGIC = b"MTFDATA\x00"
INDEX_MAGIC = "minitf-checkpoint-index"
FORMAT_VERSION = 1
_BUNDLE_ID_BYTES = 16
_HEADER_BYTES = len(DATA_MAGIC) + _BUNDLE_ID_BYTES


def index_filename(prefix):
    """``<prefix>.index``."""
    return prefix + INDEX_SUFFIX


def data_filename(prefix, shard=0, num_shards=1):
    """``<prefix>.data-00000-of-00001`` (TF's shard naming)."""
    return "%s.data-%05d-of-%05d" % (prefix, shard, num_shards)


# ---- atomic files ---------------------------------------------------------------------------
def write_atomically(path, chunks):
    """Writes ``chunks`` (bytes, or an iterable of bytes-like objects) to ``path``
    so that ``path`` holds either its old content or all of the new one.

    The data goes to a temporary file in the same directory (``os.replace``
    is atomic only within one file system), is flushed and fsync'ed, and the
    temporary file is then renamed over ``path``; finally the directory is
    fsync'ed so the rename itself survives a power cut.

    Raises:
        FileNotFoundError: if the directory of ``path`` does not exist.
    """
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = [chunks]
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                                    suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_path, path)
    except BaseException:
        try:
            os.unlink(tmp_path)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # e.g. a platform where directories cannot be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- encoding one tensor ------------------------------------------------------------------
def _dtype_name(array):
    if array.dtype.kind in "OUS":
        return "string"
    return dtypes_lib.as_dtype(array.dtype).name


def _encode(array):
    """The bytes of ``array`` in the data file (see the module docstring)."""
    if array.dtype.kind in "OUS":
        parts = []
        for item in array.reshape(-1):
            raw = item if isinstance(item, bytes) else str(item).encode("utf-8")
            parts.append(len(raw).to_bytes(4, "little"))
            parts.append(raw)
        return b"".join(parts)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return memoryview(little.reshape(-1)).cast("B")


def _decode(raw, dtype_name, shape, name):
    count = int(np.prod(shape, dtype=np.int64))
    if dtype_name == "string":
        items, pos = [], 0
        for _ in range(count):
            if pos + 4 > len(raw):
                raise _data_loss("string tensor %r is truncated" % name)
            length = int.from_bytes(raw[pos:pos + 4], "little")
            items.append(bytes(raw[pos + 4:pos + 4 + length]))
            pos += 4 + length
        if pos != len(raw):
            raise _data_loss("string tensor %r has %d trailing bytes" % (name, len(raw) - pos))
        return np.array(items, dtype=object).reshape(shape)
    np_dtype = np.dtype(dtypes_lib.as_dtype(dtype_name).as_numpy_dtype).newbyteorder("<")
    if len(raw) != count * np_dtype.itemsize:
        raise _data_loss("tensor %r has %d bytes, expected %d for %s%s"
                         % (name, len(raw), count * np_dtype.itemsize, dtype_name, list(shape)))
    return np.frombuffer(raw, dtype=np_dtype).astype(np_dtype.newbyteorder("="))\
        .reshape(shape)


def _data_loss(message):
    return errors.DataLossError(None, None, message)


# ---- writing ---------------------------------------------------------------------------------
def write_bundle(prefix, tensors):
    """Writes the checkpoint ``prefix`` holding ``tensors`` (a dict name -> array).

    The data file is committed before the index (see the module docstring).

    The directory of ``prefix`` is created if it is missing but its parent
    exists — one level, as TF's ``BundleWriter`` does: ``saver.save(sess,
    "./model/m.ckpt")`` works without ``./model``.

    Raises:
        errors.NotFoundError: if the parent of that directory does not exist either.
    """
    directory = os.path.dirname(os.path.abspath(prefix))
    try:
        os.mkdir(directory)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, "%s: No such file or directory (the directory "
                                   "of checkpoint prefix %s)" % (directory, prefix)) from None
    bundle_id = os.urandom(_BUNDLE_ID_BYTES)
    chunks = [DATA_MAGIC, bundle_id]
    entries = {}
    offset = _HEADER_BYTES
    for name in sorted(tensors):
        array = np.asarray(tensors[name])
        raw = _encode(array)
        length = raw.nbytes if isinstance(raw, memoryview) else len(raw)
        entries[name] = {"dtype": _dtype_name(array), "shape": list(array.shape), "shard": 0,
                         "offset": offset, "length": length, "crc32": zlib.crc32(raw)}
        chunks.append(raw)
        offset += length
    write_atomically(data_filename(prefix), chunks)
    body = json.dumps({"bundle_id": bundle_id.hex(), "num_shards": 1, "shard_sizes": [offset],
                       "tensors": entries}, separators=(",", ":")).encode("utf-8")
    header = "%s %d crc32=%08x\n" % (INDEX_MAGIC, FORMAT_VERSION, zlib.crc32(body))
    write_atomically(index_filename(prefix), [header.encode("ascii"), body])


# ---- reading ----------------------------------------------------------------------------------
class BundleReader:
    """Reads the tensors of one checkpoint (TF's ``BundleReader``).

    Opening checks the index (its CRC and JSON) and that the data files are
    the ones it describes; :meth:`read` checks each tensor's CRC.

    Example:
        >>> reader = BundleReader("/tmp/model.ckpt-100")
        >>> reader.read("weights").shape
        (784, 10)

    Raises:
        errors.NotFoundError: if ``<prefix>.index`` or a data file does not exist.
        errors.DataLossError: if the index or a data file is damaged.
    """

    def __init__(self, prefix):
        self.prefix = prefix
        path = index_filename(prefix)
        try:
            with open(path, "rb") as f:
                content = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(
                None, None, "Failed to find any matching files for %s (no file %s). Pass the "
                "checkpoint prefix Saver.save returned, or tf.train.latest_checkpoint(dir)."
                % (prefix, path)) from None
        except IsADirectoryError:
            raise errors.NotFoundError(None, None, "Failed to find any matching files for %s: %s "
                                       "is a directory" % (prefix, path)) from None
        self._index = _parse_index(content, path)
        self._tensors = self._index["tensors"]
        self._check_data_files()

    def _check_data_files(self):
        bundle_id = self._index["bundle_id"]
        num_shards = self._index["num_shards"]
        for shard, size in enumerate(self._index["shard_sizes"]):
            path = data_filename(self.prefix, shard, num_shards)
            try:
                with open(path, "rb") as f:
                    header = f.read(_HEADER_BYTES)
                    actual_size = os.fstat(f.fileno()).st_size
            except FileNotFoundError:
                raise errors.NotFoundError(
                    None, None, "%s; No such file or directory (checkpoint %s: its index lists "
                    "this data file)" % (path, self.prefix)) from None
            if header[:len(DATA_MAGIC)] != DATA_MAGIC:
                raise _data_loss("Checkpoint %s: %s is not a minitf checkpoint data file (bad "
                                 "magic number)" % (self.prefix, path))
            if header[len(DATA_MAGIC):].hex() != bundle_id:
                raise _data_loss("Checkpoint %s: data file %s belongs to another save than the "
                                 "index (an interrupted save to the same prefix?)"
                                 % (self.prefix, path))
            if actual_size != size:
                raise _data_loss("Checkpoint %s: data file %s has %d bytes, the index says %d "
                                 "(truncated?)" % (self.prefix, path, actual_size, size))

    def keys(self):
        """The saved tensor names, sorted."""
        return sorted(self._tensors)

    def has(self, name):
        return name in self._tensors

    def dtype(self, name):
        """The :class:`~minitf.framework.dtypes.DType` of tensor ``name``."""
        return dtypes_lib.as_dtype(self._entry(name)["dtype"])

    def shape(self, name):
        """The shape of tensor ``name`` as a list of ints."""
        return list(self._entry(name)["shape"])

    def read(self, name):
        """The value of tensor ``name`` as a NumPy array.

        Raises:
            errors.NotFoundError: if there is no tensor ``name``.
            errors.DataLossError: if its bytes do not match their checksum.
        """
        entry = self._entry(name)
        path = data_filename(self.prefix, entry["shard"], self._index["num_shards"])
        with open(path, "rb") as f:
            f.seek(entry["offset"])
            raw = f.read(entry["length"])
        if len(raw) != entry["length"]:
            raise _data_loss("Checkpoint %s: tensor %r is cut short in %s"
                             % (self.prefix, name, path))
        crc = zlib.crc32(raw)
        if crc != entry["crc32"]:
            raise _data_loss("Checkpoint %s shard %d: checksum of tensor %r does not match: "
                             "stored %d vs. calculated on the restored bytes %d"
                             % (self.prefix, entry["shard"], name, entry["crc32"], crc))
        return _decode(raw, entry["dtype"], entry["shape"], name)

    def _entry(self, name):
        entry = self._tensors.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % name)
        return entry


def _parse_index(content, path):
    """Checks and decodes the index file's bytes."""
    header, newline, body = content.partition(b"\n")
    parts = header.decode("ascii", "replace").split(" ")
    if not newline or len(parts) != 3 or parts[0] != INDEX_MAGIC or \
            not parts[2].startswith("crc32="):
        raise _data_loss("%s is not a minitf checkpoint index (bad header %r)"
                         % (path, header[:60]))
    if parts[1] != str(FORMAT_VERSION):
        raise _data_loss("%s has checkpoint format version %s; this minitf reads version %d"
                         % (path, parts[1], FORMAT_VERSION))
    try:
        stored_crc = int(parts[2][len("crc32="):], 16)
    except ValueError:
        raise _data_loss("%s: unreadable checksum in header %r" % (path, header)) from None
    if zlib.crc32(body) != stored_crc:
        raise _data_loss("%s: index checksum does not match (stored %08x, calculated %08x): the "
                         "file is truncated or corrupted" % (path, stored_crc, zlib.crc32(body)))
    try:
        index = json.loads(body.decode("utf-8"))
        for key in ("bundle_id", "num_shards", "shard_sizes", "tensors"):
            index[key]  # noqa: B018 - presence check
        binascii.unhexlify(index["bundle_id"])
    except (ValueError, KeyError, TypeError) as e:
        raise _data_loss("%s: malformed index (%s)" % (path, e)) from None
    return index
