"""``tf.summary``: log values from the graph for TensorBoard.

Each function adds a summary op (see :mod:`minitf.ops.summary_ops`) to the
graph and to the ``tf.GraphKeys.SUMMARIES`` collection; ``merge_all()``
merges that collection into one op; a :class:`FileWriter` appends what it
produces to an event file::

    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter(logdir, sess.graph)
    writer.add_summary(sess.run(merged, feed), step)

The tag of a summary is its name inside the current name scope
(``"layer1/weights"``), made safe as TF's ``summary_op_util.clean_tag`` does.
Mirrors ``tensorflow/python/summary/summary.py`` (the v1 API).
"""

import contextlib
import re

from minitf.framework import dtypes, graph as graph_lib
from minitf.framework import protos
from minitf.framework.graph import GraphKeys
from minitf.ops import summary_ops
from minitf.ops.constant_op import constant
from minitf.summary.event_file import read_events
from minitf.summary.writer import FileWriter

# tf.Summary, tf.Event ...: TF's own messages, loaded on first use (see minitf.framework.protos).
_MESSAGES = {"Event": "event_pb2", "Summary": "summary_pb2", "SummaryMetadata": "summary_pb2",
             "HistogramProto": "summary_pb2"}

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """``name`` with characters TensorBoard does not allow replaced by ``_``."""
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    return new_name


@contextlib.contextmanager
def summary_scope(name, family=None):
    """Opens the name scope of a summary op; yields ``(tag, scope)``.

    The tag is the scope's full name (``"outer/loss"``), prefixed by
    ``family`` when one is given (TF's ``summary_op_util.summary_scope``).
    """
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else "%s/%s" % (family, name)
    with graph_lib.get_default_graph().name_scope(base) as scope:
        tag = scope.rstrip("/")
        yield (tag if family is None else "%s/%s" % (family, tag)), scope


def _collect(op, collections):
    graph = op.graph
    for key in collections if collections is not None else [GraphKeys.SUMMARIES]:
        graph.add_to_collection(key, op)
    return op


def scalar(name, tensor, collections=None, family=None):
    """A summary of the scalar ``tensor``'s value (TensorBoard's scalars tab).

    Args:
        name: the summary's name; with the name scope, its tag.
        tensor: a real numeric scalar.
        collections: where to add it (default ``[tf.GraphKeys.SUMMARIES]``).
        family: an optional tag prefix, grouping it in TensorBoard.

    Returns:
        A scalar ``tf.string`` tensor, the serialized ``Summary``.
    """
    with summary_scope(name, family) as (tag, scope):
        return _collect(summary_ops.scalar_summary(tag, tensor, name=scope), collections)


def histogram(name, values, collections=None, family=None):
    """A summary of the distribution of ``values`` (TensorBoard's histograms tab)."""
    with summary_scope(name, family) as (tag, scope):
        return _collect(summary_ops.histogram_summary(tag, values, name=scope), collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A summary of up to ``max_outputs`` images of the ``[batch, h, w, 1|3|4]`` ``tensor``.

    Float images are scaled to ``[0, 255]`` (see the CPU kernel); the tags are
    ``"<tag>/image/<i>"`` (``"<tag>/image"`` when ``max_outputs`` is 1).
    """
    with summary_scope(name, family) as (tag, scope):
        return _collect(summary_ops.image_summary(tag, tensor, max_outputs, name=scope),
                        collections)


def text(name, tensor, collections=None):
    """A summary of a ``tf.string`` tensor, shown by TensorBoard's text tab.

    Raises:
        ValueError: if ``tensor`` is not a string tensor.
    """
    if tensor.dtype.base_dtype != dtypes.string:
        raise ValueError("Expected tensor %s to have dtype string, got %s"
                         % (tensor.name, tensor.dtype.name))
    with summary_scope(name) as (tag, scope):
        summary_pb2 = protos.load("summary_pb2")
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        metadata = constant(metadata.SerializeToString(), dtype=dtypes.string,
                            name="summary_metadata")
        return _collect(summary_ops.tensor_summary_v2(tag, tensor, metadata, name=scope),
                        collections)


def merge(inputs, collections=None, name=None):
    """One summary holding the values of all ``inputs`` (their tags must differ)."""
    with graph_lib.get_default_graph().name_scope(name or "Merge"):
        op = summary_ops.merge_summary(inputs, name="MergeSummary")
    for key in collections or []:
        op.graph.add_to_collection(key, op)
    return op


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges every summary in the collection ``key``; None if there is none.

    Args:
        key: the collection (default ``tf.GraphKeys.SUMMARIES``).
        scope: only summaries whose name matches this regular expression.
        name: the name of the ``MergeSummary`` op.
    """
    summaries = graph_lib.get_default_graph().get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None


def summary_iterator(path):
    """Yields the ``Event`` messages (``event_pb2.Event``) of the event file ``path``.

    This is ``tf.train.summary_iterator``; it raises ``DataLossError`` on a
    corrupted or truncated file, a length field larger than the file, or a
    record that is not an ``Event`` (see :mod:`.event_file`).
    """
    return read_events(path)


def __getattr__(name):
    """``Event``, ``Summary``, ``SummaryMetadata``, ``HistogramProto``: TF's messages."""
    if name in _MESSAGES:
        return getattr(protos.load(_MESSAGES[name]), name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = ["Event", "FileWriter", "HistogramProto", "Summary", "SummaryMetadata", "histogram",
           "image", "merge", "merge_all", "scalar", "summary_iterator", "text"]
