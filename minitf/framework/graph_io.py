"""``tf.train.write_graph``: a graph's GraphDef in a file, as text or binary.

A ``.pbtxt`` file is the text form of the protocol buffer, readable and
diffable::

    node {
      name: "x"
      op: "Placeholder"
      attr { key: "dtype" value { type: DT_FLOAT } }
      ...
    }

a ``.pb`` file its binary form, compact and what TensorFlow's tools load
(``graph_pb2.GraphDef.FromString(open(path, "rb").read())``).

Mirrors ``tensorflow/python/framework/graph_io.py``.
"""

import os

from minitf.framework import protos


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the GraphDef of a graph to ``logdir/name`` (``tf.train.write_graph``).

    Example:
        >>> path = tf.train.write_graph(sess.graph, "/tmp/model", "graph.pbtxt")

    Args:
        graph_or_graph_def: a :class:`~minitf.Graph` or a ``GraphDef``.
        logdir: the directory (created if missing).
        name: the file's name.
        as_text: write the text format (default) rather than the binary one.

    Returns:
        The path of the file written.

    Raises:
        TypeError: if ``graph_or_graph_def`` is neither a Graph nor a GraphDef.
    """
    graph_def = graph_or_graph_def
    if hasattr(graph_def, "as_graph_def"):
        graph_def = graph_def.as_graph_def()
    if not isinstance(graph_def, protos.load("graph_pb2").GraphDef):
        raise TypeError("write_graph expects a tf.Graph or a GraphDef, got %s"
                        % type(graph_or_graph_def).__name__)
    if as_text:
        from google.protobuf import text_format  # loaded on first use, as the protos
        content = text_format.MessageToString(graph_def).encode("utf-8")
    else:
        content = graph_def.SerializeToString(deterministic=True)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    temporary = "%s.tmp%d" % (path, os.getpid())
    with open(temporary, "wb") as f:
        f.write(content)
    os.replace(temporary, path)  # readers never see half a file
    return path
