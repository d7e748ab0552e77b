"""Rewrite passes: the step graph is improved before it is placed (Grappler in miniature).

The master (:func:`~minitf.runtime.master.plan_step`) copies the ops a step
needs into a step graph and hands it to each pass of :data:`PASSES` in turn.
A pass is a function ``rewrite(step, context) -> step`` in a module of its
own; it may add, rewire or orphan ops of the step graph (never of the user's
graph), but must not change what the step computes, touch ops with side
effects, or change what is fed and fetched.  After each pass the step is
pruned and scheduled anew, so an op a pass made unnecessary does not run.

Each pass has a switch in the session's
``ConfigProto(graph_options=GraphOptions(rewrite_options=RewriterConfig(...)))``
with TF's field name; a pass switched ``OFF`` is skipped.  What ran, and the
step's op count before and after each pass, is kept in the context's
``applied`` list (:class:`AppliedPass`).

To add a pass: write ``passes/my_pass.py`` with one public function, test it
against the unrewritten step, and add it with its switch to :data:`PASSES`.
"""

import dataclasses

from minitf.runtime.passes.arithmetic_optimizer import simplify_arithmetic
from minitf.runtime.passes.common_subgraph_elimination import eliminate_common_subgraphs
from minitf.runtime.passes.constant_folding import fold_constants
from minitf.runtime.passes.dead_branch_removal import remove_dead_branches
from minitf.runtime.passes.dependency_optimizer import bypass_noops
from minitf.runtime.passes.model_pruner import prune_identities


@dataclasses.dataclass(frozen=True)
class PassContext:
    """What a pass may use besides the step graph.

    Attributes:
        registry: the kernel registry.
        host_device: an in-process CPU device to evaluate ops on (None: none).
        config: the session's ConfigProto.
        applied: :func:`run_passes` appends an :class:`AppliedPass` per pass run.
    """

    registry: object
    host_device: object
    config: object
    applied: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class AppliedPass:
    """One pass run over a step: its switch and the step's op count before and after."""

    name: str
    ops_before: int
    ops_after: int

    def __str__(self):
        return "%s: %d -> %d ops" % (self.name, self.ops_before, self.ops_after)


# The passes, in the order they run, each with its RewriterConfig switch.
PASSES = (
    ("model_pruning", prune_identities),
    ("constant_folding", fold_constants),
    ("loop_optimization", remove_dead_branches),
    ("common_subgraph_elimination", eliminate_common_subgraphs),
    ("arithmetic_optimization", simplify_arithmetic),
    ("dependency_optimization", bypass_noops),
)


def run_passes(step, context):
    """Runs the passes of :data:`PASSES` switched on in ``context.config``; returns the
    rewritten step."""
    switches = context.config.graph_options.rewrite_options
    for switch, rewrite in PASSES:
        if switches.enabled(switch):
            before = len(step.ops)
            step = rewrite(step, context).rescheduled()
            context.applied.append(AppliedPass(switch, before, len(step.ops)))
    return step
