"""TensorFlow's protocol buffers, loaded on first use.

The distributed runtime speaks TF's own messages: a cluster is a
``ClusterDef`` holding one ``JobDef`` per job, a session's options are a
``ConfigProto``, a graph a ``GraphDef``, a tensor a ``TensorProto``.  Their
compiled Python modules ship in the ``tensorboard`` package
(``tensorboard.compat.proto``), a well-kept copy of TF's ``.proto`` files —
nothing here is hand-encoded.

These packages are optional (``pip install minitf[distributed]``): ``import
minitf`` never needs them, only *using* a distributed name does.  So every
module of :mod:`minitf.distributed` asks for a proto module through
:func:`load`, which fails with an :class:`ImportError` that says what to
install.

Example:
    >>> cluster_pb2 = load("cluster_pb2")
    >>> job = cluster_pb2.JobDef(name="ps", tasks={0: "localhost:2222"})
    >>> cluster_pb2.ClusterDef(job=[job]).job[0].tasks[0]
    'localhost:2222'
"""

import importlib

#: Where TF's compiled protos are found.
PROTO_PACKAGE = "tensorboard.compat.proto"

#: What a user runs to get them.
INSTALL_HINT = "pip install minitf[distributed]"


def load(module):
    """Returns ``tensorboard.compat.proto.<module>``, e.g. ``load("cluster_pb2")``.

    Args:
        module: the name of a compiled proto module (``"cluster_pb2"``,
            ``"config_pb2"``, ``"tensor_pb2"``, ...).

    Returns:
        The module.

    Raises:
        ImportError: if the optional dependencies of the distributed runtime
            are not installed; the message says how to install them.
    """
    try:
        return importlib.import_module("%s.%s" % (PROTO_PACKAGE, module))
    except ImportError as error:
        raise ImportError(
            "minitf's distributed runtime needs TensorFlow's protocol buffers (%s.%s), "
            "which could not be imported (%s). Install them with `%s`."
            % (PROTO_PACKAGE, module, error, INSTALL_HINT)) from error
