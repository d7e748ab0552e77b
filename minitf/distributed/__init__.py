"""The distributed runtime: a cluster of tasks that run one graph together.

This package mirrors TensorFlow 1.x's distributed runtime
(``tensorflow/core/distributed_runtime`` and ``python/training/server_lib.py``):
a :class:`~minitf.distributed.cluster_spec.ClusterSpec` names the tasks of a
cluster, a ``tf.train.Server`` runs one task's master and worker services, and
a ``Session("grpc://host:port")`` talks to a master that places, partitions and
runs a step over every task's devices.

It sits in the runtime layer, beside :mod:`minitf.runtime`, and reuses its
placer, partitioner, executors and worker service: ``distributed`` imports
``runtime``, never the other way round (``tests/test_import_layers.py``).
Its messages are TF's protocol buffers (:mod:`minitf.framework.protos`) or a
small JSON header plus raw bytes (:mod:`minitf.distributed.messages`); its
transport, gRPC, is an optional dependency (``pip install minitf[distributed]``).
"""
