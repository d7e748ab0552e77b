"""``tf.distribute.cluster_resolver``: where a task learns its cluster.

A cluster resolver answers "which tasks make up the cluster, and which one am
I?" from what the launcher provides.  minitf has TF's ``TF_CONFIG`` one,
implemented in :mod:`minitf.distributed.tf_config`; this module only chooses
what is public.

Example:
    >>> import minitf as tf
    >>> resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    >>> cluster = resolver.cluster_spec()   # from the TF_CONFIG variable
"""

from minitf.distributed.tf_config import TFConfigClusterResolver  # noqa: F401 - the public API
