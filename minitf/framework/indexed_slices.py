"""``tf.IndexedSlices``: a sparse set of rows of a tensor.

An IndexedSlices names a few slices of a dense tensor along its first
dimension: ``values[i]`` is the slice at row ``indices[i]`` of a tensor of
shape ``dense_shape``, and every other row is zero.  A row may be named more
than once; its slices then add up.  The tensor ``[[0, 0], [0, 1], [2, 3]]``
is::

    tf.IndexedSlices(values=[[0, 1], [2, 3]], indices=[1, 2], dense_shape=[3, 2])

In TF1 the gradient of ``tf.gather`` (of an embedding lookup) is one; minitf's
gradients are dense (see :mod:`minitf.ops.gather_ops`), so here an
IndexedSlices is what a :class:`~minitf.ops.accumulator_ops.SparseConditionalAccumulator`
takes in and gives out.  It is a plain holder of three tensors: fetch them
(``sess.run([s.indices, s.values, s.dense_shape])``), as minitf's session
does not turn an IndexedSlices into TF's ``IndexedSlicesValue``, and
optimizers do not accept it as a gradient.

Mirrors ``tensorflow/python/framework/indexed_slices.py``.
"""


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

    def __repr__(self):
        return "IndexedSlices(indices=%s, values=%s%s)" % (
            self._indices, self._values,
            "" if self._dense_shape is None else ", dense_shape=%s" % self._dense_shape)
