"""Building a Saver's ops: what is saved (*saveables*) and the ``save/`` subgraph.

A ``tf.train.Saver`` is mostly graph: its constructor adds, under the name
scope ``save`` (``save_1`` for a second saver ...), the ops TF adds::

    save/filename/input  Const "model"          the default file name
    save/filename        PlaceholderWithDefault
    save/Const           PlaceholderWithDefault  <- feed the checkpoint prefix here
    save/SaveV2          SaveV2(save/Const, tensor_names, shape_and_slices, v, w, ...)
    save/control_dependency  Identity(save/Const), runs after save/SaveV2
    save/RestoreV2       RestoreV2(save/Const, tensor_names, shape_and_slices)
    save/Assign, save/Assign_1 ...   Assign(v, save/RestoreV2:0), ...
    save/restore_all     NoOp grouping the assignments

and records their names in a :class:`SaverDef`.  ``saver.save(sess, path)``
is then ``sess.run("save/control_dependency:0", {"save/Const:0": path})`` and
``saver.restore`` runs ``save/restore_all`` the same way; a Saver rebuilt from
a SaverDef (``tf.train.import_meta_graph``) needs nothing but those names.

What gets saved is a list of :class:`SaveableObject`: a name in the
checkpoint, the tensors to write (:class:`SaveSpec`) and how to assign the
restored tensors back.  A ``tf.Variable`` becomes one automatically; other
state can join by adding a SaveableObject to the ``saveable_objects``
collection.  The parts of a partitioned variable become one
:class:`PartitionedVariableSaveable`: saved whole under the full name,
restored part by part from slices of it.

Mirrors ``BaseSaverBuilder``, ``SaverDef``, ``SaveSpec`` and
``SaveableObject`` in ``tensorflow/python/training/saver.py`` and
``saving/saveable_object.py``.
"""

import dataclasses

from minitf.framework import graph as graph_lib
from minitf.framework import protos
from minitf.framework.tensor import Tensor
from minitf.ops import array_ops, control_flow_ops, io_ops, joining_ops, state_ops
from minitf.ops.partitioned_variables import PartitionedVariable

SAVEABLE_OBJECTS = "saveable_objects"  # TF's GraphKeys.SAVEABLE_OBJECTS


@dataclasses.dataclass
class SaverDef:
    """Everything needed to use a Saver's ops (TF's ``SaverDef`` proto).

    Attributes:
        filename_tensor_name: the tensor to feed the checkpoint prefix into.
        save_tensor_name: the tensor whose fetch saves (it returns the prefix).
        restore_op_name: the op whose run restores.
        max_to_keep: how many recent checkpoints to keep (0 or None: all).
        sharded: whether the saver was asked for sharded saves.
        keep_checkpoint_every_n_hours: also keep one checkpoint per this period.
        version: the checkpoint format version (``"V2"``).
    """

    filename_tensor_name: str = ""
    save_tensor_name: str = ""
    restore_op_name: str = ""
    max_to_keep: int = 5
    sharded: bool = False
    keep_checkpoint_every_n_hours: float = 10000.0
    version: str = "V2"

    def to_proto(self):
        """This SaverDef as TF's ``saver_pb2.SaverDef`` message (what a meta graph holds)."""
        fields = dataclasses.asdict(self)
        fields["max_to_keep"] = fields["max_to_keep"] or 0
        return protos.load("saver_pb2").SaverDef(**fields)

    @classmethod
    def from_proto(cls, proto):
        """The SaverDef a ``saver_pb2.SaverDef`` message describes."""
        version = proto.DESCRIPTOR.fields_by_name["version"].enum_type.values_by_number
        return cls(filename_tensor_name=proto.filename_tensor_name,
                   save_tensor_name=proto.save_tensor_name,
                   restore_op_name=proto.restore_op_name, max_to_keep=proto.max_to_keep,
                   sharded=proto.sharded,
                   keep_checkpoint_every_n_hours=proto.keep_checkpoint_every_n_hours,
                   version=version[proto.version].name)

    def with_scope(self, import_scope):
        """A copy with every name moved under ``import_scope/``."""
        if not import_scope:
            return dataclasses.replace(self)
        prefix = import_scope.rstrip("/") + "/"
        return dataclasses.replace(
            self, filename_tensor_name=prefix + self.filename_tensor_name,
            save_tensor_name=prefix + self.save_tensor_name,
            restore_op_name=prefix + self.restore_op_name)

    def __str__(self):
        """The protobuf text format, as TF prints a SaverDef."""
        lines = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is False or value is None:
                continue  # proto3 leaves defaults out
            if field.name == "version":
                lines.append("version: %s" % value)  # an enum
            elif isinstance(value, str):
                lines.append('%s: "%s"' % (field.name, value))
            elif isinstance(value, bool):
                lines.append("%s: true" % field.name)
            else:
                lines.append("%s: %g" % (field.name, value))
        return "\n".join(lines) + "\n"


class SaveSpec:
    """One tensor a SaveableObject writes: ``tensor`` saved under key ``name``.

    Args:
        tensor: the Tensor to save (or a callable returning it).
        slice_spec: ``""`` for the whole tensor.
        name: its key in the checkpoint.
        dtype: defaults to the tensor's base dtype.
    """

    def __init__(self, tensor, slice_spec, name, dtype=None):
        self._tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        self.dtype = dtype if dtype is not None else tensor.dtype.base_dtype

    @property
    def tensor(self):
        return self._tensor() if callable(self._tensor) else self._tensor


class SaveableObject:
    """Something a Saver can save and restore (``tf.train.SaveableObject``-like).

    Subclasses set ``op`` (the object saved, for device placement), ``specs``
    (a list of :class:`SaveSpec`) and ``name``, and implement :meth:`restore`.
    ``restore_specs`` are the tensors read back, by default ``specs``.
    """

    def __init__(self, op, specs, name):
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self):
        return getattr(self.op, "device", "")

    @property
    def restore_specs(self):
        """What ``RestoreV2`` reads for :meth:`restore`: one spec per restored tensor."""
        return self.specs

    def restore(self, restored_tensors, restored_shapes):
        """Returns an op assigning ``restored_tensors`` (one per restore spec)."""
        raise NotImplementedError


class ReferenceVariableSaveable(SaveableObject):
    """A ``tf.Variable``: one tensor, restored with an ``Assign``."""

    def __init__(self, variable, slice_spec, name):
        self.variable = variable
        ref = variable._ref() if hasattr(variable, "_ref") else variable
        super().__init__(ref.op, [SaveSpec(ref, slice_spec, name)], name)
        self._ref_tensor = ref

    def restore(self, restored_tensors, restored_shapes):
        restored, = restored_tensors
        shape = self._ref_tensor.shape
        if restored_shapes is not None:
            restored = array_ops.reshape(restored, restored_shapes[0])
        # validate_shape as in TF: only when the variable's shape is known.
        return state_ops.assign(self._ref_tensor, restored,
                                validate_shape=restored_shapes is None and shape.is_fully_defined())


class PartitionedVariableSaveable(SaveableObject):
    """The parts of a partitioned variable, saved as the one full tensor they make.

    TF saves each part as a slice of the full tensor (``SaveV2`` with the
    part's spec, ``"10 4 4,3:0,4"``) and its bundle writer merges the
    slices.  minitf's ``SaveV2`` writes whole tensors, so the parts are
    concatenated along their axis and saved under the full name; the file
    then holds what TF's would.  Restoring reads each part's slice
    (``RestoreV2`` with the part's spec): a checkpoint of the full tensor
    restores into any partitioning of the same full shape, or into an
    unpartitioned variable.

    Args:
        parts: the part Variables, each with a ``_save_slice_info``, together
            covering the full variable.
        name: the checkpoint key (the full name, unless renamed).

    Raises:
        ValueError: if the parts are not all slices of one variable, or do not
            cover it (minitf cannot save a slice alone).
    """

    def __init__(self, parts, name):
        self.parts = sorted(_check_slices(parts), key=lambda v: v._save_slice_info.var_offset)
        self._axis = _check_cover(self.parts)
        save_spec = SaveSpec(self._full_tensor, "", name, dtype=self.parts[0].dtype.base_dtype)
        super().__init__(self.parts[0].op, [save_spec], name)
        self._part_saveables = [ReferenceVariableSaveable(v, v._save_slice_info.spec, name)
                                for v in self.parts]

    def _full_tensor(self):
        return joining_ops.concat([v._ref() for v in self.parts], self._axis)

    @property
    def restore_specs(self):
        return [saveable.specs[0] for saveable in self._part_saveables]

    def restore(self, restored_tensors, restored_shapes):
        shapes = restored_shapes or [None] * len(self.parts)
        assigns = [saveable.restore([tensor], None if shape is None else [shape])
                   for saveable, tensor, shape in zip(self._part_saveables, restored_tensors,
                                                      shapes)]
        return control_flow_ops.group(*assigns)


def _check_slices(parts):
    """``parts``, if they are Variables sliced from one full variable (TF's checks)."""
    full_name = None
    for var in parts:
        if not _is_variable(var):
            raise ValueError("Slices must all be Variables: %s" % (var,))
        if _slice_info(var) is None:
            raise ValueError("Slices must all be slices: %s" % (var,))
        if full_name is None:
            full_name = var._save_slice_info.full_name
        elif full_name != var._save_slice_info.full_name:
            raise ValueError("Slices must all be from the same tensor: %s != %s"
                             % (full_name, var._save_slice_info.full_name))
    return list(parts)


def _check_cover(parts):
    """The axis along which ``parts`` (sorted by offset) tile their full variable.

    Raises:
        ValueError: if they leave a gap or overlap.
    """
    info = parts[0]._save_slice_info
    cut = [i for i, (dim, full) in enumerate(zip(info.var_shape, info.full_shape)) if dim != full]
    axis = cut[0] if cut else 0
    expected = 0
    for var in parts:
        part = var._save_slice_info
        others = [d for i, d in enumerate(part.var_shape) if i != axis]
        if part.var_offset[axis] != expected or \
                others != [d for i, d in enumerate(part.full_shape) if i != axis]:
            raise ValueError("minitf saves a partitioned variable whole: the parts of %s must "
                             "all be saved together, but %s does not continue them (got %s)"
                             % (info.full_name, var.name, [v.name for v in parts]))
        expected += part.var_shape[axis]
    if expected != info.full_shape[axis]:
        raise ValueError("minitf saves a partitioned variable whole: the parts of %s must all "
                         "be saved together, got only %s"
                         % (info.full_name, [v.name for v in parts]))
    return axis


# ---- var_list -> {name: saveable} -------------------------------------------------------------
def _is_variable(value):
    return hasattr(value, "_ref") and hasattr(value, "initializer")


def _is_ref_variable_tensor(value):
    return isinstance(value, Tensor) and value.dtype.is_ref and value.op.type == "VariableV2"


def op_list_to_dict(var_list):
    """The checkpoint key of each variable: ``{name: variable}``.

    Args:
        var_list: a list/tuple of Variables (keyed by their op name, ``"v"``
            for ``v:0``), PartitionedVariables and SaveableObjects, or a dict
            ``{key: variable}`` choosing the keys (which renames them in the
            checkpoint).  The parts of a partitioned variable (variables
            with a ``_save_slice_info``) are gathered into a list under the
            full variable's name.

    Raises:
        TypeError: if ``var_list`` is not a list or dict, or holds something
            that is not a variable.
        ValueError: if two variables would share one key, or a key names both
            parts and a whole variable.
    """
    if isinstance(var_list, dict):
        for key in var_list:
            if not isinstance(key, str):
                raise TypeError("The keys of var_list must be strings (the names in the "
                                "checkpoint), got %r" % (key,))
        return dict(var_list)
    if not isinstance(var_list, (list, tuple, set)):
        raise TypeError("Variables to save should be passed in a dict or a list: %s"
                        % (var_list,))
    names_to_saveables = {}
    for var in sorted(var_list, key=_sort_key) if isinstance(var_list, set) else var_list:
        if _slice_info(var) is not None:
            _add_slice(names_to_saveables, var)
            continue
        if isinstance(var, (SaveableObject, PartitionedVariable)):
            name = var.name
        elif _is_variable(var) or _is_ref_variable_tensor(var):
            name = var.op.name
        else:
            raise TypeError("Variable to save is not a Variable: %s" % (var,))
        if name in names_to_saveables:
            raise ValueError("At least two variables have the same name: %s" % name)
        names_to_saveables[name] = var
    return names_to_saveables


def _slice_info(var):
    """The SaveSliceInfo of a part of a partitioned variable, else None."""
    return getattr(var, "_save_slice_info", None) if _is_variable(var) else None


def _add_slice(names_to_saveables, var):
    """Files the part ``var`` in the list of parts under its full variable's name."""
    name = var._save_slice_info.full_name
    parts = names_to_saveables.setdefault(name, [])
    if not isinstance(parts, list):
        raise ValueError("Mixing slices and non-slices with the same name: %s" % name)
    parts.append(var)


def _sort_key(var):
    return getattr(var, "name", "")


def saveables_for(names_to_saveables):
    """Turns ``{name: variable or SaveableObject}`` into SaveableObjects.

    Raises:
        TypeError: for a value that is neither.
        ValueError: if one variable is given under two names.
    """
    saveables, seen = [], set()
    for name in sorted(names_to_saveables):
        value = names_to_saveables[name]
        if isinstance(value, SaveableObject):
            saveables.append(value)
            continue
        if isinstance(value, (list, tuple, PartitionedVariable)):
            saveable = PartitionedVariableSaveable(list(value), name)
            refs = [v._ref() for v in saveable.parts]
        elif _is_variable(value) or _is_ref_variable_tensor(value):
            saveable = ReferenceVariableSaveable(value, "", name)
            refs = [value._ref() if _is_variable(value) else value]
        else:
            raise TypeError("Can not convert a %s into a Variable to save (key %r). Save "
                            "tf.Variables or SaveableObjects." % (type(value).__name__, name))
        if seen.intersection(refs):
            raise ValueError("The same saveable will be restored with two names: %s" % name)
        seen.update(refs)
        saveables.append(saveable)
    return saveables


# ---- the builder -----------------------------------------------------------------------------
class BaseSaverBuilder:
    """Adds a Saver's ops to the graph and returns their :class:`SaverDef`.

    ``Saver(builder=...)`` accepts a subclass, e.g. one that saves through
    other ops.
    """

    def build(self, saveables, reshape=False, sharded=False, max_to_keep=5,
              keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
              filename="model"):
        """Builds the ``save/`` subgraph for ``saveables`` (see the module docstring).

        Returns:
            A :class:`SaverDef` naming the filename tensor, save tensor and restore op.
        """
        ops = [s.op for s in saveables]
        graph = ops[0].graph if ops else graph_lib.get_default_graph()
        with graph.as_default(), graph.control_dependencies(None), \
                graph.name_scope(name or "save"):
            filename_tensor = array_ops.placeholder_with_default(
                filename or "model", shape=(), name="filename")
            # TF keeps the historical name "save/Const:0" for the tensor to feed.
            filename_tensor = array_ops.placeholder_with_default(
                filename_tensor, shape=(), name="Const")
            save_tensor = self.add_save_ops(filename_tensor, saveables)
            restore_op = self.add_restore_ops(filename_tensor, saveables, restore_sequentially,
                                              reshape)
        return SaverDef(filename_tensor_name=filename_tensor.name,
                        save_tensor_name=save_tensor.name, restore_op_name=restore_op.name,
                        max_to_keep=max_to_keep, sharded=sharded,
                        keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                        version="V2")

    def add_save_ops(self, filename_tensor, saveables):
        """One ``SaveV2`` writing every spec; returns the filename, available after it ran."""
        specs = [spec for saveable in saveables for spec in saveable.specs]
        save_op = io_ops.save_v2(filename_tensor, [s.name for s in specs],
                                 [s.slice_spec for s in specs], [s.tensor for s in specs])
        graph = filename_tensor.graph
        with graph.control_dependencies([save_op]):
            return array_ops.identity(filename_tensor, name="control_dependency")

    def restore_op(self, filename_tensor, saveable):
        """The tensors of one saveable, read from the checkpoint."""
        specs = saveable.restore_specs
        return io_ops.restore_v2(filename_tensor, [s.name for s in specs],
                                 [s.slice_spec for s in specs], [s.dtype for s in specs])

    def bulk_restore(self, filename_tensor, saveables):
        """All saveables' tensors from one ``RestoreV2`` op."""
        specs = [spec for saveable in saveables for spec in saveable.restore_specs]
        return io_ops.restore_v2(filename_tensor, [s.name for s in specs],
                                 [s.slice_spec for s in specs], [s.dtype for s in specs])

    def add_restore_ops(self, filename_tensor, saveables, restore_sequentially, reshape):
        """Reads every saveable and assigns it back; returns ``restore_all``.

        With ``restore_sequentially`` each saveable gets its own ``RestoreV2``
        that runs after the previous one's assignment (less memory at once).
        """
        graph = filename_tensor.graph
        assign_ops = []
        if restore_sequentially:
            all_tensors = None
        else:
            all_tensors = self.bulk_restore(filename_tensor, saveables)
        index = 0
        for saveable in saveables:
            count = len(saveable.restore_specs)
            if restore_sequentially:
                with graph.control_dependencies(assign_ops[-1:]):
                    tensors = self.restore_op(filename_tensor, saveable)
            else:
                tensors = all_tensors[index:index + count]
            index += count
            shapes = None
            if reshape:
                shapes = [_variable_shape(s) for s in saveable.restore_specs]
            assign = saveable.restore(tensors, shapes)
            assign_ops.append(assign.op if isinstance(assign, Tensor) else assign)
        return control_flow_ops.group(*assign_ops, name="restore_all")


def _variable_shape(spec):
    """The shape to reshape a restored tensor to: the variable's static shape when
    fully known, else its run-time shape."""
    tensor = spec.tensor
    if tensor.shape.is_fully_defined():
        return tensor.shape.as_list()
    return array_ops.shape(tensor)


class BulkSaverBuilder(BaseSaverBuilder):
    """The default builder (TF's name): one RestoreV2 for all variables."""
