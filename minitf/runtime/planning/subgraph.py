"""Pruning: the part of the graph a ``Session.run`` call actually needs.

TF1 never runs a whole graph.  Starting from the fetched tensors and target
operations, it walks input edges and control edges backwards; a *fed* tensor
cuts its edge (its producer need not run, unless needed for another reason).
Everything not reached is pruned.  This is TF's ``subgraph::PruneForTargets``.
"""


def prune(fetch_tensors, target_ops, feed_tensors, done_ops=()):
    """The set of operations needed to compute the fetches and run the targets.

    Args:
        fetch_tensors: Tensors whose values are wanted.
        target_ops: Operations to run for their effects.
        feed_tensors: Tensors whose values are supplied by the caller.
        done_ops: Operations that already ran — in an earlier call of a partial
            run — and must not run again: a control edge into one is
            satisfied, and the outputs read from one must be fed.

    Returns:
        A set of Operations.
    """
    fed = set(feed_tensors)
    done = set(done_ops)
    needed = set()
    # The worklist holds operations known to be needed whose inputs are not yet visited.
    worklist = [t.op for t in fetch_tensors if t not in fed] + list(target_ops)
    while worklist:
        op = worklist.pop()
        if op in needed or op in done:
            continue
        needed.add(op)
        for tensor in op.inputs:
            if tensor not in fed:
                worklist.append(tensor.op)
        worklist.extend(op.control_inputs)
    return needed
