"""Solutions to the exercises of notebook 07, *The OpenCL GPU device*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
They need no GPU: without one, soft placement moves the pinned ops to the CPU.
"""

import numpy as np

import minitf as tf

# %% Exercise 7.1
# Exercise 7.1: let the placer move what the GPU cannot run.
def soft_placement_config():
    """A ``tf.ConfigProto`` under which an op pinned to ``/gpu:0`` that has no GPU kernel
    (or a graph pinned to a GPU on a machine without one) still runs, on the CPU."""
    # BEGIN SOLUTION one field of tf.ConfigProto
    return tf.ConfigProto(allow_soft_placement=True)
    # END SOLUTION

# %% Exercise 7.2
# Exercise 7.2: where did each op run?
def devices_used(sess, fetch, feed_dict=None):
    """``{op name: device name}`` for every op that ``sess.run(fetch, feed_dict)`` ran, read
    from the run's step statistics (``tf.RunOptions.FULL_TRACE`` and a ``tf.RunMetadata``:
    one ``dev_stats`` per device, one ``node_stats`` per op)."""
    metadata = tf.RunMetadata()
    # BEGIN SOLUTION run with the trace options, then read metadata.step_stats.dev_stats
    sess.run(fetch, feed_dict, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=metadata)
    return {node.node_name: dev.device for dev in metadata.step_stats.dev_stats
            for node in dev.node_stats}
    # END SOLUTION
