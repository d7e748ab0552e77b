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

from minitf.framework.graph import Graph
from minitf.summary import proto
from minitf.summary.event_file import EventFileWriter


class FileWriter:
    """Appends ``Event`` protocol buffers to an event file in ``logdir``.

    Args:
        logdir: the directory of the event file (created if missing).
        graph: a :class:`~minitf.Graph` (usually ``sess.graph``) to show in
            TensorBoard's graph tab; None: no graph.
        max_queue, flush_secs: accepted for TF compatibility (events are
            written at once).
        graph_def: accepted for TF compatibility; use ``graph``.
        filename_suffix: appended to the event file's name.
        session: not supported (TF2's writer resource); must be None.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) is not supported by minitf")
        self._logdir = str(logdir)
        self._file = EventFileWriter(self._logdir, filename_suffix or "")
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def get_logdir(self):
        """The directory this writer writes to."""
        return self._logdir

    def add_event(self, event):
        """Appends one serialized ``Event`` (bytes)."""
        self._check_open()
        self._file.write_event(bytes(event))

    def add_summary(self, summary, global_step=None):
        """Appends a summary fetched from a summary op, at ``global_step``.

        Args:
            summary: the serialized ``Summary`` (the bytes ``sess.run`` of a
                summary op returns) or a :class:`minitf.summary.Summary`.
            global_step: the step to plot it at (default 0).
        """
        if hasattr(summary, "SerializeToString"):
            summary = summary.SerializeToString()
        if not isinstance(summary, bytes):
            raise TypeError("add_summary expects the bytes of a serialized Summary (the value "
                            "sess.run returns for a summary op), got %s" % type(summary).__name__)
        self.add_event(proto.event(time.time(), step=_step(global_step), summary=summary))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Appends ``graph`` as a ``GraphDef`` event for TensorBoard's graph tab.

        Raises:
            TypeError: if ``graph`` is not a :class:`~minitf.Graph`.
        """
        if graph is None:
            graph = graph_def  # TF1 accepted a Graph as graph_def too
        if not isinstance(graph, Graph):
            raise TypeError("add_graph expects a tf.Graph (e.g. sess.graph), got %s"
                            % type(graph).__name__)
        self.add_event(proto.event(time.time(), step=_step(global_step),
                                   graph_def=proto.graph_def(graph)))

    def flush(self):
        """Makes sure everything added so far is on disk."""
        if not self._file.closed:
            self._file.flush()

    def close(self):
        """Flushes and closes the file; ``reopen()`` starts a new one."""
        self._file.close()

    def reopen(self):
        """Opens a new event file in the same directory after ``close()``."""
        if self._file.closed:
            self._file = EventFileWriter(self._logdir)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _check_open(self):
        if self._file.closed:
            raise RuntimeError("FileWriter for %s is closed; call reopen() first" % self._logdir)


def _step(global_step):
    return 0 if global_step is None else int(global_step)
