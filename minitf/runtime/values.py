"""The values a step hands around besides plain arrays.

* :data:`DEAD` — the value of a *dead* tensor: the untaken output of a
  ``Switch`` (``tf.cond``'s other branch, a finished loop's body).  The
  control-flow executor propagates it, a ``_Send`` ships it across devices, a
  device process reports it as ``is_dead`` (TF's ``RecvTensor`` does the same).
* The fetched values a caller receives: :func:`own`, :func:`as_scalar` and
  :func:`unshared` decide when a value must be copied so that the caller may
  write into it without touching a variable, a constant or shared memory.

Kept in a module of their own so that executors, workers and kernels can all
use them without importing each other.
"""

import sys

import numpy as np


class _Dead:
    """The value of a dead tensor (the untaken output of a Switch)."""

    def __repr__(self):
        return "<dead>"


DEAD = _Dead()


def own(value):
    """A fetched value as the caller's own (a constant, a variable's buffer, shared memory).

    A device buffer is returned as is: its device's ``to_host`` copies it out.
    """
    if type(value) is not np.ndarray:
        return value
    return value[()] if value.ndim == 0 else value.copy()


def as_scalar(value):
    """A 0-d array as a NumPy scalar, as ``Session.run`` returns it in TF."""
    return value[()] if type(value) is np.ndarray and value.ndim == 0 else value


def _fetch_refcount():
    """``sys.getrefcount`` seen by :func:`unshared` for an array that only the
    calling step's one local name holds (measured: it differs between Pythons)."""
    def probe(value):
        return sys.getrefcount(value)
    value = np.zeros(1)
    return probe(value)


_FETCH_REFCOUNT = _fetch_refcount()


def unshared(value):
    """A fetched array the caller may mutate without touching session state.

    A kernel may return a view (``Reshape``, ``StridedSlice``) or the very
    buffer of a variable (``Identity`` of a read): writing into the fetched
    array would then change the variable.  Such an array, a view or one that
    something besides the step still holds, is copied, as TF hands out a
    buffer only when it is the sole owner.  A 0-d array becomes a NumPy scalar.
    """
    if type(value) is not np.ndarray:
        return value
    if value.ndim == 0:
        return value[()]
    if value.base is not None or sys.getrefcount(value) > _FETCH_REFCOUNT:  # a view, or shared
        return value.copy()
    return value
