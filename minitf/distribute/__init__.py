"""``tf.distribute``: the TF 1.14+ home of the cluster helpers.

minitf has TF1's distributed runtime (``tf.train.ClusterSpec``,
``tf.train.Server``, ``Session("grpc://...")``), not the ``Strategy`` API
built on it; this namespace gives its cluster resolvers their
``tf.compat.v1.distribute`` spelling:
``tf.distribute.cluster_resolver.TFConfigClusterResolver`` reads the
``TF_CONFIG`` environment variable (:mod:`minitf.distributed.tf_config`).
"""

from minitf.distribute import cluster_resolver  # noqa: F401 - the public API
