"""Solutions to the exercises of notebook 01, *Graphs and sessions*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``):
the lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` become a
``# TODO`` and a ``raise NotImplementedError``.  The cells run after the
notebook's setup cell (``import numpy as np``, ``import minitf as tf``).
"""

import numpy as np

import minitf as tf

# %% Exercise 1.1
# Exercise 1.1: which ops does a Variable add?
def ops_added_by_variable():
    """The types of the ops that ``tf.Variable(3.0, name="v")`` adds to an empty graph, sorted."""
    with tf.Graph().as_default() as graph:
        # BEGIN SOLUTION create the Variable, then list the types of graph.get_operations()
        tf.Variable(3.0, name="v")
        return sorted(op.type for op in graph.get_operations())
        # END SOLUTION

# %% Exercise 1.2
# Exercise 1.2: prune like Session.run does.
def ops_to_run(fetch, feed_dict=None):
    """The names of the ops that ``sess.run(fetch, feed_dict)`` runs, as a set.

    Walk backwards from ``fetch.op`` through each op's ``inputs`` (a tensor's
    producer is ``tensor.op``) and ``control_inputs``; a fed tensor's producer
    does not run, and nothing behind it is needed.
    """
    fed = set(feed_dict or {})
    # BEGIN SOLUTION a depth-first walk with a stack and a set of names seen
    seen, stack = set(), [fetch.op]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(tensor.op for tensor in op.inputs if tensor not in fed)
        stack.extend(op.control_inputs)
    return seen
    # END SOLUTION

# %% Exercise 1.3
# Exercise 1.3: state that lives in the session.
def running_sum(values):
    """Feeds each number of ``values`` in turn to a graph that keeps a running total in a
    Variable, and returns the totals after each run: ``[1, 2, 3] -> [1.0, 3.0, 6.0]``."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=[], name="x")
        # BEGIN SOLUTION a Variable starting at 0, an op adding x to it, one session for all runs
        total = tf.Variable(0.0, name="total")
        add = tf.assign_add(total, x)
        with tf.Session() as sess:
            sess.run(total.initializer)
            return [float(sess.run(add, {x: value})) for value in values]
        # END SOLUTION
