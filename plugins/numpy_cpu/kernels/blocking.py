"""Waiting inside a kernel: how a blocking op (a dequeue, a ``take_grad``) gives up.

A kernel that waits for another step's work (an element enqueued, a gradient
applied) holds a :class:`threading.Condition` and must still wake up when

* its run's deadline passes (``RunOptions(timeout_in_ms=...)``):
  ``DeadlineExceededError``, as TF's message says it;
* the session closes (the resource is shut down) or its step is aborted (a
  client gone, another partition failed): ``CancelledError``.

A notify wakes it for the first; the others are checked every
:data:`CANCEL_POLL` seconds.
"""

import time

from minitf.plugin import errors

#: Seconds between two checks for a closed session or an aborted step.
CANCEL_POLL = 0.1


def wait_until(ctx, condition, ready, shut_down, what):
    """Waits on ``condition`` (held by the caller) until ``ready()``.

    A shut-down resource or an aborted step raises even when ``ready()``.

    Args:
        ctx: the kernel's context (its step's deadline and cancellation).
        condition: the :class:`threading.Condition` the state changes notify.
        ready: returns True when the kernel can go on.
        shut_down: returns True once the resource is closed for good.
        what: the operation, for messages (``"Dequeue"``, ``"TakeGrad"``).

    Raises:
        errors.CancelledError: if the resource is shut down or the step aborted.
        errors.DeadlineExceededError: if the run's deadline passes first.
    """
    timeout = ctx.step_timeout
    deadline = None if timeout is None else time.monotonic() + timeout
    # Cancellation is checked before readiness: a kernel of an aborted step
    # woken by the element it waited for must not take it.
    while True:
        if shut_down():
            raise ctx.error(errors.CancelledError, "%s operation was cancelled" % what)
        if ctx.cancelled:
            raise ctx.error(errors.CancelledError, "%s operation was cancelled: its step "
                            "was aborted" % what)
        if ready():
            return
        if deadline is None:
            condition.wait(CANCEL_POLL)
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ctx.error(errors.DeadlineExceededError, "Timed out waiting for notification")
        condition.wait(min(remaining, CANCEL_POLL))
