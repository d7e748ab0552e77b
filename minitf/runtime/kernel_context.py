"""What a kernel sees besides its inputs: ``ctx`` in ``kernel(ctx, *inputs, **attrs)``.

A context is built once per op when a plan is built (not per step), so a kernel
call costs one extra argument.  It gives the kernel its op (name, attrs,
output dtypes for error messages), its device, and the device's
:class:`~minitf.runtime.resources.ResourceManager` for state that lives across
steps: variables and random generators.

Mirrors TF's ``OpKernelConstruction``/``OpKernelContext`` (merged: minitf has
no separate construction phase).
"""

import threading
import time

import numpy as np

from minitf.framework import errors

# The per-step state of the thread running a partition (TF's ExecutorState):
# a plan is shared by all steps, so what differs per step lives here.
_step = threading.local()


class Cancellation:
    """A flag that stops the steps of a session when it closes.

    ``Session.close()`` from another thread calls :meth:`cancel`; the
    executors running a step of that session check :attr:`cancelled` between
    ops and raise :meth:`error` (TF's ``CancellationManager`` of a
    ``DirectSession``, cancelled by ``Session::Close``).

    Every cancellation an executor is given has these two members; the
    other one is :class:`StepAborted`, whose error says *why* the step was
    aborted.
    """

    __slots__ = ("cancelled",)

    def __init__(self):
        self.cancelled = False

    def cancel(self):
        self.cancelled = True

    @staticmethod
    def error():
        """The error of a step stopped by this cancellation: its session closed."""
        return session_closed_error()


class StepAborted:
    """The cancellation of a worker's steps: set for the step the current
    thread runs once that step's rendezvous is aborted.

    A rendezvous is aborted with the error that stopped the step: a
    partition that failed elsewhere (its kernel's error), the session that
    closed (``CancelledError``), a deadline, a clean-up.  :meth:`error`
    turns it into the error of *this* partition, so the message tells what
    happened instead of always blaming ``Session::Close``.
    """

    __slots__ = ()

    @property
    def cancelled(self):
        rendezvous = step_rendezvous()
        return rendezvous is not None and rendezvous.aborted

    @staticmethod
    def error():
        """The error of a partition whose step was aborted (see :func:`aborted_step_error`)."""
        rendezvous = step_rendezvous()
        return aborted_step_error(None if rendezvous is None else rendezvous.abort_error)


def aborted_step_error(reason):
    """The error a partition raises when its step was aborted because of ``reason``.

    A ``CancelledError`` (the session closed, the worker shuts down), a
    ``DeadlineExceededError`` or an ``AbortedError`` (the step was cleaned up)
    describes itself: the partition raises the same kind with the same
    message.  Any other error failed another partition: this one is
    cancelled, and says so, naming that error (TF's executors are cancelled
    with the first partition's status; minitf says which it was).
    """
    if reason is None:
        return errors.CancelledError(None, None, "Step was cancelled")
    if isinstance(reason, (errors.CancelledError, errors.DeadlineExceededError,
                           errors.AbortedError)):
        return type(reason)(None, None, reason.message)
    return errors.CancelledError(
        None, None, "Step was cancelled because another partition of the step failed: "
        "%s: %s" % (type(reason).__name__, getattr(reason, "message", reason)))


def set_step_state(rendezvous=None, deadline=None, cancellation=None):
    """Installs the current thread's step state: its rendezvous, the
    ``time.monotonic()`` deadline of the step (None: no deadline), and the
    :class:`Cancellation` of its session (None: none).

    Returns the state it replaced, ``(rendezvous, deadline, cancellation)``:
    the caller puts it back when its step ends (``set_step_state(*saved)``),
    so that a step run *inside* a kernel of another step — a ``tf.py_func``
    calling ``sess.run`` — leaves the outer step's state as it found it.
    """
    saved = (getattr(_step, "rendezvous", None), getattr(_step, "deadline", None),
             getattr(_step, "cancellation", None))
    _step.rendezvous = rendezvous
    _step.deadline = deadline
    _step.cancellation = cancellation
    return saved


def set_step_deadline(deadline, cancellation=None):
    """Installs the deadline and cancellation of the current thread's step
    (None: none), keeping its rendezvous.

    Returns the pair it replaced, ``(deadline, cancellation)``, to put back
    with ``set_step_deadline(*saved)`` when the step ends: the state nests
    like the steps do (see :func:`set_step_state`).
    """
    saved = getattr(_step, "deadline", None), getattr(_step, "cancellation", None)
    _step.deadline = deadline
    _step.cancellation = cancellation
    return saved


def check_step():
    """Raises if the current thread's step must stop: its deadline passed
    (``DeadlineExceededError``), or its session closed or step was aborted
    (the cancellation's :meth:`~Cancellation.error`: ``CancelledError``
    saying why).

    The executors call it between ops and at every loop iteration, so that a
    step that *computes* past its ``RunOptions(timeout_in_ms=...)`` stops
    about on time, as TF's executor does, and not only one blocked in a kernel.
    """
    deadline = getattr(_step, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise errors.DeadlineExceededError(None, None, "Timed out waiting for notification")
    cancellation = getattr(_step, "cancellation", None)
    if cancellation is not None and cancellation.cancelled:
        raise cancellation.error()


def session_closed_error():
    """The ``CancelledError`` of a step whose session was closed while it ran."""
    return errors.CancelledError(
        None, None, "Step was cancelled by an explicit call to `Session::Close()`.")


def set_frame_iter(frame_id, iteration):
    """Installs the control-flow frame and iteration of the kernel about to run
    (see :mod:`~minitf.runtime.executors.control_flow`): a ``_Send``/``_Recv``
    inside a loop keys its rendezvous by them."""
    _step.frame_iter = (frame_id, iteration)


def step_deadline():
    return getattr(_step, "deadline", None)


def step_rendezvous():
    """The rendezvous installed for the current thread's step (None: none)."""
    return getattr(_step, "rendezvous", None)


class KernelContext:
    """The context of one op's kernel on one device.

    Attributes:
        op: the :class:`~minitf.framework.operation.Operation`.
        device: the :class:`~minitf.registry.device.Device` it runs on.
        resources: that device's per-session ResourceManager.
        forward_input: True when the kernel may write its output into the
            buffer of the input it declared forwardable (see :meth:`forwarding`).
    """

    __slots__ = ("op", "device", "resources", "output_dtypes", "forward_input")

    def __init__(self, op, device, resources):
        self.op = op
        self.device = device
        self.resources = resources
        self.output_dtypes = [t.dtype.base_dtype.as_numpy_dtype for t in op.outputs]
        self.forward_input = False

    def forwarding(self):
        """A copy of this context with :attr:`forward_input` set.

        A kernel function with a ``forwardable_input`` attribute (an input
        index) may compute its output in that input's buffer instead of a new
        one, when the step passes it this context: it does so for a call where
        the input's value is read by no later op and held by nothing else (TF's
        ``forward_input_or_allocate_output``; see
        :mod:`~minitf.runtime.executors.generated`).  Two contexts, rather
        than a flag set per call, keep concurrent steps apart.
        """
        ctx = KernelContext(self.op, self.device, self.resources)
        ctx.forward_input = True
        return ctx

    @property
    def name(self):
        return self.op.name

    def variable(self, name=None):
        """The Ref of a variable (default: the one this op names)."""
        return self.resources.variable(name or self.op.get_attr("shared_name") or self.op.name)

    def random_generator(self):
        """This op's NumPy generator, seeded by its ``seed``/``seed2`` attrs.

        The generator lives as long as the session, so successive runs draw
        new numbers while the same program always draws the same sequence
        (TF1's ``tf.set_random_seed`` contract).  Without seeds it is seeded
        from the operating system.
        """
        def make():
            seed, seed2 = self.op.get_attr("seed"), self.op.get_attr("seed2")
            if seed == 0 and seed2 == 0:
                return np.random.default_rng()
            return np.random.default_rng([seed, seed2])
        return self.resources.kernel_state(("rng", self.op.name), make)

    @property
    def rendezvous(self):
        """The rendezvous of the step this thread is running (for Send/Recv)."""
        return getattr(_step, "rendezvous", None)

    @property
    def frame_iter(self):
        """``(frame_id, iteration)`` of the running kernel; ``(0, 0)`` outside loops."""
        return getattr(_step, "frame_iter", (0, 0))

    @property
    def step_timeout(self):
        """Seconds a blocking kernel may still wait in this step (None: no limit).

        Set by ``RunOptions(timeout_in_ms=...)``; a blocking kernel that runs
        out of time raises ``DeadlineExceededError``.
        """
        deadline = getattr(_step, "deadline", None)
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    @property
    def cancelled(self):
        """Whether this kernel's step was aborted: another partition failed, or
        the master that ran it went away.  A kernel that waits (a queue's
        dequeue) checks it and gives up with ``CancelledError``, so an aborted
        step leaves no kernel behind (TF's ``CancellationManager::IsCancelled``).
        """
        cancellation = getattr(_step, "cancellation", None)
        if cancellation is not None and cancellation.cancelled:
            return True
        rendezvous = getattr(_step, "rendezvous", None)
        return rendezvous is not None and rendezvous.aborted

    def error(self, error_class, message):
        """An ``error_class`` (an ``OpError`` subclass) about this op."""
        return error_class(self.op.node_def, self.op, message)

    def invalid_argument(self, message):
        return self.error(errors.InvalidArgumentError, message)
