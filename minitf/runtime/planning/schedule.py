"""Scheduling: an execution order in which every op follows the ops it needs.

Like TF's executor, scheduling is a worklist.  Every op starts with a *pending
count* — how many of its inputs (data and control) are produced by ops of this
step.  Ops whose count is zero are ready; "running" one decrements the counts of
its consumers, which become ready in turn (Kahn's algorithm).  The master
schedules a pruned step once; the executors then follow that order or, when
they run ops in parallel, the same pending counts.
"""

import collections


def schedule(ops, fed_tensors):
    """Orders ``ops`` so that every op comes after the ops it depends on.

    Kahn's algorithm with TF's names: a ready queue fed by pending counts.

    Raises:
        ValueError: if the ops contain a cycle (only legal with control flow).
    """
    consumers = consumers_of(ops, fed_tensors)
    pending = dict.fromkeys(ops, 0)
    for users in consumers.values():
        for op in users:
            pending[op] += 1
    # Start from the ready ops in creation order so schedules are deterministic.
    ready = collections.deque(sorted((op for op in ops if pending[op] == 0), key=lambda o: o._id))
    order = []
    while ready:
        op = ready.popleft()
        order.append(op)
        for consumer in consumers[op]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    if len(order) != len(ops):
        stuck = sorted(op.name for op in ops if pending[op] > 0)
        raise ValueError("Graph contains a cycle among ops: %s" % ", ".join(stuck[:10]))
    return order, consumers


def consumers_of(ops, fed_tensors):
    """For each op, the ops among ``ops`` that consume it (data or control).

    The edge out of a ``NextIteration`` is a loop's *back edge*: it feeds the
    next iteration, not this one, so it is no dependency for ordering.
    """
    op_set = set(ops)
    fed = set(fed_tensors)
    consumers = collections.defaultdict(list)
    for op in ops:
        producers = {t.op for t in op.inputs if t not in fed and t.op in op_set
                     and t.op.type != "NextIteration"}
        producers.update(c for c in op.control_inputs if c in op_set)
        for producer in sorted(producers, key=lambda o: o._id):
            consumers[producer].append(op)
    return consumers
