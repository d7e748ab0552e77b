"""TensorFlow's protocol buffers, loaded on first use.

Whatever minitf writes to a file or sends to another process is one of TF's
own messages: a graph is a ``GraphDef``, a tensor a ``TensorProto``, a
checkpoint's program a ``MetaGraphDef``, an event file holds ``Event``\\ s, a
cluster is a ``ClusterDef``.  Their compiled Python modules ship in the
``tensorboard`` package (``tensorboard.compat.proto``), a well-kept copy of
TF's ``.proto`` files; the ``protobuf`` library encodes them, so the bytes are
TF's bytes — TensorBoard and TensorFlow read them, and minitf reads theirs.

Loading the modules costs tens of milliseconds, which ``import minitf`` does
not pay: every user asks for a module through :func:`load` when it first
needs one.

Example:
    >>> graph_pb2 = load("graph_pb2")
    >>> graph_def = graph_pb2.GraphDef()
    >>> graph_def.node.add(name="x", op="Placeholder").op
    'Placeholder'

A message that rides along with tensors in one of minitf's RPCs (a
``GraphDef`` registered with a worker, a ``ConfigProto``) travels as its
serialized bytes in a ``uint8`` array (:func:`as_payload`), never inside the
JSON header.
"""

import functools
import importlib

import numpy as np

#: Where TF's compiled protos are found.
PROTO_PACKAGE = "tensorboard.compat.proto"

#: What a user runs to get them (they are dependencies of minitf).
INSTALL_HINT = "pip install protobuf tensorboard"


@functools.lru_cache(maxsize=None)  # writing a GraphDef asks thousands of times
def load(module):
    """Returns ``tensorboard.compat.proto.<module>``, e.g. ``load("graph_pb2")``.

    Args:
        module: the name of a compiled proto module (``"graph_pb2"``,
            ``"config_pb2"``, ``"tensor_pb2"``, ...).

    Returns:
        The module.

    Raises:
        ImportError: if the packages are missing (a broken installation); the
            message says how to install them.
    """
    try:
        return importlib.import_module("%s.%s" % (PROTO_PACKAGE, module))
    except ImportError as error:
        raise ImportError(
            "minitf needs TensorFlow's protocol buffers (%s.%s), which could not be "
            "imported (%s). Install them with `%s`."
            % (PROTO_PACKAGE, module, error, INSTALL_HINT)) from error


def as_payload(message):
    """``message`` serialized, as a ``uint8`` array that crosses as raw bytes."""
    return np.frombuffer(message.SerializeToString(), dtype=np.uint8)


def from_payload(message_class, payload):
    """The message of class ``message_class`` that :func:`as_payload` sent.

    Raises:
        google.protobuf.message.DecodeError: if the bytes are not such a message.
    """
    return message_class.FromString(np.asarray(payload, dtype=np.uint8).tobytes())
