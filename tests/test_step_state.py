"""The per-thread step state: why a step stopped, and steps nested in kernels.

* A partition stopped because its step was aborted says why: the session
  closed (``Session::Close``), the deadline passed, or *another partition
  failed* — naming that partition's error — instead of always blaming
  ``Session::Close`` (:class:`~minitf.runtime.kernel_context.StepAborted`).
* A step run inside a kernel of another step (a ``tf.py_func`` calling
  ``sess.run(..., options=...)``) puts back the outer step's deadline when
  it ends: the outer step still stops at *its* deadline.
"""

import time

import numpy as np
import pytest

import minitf as tf
from minitf.framework import errors
from minitf.runtime import kernel_context
from minitf.runtime.kernel_context import (Cancellation, StepAborted, check_step,
                                           set_step_deadline, set_step_state, step_deadline)
from minitf.runtime.rendezvous import Rendezvous

pytestmark = pytest.mark.timeout(120)


def _check_with_aborted_rendezvous(reason):
    """``check_step`` in a worker's partition whose step's rendezvous was aborted with ``reason``."""
    rendezvous = Rendezvous()
    rendezvous.start_abort(reason)
    saved = set_step_state(rendezvous, None, StepAborted())
    try:
        with pytest.raises(errors.OpError) as raised:
            check_step()
    finally:
        set_step_state(*saved)
    return raised.value


def test_a_partition_aborted_because_another_failed_says_so():
    error = _check_with_aborted_rendezvous(
        errors.InvalidArgumentError(None, None, "Incompatible shapes: [3] vs. [4]"))
    assert type(error) is errors.CancelledError
    assert "another partition of the step failed" in error.message
    assert "InvalidArgumentError: Incompatible shapes: [3] vs. [4]" in error.message
    assert "Session::Close" not in error.message


def test_a_partition_aborted_by_close_blames_close():
    error = _check_with_aborted_rendezvous(kernel_context.session_closed_error())
    assert type(error) is errors.CancelledError
    assert "Session::Close" in error.message


@pytest.mark.parametrize("reason_class", [errors.DeadlineExceededError, errors.AbortedError])
def test_a_partition_aborted_by_a_deadline_or_clean_up_keeps_that_reason(reason_class):
    error = _check_with_aborted_rendezvous(reason_class(None, None, "Timed out in step 7"))
    assert type(error) is reason_class
    assert error.message == "Timed out in step 7"


def test_a_partition_whose_step_is_not_aborted_goes_on():
    saved = set_step_state(Rendezvous(), None, StepAborted())
    try:
        check_step()  # raises nothing
    finally:
        set_step_state(*saved)


def test_a_closed_session_and_a_passed_deadline_have_their_own_errors():
    closed = Cancellation()
    closed.cancel()
    saved = set_step_deadline(None, closed)
    try:
        with pytest.raises(errors.CancelledError, match="Session::Close"):
            check_step()
        set_step_deadline(time.monotonic() - 1.0, closed)
        with pytest.raises(errors.DeadlineExceededError):
            check_step()
    finally:
        set_step_deadline(*saved)


def test_the_step_state_nests_and_is_restored():
    outer, inner = Cancellation(), Cancellation()
    saved = set_step_deadline(100.0, outer)
    try:
        nested = set_step_deadline(5.0, inner)
        assert step_deadline() == 5.0
        set_step_deadline(*nested)
        assert step_deadline() == 100.0
        assert kernel_context._step.cancellation is outer
    finally:
        set_step_deadline(*saved)
    assert step_deadline() is None


def test_a_nested_run_with_options_keeps_the_outer_steps_deadline():
    """A py_func runs ``sess.run(..., options=...)`` first; the outer step's
    200,000-iteration loop must still stop at the outer 0.5 s deadline."""
    inner = tf.constant(2.0) * 3.0
    sess = tf.Session()
    inner_results = []

    def run_inner(x):
        inner_results.append(sess.run(inner, options=tf.RunOptions(timeout_in_ms=60000)))
        return x

    n = tf.placeholder(tf.int32, [], name="n")
    start = tf.py_func(run_inner, [n], tf.int32, stateful=True)
    start.set_shape([])
    _, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + 1.0),
                             [start * 0, tf.constant(0.0)])
    with sess:
        assert sess.run(total, {n: 5}) == 5.0
        began = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(total, {n: 200000}, options=tf.RunOptions(timeout_in_ms=500))
        assert time.monotonic() - began < 3.0
        assert inner_results == [6.0, 6.0]
        np.testing.assert_equal(sess.run(total, {n: 3}), 3.0)
