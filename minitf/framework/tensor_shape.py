"""Static shapes that may be partly unknown (``tf.TensorShape``, ``tf.Dimension``).

Shape inference runs while the graph is *built*: each op's shape function maps
its inputs' static shapes to its outputs'.  A dimension may be unknown (``None``,
printed ``?``) and a whole shape may have unknown rank.  ``merge_with`` combines
two partial descriptions of the same shape and raises ``ValueError`` when they
contradict each other, which is how incompatible shapes are caught at
construction.

Mirrors ``tensorflow/python/framework/tensor_shape.py``.
"""

from minitf.framework import protos


class Dimension:
    """One dimension of a shape: an int, or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            if isinstance(value, float) or not hasattr(value, "__index__"):
                raise TypeError("Dimension value must be integer or None, got %r" % (value,))
            value = int(value.__index__())
            if value < 0:
                raise ValueError("Dimension %d must be >= 0" % value)
        self._value = value

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other):
        """Returns the more specific of two compatible dimensions.

        Raises:
            ValueError: if both are known and differ.
        """
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError("Dimensions %s and %s are not compatible" % (self, other))
        return self if self._value is not None else other

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is None or result is NotImplemented else not result

    def __hash__(self):
        return hash(self._value)

    def __int__(self):
        return self._value

    def __index__(self):
        return self._value

    def _arith(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __repr__(self):
        return "Dimension(%s)" % self._value

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim):
    """The int value of a dimension (or None), whatever form it is given in."""
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """The static shape of a tensor: a list of Dimensions, or unknown rank.

    Example:
        >>> s = TensorShape([2, None])
        >>> s.merge_with([None, 3])
        TensorShape([Dimension(2), Dimension(3)])
    """

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if _is_shape_proto(dims):
            dims = None if dims.unknown_rank else [None if d.size == -1 else d.size
                                                   for d in dims.dim]
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            try:
                dims = list(dims)
            except TypeError:
                dims = [dims]
            self._dims = tuple(as_dimension(d) for d in dims)

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return unknown_shape()
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def num_elements(self):
        """The number of elements, or None when not fully defined."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d.value
        return n

    def is_fully_defined(self):
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError("Shape %s is not fully defined" % self)

    def as_proto(self):
        """This shape as TF's ``TensorShapeProto`` (an unknown dimension's size is -1)."""
        proto = protos.load("tensor_shape_pb2").TensorShapeProto()
        if self._dims is None:
            proto.unknown_rank = True
        for d in self._dims or ():
            proto.dim.add(size=-1 if d.value is None else d.value)
        return proto

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        """Combines two descriptions of one shape into the most specific one.

        Raises:
            ValueError: if the shapes contradict each other.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError("Shapes %s and %s are not compatible" % (self, other)) from None

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are incompatible" % (self, as_shape(other)))

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError("Shape %s must have rank %d" % (self, rank))

    def with_rank(self, rank):
        """This shape, checked (or given) to have exactly ``rank`` dimensions."""
        try:
            return self.merge_with(unknown_shape(rank))
        except ValueError:
            raise ValueError("Shape %s must have rank %d" % (self, rank)) from None

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError("Shape %s must have rank at least %d" % (self, rank))
        return self

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims if None not in (self._dims, other._dims) else (
            self._dims is None and other._dims is None)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return "TensorShape([%s])" % ", ".join(repr(d) for d in self._dims)

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return "(%s,)" % self._dims[0]
        return "(%s)" % ", ".join(str(d) for d in self._dims)


def _is_shape_proto(value):
    """True for a ``TensorShapeProto`` (recognised without loading the proto modules)."""
    descriptor = getattr(value, "DESCRIPTOR", None)
    return getattr(descriptor, "name", None) == "TensorShapeProto"


def as_shape(shape):
    """Converts a list, tuple, int or None to a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    """A shape of unknown rank, or of known rank with every dimension unknown."""
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar():
    return TensorShape([])
