"""Solutions to the exercises of notebook 00, *Build it yourself*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell, which defines ``Node``,
``const``, ``placeholder``, ``add``, ``mul`` and ``KERNELS``.
"""

import collections

# %% Exercise 0.1
# Exercise 0.1: an executor with pending counts.
def execute(fetch, feed_dict):
    """Runs the nodes that ``fetch`` needs; returns ``{node: value}`` in the order they ran.

    ``feed_dict`` maps placeholder nodes to numbers.  A node runs once all its
    inputs have values: each needed node starts with a *pending count* (its
    number of inputs); a node whose count is 0 is *ready*; running a node
    decrements the count of each of its consumers.
    """
    needed, stack = set(), [fetch]           # pruning: only what the fetch depends on
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(node.inputs)
    # BEGIN SOLUTION pending counts, consumers, a ready queue (collections.deque); run until empty
    pending = {node: len(node.inputs) for node in needed}
    consumers = collections.defaultdict(list)
    for node in needed:
        for source in node.inputs:
            consumers[source].append(node)
    ready = collections.deque(node for node in needed if pending[node] == 0)
    values = {}
    while ready:
        node = ready.popleft()
        if node.op == "const":
            values[node] = node.value
        elif node.op == "placeholder":
            values[node] = feed_dict[node]
        else:
            values[node] = KERNELS[node.op](*(values[source] for source in node.inputs))
        for consumer in consumers[node]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    return values
    # END SOLUTION

# %% Exercise 0.2
# Exercise 0.2: reverse-mode gradients.
def gradients(y, xs, feed_dict):
    """``[dy/dx for x in xs]`` as numbers, by reverse-mode differentiation.

    Run the forward pass with ``execute``, then visit its nodes in reverse order
    (a node comes after all its consumers), adding each node's gradient times the
    local derivative into its inputs' gradients: for ``add(a, b)`` both get
    ``grad``; for ``mul(a, b)``, ``a`` gets ``grad * b`` and ``b`` gets ``grad * a``.
    A node used twice receives two contributions, summed.
    """
    values = execute(y, feed_dict)
    grad = collections.defaultdict(float)
    grad[y] = 1.0
    # BEGIN SOLUTION reversed(list(values)): one rule per op type
    for node in reversed(list(values)):
        if node.op == "add":
            for source in node.inputs:
                grad[source] += grad[node]
        elif node.op == "mul":
            a, b = node.inputs
            grad[a] += grad[node] * values[b]
            grad[b] += grad[node] * values[a]
    # END SOLUTION
    return [grad[x] for x in xs]
