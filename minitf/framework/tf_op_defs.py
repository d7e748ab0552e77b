"""TensorFlow's own OpDefs: what a NodeDef must say for TensorFlow to read it.

minitf declares an op with the attrs its kernel needs (``MatMul``:
``transpose_a``, ``transpose_b``); the dtypes come from the inputs.
TensorFlow's ``OpDef`` of the same op also names *type attrs*, derived from
the inputs and outputs, that every NodeDef must carry::

    op { name: "MatMul"
         input_arg { name: "a" type_attr: "T" }   input_arg { name: "b" type_attr: "T" }
         output_arg { name: "product" type_attr: "T" }
         attr { name: "transpose_a" type: "bool" default_value { b: false } }
         attr { name: "T" type: "type" allowed_values { ... } } ... }

``tf_op_defs.pb`` next to this module holds TF's OpDef of every op minitf
implements (an ``OpList``, written once with TensorFlow by
``tests/data/make_tf_op_defs.py``).  It serves both directions of a GraphDef:

* export: :func:`inferred_attrs` gives the type attrs of an Operation (``T``,
  ``Tidx``, ``N``, ...: ``{"T": tf.float32}``) and :func:`coerced` gives an
  attr value the kind TF declares (``alpha=0`` becomes the float ``0.0``), so
  TensorFlow imports the NodeDefs minitf writes;
* import: :func:`unsupported_attr` finds an attr of a TF NodeDef that minitf's
  op does not implement and that is not at TF's default (``Conv2D`` with
  ``data_format: "NCHW"``), so the import refuses it instead of computing
  something else; :func:`default` fills an attr a NodeDef leaves out where
  minitf's op declares no default (a ``Placeholder``'s ``shape``).

An op TensorFlow does not have (minitf's own) has no entry; its NodeDefs
are written and read as they are.

Mirrors ``tensorflow/core/framework/op_def.proto`` and the attr inference of
``tensorflow/python/framework/op_def_library.py``.
"""

import functools
import os

from minitf.framework import attr_value as attr_value_lib
from minitf.framework import protos
from minitf.framework.tensor_shape import TensorShape

#: The OpList file (binary: read in a millisecond, on first use).
OP_DEFS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_op_defs.pb")

#: Attrs that are hints to TF's runtime and do not change what an op computes:
#: minitf may ignore any value of them.
HINT_ATTRS = frozenset({"use_cudnn_on_gpu", "grad_a", "grad_b"})


@functools.lru_cache(maxsize=None)
def _op_defs():
    with open(OP_DEFS_FILE, "rb") as f:
        op_list = protos.load("op_def_pb2").OpList.FromString(f.read())
    return {op_def.name: op_def for op_def in op_list.op}


def op_def(op_type):
    """TensorFlow's ``OpDef`` of ``op_type``, or None for an op TF does not have."""
    return _op_defs().get(op_type)


@functools.lru_cache(maxsize=None)
def _signature(op_type):
    """What export needs of TF's OpDef, in plain tuples and dicts (protobuf's
    repeated fields are slow to walk once per op): each input and output
    argument's ``(type_attr, number_attr, type_list_attr)``, and each attr's type."""
    definition = op_def(op_type)
    if definition is None:
        return None

    def args(arg_defs):
        return tuple((a.type_attr, a.number_attr, a.type_list_attr) for a in arg_defs)

    return (args(definition.input_arg), args(definition.output_arg),
            {attr.name: attr.type for attr in definition.attr})


# ---- export -----------------------------------------------------------------------------------
def inferred_attrs(op):
    """The type attrs TF's OpDef derives from ``op``'s inputs and outputs.

    For each argument of TF's OpDef: its ``type_attr`` is the dtype of its
    tensors (refs as their base type: ``Assign``'s ``T`` is ``float``), its
    ``number_attr`` the length of a list argument (``Pack``'s ``N``), its
    ``type_list_attr`` the dtypes of the list (``SaveV2``'s ``dtypes``).

    Returns:
        ``{attr name: value}``, empty for an op TF does not have, or whose
        arguments do not match TF's (then nothing can be inferred).
    """
    signature = _signature(op.type)
    if signature is None:
        return {}
    found = {}
    for args, tensors in ((signature[0], op.inputs), (signature[1], op.outputs)):
        for (type_attr, number_attr, type_list_attr), group in zip(
                args, _grouped(args, list(tensors))):
            if number_attr:
                found.setdefault(number_attr, len(group))
            if type_attr and group:
                found.setdefault(type_attr, group[0].dtype.base_dtype)
            if type_list_attr:
                found.setdefault(type_list_attr, [t.dtype.base_dtype for t in group])
    return found


def _grouped(args, tensors):
    """``tensors`` split by argument: one each, and the rest for the (one) list argument.

    Returns ``[]`` when that is impossible (several list arguments, too few
    tensors): the caller then infers nothing.
    """
    lists = [i for i, (_, number_attr, type_list_attr) in enumerate(args)
             if number_attr or type_list_attr]
    singles = len(args) - len(lists)
    if len(lists) > 1 or len(tensors) < singles or (not lists and len(tensors) != singles):
        return []
    if not lists:
        return [[t] for t in tensors]
    start, length = lists[0], len(tensors) - singles
    return ([[t] for t in tensors[:start]] + [tensors[start:start + length]]
            + [[t] for t in tensors[start + length:]])


def coerced(op_type, name, value):
    """``value`` as the kind of attr TF declares for attr ``name`` of ``op_type``.

    Python writes ``0`` for ``0.0`` and a list for a shape; TF's importer
    wants the declared kind (``"AttrValue had value with type 'int' when
    'float' expected"``).  Values of other attrs are returned unchanged.
    """
    signature = _signature(op_type)
    declared = None if signature is None else signature[2].get(name)
    if declared in ("float", "list(float)"):
        return _each(value, lambda v: float(v) if _is_int(v) else v)
    if declared == "shape" and (value is None or isinstance(value, (list, tuple))):
        return TensorShape(value)
    if declared == "list(shape)" and isinstance(value, (list, tuple)):
        return [TensorShape(v) for v in value]
    return value


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _each(value, convert):
    if isinstance(value, (list, tuple)):
        return [convert(v) for v in value]
    return convert(value)


# ---- import -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _attr_defaults(op_type):
    """``{attr name: TF's default AttrValue, or None}`` of ``op_type`` (None: TF lacks it)."""
    definition = op_def(op_type)
    if definition is None:
        return None
    return {attr.name: attr.default_value if attr.HasField("default_value") else None
            for attr in definition.attr}


def default(op_type, name):
    """The Python value of TF's default for attr ``name`` of ``op_type``, or None."""
    default_value = (_attr_defaults(op_type) or {}).get(name)
    return None if default_value is None else attr_value_lib.python_value(default_value)


def unsupported_attr(node, implemented):
    """The first attr of ``node`` that minitf cannot honour, as ``(name, TF's default)``.

    An attr is fine when minitf's op declares it (``implemented``), when it
    is private (``_output_shapes``, ``_class``), a type attr TF derives from
    the inputs (``T``), a hint (:data:`HINT_ATTRS`), or at TF's default
    (``data_format: "NHWC"``, ``explicit_paddings: []``).  For an op TF does
    not have every attr is accepted.

    Args:
        node: a ``NodeDef``.
        implemented: the attr names minitf's op declares.

    Returns:
        ``(attr name, TF's default AttrValue or None)``, or None when all is well.
    """
    defaults = _attr_defaults(node.op)
    if defaults is None:
        return None
    inferred = _type_attr_names(node.op)
    for name in sorted(node.attr):
        if (name in implemented or name.startswith("_") or name in inferred
                or name in HINT_ATTRS or name not in defaults):
            continue
        if defaults[name] is None or node.attr[name] != defaults[name]:
            return name, defaults[name]
    return None


def _type_attr_names(op_type):
    inputs, outputs, _ = _signature(op_type)
    return {name for arg in inputs + outputs for name in arg if name}
