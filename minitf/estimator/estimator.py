"""``tf.estimator.Estimator``: train, evaluate and predict with one model function.

An Estimator owns a *model function* and a *model directory*, and nothing
else: no graph, no session, no variables in memory.  Each of its three
methods does the whole TF1 routine by itself, in a graph of its own:

1. make a new ``tf.Graph``, set the seed, create the global step;
2. call the ``input_fn`` (tensors, or a ``tf.data.Dataset`` to iterate);
3. call the ``model_fn`` with the features, labels and the mode, getting an
   :class:`~minitf.estimator.model_fn.EstimatorSpec`;
4. open a ``tf.train.MonitoredSession`` with the hooks: restore the newest
   checkpoint of ``model_dir`` if there is one, else initialise the variables;
5. run the spec's ops until a hook stops the loop (``steps``) or the input's
   ``OutOfRangeError`` ends it;
6. ``train`` saves ``model_dir/model.ckpt-<global_step>`` (when it starts,
   every ``save_checkpoints_steps``/``_secs``, and when it stops), which is
   how the next call — ``evaluate``, ``predict``, or ``train`` again —
   resumes where this one stopped.

Example:
    >>> estimator = tf.estimator.Estimator(model_fn, model_dir="/tmp/model")
    >>> estimator.train(train_input_fn, steps=1000)     # global_step 1000
    >>> estimator.train(train_input_fn, steps=1000)     # resumes: global_step 2000
    >>> estimator.evaluate(eval_input_fn)
    {'loss': 0.11, 'global_step': 2000}

Each loop is a ``while not sess.should_stop(): sess.run(...)`` in a monitored
session (:mod:`minitf.train.monitored_session`); the work around it — stopping
at a step, logging the loss, saving checkpoints, catching a NaN loss, reading
the metrics at the end — is done by session hooks
(:mod:`minitf.train.basic_session_run_hooks`), yours and the spec's included.

Mirrors ``tensorflow_estimator/python/estimator/estimator.py`` (TF 1.x).
"""

import copy
import inspect
import os
import tempfile
import time

import numpy as np

from minitf import metrics
from minitf.api_scopes import add_to_collection, device, get_collection, set_random_seed
from minitf.data.dataset import Dataset
from minitf.data.iterator import make_one_shot_iterator
from minitf.estimator.model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from minitf.estimator.run_config import RunConfig
from minitf.framework.graph import Graph, GraphKeys
from minitf.ops import control_flow_ops
from minitf.platform import tf_logging as logging
from minitf.train import checkpoint_state, checkpoint_utils, training_util
# TF1 defines CheckpointSaverListener and NanLossDuringTrainingError in tf.train; the
# Estimator module re-exports them.
from minitf.train.basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook, CheckpointSaverListener, FinalOpsHook, LoggingTensorHook,
    NanLossDuringTrainingError, NanTensorHook, StopAtStepHook)
from minitf.train.monitored_session import (
    ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession)
from minitf.train.saver import Saver
from minitf.train.session_run_hook import SessionRunHook


class Estimator:
    """Trains, evaluates and predicts with a ``model_fn`` (``tf.estimator.Estimator``).

    Args:
        model_fn: ``model_fn(features, labels, mode, params, config)`` ->
            :class:`EstimatorSpec`; ``labels``, ``mode``, ``params`` and
            ``config`` are passed only if the function has such arguments.
        model_dir: the directory of checkpoints; None: ``config.model_dir``,
            or a new temporary directory.
        config: a :class:`~minitf.estimator.run_config.RunConfig`.
        params: a dict passed to ``model_fn`` (a copy).
        warm_start_from: not supported by minitf (must be None).

    Raises:
        ValueError: if ``model_fn`` has no ``features`` argument, ``params`` is
            given to a ``model_fn`` without ``params``, ``config`` is not a
            RunConfig, or ``model_dir`` and ``config.model_dir`` disagree.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if warm_start_from is not None:
            raise ValueError("warm_start_from is not supported by minitf's Estimator.")
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError("config must be an instance of `RunConfig`, but provided %s."
                             % (config,))
        _verify_model_fn_args(model_fn, params)
        self._config = config.replace(model_dir=_resolve_model_dir(model_dir, config))
        self._model_dir = self._config.model_dir
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})

    # ---- properties ----------------------------------------------------------------------------
    @property
    def model_dir(self):
        return self._model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self):
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The ``model_fn`` as ``fn(features, labels, mode, config)``."""
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)
        return public_model_fn

    # ---- reading the model directory -------------------------------------------------------------
    def latest_checkpoint(self):
        """The newest checkpoint prefix in ``model_dir``, or None."""
        return checkpoint_state.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        """The names of the variables in the newest checkpoint.

        Raises:
            ValueError: if ``model_dir`` has no checkpoint yet.
        """
        return [name for name, _ in checkpoint_utils.list_variables(self._checked_checkpoint())]

    def get_variable_value(self, name):
        """The value of variable ``name`` in the newest checkpoint, a NumPy array."""
        return checkpoint_utils.load_variable(self._checked_checkpoint(), name)

    def _checked_checkpoint(self):
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError("Could not find trained model in model_dir: %s." % self._model_dir)
        return path

    # ---- train -----------------------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains the model for ``steps`` more steps, or up to ``max_steps``.

        Training resumes from the newest checkpoint of ``model_dir`` and
        stops after ``steps`` steps, when the global step reaches
        ``max_steps``, when ``input_fn``'s data run out (OutOfRangeError), or
        when a hook requests a stop, whichever comes first.  The loop is TF1's
        ``MonitoredTrainingSession`` loop, with these hooks: yours, a
        ``StopAtStepHook`` for ``steps``/``max_steps``, a ``NanTensorHook``, a
        ``LoggingTensorHook`` of the loss and step every
        ``log_step_count_steps``, the spec's ``training_hooks`` and
        ``training_chief_hooks``, and a ``CheckpointSaverHook`` saving every
        ``save_checkpoints_steps``/``_secs`` (and when it starts and stops).

        Args:
            input_fn: returns ``(features, labels)`` or a Dataset of them.
            hooks: ``tf.train.SessionRunHook`` objects to run in the training loop.
            steps: how many training steps to run (None: until the input ends).
            max_steps: train until the global step reaches this; if the
                checkpoint is already there, do nothing.
            saving_listeners: a list of ``tf.train.CheckpointSaverListener``,
                called around every checkpoint this call saves.

        Returns:
            ``self``, so that calls can be chained.

        Raises:
            ValueError: if both ``steps`` and ``max_steps`` are given, or one is
                <= 0, or ``saving_listeners`` are given but no checkpoint is saved.
            TypeError: if a hook or a listener has the wrong type.
            NanLossDuringTrainingError: if the loss becomes NaN.
        """
        hooks = _check_hooks_type(hooks)
        listeners = _check_listeners_type(saving_listeners)
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % (steps,))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % (max_steps,))
        if max_steps is not None and max_steps <= self._checkpoint_global_step():
            logging.info("Skipping training since max_steps has already saved.")
            return self
        if steps is not None or max_steps is not None:
            hooks.append(StopAtStepHook(num_steps=steps, last_step=max_steps))
        os.makedirs(self._model_dir, exist_ok=True)
        with Graph().as_default() as graph:
            global_step = self._create_global_step(graph)
            features, labels = self._get_features_and_labels(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config)
            loss = self._train_with_estimator_spec(spec, global_step, hooks, listeners)
        logging.info("Loss for final step: %s.", loss)
        return self

    def _train_with_estimator_spec(self, spec, global_step, hooks, listeners):
        """Runs ``spec.train_op`` in a MonitoredTrainingSession until a hook stops it;
        returns the last loss."""
        worker_hooks = list(hooks) + [NanTensorHook(spec.loss)]
        if self._config.log_step_count_steps is not None:
            worker_hooks.append(LoggingTensorHook(
                {"loss": spec.loss, "step": global_step},
                every_n_iter=self._config.log_step_count_steps))
        worker_hooks.extend(spec.training_hooks)
        self._ensure_saver(spec)
        saver_hooks = [hook for hook in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(hook, CheckpointSaverHook)]
        chief_hooks = []
        if (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps) \
                and not saver_hooks:
            chief_hooks = [CheckpointSaverHook(
                self._model_dir, save_secs=self._config.save_checkpoints_secs,
                save_steps=self._config.save_checkpoints_steps, scaffold=spec.scaffold)]
            saver_hooks = chief_hooks
        if listeners:
            if not saver_hooks:
                raise ValueError("There should be a CheckpointSaverHook to use saving_listeners. "
                                 "Please set one of the RunConfig.save_checkpoints_steps or "
                                 "RunConfig.save_checkpoints_secs.")
            # Like TF: the listeners join the first saver hook.
            saver_hooks[0]._listeners.extend(listeners)
        loss, any_step_done = None, False
        with MonitoredTrainingSession(
                checkpoint_dir=self._model_dir, scaffold=spec.scaffold, hooks=worker_hooks,
                chief_only_hooks=chief_hooks + list(spec.training_chief_hooks),
                save_checkpoint_secs=0,  # saving is the CheckpointSaverHook's job
                save_summaries_steps=self._config.save_summary_steps,
                config=self._config.session_config,
                log_step_count_steps=self._config.log_step_count_steps) as mon_sess:
            while not mon_sess.should_stop():
                _, loss = mon_sess.run([spec.train_op, spec.loss])
                any_step_done = True
        if not any_step_done:
            logging.warning("Training with estimator made no steps. Perhaps input is empty or "
                            "misspecified.")
        return loss

    def _ensure_saver(self, spec):
        """Adds the Estimator's Saver to ``GraphKeys.SAVERS`` unless the spec brings one."""
        if not (spec.scaffold.saver or get_collection(GraphKeys.SAVERS)):
            add_to_collection(GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=self._config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                save_relative_paths=True))

    # ---- evaluate -------------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model on the batches of ``input_fn``.

        Restores ``checkpoint_path`` (default: the newest checkpoint; without
        one, evaluates freshly initialised variables) in a ``MonitoredSession``,
        runs every metric's ``update_op`` per batch until ``steps`` batches,
        OutOfRangeError or a hook's stop request, then reads the metrics'
        values with a ``FinalOpsHook``.

        Args:
            input_fn: returns ``(features, labels)`` or a Dataset of them;
                it must end (``num_epochs=1``) unless ``steps`` is given.
            steps: how many batches to evaluate (None: until the input ends).
            hooks: ``tf.train.SessionRunHook`` objects to run (with the spec's
                ``evaluation_hooks``).
            checkpoint_path: the checkpoint to evaluate.
            name: kept for TF's signature (TF writes results under ``eval_<name>``).

        Returns:
            A dict: the ``eval_metric_ops``' values, ``loss`` (the mean over
            batches of the spec's loss) and ``global_step``.

        Raises:
            ValueError: if ``steps`` <= 0, or ``eval_metric_ops`` uses the keys
                ``loss`` or ``global_step``.
            TypeError: if a hook is not a ``SessionRunHook``.
        """
        del name
        hooks = _check_hooks_type(hooks)
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % (steps,))
        checkpoint_path = self._checkpoint_to_use(checkpoint_path, "evaluate")
        with Graph().as_default() as graph:
            global_step = self._create_global_step(graph)
            features, labels = self._get_features_and_labels(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self._config)
            for reserved in (LOSS_METRIC_KEY, "global_step"):
                if reserved in spec.eval_metric_ops:
                    raise ValueError("Metric with name `%s` is not allowed, because Estimator "
                                     "already defines a default metric with the same name."
                                     % reserved)
            eval_metric_ops = dict(spec.eval_metric_ops)
            eval_metric_ops[LOSS_METRIC_KEY] = metrics.mean(spec.loss)
            update_op = control_flow_ops.group(*[update for _, update in eval_metric_ops.values()])
            values = {key: value for key, (value, _) in eval_metric_ops.items()}
            values["global_step"] = global_step
            self._ensure_saver(spec)
            final_ops_hook = FinalOpsHook(values)
            all_hooks = hooks + list(spec.evaluation_hooks)
            if steps is not None:
                all_hooks.append(_StopAfterNEvalsHook(steps))
            all_hooks.append(final_ops_hook)
            session_creator = ChiefSessionCreator(
                scaffold=spec.scaffold, checkpoint_filename_with_path=checkpoint_path,
                config=self._config.session_config)
            logging.info("Starting evaluation at %s",
                         time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            with MonitoredSession(session_creator=session_creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    session.run(update_op)
            logging.info("Finished evaluation at %s",
                         time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime()))
        results = final_ops_hook.final_ops_values
        logging.info("Saving dict for global step %d: %s", results["global_step"],
                     ", ".join("%s = %s" % kv for kv in sorted(results.items())))
        return results

    # ---- predict -------------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields the model's predictions for the features of ``input_fn``.

        A generator: nothing is built until the first ``next()``.  It runs
        ``predictions`` batch after batch in a ``MonitoredSession`` until
        OutOfRangeError (so ``input_fn`` must end: ``num_epochs=1``) or a
        hook's stop request.

        Args:
            input_fn: returns features, ``(features, labels)`` (labels are
                ignored) or a Dataset of either.
            predict_keys: the prediction keys to return (None: all).
            hooks: ``tf.train.SessionRunHook`` objects to run (with the spec's
                ``prediction_hooks``).
            checkpoint_path: the checkpoint to use (default: the newest;
                without one, freshly initialised variables).
            yield_single_examples: yield one dict per example (True) or per batch.

        Yields:
            Dicts ``{key: array}`` (or arrays, if ``predictions`` is one tensor).

        Raises:
            ValueError: if a ``predict_keys`` entry is not a prediction, or the
                predictions' batch sizes differ.
            TypeError: if a hook is not a ``SessionRunHook``.
        """
        hooks = _check_hooks_type(hooks)
        checkpoint_path = self._checkpoint_to_use(checkpoint_path, "predict")
        with Graph().as_default() as graph:
            self._create_global_step(graph)
            features, _ = self._get_features_and_labels(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self._config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            self._ensure_saver(spec)
            session_creator = ChiefSessionCreator(
                scaffold=spec.scaffold, checkpoint_filename_with_path=checkpoint_path,
                config=self._config.session_config)
            with MonitoredSession(session_creator=session_creator,
                                  hooks=hooks + list(spec.prediction_hooks)) as sess:
                while not sess.should_stop():
                    batch = sess.run(predictions)
                    if not yield_single_examples:
                        yield batch
                    elif not isinstance(batch, dict):
                        yield from batch
                    else:
                        for i in range(_extract_batch_length(batch)):
                            yield {key: value[i] for key, value in batch.items()}

    # ---- the steps every method shares -------------------------------------------------------
    def _create_global_step(self, graph):
        """Sets the graph seed and creates the global step, before the model exists."""
        if self._config.tf_random_seed is not None:
            set_random_seed(self._config.tf_random_seed)
        return training_util.get_or_create_global_step(graph)

    def _checkpoint_global_step(self):
        path = self.latest_checkpoint()
        return 0 if path is None else int(checkpoint_utils.load_variable(path, "global_step"))

    def _checkpoint_to_use(self, checkpoint_path, what):
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            logging.info("Could not find trained model in model_dir: %s, running initialization "
                         "to %s.", self._model_dir, what)
        return checkpoint_path

    def _call_input_fn(self, input_fn, mode):
        """Calls ``input_fn``, passing ``mode``, ``params``, ``config`` if it takes them."""
        args = _fn_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self._config
        with device("/cpu:0"):
            return input_fn(**kwargs)

    def _get_features_and_labels(self, input_fn, mode):
        """``(features, labels)`` from ``input_fn``'s tensors or Dataset (labels may be None)."""
        result = self._call_input_fn(input_fn, mode)
        if isinstance(result, Dataset):
            result = make_one_shot_iterator(result).get_next()
        if isinstance(result, (list, tuple)):
            if len(result) != 2:
                raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
            return result[0], result[1]
        return result, None

    def _call_model_fn(self, features, labels, mode, config):
        """Calls ``model_fn`` with the arguments it takes; checks it returned an EstimatorSpec."""
        args = _fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec


# ---- helpers ------------------------------------------------------------------------------------
def _fn_args(fn):
    """The names of ``fn``'s arguments (of ``__call__`` for callable objects)."""
    return tuple(inspect.signature(fn).parameters)


def _verify_model_fn_args(model_fn, params):
    args = set(_fn_args(model_fn))
    if "features" not in args:
        raise ValueError("model_fn (%s) must include features argument." % (model_fn,))
    if params is not None and "params" not in args:
        raise ValueError("model_fn (%s) does not include params argument, but params (%s) is "
                         "passed to Estimator." % (model_fn, params))


def _resolve_model_dir(model_dir, config):
    if model_dir is not None:
        model_dir = os.fspath(model_dir)
    if model_dir and config.model_dir and model_dir != config.model_dir:
        raise ValueError("model_dir are set both in constructor and RunConfig, but with "
                         "different values. In constructor: '%s', in RunConfig: '%s' "
                         % (model_dir, config.model_dir))
    model_dir = model_dir or config.model_dir
    if not model_dir:
        model_dir = tempfile.mkdtemp()
        logging.warning("Using temporary folder as model directory: %s", model_dir)
    return model_dir


def _check_hooks_type(hooks):
    """``hooks`` as a new list, each checked to be a ``SessionRunHook``."""
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError("All hooks must be SessionRunHook instances, given: %s" % (hook,))
    return hooks


def _check_listeners_type(saving_listeners):
    """``saving_listeners`` as a new list, each checked to be a ``CheckpointSaverListener``."""
    listeners = list(saving_listeners or [])
    for listener in listeners:
        if not isinstance(listener, CheckpointSaverListener):
            raise TypeError("saving_listeners should be a list of CheckpointSaverListener, "
                            "given: %s" % (listener,))
    return listeners


class _StopAfterNEvalsHook(SessionRunHook):
    """Stops evaluation after ``num_evals`` batches, logging ``Evaluation [i/n]``."""

    def __init__(self, num_evals):
        self._num_evals = num_evals
        self._log_frequency = 1 if num_evals < 20 else num_evals // 10
        self._evals_completed = 0

    def after_run(self, run_context, run_values):
        self._evals_completed += 1
        if (self._evals_completed % self._log_frequency == 0
                or self._evals_completed == self._num_evals):
            logging.info("Evaluation [%d/%d]", self._evals_completed, self._num_evals)
        if self._evals_completed >= self._num_evals:
            run_context.request_stop()


def _extract_keys(predictions, predict_keys):
    """The predictions restricted to ``predict_keys``."""
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    if isinstance(predict_keys, str):
        predict_keys = [predict_keys]
    chosen = {key: value for key, value in predictions.items() if key in predict_keys}
    if not chosen:
        raise ValueError("Expected to run at least one output from %s, provided %s."
                         % (sorted(predictions), predict_keys))
    return chosen


def _extract_batch_length(batch):
    """The common first dimension of the prediction arrays."""
    length = None
    for key, value in batch.items():
        value_length = np.shape(value)[0] if np.ndim(value) else None
        if value_length is None:
            raise ValueError("Prediction %s should have a batch dimension; got shape %s."
                             % (key, np.shape(value)))
        if length is not None and value_length != length:
            raise ValueError("Batch length of predictions should be same. %s has different "
                             "batch length than others." % key)
        length = value_length
    return length
