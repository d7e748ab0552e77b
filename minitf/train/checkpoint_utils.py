"""Reading checkpoints without a graph: ``tf.train.NewCheckpointReader``,
``list_variables`` and ``load_variable``.

Useful to look inside a checkpoint (what names, shapes and dtypes it holds),
or to pull one tensor out of it::

    >>> tf.train.list_variables("/tmp/run1")
    [('bias', [10]), ('global_step', []), ('weights', [784, 10])]
    >>> tf.train.load_variable("/tmp/run1", "bias")
    array([...], dtype=float32)

Mirrors ``tensorflow/python/training/checkpoint_utils.py`` and
``py_checkpoint_reader``.
"""

import os

from minitf.train import checkpoint_format, checkpoint_state


class CheckpointReader:
    """The tensors of one checkpoint, by name (TF's ``CheckpointReader``).

    Raises:
        errors.NotFoundError: if the checkpoint does not exist.
        errors.DataLossError: if it is damaged.
    """

    def __init__(self, checkpoint_prefix):
        self._reader = checkpoint_format.BundleReader(os.fspath(checkpoint_prefix))

    def has_tensor(self, name):
        return self._reader.has(name)

    def get_tensor(self, name):
        """The saved value of ``name``.  Raises ``NotFoundError`` if absent."""
        return self._reader.read(name)

    def get_variable_to_shape_map(self):
        return {name: self._reader.shape(name) for name in self._reader.keys()}

    def get_variable_to_dtype_map(self):
        return {name: self._reader.dtype(name) for name in self._reader.keys()}

    def debug_string(self):
        """One line per tensor: ``name (dtype) [shape]``."""
        return "".join("%s (%s) %s\n" % (n, self._reader.dtype(n).name, self._reader.shape(n))
                       for n in self._reader.keys())


def NewCheckpointReader(filepattern):  # noqa: N802 - TF's name
    """A :class:`CheckpointReader` of the checkpoint prefix ``filepattern``."""
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file):
    """A reader of ``ckpt_dir_or_file``: a checkpoint prefix, or a directory
    whose latest checkpoint is read.

    Raises:
        ValueError: if a directory holds no checkpoint.
    """
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = checkpoint_state.latest_checkpoint(path)
        if latest is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % path)
        path = latest
    return CheckpointReader(path)


def list_variables(ckpt_dir_or_file):
    """``[(name, shape)]`` of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """The value of tensor ``name`` (a ``:0`` suffix is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
