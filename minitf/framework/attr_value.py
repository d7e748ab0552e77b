"""AttrValue: an op's attr as TF writes it in a GraphDef.

An op's attrs are Python values in minitf (``op.get_attr("transpose_a")`` is
``False``).  In a GraphDef each becomes TF's ``AttrValue`` message, a union of
a few kinds; :func:`attr_value` picks the kind from the value and
:func:`python_value` reads it back::

    Python value                        AttrValue field
    ----------------------------------  ------------------------------------------
    DType (tf.float32, tf.int32_ref)    type: DT_FLOAT, DT_INT32_REF
    TensorShape                         shape: TensorShapeProto (unknown: -1)
    NumPy array (a Const's value)       tensor: TensorProto (see tensor_util)
    bool / int / float / str            b / i / f / s (str as UTF-8 bytes)
    FunctionName (tf.data's map fn)     func: NameAttrList, the function's name
    list or tuple of one of the above   list: ListValue (comes back as a list)
    None                                no field set (an empty AttrValue)

``f`` is a 32-bit float, as in TF; a float comes back as the shortest decimal
that rounds to the stored float32, so a literal attr (``alpha=0.2``) comes back
unchanged.  TF has no kind for ``None`` or for nested lists; minitf writes
``None`` (an attr left unset on purpose) as an AttrValue with no field set and
refuses nested lists and other Python objects: they could not be read back.

Mirrors ``tensorflow/core/framework/attr_value.proto`` and the conversions in
``tensorflow/python/framework/op_def_library.py`` (``_MakeType`` ...).
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework import protos
from minitf.framework import tensor_util
from minitf.framework.tensor_shape import TensorShape


class FunctionName(str):
    """The value of a function attr: the name of a function in the graph's library.

    A plain ``str`` to kernels (they look the function up by it); a GraphDef
    writes it as TF's ``func`` attr (a ``NameAttrList``) rather than a string,
    and the function itself into ``GraphDef.library``.

    Example:
        >>> attr_value(FunctionName("Dataset_map_fn_1")).func.name
        'Dataset_map_fn_1'
    """

    __slots__ = ()


def attr_value(value):
    """``value`` as an ``AttrValue``.

    Raises:
        TypeError: if TF's AttrValue has no kind for ``value``.
    """
    attr = protos.load("attr_value_pb2").AttrValue()
    if value is None:
        return attr
    if isinstance(value, (list, tuple)):
        attr.list.SetInParent()  # an empty list is a list, not None
        for item in value:
            _append(attr.list, item)
        return attr
    field, item = _field(value)
    if field in ("shape", "tensor", "func"):
        getattr(attr, field).CopyFrom(item)
    else:
        setattr(attr, field, item)
    return attr


def _append(list_value, item):
    if isinstance(item, (list, tuple)) or item is None:
        raise TypeError("Cannot serialize the attr list item %r: TF's AttrValue has no nested "
                        "lists or None items" % (item,))
    field, encoded = _field(item)
    if field in ("shape", "tensor", "func"):
        getattr(list_value, field).add().CopyFrom(encoded)
    else:
        getattr(list_value, field).append(encoded)


def _field(value):
    """``(AttrValue field, encoded value)`` of one non-list value."""
    if isinstance(value, dtypes.DType):
        return "type", value.as_datatype_enum
    if isinstance(value, TensorShape):
        return "shape", value.as_proto()
    if isinstance(value, np.ndarray):
        return "tensor", tensor_util.make_tensor_proto(value)
    if isinstance(value, FunctionName):
        return "func", protos.load("attr_value_pb2").NameAttrList(name=value)
    if isinstance(value, (bool, np.bool_)):
        return "b", bool(value)
    if isinstance(value, (int, np.integer)):
        return "i", int(value)
    if isinstance(value, (float, np.floating)):
        return "f", float(value)
    if isinstance(value, str):
        return "s", value.encode("utf-8")
    if isinstance(value, bytes):
        return "s", value
    raise TypeError("Cannot serialize attr value %r of type %s: TF's AttrValue holds types, "
                    "shapes, arrays, functions, bools, ints, floats, strings and lists of them"
                    % (value, type(value).__name__))


def python_value(attr):
    """The Python value of an ``AttrValue`` (the inverse of :func:`attr_value`)."""
    kind = attr.WhichOneof("value")
    if kind is None:
        return None
    if kind == "list":
        return _list_items(attr.list)
    return _decode(kind, getattr(attr, kind))


def _list_items(list_value):
    """The items of a ``ListValue``: one repeated field is set (all empty: ``[]``)."""
    for kind in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        items = getattr(list_value, kind)
        if len(items):
            return [_decode(kind, item) for item in items]
    return []


def _decode(kind, item):
    if kind == "type":
        return dtypes.as_dtype(item)
    if kind == "shape":
        return TensorShape(item)
    if kind == "tensor":
        array = tensor_util.make_ndarray(item)
        array.flags.writeable = False  # a Const's value is never written to
        return array
    if kind == "func":
        return FunctionName(item.name)
    if kind == "f":
        return float(str(np.float32(item)))  # the shortest decimal of the float32
    if kind == "s":
        try:
            return item.decode("utf-8")
        except UnicodeDecodeError:
            return item
    return item  # b and i are Python bools and ints already
