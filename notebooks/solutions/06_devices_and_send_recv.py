"""Solutions to the exercises of notebook 06, *Devices, placement and Send/Recv*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 6.1
# Exercise 6.1: which tensors cross between devices?
def crossing_tensors(partitions):
    """The names of the tensors sent between devices, as a set, from the partitions
    ``{device: graph}`` that ``sess.partition_graphs`` returns.

    Each crossing is a ``_Send`` op whose attr ``tensor_name`` names the tensor.
    """
    # BEGIN SOLUTION look at every op of every partition; op.get_attr reads an attr
    return {op.get_attr("tensor_name") for graph in partitions.values()
            for op in graph.get_operations() if op.type == "_Send"}
    # END SOLUTION

# %% Exercise 6.2
# Exercise 6.2: a sum, data-parallel.
def sharded_sum(x, devices):
    """``tf.reduce_sum(x)`` computed data-parallel: ``x``'s rows are split into one shard per
    device (``tf.split``), each shard summed on its device, the partial sums added with
    ``tf.add_n`` on ``/cpu:0``."""
    # BEGIN SOLUTION split, one reduce_sum per device under tf.device, then add_n on /cpu:0
    shards = tf.split(x, len(devices), axis=0)
    partial = []
    for device, shard in zip(devices, shards):
        with tf.device(device):
            partial.append(tf.reduce_sum(shard))
    with tf.device("/cpu:0"):
        return tf.add_n(partial)
    # END SOLUTION
