"""Gradient accumulators: ``tf.ConditionalAccumulator``, ``tf.SparseConditionalAccumulator``.

An accumulator gathers the gradients of several workers for one variable
and hands out their mean once enough have arrived — the aggregation step of
synchronous training (:mod:`minitf.train.sync_replicas_optimizer`).  Like a
queue (:mod:`minitf.ops.data_flow_ops`) it is state in the session, reached
through ops: the accumulator op outputs a ``resource`` handle, and the other
ops take it as input 0::

    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    acc.apply_grad(g, local_step=step)   # ResourceAccumulatorApplyGradient
    acc.take_grad(3)                     # ResourceAccumulatorTakeGradient: the mean of 3
    acc.num_accumulated()                # ResourceAccumulatorNumAccumulated
    acc.set_global_step(global_step)     # ResourceAccumulatorSetGlobalStep

The accumulator keeps a *global step*, 0 at first.  A gradient computed at
a ``local_step`` below it is *stale* and silently dropped, so a slow worker
cannot spoil a later step.  ``take_grad(n)`` blocks until ``n`` gradients
are in, returns their mean (``reduction_type="SUM"``: their sum), starts a
new sum and increments the global step.  A blocked ``take_grad`` wakes up as
a blocked dequeue does: on a new gradient, on the run's deadline
(``DeadlineExceededError``), when the session closes (``CancelledError``).

With ``shared_name``, every accumulator op of that name reaches the same
accumulator of its device: on a cluster, the one a parameter-server task
keeps across client sessions until ``tf.Session.reset``.

:class:`SparseConditionalAccumulator` sums :class:`~minitf.framework.indexed_slices.IndexedSlices`
row by row instead.  TF represents its handle as a string reference; here it
is a ``resource``, like the dense one's.

Mirrors the accumulators of ``tensorflow/python/ops/data_flow_ops.py``;
kernels in ``plugins/numpy_cpu/kernels/accumulators.py``.
"""

import collections

from minitf.framework import dtypes as dtypes_lib
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from minitf.ops.array_util import with_rank
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable
from minitf.ops.unary_ops import cast


# ---- the ops -----------------------------------------------------------------------
def _dtype_attr(op):
    return dtypes_lib.as_dtype(op.get_attr("dtype"))


def _accumulator_op(name, doc):
    return define_op(name, outputs=("handle",),
                     attrs={"dtype": None, "shape": None, "container": "", "shared_name": "",
                            "reduction_type": "MEAN"},
                     shape_fn=lambda op: [TensorShape([])],
                     dtype_fn=lambda op: [dtypes_lib.resource], stateful=True, doc=doc,
                     stacklevel=2)


def _scalar_input(index, outputs):
    """A shape function: input ``index`` must be a scalar; ``outputs`` are the shapes."""
    def shape_fn(op):
        with_rank(op.inputs[index].shape, 0)
        return list(outputs)
    return shape_fn


def _num_accumulated_op(name):
    return define_op(name, inputs=("handle",), outputs=("num_accumulated",),
                     shape_fn=lambda op: [TensorShape([])],
                     dtype_fn=lambda op: [dtypes_lib.int32], stateful=True,
                     doc="The number of gradients in the accumulator.", stacklevel=2)


def _set_global_step_op(name):
    return define_op(name, inputs=("handle", "new_global_step"), outputs=(),
                     shape_fn=_scalar_input(1, []), stateful=True,
                     doc="Sets the accumulator's global step.", stacklevel=2)


_conditional_accumulator = _accumulator_op(
    "ResourceConditionalAccumulator", "An accumulator of dense gradients.")
_apply_gradient = define_op(
    "ResourceAccumulatorApplyGradient", inputs=("handle", "local_step", "gradient"), outputs=(),
    attrs={"dtype": None}, shape_fn=_scalar_input(1, []), stateful=True,
    doc="Adds a gradient to the accumulator unless it is stale.")
_take_gradient = define_op(
    "ResourceAccumulatorTakeGradient", inputs=("handle", "num_required"),
    outputs=("average",), attrs={"dtype": None}, shape_fn=_scalar_input(1, [unknown_shape()]),
    dtype_fn=lambda op: [_dtype_attr(op)], stateful=True,
    doc="Waits for num_required gradients; returns their mean or sum.")
_num_accumulated = _num_accumulated_op("ResourceAccumulatorNumAccumulated")
_set_global_step = _set_global_step_op("ResourceAccumulatorSetGlobalStep")

_sparse_conditional_accumulator = _accumulator_op(
    "SparseConditionalAccumulator", "An accumulator of sparse (IndexedSlices) gradients.")
_sparse_apply_gradient = define_op(
    "SparseAccumulatorApplyGradient",
    inputs=("handle", "local_step", "gradient_indices", "gradient_values", "gradient_shape"),
    outputs=(), attrs={"dtype": None, "has_known_shape": None}, shape_fn=_scalar_input(1, []),
    stateful=True, doc="Adds a sparse gradient to the accumulator unless it is stale.")
_sparse_take_gradient = define_op(
    "SparseAccumulatorTakeGradient", inputs=("handle", "num_required"),
    outputs=("indices", "values", "shape"), attrs={"dtype": None},
    shape_fn=_scalar_input(1, [TensorShape([None]), unknown_shape(), TensorShape([None])]),
    dtype_fn=lambda op: [dtypes_lib.int64, _dtype_attr(op), dtypes_lib.int64], stateful=True,
    doc="Waits for num_required sparse gradients; returns their mean or sum.")
_sparse_num_accumulated = _num_accumulated_op("AccumulatorNumAccumulated")
_sparse_set_global_step = _set_global_step_op("AccumulatorSetGlobalStep")

not_differentiable("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
                   "ResourceAccumulatorTakeGradient", "ResourceAccumulatorNumAccumulated",
                   "ResourceAccumulatorSetGlobalStep", "SparseConditionalAccumulator",
                   "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient",
                   "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep",
                   reason="accumulator state, not a numeric function")


# ---- the Python classes ------------------------------------------------------------
class ConditionalAccumulatorBase:
    """What both accumulators share: their handle, global step and counter
    (``tf.ConditionalAccumulatorBase``).

    Args:
        dtype: the DType of the gradients.
        shape: the shape of the gradients (None: unknown).
        accumulator_ref: the accumulator op's resource tensor.
    """

    _num_accumulated_op = _num_accumulated
    _set_global_step_op = _set_global_step

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = dtype
        self._shape = _partial_shape(shape)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        return self._accumulator_ref

    @property
    def name(self):
        """The accumulator op's own name, without its scope (as in TF)."""
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name=None):
        """An int32 tensor: the number of gradients accumulated since the last take."""
        return apply_op(self._num_accumulated_op, [self._accumulator_ref],
                        name=name or "%s_NumAccumulated" % self._name)

    def set_global_step(self, new_global_step, name=None):
        """An op setting the accumulator's global step to ``new_global_step``
        (cast to int64).  Setting it lower than it is logs a warning but is done."""
        step = cast(convert_to_tensor(new_global_step), dtypes_lib.int64)
        return apply_op(self._set_global_step_op, [self._accumulator_ref, step], name=name)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients and hands out their mean (``tf.ConditionalAccumulator``).

    Args:
        dtype: the gradients' dtype: float16, float32 or float64.
        shape: the gradients' shape (None: any, but all the same).
        shared_name: share the accumulator among ops with this name, across
            sessions of one server.
        name: the accumulator op's name.
        reduction_type: ``"MEAN"`` or ``"SUM"``: what ``take_grad`` returns.

    Raises:
        TypeError: for a dtype that is not floating.
        ValueError: for another ``reduction_type``.

    Example:
        >>> acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
        >>> sess.run(acc.apply_grad([1.0, 2.0]))
        >>> sess.run(acc.apply_grad([3.0, 6.0]))
        >>> sess.run(acc.take_grad(2))
        array([2., 4.], dtype=float32)
    """

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator",
                 reduction_type="MEAN"):
        dtype = _float_dtype(dtype)
        attrs = _accumulator_attrs(dtype, shape, shared_name, reduction_type,
                                   "ConditionalAccumulator")
        ref = apply_op(_conditional_accumulator, [], attrs=attrs, name=name)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """An op adding ``grad`` — unless ``local_step`` is below the global step.

        Raises:
            ValueError: if ``grad``'s static shape is incompatible with the
                accumulator's (a run-time mismatch is an ``InvalidArgumentError``).
        """
        grad = convert_to_tensor(grad, dtype=self._dtype)
        grad.shape.assert_is_compatible_with(self._shape)
        local_step = cast(convert_to_tensor(local_step), dtypes_lib.int64)
        return apply_op(_apply_gradient, [self._accumulator_ref, local_step, grad],
                        attrs={"dtype": self._dtype}, name=name)

    def take_grad(self, num_required, name=None):
        """A tensor of the accumulator's shape: the mean (or sum) of ``num_required``
        gradients.  Running it blocks until they are in; it then resets the
        counter and increments the global step.  ``num_required`` < 1 is an
        ``InvalidArgumentError``."""
        out = apply_op(_take_gradient, [self._accumulator_ref, num_required],
                       attrs={"dtype": self._dtype}, name=name)
        out.set_shape(self._shape)
        return out


SparseGradient = collections.namedtuple("SparseAccumulatorTakeGradient",
                                        ["indices", "values", "shape"])
SparseGradient.__doc__ = """What ``SparseConditionalAccumulator.take_grad`` returns (TF's
namedtuple of the op's outputs); ``sess.run`` fetches it as one of arrays."""


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients row by row (``tf.SparseConditionalAccumulator``).

    Gradients are :class:`~minitf.framework.indexed_slices.IndexedSlices`
    (or their indices, values and shape).  Rows of the same index add up;
    ``MEAN`` divides each row by the number of gradients that had it.  The
    result's indices are sorted.

    Args:
        dtype, shared_name, name, reduction_type: as :class:`ConditionalAccumulator`.
        shape: the shape of the dense gradients; its known dimensions are
            checked (None or ``()``: nothing is).

    Example:
        >>> acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 1])
        >>> sess.run(acc.apply_grad([2, 0], [[4.0], [1.0]]))
        >>> sess.run(acc.apply_grad([2], [[8.0]]))
        >>> sess.run(acc.take_grad(2)).values  # rows 0 and 2: 1 / 1 and (4 + 8) / 2
        array([[1.],
               [6.]], dtype=float32)
    """

    _num_accumulated_op = _sparse_num_accumulated
    _set_global_step_op = _sparse_set_global_step

    def __init__(self, dtype, shape=None, shared_name=None,
                 name="sparse_conditional_accumulator", reduction_type="MEAN"):
        dtype = _float_dtype(dtype)
        attrs = _accumulator_attrs(dtype, shape, shared_name, reduction_type,
                                   "SparseConditionalAccumulator")
        ref = apply_op(_sparse_conditional_accumulator, [], attrs=attrs, name=name)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """:meth:`apply_grad` of an IndexedSlices ``grad``."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """An op adding the sparse gradient — unless ``local_step`` is below the global step.

        Args:
            grad_indices: a vector of row indices (cast to int64).
            grad_values: the rows, ``grad_values[i]`` at row ``grad_indices[i]``.
            grad_shape: the dense gradient's shape, checked against the
                accumulator's at run time; None: not checked.
            local_step: the step the gradient was computed at (cast to int64).
            name: the op's name.
        """
        local_step = cast(convert_to_tensor(local_step), dtypes_lib.int64)
        indices = cast(grad_indices, dtypes_lib.int64)
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        shape = cast([] if grad_shape is None else grad_shape, dtypes_lib.int64)
        return apply_op(_sparse_apply_gradient,
                        [self._accumulator_ref, local_step, indices, values, shape],
                        attrs={"dtype": self._dtype, "has_known_shape": grad_shape is not None},
                        name=name)

    def take_grad(self, num_required, name=None):
        """A :data:`SparseGradient` of tensors: the mean (or sum) of
        ``num_required`` sparse gradients, as :meth:`ConditionalAccumulator.take_grad`.

        The shape's first dimension is the accumulator's (-1 when unknown),
        the others are those of the values."""
        outputs = apply_op(_sparse_take_gradient, [self._accumulator_ref, num_required],
                           attrs={"dtype": self._dtype}, name=name)
        return SparseGradient(*outputs)

    def take_indexed_slices_grad(self, num_required, name=None):
        """:meth:`take_grad` as an IndexedSlices."""
        indices, values, shape = self.take_grad(num_required, name)
        return IndexedSlices(values=values, indices=indices, dense_shape=shape)


# ---- argument normalization ------------------------------------------------------------
def _float_dtype(dtype):
    """``dtype`` if it is float16/32/64 — the dtypes TF's accumulator kernels exist for.

    TF's op accepts any number type and fails at run time for lack of a
    kernel; minitf says so when the accumulator is built.
    """
    dtype = dtypes_lib.as_dtype(dtype).base_dtype
    if dtype not in dtypes_lib.FLOATING:
        raise TypeError("Value passed to parameter 'dtype' has DataType %s not in list of "
                        "allowed values: float16, float32, float64" % dtype.name)
    return dtype


def _partial_shape(shape):
    return unknown_shape() if shape is None else as_shape(shape)


def _accumulator_attrs(dtype, shape, shared_name, reduction_type, op_name):
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError("Attr 'reduction_type' of '%s' Op passed string '%s' not in: 'MEAN', "
                         "'SUM'." % (op_name, reduction_type))
    return {"dtype": dtype, "shape": _partial_shape(shape), "container": "",
            "shared_name": shared_name or "", "reduction_type": reduction_type}
