"""The ``checkpoint`` state file: which checkpoints of a directory are current.

Next to its checkpoints, ``Saver.save`` keeps a small text file, by default
named ``checkpoint``, in TF's protocol-buffer text format::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

``model_checkpoint_path`` is the newest checkpoint; ``all_model_checkpoint_paths``
lists those not yet deleted, oldest first.  Relative paths are relative to
the file's directory.  :func:`latest_checkpoint` reads it, so a training
script can resume with ``saver.restore(sess, tf.train.latest_checkpoint(dir))``.
The file is replaced atomically, and only after the checkpoint it names is
complete on disk.

Mirrors ``tensorflow/python/training/checkpoint_management.py`` and the
``CheckpointState`` proto; minitf reads files written by TF and vice versa.
"""

import glob
import logging
import os

from minitf.train import checkpoint_format

_logger = logging.getLogger("minitf.train")

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\"}


class CheckpointState:
    """The content of a ``checkpoint`` state file (TF's ``CheckpointState`` proto).

    Attributes:
        model_checkpoint_path: the newest checkpoint prefix.
        all_model_checkpoint_paths: the kept checkpoint prefixes, oldest first.
        all_model_checkpoint_timestamps: their save times (seconds; may be empty).
        last_preserved_timestamp: when the last checkpoint kept by
            ``keep_checkpoint_every_n_hours`` was saved (0.0 if none).
    """

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp

    def to_text(self):
        """The protobuf text format TF writes."""
        lines = ['model_checkpoint_path: "%s"' % _escape(self.model_checkpoint_path)]
        lines += ['all_model_checkpoint_paths: "%s"' % _escape(p)
                  for p in self.all_model_checkpoint_paths]
        lines += ["all_model_checkpoint_timestamps: %r" % float(t)
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append("last_preserved_timestamp: %r" % float(self.last_preserved_timestamp))
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text):
        """Parses the text format.

        Raises:
            ValueError: on a line that is not ``field: value`` of a known field.
        """
        state = cls()
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            field, sep, value = line.partition(":")
            field, value = field.strip(), value.strip()
            if not sep:
                raise ValueError("line %d: expected 'field: value', got %r" % (number, line))
            if field == "model_checkpoint_path":
                state.model_checkpoint_path = _unquote(value, number)
            elif field == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(_unquote(value, number))
            elif field == "all_model_checkpoint_timestamps":
                state.all_model_checkpoint_timestamps.append(float(value))
            elif field == "last_preserved_timestamp":
                state.last_preserved_timestamp = float(value)
            else:
                raise ValueError("line %d: unknown field %r" % (number, field))
        return state

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and self.to_text() == other.to_text()

    def __repr__(self):
        return self.to_text()

    __str__ = to_text


def _escape(path):
    """C-style escapes, as protobuf's text format writes strings."""
    out = []
    for byte in path.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append("\\%03o" % byte)
    return "".join(out)


def _unquote(value, number):
    if len(value) < 2 or value[0] != value[-1] or value[0] not in "\"'":
        raise ValueError("line %d: expected a quoted string, got %r" % (number, value))
    body, out, i = value[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _ESCAPES:
            out += _ESCAPES[nxt].encode("utf-8")
            i += 2
        elif nxt == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif nxt.isdigit():
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            raise ValueError("line %d: bad escape in %r" % (number, value))
    return out.decode("utf-8")


# ---- the state file ------------------------------------------------------------------------
def _state_path(checkpoint_dir, latest_filename):
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """Reads the state file of ``checkpoint_dir`` (``tf.train.get_checkpoint_state``).

    Relative paths in the file are returned joined with ``checkpoint_dir``.

    Returns:
        A :class:`CheckpointState`, or None when the file does not exist or
        cannot be parsed (the latter is logged).

    Raises:
        ValueError: if the file parses but names no checkpoint.
    """
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as e:
        _logger.warning("%s: %s; checkpoint state ignored", path, e)
        return None
    try:
        state = CheckpointState.from_text(text)
    except ValueError as e:
        _logger.warning("%s: %s; checkpoint state ignored", path, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from %s" % checkpoint_dir)
    state.model_checkpoint_path = _absolute(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [_absolute(checkpoint_dir, p)
                                        for p in state.all_model_checkpoint_paths]
    return state


def _absolute(checkpoint_dir, path):
    return path if os.path.isabs(path) else os.path.join(checkpoint_dir, path)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False):
    """Atomically (re)writes the state file of ``save_dir``.

    ``model_checkpoint_path`` is appended to ``all_model_checkpoint_paths``
    when missing from it, so the list always ends with the newest checkpoint.

    Raises:
        RuntimeError: if a checkpoint path would overwrite the state file itself.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths = [p for p in paths if p != model_checkpoint_path] + [model_checkpoint_path]
    # Relative paths in the file are relative to its directory (TF's
    # generate_checkpoint_state_proto); absolute ones stay absolute unless
    # save_relative_paths.
    model_checkpoint_path = _relative(save_dir, model_checkpoint_path, save_relative_paths)
    paths = [_relative(save_dir, p, save_relative_paths) for p in paths]
    state_path = _state_path(save_dir, latest_filename)
    if os.path.abspath(_absolute(save_dir, model_checkpoint_path)) == os.path.abspath(state_path):
        raise RuntimeError("Save path '%s' conflicts with path used for checkpoint state. Please "
                           "use a different save path." % model_checkpoint_path)
    state = CheckpointState(model_checkpoint_path, paths,
                            all_model_checkpoint_timestamps or (),
                            last_preserved_timestamp or 0.0)
    checkpoint_format.write_atomically(state_path, state.to_text().encode("utf-8"))


def _relative(save_dir, path, force):
    if force or not os.path.isabs(path):
        return os.path.relpath(path, save_dir or ".")
    return path


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint prefix of ``checkpoint_dir`` (``tf.train.latest_checkpoint``).

    Example:
        >>> saver.restore(sess, tf.train.latest_checkpoint("/tmp/run1"))

    Returns:
        The prefix, or None when there is no state file or the checkpoint it
        names does not exist (logged).
    """
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        _logger.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint with this prefix exists (``tf.train.checkpoint_exists``).

    A checkpoint exists once its ``.index`` is on disk: the index is written
    last, after the data it describes.
    """
    return bool(glob.glob(glob.escape(checkpoint_prefix) + checkpoint_format.INDEX_SUFFIX))


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times of the given checkpoints' index files (missing ones skipped)."""
    times = []
    for prefix in checkpoint_prefixes:
        try:
            times.append(os.path.getmtime(checkpoint_format.index_filename(prefix)))
        except OSError:
            continue
    return times


def remove_checkpoint(checkpoint_prefix, meta_graph_suffix="meta"):
    """Deletes a checkpoint's files (TF's ``remove_checkpoint``): the index
    first, so a half-deleted checkpoint no longer counts as existing, then the
    data shards (with the second names an interrupted re-save left, see
    :func:`~minitf.train.checkpoint_format.write_bundle`), then the meta graph."""
    paths = [checkpoint_format.index_filename(checkpoint_prefix)]
    paths += sorted(glob.glob(glob.escape(checkpoint_prefix) + ".data-?????-of-?????"))
    paths += checkpoint_format.previous_data_files(checkpoint_prefix)
    paths.append(meta_graph_filename(checkpoint_prefix, meta_graph_suffix))
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def is_in_directory(path, directory):
    """Whether the file ``path`` lies directly in ``directory`` (symbolic links
    and ``..`` resolved): the only files a Saver deletes."""
    parent = os.path.dirname(os.path.abspath(path))
    return os.path.realpath(parent) == os.path.realpath(directory or ".")


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    """``model.ckpt-100`` -> ``model.ckpt-100.meta``."""
    basename = checkpoint_filename
    if basename.endswith(".index"):  # TF accepts a path to the index file too
        basename = basename[:-len(".index")]
    return basename + "." + meta_graph_suffix
