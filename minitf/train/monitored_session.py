"""``tf.train.MonitoredSession``: a session that runs hooks and knows when to stop.

The TF1 training loop is four lines::

    with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt_dir,
                                           hooks=[tf.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

and everything else happens around it, in this order:

1. ``hook.begin()`` for every hook — the last moment ops may be added;
2. the :class:`Scaffold` is finalized: it makes the init op, the ready
   ops, the Saver and the summary op, then **finalizes the graph** (a
   later ``tf.add`` raises ``RuntimeError``);
3. a session creator (:class:`ChiefSessionCreator`) opens a ``tf.Session``
   and restores the newest checkpoint of ``checkpoint_dir`` — or runs the
   init op when there is none — then the local init op;
4. queue runners start under a :class:`~minitf.train.coordinator.Coordinator`,
   and ``hook.after_create_session(session, coord)`` runs;
5. every ``run`` asks each hook's ``before_run`` for extra fetches and
   feeds, makes *one* ``session.run``, and hands each hook its results in
   ``after_run``; a hook's ``run_context.request_stop()`` makes
   ``should_stop()`` True;
6. leaving the ``with`` calls ``hook.end(session)`` and closes the
   session.  An ``OutOfRangeError`` (an input pipeline ran dry) leaving
   the ``with`` counts as a normal end: the hooks' ``end`` runs and the
   error is swallowed.  Any other error skips ``end`` and propagates.

The session is built in layers, each adding one behaviour, as TF does:
``_RecoverableSession`` (re-creates the session after ``AbortedError``/
``UnavailableError``) wraps ``_CoordinatedSession`` (stops the queue
threads on close) wraps ``_HookedSession`` (calls the hooks) wraps the
``tf.Session``.

Mirrors ``tensorflow/python/training/monitored_session.py``.
"""

import sys

from minitf.framework import errors
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys
from minitf.ops import control_flow_ops, variables
from minitf.platform import tf_logging as logging
from minitf.summary import merge_all
from minitf.train import queue_runner
from minitf.train.basic_session_run_hooks import (
    CheckpointSaverHook, StepCounterHook, SummarySaverHook)
from minitf.train.coordinator import Coordinator
from minitf.train.saver import Saver
from minitf.train.session_manager import SessionManager, report_uninitialized_variables
from minitf.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

# The errors after which the session is re-created rather than the loop ended.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
# A default that tells "not given" from None, as in TF's MonitoredTrainingSession.
USE_DEFAULT = object()


class Scaffold:
    """The ops a monitored session needs to make a model ready (``tf.train.Scaffold``).

    Each op left None is taken from its graph collection (``GraphKeys.INIT_OP``,
    ``READY_OP``, ``LOCAL_INIT_OP``, ``SUMMARY_OP``, ``SAVERS``) or made by
    :meth:`finalize`:

    * ``init_op`` — initialises the global variables;
    * ``ready_op`` — names the uninitialised variables (empty: ready);
    * ``ready_for_local_init_op`` — names the uninitialised *global* variables;
    * ``local_init_op`` — initialises the local variables;
    * ``summary_op`` — ``tf.summary.merge_all()`` (None without summaries);
    * ``saver`` — a sharded ``Saver`` of all global variables.

    Args:
        init_fn: ``fn(scaffold, session)`` run after ``init_op`` (e.g. to load
            pre-trained weights).
        copy_from_scaffold: a Scaffold whose fields to take first.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            init_op = init_op or copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold._user_init_fn
            ready_op = ready_op or copy_from_scaffold.ready_op
            ready_for_local_init_op = (ready_for_local_init_op
                                       or copy_from_scaffold.ready_for_local_init_op)
            local_init_op = local_init_op or copy_from_scaffold.local_init_op
            local_init_feed_dict = (local_init_feed_dict
                                    or copy_from_scaffold.local_init_feed_dict)
            summary_op = summary_op or copy_from_scaffold.summary_op
            saver = saver or copy_from_scaffold.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the missing ops and finalizes the graph; returns ``self``."""
        graph = graph_lib.get_default_graph()
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP,
                lambda: control_flow_ops.group(variables.global_variables_initializer()))
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                       merge_all)
        if self._saver is None:
            self._saver = Scaffold.get_or_default(
                "saver", GraphKeys.SAVERS,
                lambda: Saver(sharded=True, allow_empty=True, save_relative_paths=True))
        # The saver builds its save/restore ops now, while the graph is open.
        self._saver.build()
        graph.finalize()
        logging.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one member of ``collection_key``, or ``default_constructor()``
        added to it (None is not added).

        Raises:
            RuntimeError: if the collection holds more than one item.
        """
        graph = graph_lib.get_default_graph()
        elements = graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError("More than one item in the collection \"%s\". Please "
                                   "indicate which one to use by passing it to the tf.Scaffold "
                                   "constructor as:  tf.Scaffold(%s=item to use)"
                                   % (collection_key, arg_name))
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initialises the local variables (TF also initialises lookup tables here)."""
        return control_flow_ops.group(variables.local_variables_initializer())


# ---- session creators ----------------------------------------------------------------------------
class SessionCreator:
    """Makes the ``tf.Session`` a monitored session wraps (``tf.train.SessionCreator``)."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for %s." % self)


class ChiefSessionCreator(SessionCreator):
    """Restores or initialises the model (``tf.train.ChiefSessionCreator``).

    Args:
        scaffold: the :class:`Scaffold` (default: a new one).
        master: the session target (minitf: ``""`` only).
        config: a ``tf.ConfigProto``.
        checkpoint_dir: restore the newest checkpoint here, if any.
        checkpoint_filename_with_path: or restore exactly this checkpoint.
    """

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                ready_op=self._scaffold.ready_op, graph=graph_lib.get_default_graph())
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=self._scaffold.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Waits until the chief has made the model ready (``tf.train.WorkerSessionCreator``)."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        manager = SessionManager(
            local_init_op=self._scaffold.local_init_op,
            local_init_feed_dict=self._scaffold.local_init_feed_dict,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            ready_op=self._scaffold.ready_op, graph=graph_lib.get_default_graph())
        return manager.wait_for_session(self._master, config=self._config,
                                        max_wait_secs=self._max_wait_secs)


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts queue runners, calls ``after_create_session``."""

    def __init__(self, session_creator, hooks, stop_grace_period_secs):
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.coord = None
        self.tf_sess = None

    def create_session(self):
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator(clean_stop_exception_types=[])
        if graph_lib.get_default_graph().get_collection(GraphKeys.QUEUE_RUNNERS):
            queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


# ---- the monitored sessions ----------------------------------------------------------------------
class _MonitoredSession:
    """What :class:`MonitoredSession` and :class:`SingularMonitoredSession` share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = graph_lib.get_default_graph().finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs)
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs ``fetches`` with every hook's ``before_run``/``after_run`` around it."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                              run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)``: it may ``run_with_hooks`` and ``request_stop``.

        Returns what ``step_fn`` returns, or None once it requested a stop.
        """
        step_context = _StepContext(self._tf_sess(), self.run)
        try:
            return step_fn(step_context)
        except _StopRequested:
            self._sess.request_stop()
            return None

    def should_stop(self):
        return self._sess is None or self._sess.should_stop()

    def close(self):
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        # Returning True swallows the exception: the end of the input is a normal end.
        return exception_type is None

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    graph_lib.get_default_graph()._unsafe_unfinalize()

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that calls hooks and recovers from preemption (``tf.train.MonitoredSession``).

    Args:
        session_creator: a :class:`SessionCreator` (default: :class:`ChiefSessionCreator`).
        hooks: the :class:`~minitf.train.session_run_hook.SessionRunHook` objects to call.
        stop_grace_period_secs: how long ``close`` waits for queue threads.

    Example:
        >>> with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=10)]) as s:
        ...     while not s.should_stop():
        ...         s.run(train_op)
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A monitored chief session that does not recover from errors and exposes
    its raw session (``tf.train.SingularMonitoredSession``).

    Args:
        hooks: the hooks to call.
        scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path:
            passed to a :class:`ChiefSessionCreator`.
        stop_grace_period_secs: how long ``close`` waits for queue threads.
    """

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        session_creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(session_creator, hooks, should_recover=False,
                         stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The ``tf.Session`` underneath: its runs call no hooks."""
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """A :class:`MonitoredSession` set up for training (``tf.train.MonitoredTrainingSession``).

    The chief restores from (or initialises into) ``checkpoint_dir`` and,
    when ``checkpoint_dir`` is given, adds the default hooks after yours: a
    :class:`StepCounterHook` every ``log_step_count_steps`` steps, a
    :class:`SummarySaverHook` and a :class:`CheckpointSaverHook`.  A
    non-chief worker waits for the chief and runs ``hooks`` only.

    Checkpoints default to every 600 seconds; giving ``save_checkpoint_steps``
    alone switches to steps (TF's ``USE_DEFAULT`` rule; the same for
    summaries, which default to every 100 steps).  0 or None turns one off.

    Args:
        master: the session target (minitf: ``""``).
        is_chief: whether this process initialises and saves the model.
        checkpoint_dir: where checkpoints and summaries are read and written.
        scaffold: a :class:`Scaffold` (default: a new one).
        hooks: hooks run on every worker.
        chief_only_hooks: hooks run on the chief only (before ``hooks``).
        save_checkpoint_secs, save_checkpoint_steps: the checkpoint period.
        save_summaries_steps, save_summaries_secs: the summary period.
        config: a ``tf.ConfigProto``.
        stop_grace_period_secs: how long ``close`` waits for queue threads.
        log_step_count_steps: how often to log ``global_step/sec`` (None or 0: never).
        max_wait_secs: how long a non-chief waits for the chief.
        summary_dir: where summaries go (default: ``checkpoint_dir``).

    Returns:
        A :class:`MonitoredSession`.
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        session_creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                               max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=session_creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    session_creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir,
                                          master=master, config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if ((save_summaries_steps and save_summaries_steps > 0)
                or (save_summaries_secs and save_summaries_secs > 0)):
            all_hooks.append(SummarySaverHook(
                scaffold=scaffold, save_steps=save_summaries_steps or None,
                save_secs=save_summaries_secs or None, output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0)
                           or (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(
            checkpoint_dir, save_steps=save_checkpoint_steps or None,
            save_secs=save_checkpoint_secs or None, scaffold=scaffold))
    return MonitoredSession(session_creator=session_creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)


# ---- the session layers --------------------------------------------------------------------------
class _WrappedSession:
    """A session wrapping another; ``should_stop`` asks this layer, then the inner one."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    def _check_stop(self):
        return False

    def should_stop(self):
        if self._check_stop():
            return True
        if self._sess is not None:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def close(self):
        if self._sess is not None:
            try:
                self._sess.close()
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)


class _HookedSession(_WrappedSession):
    """Calls the hooks around every run, in one ``session.run`` with their fetches."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def request_stop(self):
        self._should_stop = True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict),
                                        session=self._sess)
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict)
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(
                results=outputs[hook] if hook in outputs else None, options=options,
                run_metadata=run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict):
        """Adds each hook's fetches to ``fetch_dict`` (keyed by the hook); returns the feeds.

        Raises:
            RuntimeError: if two parties feed the same tensor.
        """
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict,
                                          "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds,
                                  "Same tensor is fed by a SessionRunHook and user.")
        return dict(user_feed_dict, **hook_feeds)


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    intersection = set(feeds1) & set(feeds2)
    if intersection:
        raise RuntimeError("%s Conflict(s): %s" % (message, list(intersection)))


class _CoordinatedSession(_WrappedSession):
    """Stops when the coordinator says so; on close stops and joins its threads.

    When a run fails, a queue thread's error (the root cause) is raised in
    place of the run's own, if the coordinator holds one.
    """

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        return self._coord.should_stop()

    def request_stop(self):
        self._sess.request_stop()

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            original = sys.exc_info()[1]
            try:
                try:
                    self._coord.raise_requested_exception()
                except _PREEMPTION_ERRORS:
                    raise
                except Exception:
                    raise original from None
                raise
            finally:
                # The error's traceback holds this frame: without the del, the
                # frame and the error form a cycle that keeps the callers' frames
                # (a suspended Estimator.predict still inside its graph's
                # as_default) alive until the garbage collector happens to run.
                del original

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs,
                             ignore_live_threads=True)
        finally:
            try:
                super().close()
            except _PREEMPTION_ERRORS:
                pass


class _RecoverableSession(_WrappedSession):
    """Re-creates the session (restoring the last checkpoint) after a preemption error."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as error:
                logging.info("An error was raised while a session was being created. This may "
                             "be due to a preemption of a connected worker or parameter server. "
                             "A new session will be created. Error: %s", error)

    def _check_stop(self):
        if self._sess is None:
            return True
        return False

    def request_stop(self):
        self._sess.request_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if self._sess is None:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as error:
                logging.info("An error was raised. This may be due to a preemption in a "
                             "connected worker or parameter server. The current session will "
                             "be closed and a new session will be created. Error: %s", error)
                self.close()


class _StopRequested(Exception):
    """Raised by ``_StepContext.request_stop`` to leave ``step_fn``."""


class _StepContext:
    """What ``run_step_fn``'s ``step_fn`` receives (``MonitoredSession.StepContext``)."""

    def __init__(self, session, run_with_hooks_fn):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self):
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        raise _StopRequested()
