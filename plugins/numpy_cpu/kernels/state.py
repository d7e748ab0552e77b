"""CPU kernels of the variable ops.

``VariableV2`` outputs the variable's :class:`~minitf.runtime.resources.Ref`;
assignments store a *new* array in it (never writing into the old one), so a
value the user already fetched can never change.
"""

import threading

import numpy as np

from minitf.plugin import errors
from minitf_numpy_cpu.kernels.table import kernel


@kernel("VariableV2")
def variable(ctx, shape, dtype, shared_name):
    return ctx.variable(shared_name or ctx.op.name)


@kernel("Assign")
def assign(ctx, ref, value, validate_shape, use_locking):
    if validate_shape:
        # An uninitialized variable already has its declared shape (TF allocates it).
        static = ctx.op.inputs[0].shape
        lhs = (ref.value.shape if ref.value is not None else
               tuple(static.as_list()) if static.is_fully_defined() else None)
        if lhs is not None and lhs != np.shape(value):
            raise ctx.invalid_argument(
                "Assign requires shapes of both tensors to match. lhs shape= %s rhs shape= %s"
                % (list(lhs), list(np.shape(value))))
    ref.value = np.array(value, dtype=ctx.output_dtypes[0], copy=True)
    return ref


@kernel("AssignAdd")
def assign_add(ctx, ref, value, use_locking):
    ref.value = np.add(ref.get(), value, dtype=ref.value.dtype)
    return ref


@kernel("AssignSub")
def assign_sub(ctx, ref, value, use_locking):
    ref.value = np.subtract(ref.get(), value, dtype=ref.value.dtype)
    return ref


_COUNT_UP_TO_LOCK = threading.Lock()  # read-compare-write as one step across threads


@kernel("CountUpTo")
def count_up_to(ctx, ref, limit):
    with _COUNT_UP_TO_LOCK:
        before = ref.get()
        if before >= limit:
            raise ctx.error(errors.OutOfRangeError, "Reached limit of %d" % limit)
        ref.value = np.array(before + 1, dtype=before.dtype)
    return np.array(before, copy=True)


@kernel("IsVariableInitialized")
def is_variable_initialized(ctx, ref):
    return np.bool_(ref.is_initialized())
