"""Using checkpoints without a Saver: ``tf.train.NewCheckpointReader``,
``list_variables``, ``load_variable`` and ``init_from_checkpoint``.

Useful to look inside a checkpoint (what names, shapes and dtypes it holds),
or to pull one tensor out of it::

    >>> tf.train.list_variables("/tmp/run1")
    [('bias', [10]), ('global_step', []), ('weights', [784, 10])]
    >>> tf.train.load_variable("/tmp/run1", "bias")
    array([...], dtype=float32)

:func:`init_from_checkpoint` is transfer learning's tool: it makes some
variables of a *new* model start from a trained checkpoint — under other
names if need be — by replacing their initializers::

    tf.train.init_from_checkpoint("/tmp/pretrained", {"encoder/": "my_model/encoder/"})
    sess.run(tf.global_variables_initializer())   # encoder weights come from the file

Mirrors ``tensorflow/python/training/checkpoint_utils.py`` and
``py_checkpoint_reader``.
"""

import os

from minitf.framework.tensor_shape import TensorShape
from minitf.ops import io_ops, state_ops, variable_scope
from minitf.ops.partitioned_variables import PartitionedVariable
from minitf.ops.variables import Variable
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
    return CheckpointReader(_checkpoint_prefix(ckpt_dir_or_file))


def _checkpoint_prefix(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = checkpoint_state.latest_checkpoint(path)
        if latest is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % path)
        path = latest
    return path


def list_variables(ckpt_dir_or_file):
    """``[(name, shape)]`` of every tensor in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """The value of tensor ``name`` (a ``:0`` suffix is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Initializes variables from a checkpoint instead of their initializers
    (``tf.train.init_from_checkpoint``).

    Nothing is read now: each chosen variable's initializer becomes
    ``Assign(variable, RestoreV2(checkpoint, key))``, so the values arrive when
    ``tf.global_variables_initializer()`` (made *after* this call) runs.

    ``assignment_map`` maps checkpoint names to variables, in TF's forms:

    * ``{"old/w": "new/w"}`` or ``{"old/w": variable}``: one tensor into one
      variable (a name is looked up among ``tf.get_variable``'s variables);
    * ``{"old_scope/": "new_scope/"}``: every ``tf.get_variable`` variable
      under ``new_scope/`` from the tensor with the same rest of the name
      under ``old_scope/``;
    * ``{"/": "new_scope/"}`` and ``{"old_scope/": "/"}``: the checkpoint's
      root, or all variables.

    A partitioned variable (or the list of its parts) is one variable under
    its full name here: each part is initialized from its slice of the tensor.

    Args:
        ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest).
        assignment_map: as above.

    Raises:
        ValueError: if a tensor is not in the checkpoint, a variable's shape
            differs from its tensor's (one-to-one entries), or a scope maps to
            a name that is not a scope.

    Example:
        >>> with tf.variable_scope("new_model"):
        ...     w = tf.get_variable("w", [3])
        >>> tf.train.init_from_checkpoint("/tmp/run1", {"w": "new_model/w"})
        >>> sess.run(tf.global_variables_initializer()); sess.run(w)   # the saved "w"
    """
    prefix = _checkpoint_prefix(ckpt_dir_or_file)
    shapes = CheckpointReader(prefix).get_variable_to_shape_map()
    store = _store_variables()
    for tensor_name, current in sorted(assignment_map.items(), key=lambda item: item[0]):
        var = current if _is_variable_or_parts(current) else store.get(current)
        if var is not None:
            if tensor_name not in shapes:
                raise ValueError("Tensor %s is not found in %s checkpoint %s"
                                 % (tensor_name, ckpt_dir_or_file, shapes))
            shape = _full_shape(var)
            if not shape.is_compatible_with(shapes[tensor_name]):
                raise ValueError("Shape of variable %s (%s) doesn't match with shape of tensor "
                                 "%s (%s) from checkpoint reader."
                                 % (_full_name(var), shape, tensor_name, shapes[tensor_name]))
            _set_variable_or_parts_initializer(var, prefix, tensor_name)
            continue
        for var_name, full_name in _scope_assignments(tensor_name, current, store):
            if full_name not in shapes:
                raise ValueError("Tensor %s (%s in %s) is not found in %s checkpoint"
                                 % (full_name, var_name, tensor_name, ckpt_dir_or_file))
            _set_variable_or_parts_initializer(store[var_name], prefix, full_name)


def _store_variables():
    """``tf.get_variable``'s variables by full name, as TF's store has them
    (``vs._vars``), except that a partitioned variable appears once, as its
    PartitionedVariable, instead of as its parts ``<name>/part_<i>``."""
    store = variable_scope._get_default_variable_store()
    part_ids = {id(part) for pv in store._partitioned_vars.values() for part in pv}
    variables = {name: v for name, v in store._vars.items() if id(v) not in part_ids}
    variables.update(store._partitioned_vars)
    return variables


def _is_variable_or_parts(value):
    if isinstance(value, (Variable, PartitionedVariable)):
        return True
    return isinstance(value, list) and bool(value) and all(isinstance(v, Variable) for v in value)


def _full_shape(var):
    """The shape of a variable, or of the full variable a list of parts makes."""
    if isinstance(var, list):
        return TensorShape(var[0]._save_slice_info.full_shape)
    return var.get_shape()


def _full_name(var):
    return ",".join(v.name for v in var) if isinstance(var, list) else var.name


def _set_variable_or_parts_initializer(var, prefix, tensor_name):
    """Initializes a variable from ``tensor_name``, or each part of a partitioned
    one from its slice of it (TF's ``_set_variable_or_list_initializer``).

    Raises:
        ValueError: if the parts are not all slices of one variable.
    """
    if not isinstance(var, (list, PartitionedVariable)):
        _set_checkpoint_initializer(var, prefix, tensor_name)
        return
    full_name = None
    for part in var:
        info = part._save_slice_info
        if info is None:
            raise ValueError("Slices must all be slices: %s" % (part,))
        if full_name is None:
            full_name = info.full_name
        elif full_name != info.full_name:
            raise ValueError("Slices must all be from the same tensor: %s != %s"
                             % (full_name, info.full_name))
        _set_checkpoint_initializer(part, prefix, tensor_name, info.spec)


def _scope_assignments(tensor_scope, var_scope, store):
    """``(variable name, checkpoint name)`` for a ``{"old_scope/": "new_scope/"}`` entry
    (TF's rules, ``/`` standing for the root on either side)."""
    scopes = var_scope[:var_scope.rindex("/")] if "/" in var_scope else ""
    if not tensor_scope.endswith("/"):
        raise ValueError("Assignment map with scope only name %s should map to scope only %s. "
                         "Should be 'scope/': 'other_scope/'." % (scopes, tensor_scope))
    pairs = []
    for var_name in sorted(n for n in store if not scopes or n.startswith(scopes + "/")):
        full_name = var_name[len(scopes):]
        if var_scope != "/":
            full_name = full_name[1:]
        if tensor_scope != "/":
            full_name = tensor_scope + full_name
        pairs.append((var_name, full_name[:-1] if full_name.endswith("/") else full_name))
    return pairs


def _set_checkpoint_initializer(variable, prefix, tensor_name, slice_spec=""):
    """Makes ``variable``'s initializer assign it the checkpoint's ``tensor_name``
    (its slice ``slice_spec``, for a part)."""
    graph = variable.graph
    with graph.as_default(), graph.device(variable.device):
        restored, = io_ops.restore_v2(prefix, [tensor_name], [slice_spec],
                                      [variable.dtype.base_dtype], name="checkpoint_initializer")
        restored.set_shape(variable.shape)
        variable._initializer_op = state_ops.assign(variable, restored).op
        variable._initial_value = restored
