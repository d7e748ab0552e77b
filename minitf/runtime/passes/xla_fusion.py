"""Elementwise fusion: clusters of elementwise ops become one generated kernel (XLA in miniature).

On an accelerator each op of a step is a kernel launch that reads its inputs
from device memory and writes its result back.  A chain of elementwise ops
— a bias add, an activation, its gradient — moves every intermediate value
through memory although each element depends only on the same element of
the inputs.  Computed in one kernel, each element is loaded once, every op
of the chain is applied in registers, and only the values read outside the
chain are stored (TF's XLA auto-clustering, ``mark_for_compilation_pass``)::

    before: 3 kernels, 2 intermediates in memory     after: 1 kernel
    x ─┐                                              x ─┐
    b ─┴─ Add ── Relu ── Mul ── y                     b ─┼─ cluster_0 (_FusedElementwise) ── y
                  s ───────┘                          s ─┘

The pass runs after placement, because fusing is the device's business: the
core never writes a kernel, it asks the device each op is placed on whether
the op may join a fused kernel (:meth:`~minitf.registry.device.Device.can_fuse`;
the OpenCL backend answers yes for the ops it has an expression template of),
and describes each cluster by a small program over its inputs
(:mod:`minitf.ops.xla_ops`).  The device's plugin generates and compiles the
kernel, once per cluster signature.

**Which ops.**  An op is a candidate when its device can fuse it, it has no
effects (not stateful), no control inputs, nothing waits on it by a control
edge, it is not a target, and it sits in no ``cond``/``while_loop`` context.
With ``OptimizerOptions.global_jit_level`` ``ON_1``/``ON_2`` every candidate
may be fused; otherwise only those made inside
``tf.xla.experimental.jit_scope()`` (attr ``_XlaCompile=True``).  An op made
with ``jit_scope(compile_ops=False)`` never is, and ops of two different
jit scopes (attr ``_XlaScope``) are not fused together.

**Which clusters.**  Ops are visited producers first; each joins the
clusters of its fusable producers on the same device, merged into one,
unless that would close a cycle — when another input of the op depends on
a cluster through an op outside it, or a path links two of them, the fused
op would have to run both before and after that op.  A reduction
(:data:`ROOTS`) ends its cluster: nothing joins it afterwards.  Clusters of
one op stay as they are.  A value of a cluster read outside it,
or fetched, becomes an output of the fused op; a fed value is an argument of
the step, so it is never inside a cluster.

``RunMetadata`` of a traced run shows the effect: the step stats list one
``_FusedElementwise`` op where the ops it replaced were.
"""

import itertools

#: Ops that may end a cluster but not continue it: the reductions (XLA's
#: reduce fusion).  A reduction joins the cluster of its input, and no op
#: joins that cluster after it (its result has another shape).
ROOTS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "BiasAddGrad", "L2Loss"})

from minitf.ops import xla_ops
from minitf.runtime.passes import AppliedPass
from minitf.runtime.passes.rewiring import control_consumers


def fuse_elementwise(step, placement, context):
    """Returns ``(step, placement)`` with each cluster replaced by a ``_FusedElementwise`` op.

    Args:
        step: a placed :class:`~minitf.runtime.planning.step_graph.StepGraph`.
        placement: each op of ``step`` -> its Device.
        context: the :class:`~minitf.runtime.passes.PassContext` (its config
            holds the jit level; the pass records itself in ``applied``).
    """
    global_jit = context.config.graph_options.global_jit
    waiting = control_consumers(step)
    candidates = {op for op in step.ops
                  if _is_candidate(op, placement[op], step, waiting, global_jit)}
    if len(candidates) < 2:
        return step, placement
    before = len(step.ops)
    names = itertools.count()
    for members in _clusters(step.ops, candidates, placement):
        device = placement[members[0]]
        step, fused = _replace_cluster(step, members, "cluster_%d" % next(names), device)
        placement[fused] = device
    step = step.rescheduled()
    placement = {op: placement[op] for op in step.ops}
    context.applied.append(AppliedPass("xla_fusion", before, len(step.ops)))
    return step, placement


def _is_candidate(op, device, step, waiting, global_jit):
    """Whether ``op`` may be fused at all (the module docstring's rules)."""
    marked = op._attrs.get("_XlaCompile")
    if marked is False or (marked is None and not global_jit):
        return False
    if op.op_def.stateful or op.control_inputs or op in waiting or op in step.targets:
        return False
    if op._control_flow_context is not None or len(op.outputs) != 1:
        return False
    if any(t.dtype.is_ref for t in op.inputs):
        return False
    can_fuse = getattr(device, "can_fuse", None)
    return can_fuse is not None and bool(can_fuse(op))


def _clusters(ops, candidates, placement):
    """The clusters of two ops or more, each a list of ops in a topological order.

    An op joins the clusters of its fusable producers — all of them where no
    path links two of them, so the ``Greater``, ``Mul`` and ``Sub`` feeding one
    ``Select`` end in one cluster with it (clusters are merged, as XLA's
    clustering contracts edges).
    """
    order = {op: i for i, op in enumerate(ops)}
    clusters = _Clusters()
    upstream = {}     # op -> the clusters its (transitive) producers belong to
    for op in ops:
        producers = [t.op for t in op.inputs] + list(op.control_inputs)
        above = set()
        for producer in producers:
            above |= clusters.roots(upstream.get(producer, ()))
            if producer in clusters.of:
                above.add(clusters.root_of(producer))
        upstream[op] = frozenset(above)
        if op in candidates:
            joined = _clusters_to_join(op, producers, clusters, upstream, placement)
            clusters.add(op, joined, closes=op.type in ROOTS)
    return [sorted(members, key=order.get) for members in clusters.groups() if len(members) >= 2]


class _Clusters:
    """Clusters being built, as a union-find: merged clusters share one root number."""

    def __init__(self):
        self.of = {}        # op -> its cluster number when it joined
        self.parent = []    # cluster number -> the number it was merged into (itself: a root)
        self.members = []   # root number -> its ops
        self.closed = set()  # root numbers of clusters ended by a reduction

    def root(self, number):
        while self.parent[number] != number:
            number = self.parent[number]
        return number

    def root_of(self, op):
        return self.root(self.of[op])

    def roots(self, numbers):
        return {self.root(n) for n in numbers}

    def add(self, op, joined, closes=False):
        """Puts ``op`` in the union of the clusters ``joined`` (a new cluster if none);
        ``closes``: no op may join it afterwards."""
        if not joined:
            number = len(self.parent)
            self.parent.append(number)
            self.members.append([])
        else:
            number, *others = sorted(joined)
            for other in others:
                self.parent[other] = number
                self.members[number] += self.members[other]
                self.members[other] = []
        self.of[op] = number
        self.members[number].append(op)
        if closes:
            self.closed.add(number)

    def groups(self):
        return [m for n, m in enumerate(self.members) if self.parent[n] == n and m]


def _clusters_to_join(op, producers, clusters, upstream, placement):
    """The clusters of producers of ``op`` that ``op`` may join, merged into one."""
    joinable = []
    for tensor in op.inputs[:1] if op.type in ROOTS else op.inputs:  # not a reduction's axes
        if tensor.op not in clusters.of or placement[tensor.op] is not placement[op]:
            continue
        if clusters.root_of(tensor.op) in clusters.closed:
            continue
        if tensor.op._attrs.get("_XlaScope") != op._attrs.get("_XlaScope"):
            continue
        cluster = clusters.root_of(tensor.op)
        # Joining closes a cycle when another producer reaches the cluster from outside.
        if cluster not in joinable and all(
                p in clusters.of and clusters.root_of(p) == cluster
                or cluster not in clusters.roots(upstream.get(p, ())) for p in producers):
            joinable.append(cluster)
    chosen = []
    for cluster in joinable:  # two clusters linked by a path would close a cycle merged
        if all(not _linked(cluster, other, clusters, upstream) for other in chosen):
            chosen.append(cluster)
    return chosen


def _linked(first, second, clusters, upstream):
    """Whether a path leads from one of the two clusters to the other."""
    def above(cluster):
        return set().union(*(clusters.roots(upstream[m]) for m in clusters.members[cluster]))
    return first in above(second) or second in above(first)


def _replace_cluster(step, members, name, device):
    """Adds the ``_FusedElementwise`` op of ``members`` and moves their outside readers to it.

    Returns ``(step, fused op)``; the members, read by nobody any more, are
    left for pruning.
    """
    inside = set(members)
    needed = set(step.ops)
    fetched = set(step.fetches)
    inputs, names, lines = [], {}, []
    for index, op in enumerate(members):
        operands = []
        for tensor in op.inputs:
            if tensor not in names:  # a value from outside the cluster
                names[tensor] = "x%d" % len(inputs)
                inputs.append(tensor)
            operands.append(names[tensor])
        output = op.outputs[0]
        names[output] = "t%d" % index
        lines.append(xla_ops.expression_line(index, op.type, operands, output.dtype,
                                             xla_ops.numeric_attrs(op)))
    outputs = [op.outputs[0] for op in members
               if op.outputs[0] in fetched
               or any(c in needed and c not in inside for c in op.outputs[0].consumers())]
    fused = step.graph.create_op(
        "_FusedElementwise", [inputs], dtypes=[t.dtype for t in outputs], name=name,
        attrs={"Tin": [t.dtype for t in inputs], "Tout": [t.dtype for t in outputs],
               "expression": lines, "outputs": [names[t] for t in outputs],
               "fused_ops": [op.name for op in members]},
        compute_shapes=False)
    fused._set_device(device.name)
    fused._traceback = members[-1]._traceback
    source = device.fused_kernel_source(fused)
    if source is not None:  # for users to read: op.get_attr("_kernel_source")
        fused._attrs["_kernel_source"] = source
    for original, new in zip(outputs, fused.outputs):
        new._shape = original.shape
        for reader in list(original.consumers()):
            if reader not in inside:
                for position, tensor in enumerate(reader.inputs):
                    if tensor is original:
                        reader._update_input(position, new)
    replaced = dict(zip(outputs, fused.outputs))
    step = step.replace(fetches=tuple(replaced.get(t, t) for t in step.fetches))
    return step, fused
