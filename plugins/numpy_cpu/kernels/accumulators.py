"""CPU kernels of the gradient accumulators, and the accumulators themselves.

An accumulator lives in the session's resource manager, one per accumulator
op (or per ``shared_name``), like a queue (see
:mod:`minitf_numpy_cpu.kernels.data_flow`); the accumulator op's kernel
returns it as the ``resource`` value its other ops receive.

It holds a sum of gradients, a counter of the gradients in the sum and a
*global step*:

* ``apply_grad(local_step, grad)`` drops the gradient when it is *stale*
  (``local_step`` below the global step); otherwise it adds it to the sum
  and counts it;
* ``take_grad(n)`` waits until the counter reaches ``n``, then returns the
  sum (``SUM``) or the sum over the counter (``MEAN``), empties the sum,
  resets the counter and increments the global step;
* ``set_global_step(step)`` sets the global step (a warning when it goes back).

Every operation takes the accumulator's condition variable, so ``Session.run``
calls in several threads may apply and take at once.  A waiting
``take_grad`` gives up, as a waiting dequeue does, with
``DeadlineExceededError`` when the run's deadline passes and with
``CancelledError`` when the session closes or its step is aborted (TF keeps
a list of pending take attempts instead; a condition variable is the Python
idiom).

Mirrors ``tensorflow/core/kernels/conditional_accumulator_base.cc``,
``typed_conditional_accumulator_base.h``, ``conditional_accumulator.h`` and
``sparse_conditional_accumulator.h``.
"""

import threading

import numpy as np

from minitf.plugin import tf_logging as logging
from minitf_numpy_cpu.kernels.blocking import wait_until
from minitf_numpy_cpu.kernels.table import kernel

def _shape_text(dims):
    """A shape as TF prints it in accumulator errors: ``[2,?]``, ``<unknown>``."""
    if dims is None:
        return "<unknown>"
    return "[%s]" % ",".join("?" if d is None else str(d) for d in dims)


class ConditionalAccumulatorBase:
    """The counter, global step and waiting that both accumulators share.

    A subclass keeps the sum: it implements ``_validate(ctx, grad)``,
    ``_assign(grad)`` (the first gradient after a take), ``_add(grad)``,
    ``_mean()`` and ``_result()`` — TF's ``ValidateShape``,
    ``AllocateAndAssignToAccumGradFunction``, ``AddToAccumGradFunction``,
    ``DivideAccumGradByCounter`` and ``SetOutput``.

    Args:
        name: the accumulator's name (its ``shared_name``, or its op's name).
        dtype: the DType of the gradients.
        shape: the TensorShape gradients must be compatible with.
        reduction_type: ``"MEAN"`` or ``"SUM"``.
    """

    def __init__(self, name, dtype, shape, reduction_type):
        self.name = name
        self.np_dtype = dtype.as_numpy_dtype
        self.shape = shape
        self.reduction_type = reduction_type
        self.counter = 0
        self.global_step = 0
        self._cond = threading.Condition()
        self._shutdown = False

    def apply_grad(self, ctx, local_step, grad):
        """Adds ``grad`` unless it is stale (then it is dropped, even if malformed, as in TF).

        Raises:
            InvalidArgumentError: for a gradient whose shape does not fit.
        """
        with self._cond:
            if local_step < self.global_step:
                return
            self._validate(ctx, grad)
            if self.counter == 0:
                self._assign(grad)
            else:
                self._add(grad)
            self.counter += 1
            self._cond.notify_all()

    def take_grad(self, ctx, num_required):
        """Waits for ``num_required`` gradients, then returns their mean or sum and starts over.

        Raises:
            InvalidArgumentError: if ``num_required`` < 1.
            DeadlineExceededError, CancelledError: see the module docstring.
        """
        if num_required <= 0:
            raise ctx.invalid_argument("Argument num_required must be positive, but was %d"
                                       % num_required)
        with self._cond:
            self._wait_until(ctx, lambda: self.counter >= num_required)
            self.global_step += 1
            if self.reduction_type == "MEAN":
                self._mean()
            self.counter = 0
            return self._result()

    def num_accumulated(self):
        with self._cond:
            return self.counter

    def set_global_step(self, new_global_step):
        with self._cond:
            if new_global_step < self.global_step:
                logging.warning("Attempt to set current_global_step_ to smaller value: "
                                "current_global_step_ = %d >= %d = new_global_step.",
                                self.global_step, new_global_step)
            self.global_step = new_global_step

    def close_for_shutdown(self):
        """The session is closing: a waiting take raises ``CancelledError``."""
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()

    def _wait_until(self, ctx, ready):
        """Waits (holding ``self._cond``) until ``ready()`` (see :mod:`.blocking`)."""
        wait_until(ctx, self._cond, ready, lambda: self._shutdown, "TakeGrad")

class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients: one array, the sum."""

    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._sum = None

    def _validate(self, ctx, grad):
        """The gradient must have the shape of the sum (if any) and fit the declared shape."""
        if self.counter > 0 and grad.shape != self._sum.shape:
            raise ctx.invalid_argument("Shape mismatch: expected %s, got %s" % (
                _shape_text(self._sum.shape), _shape_text(grad.shape)))
        if not self.shape.is_compatible_with(grad.shape):
            raise ctx.invalid_argument("Shape mismatch: expected %s, got %s" % (
                _shape_text(self.shape.as_list() if self.shape.ndims is not None else None),
                _shape_text(grad.shape)))

    def _assign(self, grad):
        self._sum = np.array(grad, dtype=self.np_dtype)

    def _add(self, grad):
        self._sum = self._sum + grad  # a new array: a taken result is never changed

    def _mean(self):
        self._sum = (self._sum / self.counter).astype(self.np_dtype)

    def _result(self):
        return self._sum


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients ``(indices, values, shape)`` row by row.

    The sum is kept as sorted, unique ``indices``, their summed ``values``
    rows and ``counts``: how many gradients have contributed to each row.
    ``MEAN`` divides each row by its own count — a row that only some
    gradients touch is averaged over those, as TF does.

    TF merges sorted index lists and assumes each gradient's indices are
    sorted and unique; here a gradient's rows are first summed by index
    (the meaning of repeated indices in an IndexedSlices), counting that
    gradient once per index, so any order of indices gives the same result.
    """

    def __init__(self, name, dtype, shape, reduction_type):
        super().__init__(name, dtype, shape, reduction_type)
        self._dims = [] if shape.ndims is None else shape.as_list()
        self._indices = self._values = self._counts = None

    def _validate(self, ctx, grad):
        indices, values, dense_shape = grad
        if np.ndim(indices) != 1:
            raise ctx.invalid_argument("Input indices should be vector but received shape: %s"
                                       % _shape_text(np.shape(indices)))
        if np.ndim(values) == 0:
            raise ctx.invalid_argument("Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise ctx.invalid_argument("Expected %d non-empty input values, got %d"
                                       % (indices.shape[0], values.shape[0]))
        if dense_shape is not None:
            self._validate_dense_shape(ctx, dense_shape)
        self._validate_indices(ctx, indices)
        self._validate_values(ctx, values)

    def _validate_dense_shape(self, ctx, dense_shape):
        """The gradient's shape must match the declared one where that is known."""
        if len(self._dims) > len(dense_shape):
            raise ctx.invalid_argument("Shape mismatch: expected shape rank at least %d, got %d"
                                       % (len(self._dims), len(dense_shape)))
        for i, dim in enumerate(self._dims):
            if dim is not None and dim != dense_shape[i]:
                raise ctx.invalid_argument("Shape mismatch: expected shape dim %d to be %d, "
                                           "got %d" % (i, dim, dense_shape[i]))

    def _validate_indices(self, ctx, indices):
        """Rows must lie below the declared first dimension, when it is known."""
        if not self._dims or self._dims[0] is None:
            return
        for i, index in enumerate(indices):
            if index >= self._dims[0]:
                raise ctx.invalid_argument(
                    "Shape mismatch: index of slice %d exceeded limits of shape; index is %d "
                    "exceeded %d" % (i, index, self._dims[0]))

    def _validate_values(self, ctx, values):
        """Rows must have the shape of the summed rows, or else of the declared shape."""
        if self.counter > 0:
            expected = list(self._values.shape)
            if len(expected) != values.ndim:
                raise ctx.invalid_argument("Shape mismatch: expected values rank %d, got %d"
                                           % (len(expected), values.ndim))
        else:
            expected = self._dims
            if len(expected) > values.ndim:
                raise ctx.invalid_argument("Shape mismatch: expected values rank at least %d, "
                                           "got %d" % (len(expected), values.ndim))
        for i in range(1, len(expected)):
            if expected[i] is not None and expected[i] != values.shape[i]:
                raise ctx.invalid_argument("Shape mismatch: expected values dim %d to be %d, "
                                           "got %d" % (i, expected[i], values.shape[i]))

    def _assign(self, grad):
        indices, values, _ = grad
        self._indices, self._values = _sum_by_index(indices, values.astype(self.np_dtype))
        self._counts = np.ones(len(self._indices), np.int64)

    def _add(self, grad):
        indices, values, _ = grad
        indices, values = _sum_by_index(indices, values.astype(self.np_dtype))
        self._indices, self._values, self._counts = _sum_by_index(
            np.concatenate([self._indices, indices]), np.concatenate([self._values, values]),
            np.concatenate([self._counts, np.ones(len(indices), np.int64)]))

    def _mean(self):
        counts = self._counts.reshape((-1,) + (1,) * (self._values.ndim - 1))
        self._values = (self._values / counts).astype(self.np_dtype)

    def _result(self):
        """``(indices, values, shape)``: the shape's first dimension is the declared
        one (-1 when unknown), the others are those of the rows."""
        first = self._dims[0] if self._dims and self._dims[0] is not None else -1
        shape = np.array([first] + list(self._values.shape[1:]), np.int64)
        return self._indices, self._values, shape


def _sum_by_index(indices, *columns):
    """The sorted unique ``indices`` and, for each column (an array with a row per
    index), the sum of its rows per unique index."""
    unique, position = np.unique(np.asarray(indices, np.int64), return_inverse=True)
    sums = []
    for column in columns:
        total = np.zeros((len(unique),) + column.shape[1:], column.dtype)
        np.add.at(total, position.reshape(-1), column)
        sums.append(total)
    return (unique, *sums)


# ---- kernels -------------------------------------------------------------------------
def _accumulator(ctx, kind, shared_name, dtype, shape, reduction_type):
    """The accumulator of this op (or ``shared_name``), created on first use."""
    name = shared_name or ctx.op.name
    return ctx.resources.kernel_state(
        ("accumulator", kind.__name__, name), lambda: kind(name, dtype, shape, reduction_type))


@kernel("ResourceConditionalAccumulator")
def conditional_accumulator(ctx, dtype, shape, container, shared_name, reduction_type):
    return _accumulator(ctx, ConditionalAccumulator, shared_name, dtype, shape, reduction_type)


@kernel("SparseConditionalAccumulator")
def sparse_conditional_accumulator(ctx, dtype, shape, container, shared_name, reduction_type):
    return _accumulator(ctx, SparseConditionalAccumulator, shared_name, dtype, shape,
                        reduction_type)


@kernel("ResourceAccumulatorApplyGradient")
def accumulator_apply_gradient(ctx, accumulator, local_step, gradient, dtype):
    accumulator.apply_grad(ctx, int(local_step), np.asarray(gradient))


@kernel("SparseAccumulatorApplyGradient")
def sparse_accumulator_apply_gradient(ctx, accumulator, local_step, indices, values, shape,
                                      dtype, has_known_shape):
    grad = (np.asarray(indices), np.asarray(values), shape if has_known_shape else None)
    accumulator.apply_grad(ctx, int(local_step), grad)


@kernel("ResourceAccumulatorTakeGradient", "SparseAccumulatorTakeGradient")
def accumulator_take_gradient(ctx, accumulator, num_required, dtype):
    return accumulator.take_grad(ctx, int(num_required))


@kernel("ResourceAccumulatorNumAccumulated", "AccumulatorNumAccumulated")
def accumulator_num_accumulated(ctx, accumulator):
    return np.int32(accumulator.num_accumulated())


@kernel("ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep")
def accumulator_set_global_step(ctx, accumulator, new_global_step):
    accumulator.set_global_step(int(new_global_step))
