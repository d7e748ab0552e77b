"""Solutions to the exercises of notebook 11, *Fused elementwise kernels*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's exercise setup cell (NumPy, minitf and
``HAS_GPU``).  They need no GPU: without one, soft placement runs the pinned
ops on the CPU, which fuses nothing, and the checks expect exactly that.
"""

import minitf as tf

# %% Exercise 11.1
# Exercise 11.1: turn the jit on for a whole session.
def jit_config():
    """A ``tf.ConfigProto`` whose session may fuse every fusable op (the global jit level
    ``tf.OptimizerOptions.ON_1``), and under which a graph pinned to ``/gpu:0`` still runs on
    a machine without a GPU (soft placement, as in notebook 07)."""
    # BEGIN SOLUTION a tf.OptimizerOptions in tf.GraphOptions(optimizer_options=...)
    jit = tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.ON_1)
    return tf.ConfigProto(allow_soft_placement=True,
                          graph_options=tf.GraphOptions(optimizer_options=jit))
    # END SOLUTION

# %% Exercise 11.2
# Exercise 11.2: count the ops a step really runs.
def count_ops(sess, fetches, feed_dict, op_type):
    """How many ops of type ``op_type`` (``"MatMul"``, ``"_FusedElementwise"``, ...) the step
    ``sess.run(fetches, feed_dict)`` runs once the session has rewritten, placed and fused its
    graph: count them in ``sess.partition_graphs(fetches, feed_dict)``, a dict
    ``{device name: tf.Graph}`` with one graph per device."""
    # BEGIN SOLUTION every op of every partition graph whose .type is op_type
    partitions = sess.partition_graphs(fetches, feed_dict)
    return sum(1 for graph in partitions.values() for op in graph.get_operations()
               if op.type == op_type)
    # END SOLUTION

# %% Exercise 11.3
# Exercise 11.3: fuse one part of a graph only.
def scaled_tanh(x):
    """``tanh(x) * 2 + 1``, built so that its three elementwise ops may be fused into one
    kernel even in a session whose jit is off — and only they, not the ops around them:
    ``tf.xla.experimental.jit_scope``."""
    # BEGIN SOLUTION build the three ops in a `with tf.xla.experimental.jit_scope():` block
    with tf.xla.experimental.jit_scope():
        return tf.tanh(x) * 2.0 + 1.0
    # END SOLUTION
