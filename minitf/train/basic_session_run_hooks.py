"""The ready-made session hooks of ``tf.train``: stop, log, save, summarize, check.

Each hook is one job of a training loop, packaged as a
:class:`~minitf.train.session_run_hook.SessionRunHook`:

* :class:`StopAtStepHook` — request a stop at a global step;
* :class:`LoggingTensorHook` — log tensors every N steps or seconds
  (``loss = 0.5, step = 10 (0.123 sec)``);
* :class:`CheckpointSaverHook` — save ``model.ckpt-<step>`` when the session
  opens, every N steps or seconds, and at the end;
* :class:`StepCounterHook` — log ``global_step/sec``;
* :class:`NanTensorHook` — raise :class:`NanLossDuringTrainingError` on a NaN loss;
* :class:`SummarySaverHook` — write the summary op's output to an event file;
* :class:`FinalOpsHook`, :class:`FeedFnHook`, :class:`GlobalStepWaiterHook`.

Hooks that act "every N steps" read the global step the train op is
about to change.  They fetch it (stale by one step) along with the
caller's fetches, and only when it says a trigger may be due do they run
the global step once more to decide on the exact value — TF's trick to
keep the common step free of extra ``session.run`` calls.

Mirrors ``tensorflow/python/training/basic_session_run_hooks.py``.
"""

import os
import time

import numpy as np

from minitf.framework import errors
from minitf.framework import graph as graph_lib
from minitf.framework import protos
from minitf.platform import tf_logging as logging
from minitf.summary.writer import FileWriter
from minitf.train import training_util
from minitf.train.session_run_hook import SessionRunArgs, SessionRunHook

_GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def _get_or_create_global_step_read(graph=None):
    """A tensor holding a *copy* of the global step (``global_step + 0``), made once.

    Hooks fetch this rather than the variable so that the value they see is
    a snapshot.  Returns None when the graph has no global step.
    """
    graph = graph or graph_lib.get_default_graph()
    cached = graph.get_collection(_GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    global_step_tensor = training_util.get_global_step(graph)
    if global_step_tensor is None:
        return None
    with graph.as_default(), graph.name_scope(None):
        with graph.name_scope(global_step_tensor.op.name + "/"):
            read = global_step_tensor + 0
    graph.add_to_collection(_GLOBAL_STEP_READ_KEY, read)
    return read


def _as_graph_element(obj):
    """``obj``, or the tensor a name like ``"loss"``/``"loss:0"`` names."""
    if not isinstance(obj, str):
        return obj
    graph = graph_lib.get_default_graph()
    return graph.as_graph_element(obj if ":" in obj else obj + ":0")


class SummaryWriterCache:
    """One ``FileWriter`` per directory, shared by the hooks (``tf.summary.FileWriterCache``)."""

    _cache = {}

    @staticmethod
    def get(logdir):
        """The writer of ``logdir``, made (with the default graph) on first use."""
        logdir = os.fspath(logdir)
        if logdir not in SummaryWriterCache._cache:
            SummaryWriterCache._cache[logdir] = FileWriter(
                logdir, graph=graph_lib.get_default_graph())
        return SummaryWriterCache._cache[logdir]

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        for writer in SummaryWriterCache._cache.values():
            writer.close()
        SummaryWriterCache._cache.clear()


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (one of them).

    Raises:
        ValueError: unless exactly one of ``every_secs`` and ``every_steps`` is given.
    """

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """True the first time, then once ``every_steps`` steps or ``every_secs`` passed."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= (self._last_triggered_time
                                                             + self._every_secs):
            return True
        return self._every_steps is not None and step >= (self._last_triggered_step
                                                          + self._every_steps)

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; returns ``(elapsed_secs, elapsed_steps)``
        since the previous one (``(None, None)`` the first time)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self):
        return self._last_triggered_step


# ---- stopping ------------------------------------------------------------------------------------
class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches a value (``tf.train.StopAtStepHook``).

    Args:
        num_steps: stop after this many more steps (counted from the global
            step when the session is created).
        last_step: stop when the global step reaches this.

    Raises:
        ValueError: unless exactly one of them is given.
    """

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        # The fetched value precedes this step's increment: check the real one if due.
        if run_values.results + 1 >= self._last_step:
            step = run_context.session.run(self._global_step_tensor)
            if step >= self._last_step:
                run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    """The training loss became NaN (``tf.train.NanLossDuringTrainingError``)."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (or stops) when the loss is NaN (``tf.train.NanTensorHook``).

    Args:
        loss_tensor: the loss to watch.
        fail_on_nan_loss: raise :class:`NanLossDuringTrainingError` (True) or
            log a warning and request a stop (False).
    """

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logging.error(failure_message)
                raise NanLossDuringTrainingError()
            logging.warning(failure_message)
            run_context.request_stop()


# ---- logging -------------------------------------------------------------------------------------
class LoggingTensorHook(SessionRunHook):
    """Logs tensors every N local steps, every N seconds, and/or at the end
    (``tf.train.LoggingTensorHook``).

    The line reads ``"loss = 0.25, step = 10 (0.123 sec)"``: tags in the
    order given (sorted for a dict), then the seconds since the previous line.

    Args:
        tensors: a dict ``{tag: tensor or name}``, or a list of tensors/names.
        every_n_iter: log every this many ``run`` calls of this session.
        every_n_secs: log when this many seconds have passed.
        at_end: also log once when the session ends.
        formatter: ``fn(dict of values) -> str`` replacing the default line.

    Raises:
        ValueError: unless ``at_end`` alone or exactly one of ``every_n_iter``
            and ``every_n_secs`` is given, or ``every_n_iter`` <= 0.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (_NeverTriggerTimer() if only_log_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(tensor)
                                 for tag, tensor in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values):
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                logging.info(self._formatter(tensor_values))
                return
            stats = ", ".join("%s = %s" % (tag, tensor_values[tag]) for tag in self._tag_order)
            if elapsed_secs is not None:
                logging.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                logging.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class _NeverTriggerTimer(SecondOrStepTimer):
    """The timer of a hook that acts only at the end."""

    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step):
        return False


class StepCounterHook(SessionRunHook):
    """Logs (and writes as a summary) the training speed, ``global_step/sec``
    (``tf.train.StepCounterHook``).

    Args:
        every_n_steps: measure every this many global steps.
        every_n_secs: or every this many seconds.
        output_dir: the directory of the summary writer (None: no summary).
        summary_writer: a ``FileWriter`` to use instead.

    Raises:
        ValueError: unless exactly one of ``every_n_steps`` and ``every_n_secs`` is given.
    """

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._global_step_check_count = 0

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StepCounterHook.")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step:
            self._global_step_check_count += 1
            if self._global_step_check_count % 20 == 0:
                self._global_step_check_count = 0
                logging.warning(
                    "It seems that global step (tf.train.get_global_step) has not been "
                    "increased. Current value (could be stable): %s vs previous value: %s. You "
                    "could increase the global step by passing tf.train.get_global_step() to "
                    "Optimizer.apply_gradients or Optimizer.minimize.",
                    stale_global_step, self._last_global_step)
        else:
            self._global_step_check_count = 0
        self._last_global_step = stale_global_step

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time if elapsed_time > 0 else float("inf")
        if self._summary_writer is not None:
            summary_pb2 = protos.load("summary_pb2")
            summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(
                tag=self._summary_tag, simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, int(global_step))
        logging.info("%s: %g", self._summary_tag, steps_per_sec)


# ---- saving --------------------------------------------------------------------------------------
class CheckpointSaverListener:
    """Code to run around each save of a :class:`CheckpointSaverHook`
    (``tf.train.CheckpointSaverListener``).

    ``begin()`` runs in the hook's ``begin``; ``before_save`` and
    ``after_save(session, global_step_value)`` around every save (the one
    when the session opens included); ``end(session, global_step_value)``
    after the last save.  ``after_save`` returning True stops training —
    this is how ``train_and_evaluate`` evaluates each new checkpoint.
    """

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves ``checkpoint_dir/model.ckpt-<global_step>`` (``tf.train.CheckpointSaverHook``).

    It saves when the session is created, then every ``save_steps`` global
    steps or ``save_secs`` seconds, and at ``end`` unless that step is saved.

    Args:
        checkpoint_dir: where checkpoints go.
        save_secs: save every this many seconds...
        save_steps: ... or every this many global steps (exactly one).
        saver: the Saver to use; default: the scaffold's, else the one
            Saver in ``GraphKeys.SAVERS``.
        checkpoint_basename: the file prefix (``model.ckpt``).
        scaffold: a :class:`~minitf.train.monitored_session.Scaffold` whose saver to use.
        listeners: :class:`CheckpointSaverListener` objects called around each save.
        save_graph_def: also write the meta graph with each checkpoint.

    Raises:
        ValueError: if both ``saver`` and ``scaffold`` are given, or not
            exactly one of ``save_secs`` and ``save_steps``.
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None,
                 save_graph_def=True):
        logging.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def

    def begin(self):
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        # TF writes graph.pbtxt into checkpoint_dir here, creating it if need be.
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        # The first checkpoint, so that the run is resumable from its start.
        global_step = int(session.run(self._global_step_tensor))
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(run_values.results + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step):
        """Saves at ``step``; returns True if a listener asks to stop."""
        logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        logging.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logging.info("A CheckpointSaverListener requested that training be stopped. "
                             "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = graph_lib.get_default_graph().get_collection(graph_lib.GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError("No items in collection %s. Please add a saver to the collection "
                               "or provide a saver or scaffold." % graph_lib.GraphKeys.SAVERS)
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection %s. Please indicate which one "
                               "to use by passing it to the constructor."
                               % graph_lib.GraphKeys.SAVERS)
        self._saver = savers[0]
        return self._saver


class SummarySaverHook(SessionRunHook):
    """Writes the summary op's output every N steps or seconds (``tf.train.SummarySaverHook``).

    Args:
        save_steps: write every this many global steps...
        save_secs: ... or every this many seconds (exactly one).
        output_dir: the event file's directory.
        summary_writer: a ``FileWriter`` to use instead.
        scaffold: a Scaffold whose ``summary_op`` to run...
        summary_op: ... or this op (or list of ops) — exactly one of the two.

    Raises:
        ValueError: unless exactly one of ``scaffold`` and ``summary_op`` is given.
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = SummaryWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None
                                 or self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary and self._get_summary_op() is not None:
            requests["summary"] = self._get_summary_op()
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", []):
                self._summary_writer.add_summary(summary, int(global_step))
        self._next_step = global_step + 1

    def end(self, session):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        summary_op = self._summary_op
        if summary_op is None:
            summary_op = self._scaffold.summary_op
        if summary_op is None or isinstance(summary_op, list):
            return summary_op
        return [summary_op]


# ---- small hooks ---------------------------------------------------------------------------------
class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first step until the global step reaches ``wait_until_step``
    (``tf.train.GlobalStepWaiterHook``) — lets workers start after the chief."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use GlobalStepWaiterHook.")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logging.info("Waiting for global step %d before starting training.",
                     self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                logging.info("Waiting for global step %d before starting training. Current "
                             "step is %d.", self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values in
    :attr:`final_ops_values` (``tf.train.FinalOpsHook``) — how ``evaluate``
    reads its metrics."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops,
                                                 feed_dict=self._final_ops_feed_dict)
        except errors.OutOfRangeError:
            logging.warning("An OutOfRangeError was raised by the ops of FinalOpsHook: they "
                            "read from an input source. Final ops (e.g. metric values) should "
                            "read variables only.")
            raise


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` into every run (``tf.train.FeedFnHook``)."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
           "GlobalStepWaiterHook", "LoggingTensorHook", "NanLossDuringTrainingError",
           "NanTensorHook", "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook",
           "SummarySaverHook", "SummaryWriterCache"]
