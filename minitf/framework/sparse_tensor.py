"""``tf.SparseTensor``: a tensor given by its few non-default entries.

A SparseTensor of shape ``dense_shape`` holds ``values[i]`` at position
``indices[i]`` (a row of ``indices``, one coordinate per dimension) and
zero — or another default — everywhere else.  The 3x4 matrix with a 1 at
[0, 0] and a 2 at [1, 2] is::

    tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])

TF1 input pipelines meet them when an example has a variable number of
values: ``tf.parse_example`` with a ``tf.VarLenFeature`` returns one whose
row ``b`` holds the values of example ``b``.  ``tf.sparse_tensor_to_dense``
turns one into a dense tensor (:mod:`minitf.ops.sparse_ops`).

Like :class:`~minitf.framework.indexed_slices.IndexedSlices`, it is a plain
holder of three tensors — ``indices`` (int64, ``[N, rank]``), ``values``
(``[N]``) and ``dense_shape`` (int64, ``[rank]``); ``Session.run`` of one
returns a :data:`SparseTensorValue` of their three arrays, and feeding one
(a ``tf.sparse_placeholder``) feeds its three tensors.

Mirrors ``tensorflow/python/framework/sparse_tensor.py``.
"""

import collections

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value_as_shape

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = """What ``Session.run`` returns for a :class:`SparseTensor`
(``tf.SparseTensorValue``): its three arrays.  Also a value to feed one."""


class SparseTensor:
    """A sparse tensor: ``values`` at ``indices`` of a tensor of shape ``dense_shape``.

    Args:
        indices: an int64 ``[N, rank]`` tensor (or value): the positions.
        values: an ``[N]`` tensor (or value) of any dtype.
        dense_shape: an int64 ``[rank]`` tensor (or value): the dense shape.

    Raises:
        ValueError: if the three do not fit together (``values`` not a vector,
            ``indices`` not ``[N, rank]``).

    Example:
        >>> st = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
        >>> st.shape
        TensorShape([Dimension(3), Dimension(4)])
        >>> sess.run(st)
        SparseTensorValue(indices=array([[0, 0], [1, 2]]), values=array([1., 2.], dtype=float32),
                          dense_shape=array([3, 4]))
    """

    def __init__(self, indices, values, dense_shape):
        with get_default_graph().name_scope("SparseTensor"):  # constants: SparseTensor/values
            self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64,
                                                  name="dense_shape")
        rank = self._dense_shape.shape.with_rank(1)[0]
        self._indices.shape.with_rank(2)[1].merge_with(rank)
        self._values.shape.with_rank(1)[0].merge_with(self._indices.shape[0])
        self._shape = _static_dense_shape(self._dense_shape)

    @classmethod
    def from_value(cls, sparse_tensor_value):
        """A SparseTensor of the constants in a :data:`SparseTensorValue` (or itself)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        return cls(*sparse_tensor_value)

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        """The dtype of the values."""
        return self._values.dtype

    @property
    def shape(self):
        """The static dense shape, as far as ``dense_shape`` tells it."""
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrows the static dense shape to what the caller knows (e.g. a
        dataset element's declared shape), as ``Tensor.set_shape`` does.

        Raises:
            ValueError: if ``shape`` is incompatible with the current one.
        """
        self._shape = self._shape.merge_with(shape)

    @property
    def op(self):
        """The op producing the values."""
        return self._values.op

    @property
    def graph(self):
        return self._indices.graph

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this tensor (default session): a :data:`SparseTensorValue`."""
        from minitf.framework.default_session import run_in_default_session
        return run_in_default_session(self, feed_dict, session)

    def consumers(self):
        """The ops that use the indices, values or dense shape."""
        consumers = []
        for part in (self._indices, self._values, self._dense_shape):
            consumers.extend(op for op in part.consumers() if op not in consumers)
        return consumers

    def __str__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)

    __repr__ = __str__


def _static_dense_shape(dense_shape):
    """What the graph tells of the dense shape: its rank from ``dense_shape``'s
    length, its sizes where ``dense_shape`` is a constant."""
    shape = constant_value_as_shape(dense_shape)
    if shape.ndims is None and dense_shape.shape[0].value is not None:
        return TensorShape([None] * dense_shape.shape[0].value)
    return shape if shape.ndims is not None else unknown_shape()


def is_sparse(value):
    """Whether ``value`` is a SparseTensor or a SparseTensorValue."""
    return isinstance(value, (SparseTensor, SparseTensorValue))


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """``value`` as a SparseTensor if it is sparse, else ``tf.convert_to_tensor(value)``
    (``tf.convert_to_tensor_or_sparse_tensor``).

    Raises:
        RuntimeError: if ``dtype`` is given and the sparse values' dtype differs.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError("Sparse dtype: requested = %s, actual = %s"
                               % (dtype.name, value.dtype.name))
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


__all__ = ["SparseTensor", "SparseTensorValue", "convert_to_tensor_or_sparse_tensor",
           "is_sparse"]
