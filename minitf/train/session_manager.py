"""``tf.train.SessionManager``: open a session whose model is ready to run.

"Ready" means every variable has a value.  A chief gets there by
restoring the newest checkpoint (or running the init op when there is
none), then running the *local* init op (local variables: metric
counters, epoch counters); a non-chief worker waits until the chief has
done so.  Whether the model is ready is itself a graph op,
:func:`report_uninitialized_variables`, whose run returns the names of the
variables still without a value (an empty vector: ready).

Mirrors ``tensorflow/python/training/session_manager.py``.
"""

import time

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework import graph as graph_lib
from minitf.ops import variables
from minitf.ops.joining_ops import stack
from minitf.ops.comparison_ops import logical_not
from minitf.ops.constant_op import constant
from minitf.ops.mask_ops import boolean_mask
from minitf.platform import tf_logging as logging
from minitf.runtime.session import Session
from minitf.train import checkpoint_state


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """An op returning the names of the variables without a value, a string vector
    (``tf.report_uninitialized_variables``).

    Args:
        var_list: the variables to check (default: global and local variables).
        name: the op's name.
    """
    if var_list is None:
        var_list = variables.global_variables() + variables.local_variables()
    with graph_lib.get_default_graph().name_scope(name):
        if not var_list:
            return constant([], dtype=dtypes.string)
        names = constant([v.op.name for v in var_list])
        mask = logical_not(stack([variables.is_variable_initialized(v) for v in var_list]))
        return boolean_mask(names, mask)


def _maybe_name(obj):
    """The name of an op or tensor, for messages."""
    return getattr(obj, "name", obj)


class SessionManager:
    """Creates sessions with an initialized or restored model (``tf.train.SessionManager``).

    Args:
        local_init_op: run in every new session once the global variables are
            ready (initialises local variables).
        ready_op: returns the names of uninitialised variables; empty means ready.
        ready_for_local_init_op: the same check before ``local_init_op`` runs.
        graph: the graph the sessions run (default: the default graph).
        recovery_wait_secs: how long to sleep between readiness checks.
        local_init_feed_dict: feeds for ``local_init_op``.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        del local_init_run_options  # minitf's Session.run takes no RunOptions here.
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph or graph_lib.get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None,
                        init_feed_dict=None, init_fn=None, checkpoint_filename_with_path=None):
        """A session in which the model is ready: restored, or initialised (chief).

        Restores ``checkpoint_filename_with_path`` or the newest checkpoint of
        ``checkpoint_dir``; without one runs ``init_op`` and ``init_fn``; then
        the local init op, then checks ``ready_op``.

        Raises:
            RuntimeError: if nothing could initialise the model, or it is not
                ready afterwards.
            ValueError: if both ``checkpoint_dir`` and
                ``checkpoint_filename_with_path`` are given.
        """
        sess, is_loaded_from_checkpoint = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path, wait_for_checkpoint,
            max_wait_secs, config)
        if not is_loaded_from_checkpoint:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        local_init_success, msg = self._try_run_local_init_op(sess)
        if not local_init_success:
            raise RuntimeError("Init operations did not make model ready for local_init.  "
                               "Init op: %s, init fn: %s, error: %s"
                               % (_maybe_name(init_op), init_fn, msg))
        is_ready, msg = self._ready(self._ready_op, sess)
        if not is_ready:
            raise RuntimeError("Init operations did not make model ready.  Init op: %s, init "
                               "fn: %s, local_init_op: %s, error: %s"
                               % (_maybe_name(init_op), init_fn,
                                  _maybe_name(self._local_init_op), msg))
        return sess

    def wait_for_session(self, master, config=None, max_wait_secs=float("inf")):
        """A session whose model someone else (the chief) made ready (non-chief workers).

        Raises:
            DeadlineExceededError: if it is not ready within ``max_wait_secs``.
        """
        start = time.time()
        while True:
            sess = Session(master, graph=self._graph, config=config)
            ready_for_local, msg = self._try_run_local_init_op(sess)
            if ready_for_local:
                is_ready, msg = self._ready(self._ready_op, sess)
                if is_ready:
                    return sess
            sess.close()
            remaining = max_wait_secs - (time.time() - start)
            if remaining < self._recovery_wait_secs:
                raise errors.DeadlineExceededError(
                    None, None, "Session was not ready after waiting %d secs." % max_wait_secs)
            logging.info("Waiting for model to be ready.  Ready: %s", msg)
            time.sleep(self._recovery_wait_secs)

    def _restore_checkpoint(self, master, saver, checkpoint_dir, checkpoint_filename_with_path,
                            wait_for_checkpoint, max_wait_secs, config):
        """A new session, and whether a checkpoint was restored into it."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        wait_time = 0
        ckpt = checkpoint_state.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if not wait_for_checkpoint or wait_time >= max_wait_secs:
                return sess, False
            logging.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            wait_time += self._recovery_wait_secs
            ckpt = checkpoint_state.get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(ckpt.all_model_checkpoint_paths)
        return sess, True

    def _try_run_local_init_op(self, sess):
        """Runs ``local_init_op`` if the global variables are ready; ``(ran_or_none, msg)``."""
        if self._local_init_op is None:
            return True, None
        is_ready_for_local_init, msg = self._ready(self._ready_for_local_init_op, sess)
        if not is_ready_for_local_init:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        logging.info("Done running local_init_op.")
        return True, None

    @staticmethod
    def _ready(op, sess):
        """``(True, None)`` if ``op`` reports no uninitialised variable, else ``(False, msg)``."""
        if op is None:
            return True, None
        ready_value = np.asarray(sess.run(op))
        if ready_value.size == 0:
            return True, None
        names = ", ".join(name.decode("utf-8") if isinstance(name, bytes) else str(name)
                          for name in ready_value.ravel())
        return False, "Variables not initialized: " + names
