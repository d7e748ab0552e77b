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

Every piece is checked when read, against the sizes on disk before anything
is read or allocated: the index's own CRC-32, the type and range of every
field of its JSON (a dtype minitf knows, a shape of non-negative ints, an
offset and length inside the data file that fit that shape), the bundle id
and size of the data file, and each tensor's CRC-32 (``zlib.crc32``, a
compiled C loop; TF uses a masked CRC-32C).  Whatever is wrong — a flipped
bit, a truncated file, a negative shape, a string where a number belongs,
JSON nested a million deep — is a ``DataLossError`` naming the file, never
a ``KeyError``, ``TypeError``, ``RecursionError`` or ``MemoryError``; a
missing index or data file is a ``NotFoundError``, as in TF.  No pickle: the
files hold only JSON and raw numbers.

Writes are atomic (:func:`write_atomically`): each file goes to a temporary
name in the same directory, is flushed and fsync'ed, then renamed over its
final name with ``os.replace``.  The data file is committed before the index,
so an index on disk always describes a complete data file.

Saving again to the *same* prefix replaces both files, one rename after the
other, so a crash between the two would leave the old index beside the new
data.  :func:`write_bundle` therefore first gives the data file the old index
needs a second name that carries its bundle id (``model.ckpt.data-00000-of-
00001.<bundle id>``, a hard link, no copy), and removes that name only once
the new index is in place.  :class:`BundleReader` looks for the data file
under that name when the usual one belongs to another save.  A SIGKILL at any
moment of a save thus leaves a checkpoint that restores: the previous one or
the new one.

A killed save also leaves its temporary files (``.<name>.<random>.minitf.tmp``)
behind.  Every write holds a shared ``flock`` on the directory while its
temporary file exists; the next save takes the lock exclusively — which it
gets only when no write is under way, so every temporary file left is one
whose writer died — and deletes them (:func:`remove_stale_temporary_files`).
"""

import contextlib
import json
import os
import re
import tempfile
import zlib

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework import errors

try:
    import fcntl
except ImportError:  # not POSIX: writes take no lock, and no stale file is ever removed
    fcntl = None

INDEX_SUFFIX = ".index"
DATA_MAGIC = b"MTFDATA\x00"
INDEX_MAGIC = "minitf-checkpoint-index"
FORMAT_VERSION = 1
TEMP_SUFFIX = ".minitf.tmp"
_BUNDLE_ID_BYTES = 16
_HEADER_BYTES = len(DATA_MAGIC) + _BUNDLE_ID_BYTES
_MAX_RANK = 254  # TF's TensorShape limit
_BUNDLE_ID = re.compile(r"[0-9a-f]{%d}\Z" % (2 * _BUNDLE_ID_BYTES))


def index_filename(prefix):
    """``<prefix>.index``."""
    return prefix + INDEX_SUFFIX


def data_filename(prefix, shard=0, num_shards=1):
    """``<prefix>.data-00000-of-00001`` (TF's shard naming)."""
    return "%s.data-%05d-of-%05d" % (prefix, shard, num_shards)


def previous_data_filename(data_path, bundle_id):
    """The second name a data file gets while a re-save to its prefix is under way."""
    return "%s.%s" % (data_path, bundle_id)


# ---- atomic files ---------------------------------------------------------------------------
def write_atomically(path, chunks):
    """Writes ``chunks`` (bytes, or an iterable of bytes-like objects) to ``path``
    so that ``path`` holds either its old content or all of the new one.

    The data goes to a temporary file in the same directory (``os.replace``
    is atomic only within one file system), is flushed and fsync'ed, and the
    temporary file is then renamed over ``path``; finally the directory is
    fsync'ed so the rename itself survives a power cut.  While the temporary
    file exists the directory is locked *shared*, which tells
    :func:`remove_stale_temporary_files` that the file is not stale.

    Raises:
        FileNotFoundError: if the directory of ``path`` does not exist.
    """
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = [chunks]
    directory = os.path.dirname(os.path.abspath(path))
    with _directory_lock(directory, exclusive=False):
        fd, tmp_path = tempfile.mkstemp(dir=directory, suffix=TEMP_SUFFIX,
                                        prefix="." + os.path.basename(path) + ".")
        try:
            with os.fdopen(fd, "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp_path, path)
        except BaseException:
            _remove(tmp_path)
            raise
    _fsync_directory(directory)


def remove_stale_temporary_files(directory):
    """Deletes the temporary files that killed writes left in ``directory``.

    Takes the directory's lock exclusively without waiting: when another
    write holds it, nothing is stale for sure and nothing is removed.

    Returns:
        The names removed.
    """
    removed = []
    with _directory_lock(directory, exclusive=True) as locked:
        if not locked:
            return removed
        for name in os.listdir(directory):
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                _remove(os.path.join(directory, name))
                removed.append(name)
    return removed


@contextlib.contextmanager
def _directory_lock(directory, exclusive):
    """``flock`` on ``directory``: shared (waits) or exclusive (does not wait).

    Yields whether the lock is held.  The kernel releases the lock of a
    process that dies, so a killed writer never blocks anybody.
    """
    if fcntl is None:
        yield False
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
            locked = True
        except OSError:  # held by a writer (exclusive), or a file system without flock
            locked = False
        yield locked
    finally:
        os.close(fd)  # releases the lock


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


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


def _decode(raw, dtype_name, shape, what):
    """The array of ``raw`` bytes; the index entry was checked (:func:`_checked_entry`)."""
    count = _element_count(shape)
    if dtype_name == "string":
        items, pos = [], 0
        for _ in range(count):
            length = int.from_bytes(raw[pos:pos + 4], "little") if pos + 4 <= len(raw) else None
            if length is None or pos + 4 + length > len(raw):
                raise _data_loss("%s: a string element runs past the tensor's bytes" % what)
            items.append(bytes(raw[pos + 4:pos + 4 + length]))
            pos += 4 + length
        if pos != len(raw):
            raise _data_loss("%s: %d bytes after the last string element" % (what, len(raw) - pos))
        array = np.empty(count, dtype=object)
        array[:] = items
        return array.reshape(shape)
    np_dtype = _numpy_dtype(dtype_name).newbyteorder("<")
    return np.frombuffer(raw, dtype=np_dtype).astype(np_dtype.newbyteorder("="))\
        .reshape(shape)


def _numpy_dtype(dtype_name):
    """The NumPy dtype of a numeric dtype name; None for a name that is not one."""
    try:
        dtype = dtypes_lib.as_dtype(dtype_name)
        np_dtype = np.dtype(dtype.as_numpy_dtype)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    if dtype.name != dtype_name or np_dtype.kind in "OSUV":
        return None
    return np_dtype


def _element_count(shape):
    count = 1
    for dim in shape:
        count *= dim  # Python ints: no overflow to check
    return count


def _data_loss(message):
    return errors.DataLossError(None, None, message)


# ---- writing ---------------------------------------------------------------------------------
def write_bundle(prefix, tensors):
    """Writes the checkpoint ``prefix`` holding ``tensors`` (a dict name -> array).

    The order makes a crash at any moment harmless (see the module docstring):

    1. remove the temporary files of earlier, killed writes;
    2. when ``prefix`` already holds a checkpoint, give its data file a
       second name carrying its bundle id (:func:`previous_data_filename`);
    3. commit the new data file, then the new index;
    4. remove the second names: no index needs them any more.

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
    remove_stale_temporary_files(directory)
    _keep_previous_data(prefix)
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
    for path in previous_data_files(prefix):
        _remove(path)


def _keep_previous_data(prefix):
    """Gives the data file the current index of ``prefix`` reads a second name
    that a re-save does not replace (step 2 of :func:`write_bundle`)."""
    try:
        reader = BundleReader(prefix)
    except (errors.NotFoundError, errors.DataLossError):
        return  # nothing (usable) to keep
    for path in reader.data_paths:
        kept = previous_data_filename(data_filename(prefix), reader.bundle_id)
        if path == kept or os.path.exists(kept):
            continue  # an interrupted re-save already kept it
        try:
            os.link(path, kept)
        except OSError:  # a file system without hard links: copy
            with open(path, "rb") as f:
                write_atomically(kept, iter(lambda: f.read(1 << 20), b""))


def previous_data_files(prefix):
    """The second names of data files that re-saves to ``prefix`` left (see
    :func:`write_bundle`)."""
    data = os.path.basename(data_filename(prefix))
    directory = os.path.dirname(os.path.abspath(prefix))
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(os.path.join(directory, name) for name in names
                  if name.startswith(data + ".") and _BUNDLE_ID.match(name[len(data) + 1:]))


# ---- reading ----------------------------------------------------------------------------------
class BundleReader:
    """Reads the tensors of one checkpoint (TF's ``BundleReader``).

    Opening checks the index (its CRC, and every field against the data
    file's size) and that the data files are the ones it describes;
    :meth:`read` checks each tensor's CRC.  Nothing is read or allocated
    beyond what the files on disk hold.

    Example:
        >>> reader = BundleReader("/tmp/model.ckpt-100")
        >>> reader.read("weights").shape
        (784, 10)

    Raises:
        errors.NotFoundError: if ``<prefix>.index`` or a data file does not exist.
        errors.DataLossError: if the index or a data file is damaged (the
            message names the file).
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
        self._index_path = path
        self._index = _parse_index(content, path)
        self.bundle_id = self._index["bundle_id"]
        self.data_paths = [self._find_data_file(shard, size)
                           for shard, size in enumerate(self._index["shard_sizes"])]
        self._tensors = {name: _checked_entry(name, entry, self._index["shard_sizes"], path)
                         for name, entry in self._index["tensors"].items()}

    def _find_data_file(self, shard, size):
        """The data file of ``shard``: under its usual name, or — after an
        interrupted re-save — under the second name of :func:`write_bundle`."""
        path = data_filename(self.prefix, shard, self._index["num_shards"])
        kept = previous_data_filename(path, self.bundle_id)
        header, actual_size = _data_file_header(path, self.prefix)
        if header[len(DATA_MAGIC):].hex() != self.bundle_id and os.path.exists(kept):
            path = kept
            header, actual_size = _data_file_header(path, self.prefix)
        if header[:len(DATA_MAGIC)] != DATA_MAGIC:
            raise _data_loss("Checkpoint %s: %s is not a minitf checkpoint data file (bad "
                             "magic number)" % (self.prefix, path))
        if header[len(DATA_MAGIC):].hex() != self.bundle_id:
            raise _data_loss("Checkpoint %s: data file %s belongs to another save than the "
                             "index %s" % (self.prefix, path, self._index_path))
        if actual_size != size:
            raise _data_loss("Checkpoint %s: data file %s has %d bytes, the index %s says %d "
                             "(truncated?)" % (self.prefix, path, actual_size, self._index_path,
                                               size))
        return path

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
        path = self.data_paths[entry["shard"]]
        with open(path, "rb") as f:
            f.seek(entry["offset"])
            raw = f.read(entry["length"])  # at most the file's size: checked on opening
        if len(raw) != entry["length"]:
            raise _data_loss("Checkpoint %s: tensor %r is cut short in %s"
                             % (self.prefix, name, path))
        crc = zlib.crc32(raw)
        if crc != entry["crc32"]:
            raise _data_loss("Checkpoint %s shard %d: checksum of tensor %r does not match: "
                             "stored %d vs. calculated on the restored bytes %d (%s)"
                             % (self.prefix, entry["shard"], name, entry["crc32"], crc, path))
        return _decode(raw, entry["dtype"], entry["shape"],
                       "Checkpoint %s: tensor %r in %s" % (self.prefix, name, path))

    def _entry(self, name):
        entry = self._tensors.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % name)
        return entry


def _data_file_header(path, prefix):
    """The first bytes of a data file and its size."""
    try:
        with open(path, "rb") as f:
            return f.read(_HEADER_BYTES), os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, "%s; No such file or directory (checkpoint %s: its index lists "
            "this data file)" % (path, prefix)) from None


# ---- checking the index --------------------------------------------------------------------
def _parse_index(content, path):
    """Checks and decodes the index file's bytes: its header, CRC and the
    structure of its JSON (the tensor entries are checked by :func:`_checked_entry`)."""
    header, newline, body = content.partition(b"\n")
    parts = header.decode("ascii", "replace").split(" ")
    if not newline or len(parts) != 3 or parts[0] != INDEX_MAGIC or \
            not parts[2].startswith("crc32="):
        raise _data_loss("%s is not a minitf checkpoint index (bad header %r)"
                         % (path, header[:60]))
    if parts[1] != str(FORMAT_VERSION):
        raise _data_loss("%s has checkpoint format version %s; this minitf reads version %d"
                         % (path, parts[1][:20], FORMAT_VERSION))
    try:
        stored_crc = int(parts[2][len("crc32="):], 16)
    except ValueError:
        raise _data_loss("%s: unreadable checksum in header %r" % (path, header[:60])) from None
    if zlib.crc32(body) != stored_crc:
        raise _data_loss("%s: index checksum does not match (stored %08x, calculated %08x): the "
                         "file is truncated or corrupted" % (path, stored_crc, zlib.crc32(body)))
    try:
        index = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise _data_loss("%s: the index is not valid JSON (%s)"
                         % (path, str(e)[:100] or type(e).__name__)) from None
    _require(isinstance(index, dict), path, "the index is not a JSON object")
    _require(set(index) >= {"bundle_id", "num_shards", "shard_sizes", "tensors"}, path,
             "the index lacks bundle_id, num_shards, shard_sizes or tensors")
    _require(isinstance(index["bundle_id"], str) and _BUNDLE_ID.match(index["bundle_id"]),
             path, "bundle_id is not %d hex digits" % (2 * _BUNDLE_ID_BYTES))
    sizes = index["shard_sizes"]
    _require(_is_int(index["num_shards"]) and isinstance(sizes, list)
             and len(sizes) == index["num_shards"] >= 1, path,
             "num_shards is not the length of shard_sizes")
    _require(all(_is_int(size) and size >= _HEADER_BYTES for size in sizes), path,
             "a shard size is not an int of at least %d" % _HEADER_BYTES)
    _require(isinstance(index["tensors"], dict), path, "tensors is not a JSON object")
    return index


def _checked_entry(name, entry, shard_sizes, path):
    """One tensor's index entry, every field checked against the others and
    against the size of its data file (checked on opening)."""
    what = "tensor %r" % name
    _require(isinstance(entry, dict), path, what + " is not a JSON object")
    fields = ("dtype", "shape", "shard", "offset", "length", "crc32")
    _require(set(entry) >= set(fields), path, what + " lacks one of " + ", ".join(fields))
    dtype, shape, shard, offset, length, crc = (entry[field] for field in fields)
    _require(dtype == "string" or (isinstance(dtype, str) and _numpy_dtype(dtype) is not None),
             path, "%s has an unknown dtype" % what)
    _require(isinstance(shape, list) and len(shape) <= _MAX_RANK
             and all(_is_int(dim) and dim >= 0 for dim in shape), path,
             "%s has a shape that is not a list of non-negative ints" % what)
    _require(_is_int(shard) and 0 <= shard < len(shard_sizes), path,
             "%s has no valid shard" % what)
    _require(_is_int(offset) and _is_int(length) and offset >= _HEADER_BYTES and length >= 0
             and offset + length <= shard_sizes[shard], path,
             "%s has an offset and length outside its data file" % what)
    _require(_is_int(crc) and 0 <= crc < 2 ** 32, path, "%s has an invalid crc32" % what)
    count = _element_count(shape)
    if dtype == "string":
        _require(length >= 4 * count, path,
                 "%s: %d bytes cannot hold %d strings" % (what, length, count))
    else:
        expected = count * _numpy_dtype(dtype).itemsize
        _require(length == expected, path, "%s has %d bytes, its shape %s of %s needs %d"
                 % (what, length, shape, dtype, expected))
    return entry


def _is_int(value):
    return type(value) is int  # not a bool, not a float


def _require(condition, path, problem):
    if not condition:
        raise _data_loss("%s: malformed checkpoint index: %s" % (path, problem))
