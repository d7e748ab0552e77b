"""Rewrite passes: the step graph is improved before it is placed (Grappler in miniature).

The master (:func:`~minitf.runtime.master.plan_step`) copies the ops a step
needs into a step graph and hands it to each pass of :data:`PASSES` in turn.
A pass is a function ``rewrite(step, context) -> step`` in a module of its
own; it may add, rewire or orphan ops of the step graph (never of the user's
graph), but must not change what the step computes, touch ops with side
effects, or change what is fed and fetched.  After each pass the step is
pruned and scheduled anew, so an op a pass made unnecessary does not run.

To add a pass: write ``passes/my_pass.py`` with one public function, test it
against the unrewritten step, and add it to :data:`PASSES`.
"""

import dataclasses

from minitf.runtime.passes.constant_folding import fold_constants
from minitf.runtime.passes.dependency_optimizer import bypass_noops


@dataclasses.dataclass(frozen=True)
class PassContext:
    """What a pass may use besides the step graph.

    Attributes:
        registry: the kernel registry.
        host_device: an in-process CPU device to evaluate ops on (None: none).
        config: the session's ConfigProto.
    """

    registry: object
    host_device: object
    config: object


# The passes, in the order they run.
PASSES = (fold_constants, bypass_noops)


def run_passes(step, context):
    """Runs every pass of :data:`PASSES` over ``step``; returns the rewritten step."""
    for rewrite in PASSES:
        step = rewrite(step, context).rescheduled()
    return step
