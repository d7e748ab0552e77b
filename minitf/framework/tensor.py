"""``tf.Tensor``: a symbolic handle to one output of an operation.

A Tensor holds no value.  It names the ``value_index``-th output of an
:class:`~minitf.framework.operation.Operation` and carries what is known about
that output while the graph is built: its dtype and its (possibly partial)
static shape.  Values exist only inside ``Session.run``.

Arithmetic operators build ops (``a + b`` adds an ``Add`` node).  The op
library installs them with :meth:`Tensor._override_operator`, so this module
does not depend on it.  As in TF1, ``==`` stays Python identity (tensors are
dict keys), while ``<``, ``<=``, ``>``, ``>=`` build comparison ops.

Mirrors ``tf.Tensor`` in ``tensorflow/python/framework/ops.py``.
"""

from minitf.framework import tensor_shape


class Tensor:
    """The ``value_index``-th output of ``op``.

    Example:
        >>> a = tf.constant(1) + tf.constant(2)
        >>> a
        Tensor("add:0", shape=(), dtype=int32)
    """

    OVERLOADABLE_OPERATORS = {
        "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
        "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
        "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
        "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__",
        "__or__", "__ror__", "__xor__", "__rxor__", "__invert__", "__neg__",
        "__abs__", "__getitem__",
    }

    # NumPy defers to our reflected operators (np.float32(2) * t builds an op).
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = tensor_shape.unknown_shape()
        self._consumers = []

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op.graph

    @property
    def name(self):
        return "%s:%d" % (self._op.name, self._value_index)

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Refines the static shape.  Raises ``ValueError`` if incompatible."""
        self._shape = self._shape.merge_with(shape)

    def consumers(self):
        """The operations that take this tensor as an input."""
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this tensor in ``session`` (default: the default session)."""
        from minitf.framework.default_session import run_in_default_session
        return run_in_default_session(self, feed_dict, session)

    def _as_graph_element(self):
        return self

    def __repr__(self):
        if self._shape.ndims is None:  # TF1 leaves an unknown shape out
            return 'Tensor("%s", dtype=%s)' % (self.name, self._dtype.name)
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self._shape, self._dtype.name)

    __str__ = __repr__

    # Tensors compare and hash by identity (object's own, in C: feed_dict and
    # the session's step cache hash them on every run).
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
            "as tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        # A graph tensor has no elements yet; TF1 refuses rather than
        # unstacking behind the user's back (``a, b = t`` is an error).
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. "
                        "To iterate over this tensor use tf.map_fn or tf.unstack.")

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors. (%s) Please call "
                        "`x.shape` rather than `len(x)` for shape information." % self.name)

    @classmethod
    def _override_operator(cls, operator, func):
        """Installs ``func`` as ``operator`` (e.g. ``"__add__"``) on Tensor."""
        if operator not in cls.OVERLOADABLE_OPERATORS:
            raise ValueError("Overriding %s is disallowed" % operator)
        setattr(cls, operator, func)
