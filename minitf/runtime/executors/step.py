"""One step protocol, one place that chooses the executor.

Whatever runs a plan, a *step* is called the same way::

    values = step(feeds, *, deadline=None, trace=None)

* ``feeds`` — a mapping whose values are the fed values, in the order of the
  plan's feeds (a ``feed_dict``, or a worker's ``{tensor name: array}``);
* ``deadline`` — a ``time.monotonic()`` time after which blocking kernels
  give up with ``DeadlineExceededError`` (``RunOptions.timeout_in_ms``);
* ``trace`` — a dict receiving ``(op, start, end)`` records per device name,
  when the step was made ``traced`` (``RunOptions(trace_level=FULL_TRACE)``);
* the result — the fetched values as a tuple, in the plan's fetch order.

:func:`make_step` is the only place that picks an executor for a plan; the
session (for a step on one device) and the worker service (for each
partition) both call it.  The multi-device step
(:mod:`~minitf.runtime.executors.multi_device`) follows the same protocol.
"""

from minitf.runtime.executors.control_flow import (ControlFlowStep, has_control_flow,
                                                   has_loop_recvs)
from minitf.runtime.executors.generated import compile_plan
from minitf.runtime.executors.interpreter import InterpreterStep
from minitf.runtime.executors.parallel import ParallelStep

INTERPRETER = "INTERPRETER"


def make_step(plan, config, traced=False, thread_pool=None, cancellation=None):
    """Returns the step running ``plan``, chosen by its ops and ``config``.

    * a plan with control flow (``tf.cond``, ``tf.while_loop``) needs frames
      and dead values: the control-flow executor;
    * with ``inter_op_parallelism_threads > 1``: the parallel executor;
    * with ``experimental.executor_type == "INTERPRETER"``: the reference interpreter;
    * otherwise the fastest: the generated straight-line step — or, where the
      plan's one device compiles partitions itself, what it makes of it
      (:func:`device_compiled`).

    Args:
        plan: an ExecutorPlan.
        config: the ConfigProto.
        traced: whether the step records op timings when passed a ``trace``.
        thread_pool: ``thread_pool()`` -> a ``concurrent.futures`` executor for
            the kernels of parallel steps (None: no threads).
        cancellation: the session's
            :class:`~minitf.runtime.kernel_context.Cancellation`, which
            ``close()`` sets to stop a running step (None: none).

    Every executor checks the step's deadline and cancellation between ops
    (and at every loop iteration), so a step that computes past its deadline
    raises ``DeadlineExceededError`` about on time.
    """
    ops = [node.op for node in plan.nodes]
    parallel = thread_pool is not None and config.inter_op_parallelism_threads > 1
    if has_control_flow(ops):
        use_pool = thread_pool is not None and (parallel or has_loop_recvs(ops))
        return ControlFlowStep(plan, thread_pool() if use_pool else None, cancellation)
    if parallel:
        return ParallelStep(plan, thread_pool(), cancellation)
    if config.experimental.executor_type == INTERPRETER:
        return InterpreterStep(plan, cancellation)

    def compile_step(a_plan):
        return compile_plan(a_plan, traced=traced, cancellation=cancellation)
    compiled = None if traced else device_compiled(plan, compile_step)
    return compiled or compile_step(plan)


def device_compiled(plan, compile_step):
    """The device's own compiled form of a one-device ``plan``, or None.

    A device may offer ``compile_partition(plan, compile_step)``: it returns
    a step of the same protocol that runs the partition its own way — the
    OpenCL device replays prepared kernel launches — or None to keep the
    generated step.  ``compile_step(plan)`` makes a generated step, for the
    device to fall back on or to run while it prepares.  The core only asks;
    it never knows how a device compiles.
    """
    devices = {node.ctx.device for node in plan.nodes}
    if len(devices) != 1:
        return None
    compile_partition = getattr(devices.pop(), "compile_partition", None)
    return None if compile_partition is None else compile_partition(plan, compile_step)
