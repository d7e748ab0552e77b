"""Solutions to the exercises of notebook 10, *Distributed TensorFlow*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported);
they describe a cluster and place a graph on it, without starting servers.
"""

import numpy as np

import minitf as tf

# %% Exercise 10.1
# Exercise 10.1: describe a cluster.
def make_cluster(num_workers, host="localhost", first_port=2222):
    """A ``tf.train.ClusterSpec`` with one ``ps`` task at ``host:first_port`` and
    ``num_workers`` ``worker`` tasks on the ports after it."""
    # BEGIN SOLUTION a dict {job name: [address, ...]}
    return tf.train.ClusterSpec({
        "ps": ["%s:%d" % (host, first_port)],
        "worker": ["%s:%d" % (host, first_port + 1 + i) for i in range(num_workers)]})
    # END SOLUTION

# %% Exercise 10.2
# Exercise 10.2: variables on the parameter server, computation on the worker.
def build_on_cluster(cluster, task_index):
    """Builds ``y = x @ w + b`` in the default graph under
    ``tf.train.replica_device_setter``, for worker ``task_index`` of ``cluster``, so that
    the variables ``w`` ([3, 1]) and ``b`` ([1]) go to the ``ps`` job and the other ops to
    ``/job:worker/task:<task_index>``.  Returns ``y``."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    # BEGIN SOLUTION with tf.device(tf.train.replica_device_setter(cluster=..., worker_device=...))
    with tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device="/job:worker/task:%d" % task_index)):
        w = tf.Variable(tf.ones([3, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        return tf.matmul(x, w) + b
    # END SOLUTION
