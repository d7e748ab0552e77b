"""``tf.summary.FileWriter``: writes summaries, graphs and events for TensorBoard.

The writer is plain Python on the client side, as in TF1: a summary op's
output (the ``Summary`` bytes fetched by ``sess.run``) is wrapped in an
``Event`` with the wall time and the global step and appended to the event
file (see :mod:`.event_file`).  ``tensorboard --logdir LOGDIR`` then plots
every tag against the steps.

Example::

    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("/tmp/logs", sess.graph)
    for step in range(100):
        summary, _ = sess.run([merged, train_op])
        writer.add_summary(summary, step)
    writer.close()

Mirrors ``tensorflow/python/summary/writer/writer.py``.  TF's writer queues
events for a background thread; this one writes at once and flushes on
``flush()``/``close()``.
"""

import time

from minitf.framework import protos
from minitf.framework.graph import Graph
from minitf.summary.event_file import EventFileWriter


class FileWriter:
    """Appends ``Event`` protocol buffers to an event file in ``logdir``.

    Args:
        logdir: the directory of the event file (created if missing).
        graph: a :class:`~minitf.Graph` (usually ``sess.graph``) to show in
            TensorBoard's graph tab; None: no graph.
        max_queue, flush_secs: accepted for TF compatibility (events are
            written at once).
        graph_def: a ``GraphDef`` to show instead (TF1's older argument).
        filename_suffix: appended to the event file's name.
        session: not supported (TF2's writer resource); must be None.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) is not supported by minitf")
        self._logdir = str(logdir)
        self._filename_suffix = filename_suffix or ""
        self._file = EventFileWriter(self._logdir, self._filename_suffix)
        self._run_metadata_tags = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        """The directory this writer writes to."""
        return self._logdir

    def add_event(self, event):
        """Appends one ``Event`` (an ``event_pb2.Event``, or its serialized bytes)."""
        self._check_open()
        self._file.write_event(event if isinstance(event, bytes) else event.SerializeToString())

    def add_summary(self, summary, global_step=None):
        """Appends a summary fetched from a summary op, at ``global_step``.

        Args:
            summary: the serialized ``Summary`` (the bytes ``sess.run`` of a
                summary op returns) or a ``tf.Summary`` message.
            global_step: the step to plot it at (default 0).
        """
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        if not isinstance(summary, bytes):
            raise TypeError("add_summary expects the bytes of a serialized Summary (the value "
                            "sess.run returns for a summary op), got %s" % type(summary).__name__)
        event = _event(global_step)
        event.summary.ParseFromString(summary)
        self.add_event(event)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Appends ``graph`` (a :class:`~minitf.Graph`, or a ``GraphDef``) as a
        ``GraphDef`` event for TensorBoard's graph tab; a Graph's ops carry their
        output shapes (``_output_shapes``), which TensorBoard shows on the edges.

        Raises:
            TypeError: if ``graph`` is neither a Graph nor a GraphDef.
        """
        if graph is None:
            graph = graph_def  # TF1 accepted a Graph as graph_def too
        if isinstance(graph, Graph):
            graph = graph.as_graph_def(add_shapes=True)
        if not isinstance(graph, protos.load("graph_pb2").GraphDef):
            raise TypeError("add_graph expects a tf.Graph (e.g. sess.graph) or a GraphDef, "
                            "got %s" % type(graph).__name__)
        event = _event(global_step)
        event.graph_def = graph.SerializeToString()
        self.add_event(event)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Appends the ``tf.RunMetadata`` of a traced ``sess.run`` under ``tag``,
        for TensorBoard's per-step compute-time view (a ``TaggedRunMetadata`` event).

        Raises:
            ValueError: if ``tag`` was already used by this writer, as in TF.
        """
        if tag in self._run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._run_metadata_tags.add(tag)
        proto = protos.load("config_pb2").RunMetadata(
            step_stats=run_metadata.step_stats.to_proto(),
            partition_graphs=[g for g in run_metadata.partition_graphs
                              if isinstance(g, protos.load("graph_pb2").GraphDef)])
        event = _event(global_step)
        event.tagged_run_metadata.tag = tag
        event.tagged_run_metadata.run_metadata = proto.SerializeToString()
        self.add_event(event)

    def flush(self):
        """Makes sure everything added so far is on disk."""
        if not self._file.closed:
            self._file.flush()

    def close(self):
        """Flushes and closes the file; ``reopen()`` starts a new one."""
        self._file.close()

    def reopen(self):
        """Opens a new event file (with the same suffix) in the same directory
        after ``close()``."""
        if self._file.closed:
            self._file = EventFileWriter(self._logdir, self._filename_suffix)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _check_open(self):
        if self._file.closed:
            raise RuntimeError("FileWriter for %s is closed; call reopen() first" % self._logdir)


def _event(global_step):
    """An ``Event`` stamped with the wall time and ``global_step`` (default 0)."""
    return protos.load("event_pb2").Event(
        wall_time=time.time(), step=0 if global_step is None else int(global_step))
