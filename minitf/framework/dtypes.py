"""Data types of tensors (``tf.DType``, ``tf.float32``, ...).

A DType names the element type of a tensor and maps it to a NumPy dtype.  Each
type has a *reference* twin (``float32_ref``): the type of a TF1 variable's
output, which an ``Assign`` may write through.  TensorFlow never promotes types
silently: ``int32 + float32`` is a ``TypeError``; see ``convert_to_tensor`` for
how Python scalars adopt the other operand's type instead.

Mirrors ``tensorflow/python/framework/dtypes.py``.
"""

import numpy as np


class DType:
    """The element type of a tensor.

    Example:
        >>> float32.as_numpy_dtype
        <class 'numpy.float32'>
        >>> float32._as_ref
        tf.float32_ref
    """

    __slots__ = ("_name", "_np", "_is_ref")

    def __init__(self, name, numpy_type, is_ref=False):
        self._name = name
        self._np = numpy_type
        self._is_ref = is_ref

    @property
    def name(self):
        return self._name + ("_ref" if self._is_ref else "")

    @property
    def as_numpy_dtype(self):
        """The NumPy scalar type (``np.float32``) of this DType."""
        return self._np

    @property
    def base_dtype(self):
        """This DType without its reference flag."""
        return _BY_NAME[self._name] if self._is_ref else self

    @property
    def _as_ref(self):
        return _REF_BY_NAME[self._name]

    @property
    def is_ref(self):
        return self._is_ref

    @property
    def as_datatype_enum(self):
        """TF's ``DataType`` enum value (``types.proto``): how a GraphDef names this type.

        A reference type is its base type's value plus 100 (``DT_FLOAT_REF``).
        """
        return _DATATYPE_ENUM[self._name] + (100 if self._is_ref else 0)

    @property
    def is_floating(self):
        return np.issubdtype(self._np, np.floating)

    @property
    def is_integer(self):
        return np.issubdtype(self._np, np.integer)

    @property
    def is_unsigned(self):
        return np.issubdtype(self._np, np.unsignedinteger)

    @property
    def is_bool(self):
        return self._np is np.bool_

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer

    @property
    def min(self):
        if self.is_bool:
            return False
        info = np.finfo(self._np) if self.is_floating else np.iinfo(self._np)
        return info.min

    @property
    def max(self):
        if self.is_bool:
            return True
        info = np.finfo(self._np) if self.is_floating else np.iinfo(self._np)
        return info.max

    @property
    def size(self):
        return np.dtype(self._np).itemsize

    def is_compatible_with(self, other):
        """True when a value of ``other`` may be used where this type is expected."""
        return self.base_dtype == as_dtype(other).base_dtype

    def __eq__(self, other):
        if other is None:
            return False
        try:
            other = as_dtype(other)
        except TypeError:
            return False
        return self._name == other._name and self._is_ref == other._is_ref

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self._name, self._is_ref))

    def __repr__(self):
        return "tf." + self.name

    def __str__(self):
        return "<dtype: %r>" % self.name

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
bool = DType("bool", np.bool_)  # noqa: A001 - TF's own name
string = DType("string", np.object_)
# Handles to state living in a session (queues, iterators) and opaque values
# (datasets): their runtime values are Python objects, never arrays.
resource = DType("resource", np.object_)
variant = DType("variant", np.object_)
half = float16
double = float64

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, bool, string,
        resource, variant)
_BY_NAME = {t._name: t for t in _ALL}
_REF_BY_NAME = {t._name: DType(t._name, t._np, is_ref=True) for t in _ALL}
_BY_NUMPY = {np.dtype(t._np): t for t in _ALL if t._np is not np.object_}
# TF's DataType enum (tensorflow/core/framework/types.proto).
_DATATYPE_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
                  "string": 7, "int64": 9, "bool": 10, "uint16": 17, "float16": 19,
                  "resource": 20, "variant": 21}
_BY_ENUM = {enum: name for name, enum in _DATATYPE_ENUM.items()}

float16_ref = _REF_BY_NAME["float16"]
float32_ref = _REF_BY_NAME["float32"]
float64_ref = _REF_BY_NAME["float64"]
int32_ref = _REF_BY_NAME["int32"]
int64_ref = _REF_BY_NAME["int64"]
bool_ref = _REF_BY_NAME["bool"]

FLOATING = (float16, float32, float64)
INTEGER = (int8, int16, int32, int64, uint8, uint16)
NUMERIC = FLOATING + INTEGER
ALL_TYPES = NUMERIC + (bool,)


def as_dtype(type_value):
    """Converts a DType, its name, its ``DataType`` enum value, a NumPy dtype or a
    Python type to a DType.

    Raises:
        TypeError: if ``type_value`` names no DType.
    """
    if isinstance(type_value, DType):
        return type_value
    if type(type_value) is int:  # an enum value (not a bool: True is no DataType)
        return _from_datatype_enum(type_value)
    if isinstance(type_value, str):
        name = type_value
        if name.endswith("_ref"):
            base = _BY_NAME.get(name[:-4])
            if base is not None:
                return base._as_ref
        alias = {"half": "float16", "double": "float64", "float": "float32"}.get(name, name)
        if alias in _BY_NAME:
            return _BY_NAME[alias]
        raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))
    if type_value is str or type_value is bytes:
        return string
    try:
        np_dtype = np.dtype(type_value)
    except TypeError:
        raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,)) from None
    if np_dtype in _BY_NUMPY:
        return _BY_NUMPY[np_dtype]
    if np_dtype.kind in "OSU":
        return string
    raise TypeError("Cannot convert value %r to a TensorFlow DType." % (type_value,))


def _from_datatype_enum(enum):
    """The DType of a ``DataType`` enum value (``DT_FLOAT_REF``: ``float32_ref``)."""
    name = _BY_ENUM.get(enum % 100) if 0 < enum < 200 else None
    if name is None:
        raise TypeError("Cannot convert value %r to a TensorFlow DType: minitf has no "
                        "DataType %d." % (enum, enum))
    return _REF_BY_NAME[name] if enum > 100 else _BY_NAME[name]
