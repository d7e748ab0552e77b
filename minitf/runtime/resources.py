"""Per-session state that outlives a step: variable storage and kernel state.

In TF1 a variable's value is not in the graph: the ``VariableV2`` kernel looks
up a buffer in the device's ``ResourceMgr`` by the variable's name, and
``Assign`` writes through the *reference* it outputs.  Here a reference is a
:class:`Ref`; consumers that want a value call :meth:`Ref.get`, which raises
``FailedPreconditionError`` for a variable never initialized.

Values stored here are never mutated in place by the generic assign kernels
(an assignment stores a new array), so an array fetched by the user can never
change under their feet.
"""

import threading

from minitf.framework import errors


class Ref:
    """A reference to a mutable value: the runtime value of a ``*_ref`` tensor.

    Attributes:
        name: the variable's name (for error messages).
        value: the current array, or None while uninitialized.
    """

    __slots__ = ("name", "value")

    def __init__(self, name, value=None):
        self.name = name
        self.value = value

    def get(self):
        """The current value.  Raises ``FailedPreconditionError`` if uninitialized."""
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, "Attempting to use uninitialized value %s" % self.name)
        return value

    def is_initialized(self):
        return self.value is not None

    def __repr__(self):
        return "<Ref %s %s>" % (self.name, "uninitialized" if self.value is None else
                                "shape=%s" % (getattr(self.value, "shape", ()),))


class FedRef(Ref):
    """The value fed for a reference tensor: readable, not assignable."""

    __slots__ = ()


class ResourceManager:
    """The named state of one device in one session (TF's ``ResourceMgr``)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._variables = {}
        self._kernel_state = {}

    def variable(self, name):
        """The :class:`Ref` of variable ``name``, created uninitialized on first use."""
        ref = self._variables.get(name)
        if ref is None:
            with self._lock:
                ref = self._variables.setdefault(name, Ref(name))
        return ref

    def variables(self):
        return dict(self._variables)

    def kernel_state(self, key, factory):
        """State a stateful kernel keeps across steps (e.g. a random generator)."""
        state = self._kernel_state.get(key)
        if state is None:
            with self._lock:
                state = self._kernel_state.setdefault(key, factory())
        return state

    def clear(self):
        """Forgets all state; stateful objects with a ``close()`` (queues,
        iterators) are closed first, so kernels blocked on them wake up."""
        for state in list(self._kernel_state.values()):
            close = getattr(state, "close_for_shutdown", None)
            if close is not None:
                close()
        self._variables.clear()
        self._kernel_state.clear()
