"""``tf.IndexedSlices``: a sparse set of rows of a tensor.

An IndexedSlices names a few slices of a dense tensor along its first
dimension: ``values[i]`` is the slice at row ``indices[i]`` of a tensor of
shape ``dense_shape``, and every other row is zero.  A row may be named more
than once; its slices then add up.  The tensor ``[[0, 0], [0, 1], [2, 3]]``
is::

    tf.IndexedSlices(values=tf.constant([[0, 1], [2, 3]]), indices=tf.constant([1, 2]),
                     dense_shape=tf.constant([3, 2]))

Why it exists: the gradient of ``tf.gather(params, ids)`` (of an embedding
lookup) is zero except in the rows that were read.  For a vocabulary of a
million rows and a batch of a hundred ids, a dense gradient would be a
million rows of mostly zeros; an IndexedSlices is the hundred rows and their
ids.  ``tf.gradients`` returns one for such a variable, the gradient
aggregation concatenates them (:mod:`minitf.autodiff.gradients`), and an
optimizer's ``_apply_sparse`` updates only the named rows
(:mod:`minitf.train.optimizer`).  An op that needs a dense tensor converts it
(``tf.convert_to_tensor``, registered in :mod:`minitf.ops.gather_ops`): an
``UnsortedSegmentSum`` of the values into zeros.

It is a plain holder of three tensors; ``Session.run`` of one returns an
:data:`IndexedSlicesValue` of their three arrays.

Mirrors ``tensorflow/python/framework/indexed_slices.py``.
"""

import collections

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import unknown_shape
from minitf.framework.tensor_util import constant_value_as_shape


class IndexedSlices:
    """The rows ``indices`` of a tensor of shape ``dense_shape`` hold ``values``.

    Args:
        values: a Tensor of the slices, its first dimension as long as ``indices``.
        indices: a 1-D integer Tensor of row numbers.
        dense_shape: a 1-D integer Tensor, the shape of the whole tensor, or None.
    """

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def shape(self):
        """The static shape of the dense tensor, as far as ``dense_shape`` tells it."""
        if self._dense_shape is None:
            return unknown_shape()
        return constant_value_as_shape(self._dense_shape)

    @property
    def dtype(self):
        """The dtype of the values."""
        return self._values.dtype

    @property
    def name(self):
        """The name of the values tensor."""
        return self._values.name

    @property
    def op(self):
        """The op producing the values."""
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self):
        return self._values.device

    def consumers(self):
        """The ops that use the values, indices or dense shape."""
        parts = [self._values, self._indices, self._dense_shape]
        consumers = []
        for part in parts:
            for op in part.consumers() if part is not None else ():
                if op not in consumers:
                    consumers.append(op)
        return consumers

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self):
        return "IndexedSlices(indices=%s, values=%s%s)" % (
            self._indices, self._values,
            "" if self._dense_shape is None else ", dense_shape=%s" % self._dense_shape)

    __repr__ = __str__


IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = """What ``Session.run`` returns for an :class:`IndexedSlices`:
its three arrays (``dense_shape`` None when the slices have none)."""


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """``value`` itself if it is an IndexedSlices, else ``tf.convert_to_tensor(value)``
    (``tf.convert_to_tensor_or_indexed_slices``).

    Raises:
        ValueError: if ``dtype`` is given and the slices' dtype differs.
    """
    if isinstance(value, IndexedSlices):
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (dtype.name, value.dtype.name, value))
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
