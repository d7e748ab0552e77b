"""``tf.estimator.train_and_evaluate``: train, and evaluate every new checkpoint.

The usual TF1 recipe for a long run: describe the training (``TrainSpec``:
input and ``max_steps``) and the evaluation (``EvalSpec``: input and
``steps``), and let one call alternate them::

    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=10000)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=60)
    metrics, _ = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)

On one machine (the only case minitf has) this is ``estimator.train`` with
a :class:`~minitf.estimator.estimator.CheckpointSaverListener` that runs
``estimator.evaluate`` after a checkpoint is saved — unless the last
evaluation was less than ``throttle_secs`` ago — and once more on the final
checkpoint.  The checkpoint saved when training starts is skipped: the model
has not trained yet.  How often checkpoints are saved is the estimator's
``RunConfig`` (``save_checkpoints_steps`` or ``save_checkpoints_secs``).

Mirrors ``tensorflow_estimator/python/estimator/training.py`` (TF 1.x,
``_TrainingExecutor.run_local``).
"""

import collections
import logging
import time

from minitf.estimator.estimator import CheckpointSaverListener, Estimator, _check_hooks_type

_logger = logging.getLogger("minitf.estimator")


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """What ``train_and_evaluate`` trains on (``tf.estimator.TrainSpec``).

    Args:
        input_fn: the training input function.
        max_steps: train until the global step reaches this (None: until the
            input ends).
        hooks: ``tf.train.SessionRunHook`` objects for ``train``.

    Raises:
        TypeError: if ``input_fn`` is not callable or a hook is not a ``SessionRunHook``.
        ValueError: if ``max_steps`` <= 0.
    """

    __slots__ = ()

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %s" % (input_fn,))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % (max_steps,))
        return super().__new__(cls, input_fn, max_steps, tuple(_check_hooks_type(hooks)))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """How ``train_and_evaluate`` evaluates (``tf.estimator.EvalSpec``).

    Args:
        input_fn: the evaluation input function.
        steps: batches per evaluation (None: until the input ends).
        name: passed to ``evaluate``.
        hooks: ``tf.train.SessionRunHook`` objects for ``evaluate``.
        exporters: must be empty (minitf has no SavedModel export).
        start_delay_secs: kept for TF's signature (used by distributed evaluators).
        throttle_secs: evaluate a new checkpoint only if the last evaluation
            was at least this many seconds ago (the final one always runs).

    Raises:
        TypeError: if ``input_fn`` is not callable or a hook is not a ``SessionRunHook``.
        ValueError: if ``steps`` <= 0 or a delay is negative.
    """

    __slots__ = ()

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: %s" % (input_fn,))
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % (steps,))
        if start_delay_secs < 0:
            raise ValueError("Must specify start_delay_secs >= 0, given: %s"
                             % (start_delay_secs,))
        if throttle_secs < 0:
            raise ValueError("Must specify throttle_secs >= 0, given: %s" % (throttle_secs,))
        if exporters:
            raise ValueError("minitf exports no SavedModels: exporters must be empty.")
        return super().__new__(cls, input_fn, steps, name, tuple(_check_hooks_type(hooks)), (),
                               start_delay_secs, throttle_secs)


class _NewCheckpointListenerForEvaluate(CheckpointSaverListener):
    """Evaluates after a checkpoint is saved, at most once per ``throttle_secs``."""

    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._is_first_run = True
        self._last_evaluated_step = None
        self._last_evaluated_time = None
        self.eval_result = None

    def after_save(self, session, global_step_value):
        if self._is_first_run:  # the checkpoint saved before training: nothing learnt yet
            self._is_first_run = False
            return
        elapsed = (None if self._last_evaluated_time is None
                   else time.time() - self._last_evaluated_time)
        if elapsed is None or elapsed >= self._eval_spec.throttle_secs:
            self._evaluate(global_step_value)
        else:
            _logger.info("Skip the current checkpoint eval due to throttle secs (%s secs).",
                         self._eval_spec.throttle_secs)

    def end(self, session, global_step_value):
        if global_step_value != self._last_evaluated_step:
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value):
        self.eval_result = self._estimator.evaluate(
            self._eval_spec.input_fn, steps=self._eval_spec.steps, name=self._eval_spec.name,
            hooks=self._eval_spec.hooks)
        self._last_evaluated_step = global_step_value
        self._last_evaluated_time = time.time()


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` and evaluates its checkpoints as they appear
    (``tf.estimator.train_and_evaluate``, local mode).

    Args:
        estimator: an :class:`~minitf.estimator.estimator.Estimator`.
        train_spec: a :class:`TrainSpec`.
        eval_spec: an :class:`EvalSpec`.

    Returns:
        ``(metrics, export_results)``: the last evaluation's dict (None if
        there was no training step to evaluate) and ``[]`` (no exporters).

    Raises:
        TypeError: if the arguments are not an Estimator, TrainSpec and EvalSpec.
    """
    if not isinstance(estimator, Estimator):
        raise TypeError("estimator must be a tf.estimator.Estimator instance; got %s"
                        % (estimator,))
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("`train_spec` must have type `tf.estimator.TrainSpec`. Got: %s"
                        % type(train_spec))
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("`eval_spec` must have type `tf.estimator.EvalSpec`. Got: %s"
                        % type(eval_spec))
    _logger.info("Start train and evaluate loop. The evaluate will happen after every "
                 "checkpoint. Checkpoint frequency is determined based on RunConfig "
                 "arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
                 estimator.config.save_checkpoints_steps, estimator.config.save_checkpoints_secs)
    listener = _NewCheckpointListenerForEvaluate(estimator, eval_spec)
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                    saving_listeners=[listener])
    return listener.eval_result, []
