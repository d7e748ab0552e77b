"""``tf.train.SessionRunHook``: code that runs around every ``session.run``.

A training loop is more than ``sess.run(train_op)``: it logs, saves
checkpoints, writes summaries, watches for NaNs and decides when to stop.
TF1 moves each of those jobs into a *hook* that a
:class:`~minitf.train.monitored_session.MonitoredSession` calls at fixed
points of its life::

    hook.begin()                         # graph still editable: add ops here
    hook.after_create_session(sess, coord)   # graph finalized, variables ready
    for every run(fetches):
        args = hook.before_run(run_context)      # may ask for extra fetches/feeds
        ... one session.run of the caller's fetches plus every hook's ...
        hook.after_run(run_context, run_values)  # sees its own results
    hook.end(sess)                       # the loop ended without an error

A hook adds fetches by returning :class:`SessionRunArgs` from ``before_run``;
they ride along in the *same* ``session.run`` as the caller's fetches, and
come back in ``run_values.results``.  A hook asks the loop to stop with
``run_context.request_stop()``.

Mirrors ``tensorflow/python/training/session_run_hook.py``.
"""

import collections


class SessionRunHook:
    """A hook extending ``MonitoredSession.run`` (``tf.train.SessionRunHook``).

    Subclass it and override the calls you need; each default does nothing.
    """

    def begin(self):
        """Called once before the session is created; the graph can still change."""

    def after_create_session(self, session, coord):
        """Called when a new session exists (also after recovering from an abort).

        The graph is finalized; variables are initialized or restored.

        Args:
            session: the ``tf.Session`` that was created.
            coord: the :class:`~minitf.train.coordinator.Coordinator` of its threads.
        """

    def before_run(self, run_context):
        """Called before each ``run``; returns None or :class:`SessionRunArgs` to add.

        Args:
            run_context: a :class:`SessionRunContext`.
        """
        return None

    def after_run(self, run_context, run_values):
        """Called after each ``run`` that succeeded, with this hook's results.

        Args:
            run_context: the same :class:`SessionRunContext` ``before_run`` saw.
            run_values: a :class:`SessionRunValues`.
        """

    def end(self, session):
        """Called once when the session closes without an error (``OutOfRangeError``
        counts as a normal end)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs",
                                            ["fetches", "feed_dict", "options"])):
    """What a hook adds to the next ``session.run`` (``tf.train.SessionRunArgs``).

    Args:
        fetches: anything ``Session.run`` accepts as fetches (None: nothing).
        feed_dict: a dict of extra feeds (a tensor may be fed by one party only).
        options: kept for TF's signature; minitf merges no ``RunOptions``.
    """

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """What a hook knows about the current ``run`` (``tf.train.SessionRunContext``).

    Args:
        original_args: the caller's :class:`SessionRunArgs`.
        session: the raw ``tf.Session`` (runs here call no hooks).
    """

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Asks the loop to stop: ``should_stop()`` is True after this run."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues",
                                              ["results", "options", "run_metadata"])):
    """What ``after_run`` receives (``tf.train.SessionRunValues``).

    ``results`` has the structure of the hook's ``SessionRunArgs.fetches``
    (None if it fetched nothing).
    """
