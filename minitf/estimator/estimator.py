"""``tf.estimator.Estimator``: train, evaluate and predict with one model function.

An Estimator owns a *model function* and a *model directory*, and nothing
else: no graph, no session, no variables in memory.  Each of its three
methods does the whole TF1 routine by itself, in a graph of its own:

1. make a new ``tf.Graph``, set the seed, create the global step;
2. call the ``input_fn`` (tensors, or a ``tf.data.Dataset`` to iterate);
3. call the ``model_fn`` with the features, labels and the mode, getting an
   :class:`~minitf.estimator.model_fn.EstimatorSpec`;
4. open a ``tf.Session``: restore the newest checkpoint of ``model_dir`` if
   there is one, else initialise the variables;
5. run the spec's ops until ``steps`` or the input's ``OutOfRangeError``;
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

TF1 runs these loops in a ``MonitoredSession`` with session hooks; minitf
writes the loop out (:meth:`Estimator.train`) and has no session hooks, only
saving listeners (:class:`CheckpointSaverListener`) called around each save.

Mirrors ``tensorflow_estimator/python/estimator/estimator.py`` (TF 1.x).
"""

import copy
import inspect
import logging
import math
import os
import tempfile
import time

import numpy as np

import minitf as tf
from minitf import metrics
from minitf.estimator.model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from minitf.estimator.run_config import RunConfig

_logger = logging.getLogger("minitf.estimator")


class NanLossDuringTrainingError(RuntimeError):
    """The training loss became NaN (``tf.train.NanLossDuringTrainingError``)."""

    def __str__(self):
        return "NaN loss during training."


class CheckpointSaverListener:
    """Code to run around each checkpoint ``train`` saves (``tf.train.CheckpointSaverListener``).

    Subclass it and pass instances as ``Estimator.train(saving_listeners=...)``:
    ``begin()`` runs before the training session opens, ``before_save`` and
    ``after_save(session, global_step_value)`` around every save (the one
    at the start of ``train`` included), ``end(session, global_step_value)``
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
        return tf.train.latest_checkpoint(self._model_dir)

    def get_variable_names(self):
        """The names of the variables in the newest checkpoint.

        Raises:
            ValueError: if ``model_dir`` has no checkpoint yet.
        """
        return [name for name, _ in tf.train.list_variables(self._checked_checkpoint())]

    def get_variable_value(self, name):
        """The value of variable ``name`` in the newest checkpoint, a NumPy array."""
        return tf.train.load_variable(self._checked_checkpoint(), name)

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
        ``max_steps``, or when ``input_fn``'s data run out (OutOfRangeError),
        whichever comes first; it always saves a checkpoint at the end.

        Args:
            input_fn: returns ``(features, labels)`` or a Dataset of them.
            hooks: not supported by minitf (must be empty).
            steps: how many training steps to run (None: until the input ends).
            max_steps: train until the global step reaches this; if the
                checkpoint is already there, do nothing.
            saving_listeners: a list of :class:`CheckpointSaverListener`, called
                around every checkpoint this call saves.

        Returns:
            ``self``, so that calls can be chained.

        Raises:
            ValueError: if both ``steps`` and ``max_steps`` are given, or one is <= 0.
            NanLossDuringTrainingError: if the loss becomes NaN.
        """
        _check_no_hooks(hooks)
        listeners = list(saving_listeners or [])
        for listener in listeners:
            if not isinstance(listener, CheckpointSaverListener):
                raise TypeError("saving_listeners must be a list of CheckpointSaverListener, "
                                "given: %s" % (listener,))
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % (steps,))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: %s" % (max_steps,))
        if max_steps is not None and max_steps <= self._checkpoint_global_step():
            _logger.info("Skipping training since max_steps has already saved.")
            return self
        os.makedirs(self._model_dir, exist_ok=True)
        with tf.Graph().as_default() as graph:
            global_step = self._create_global_step(graph)
            features, labels = self._get_features_and_labels(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config)
            # Read the global step *after* the train op: one run returns both.
            train_op = spec.train_op.op if isinstance(spec.train_op, tf.Tensor) else spec.train_op
            with tf.control_dependencies([train_op]):
                step_after_train = global_step.read_value()
            saver = self._saver()
            for listener in listeners:
                listener.begin()
            with tf.Session(graph=graph, config=self._config.session_config) as sess:
                self._restore_or_initialize(sess, saver, self.latest_checkpoint())
                loss = self._train_loop(sess, saver, listeners, global_step, step_after_train,
                                        spec.loss, steps, max_steps)
        _logger.info("Loss for final step: %s.", loss)
        return self

    def _train_loop(self, sess, saver, listeners, global_step, step_after_train, loss, steps,
                    max_steps):
        """Runs training steps and saves checkpoints; returns the last loss.

        One ``sess.run`` per step fetches the loss and the global step after
        the update.  The loop ends after ``steps`` runs, at ``max_steps``, on
        OutOfRangeError, or when a saving listener asks to stop; then it
        saves unless this step is already saved.
        """
        step = int(sess.run(global_step))
        start_step = step
        stop = self._save(sess, saver, listeners, step)
        last_saved_step, last_saved_time = step, time.time()
        loss_value = None
        local_steps = 0
        while (not stop and (steps is None or local_steps < steps)
               and (max_steps is None or step < max_steps)):
            try:
                step_value, loss_value = sess.run([step_after_train, loss])
            except tf.errors.OutOfRangeError:
                break
            step, local_steps = int(step_value), local_steps + 1
            if math.isnan(loss_value):
                raise NanLossDuringTrainingError()
            if local_steps == 1 or step % self._config.log_step_count_steps == 0:
                _logger.info("loss = %s, step = %d", loss_value, step)
            if self._checkpoint_due(step, last_saved_step, last_saved_time):
                stop = self._save(sess, saver, listeners, step)
                last_saved_step, last_saved_time = step, time.time()
        if step == start_step and local_steps > 0:
            _logger.warning("The global step did not increase: pass "
                            "global_step=tf.train.get_global_step() to the optimizer's minimize.")
        if step != last_saved_step:
            self._save(sess, saver, listeners, step)
        for listener in listeners:
            listener.end(sess, step)
        return loss_value

    def _checkpoint_due(self, step, last_saved_step, last_saved_time):
        every_steps = self._config.save_checkpoints_steps
        every_secs = self._config.save_checkpoints_secs
        if every_steps is not None:
            return step >= last_saved_step + every_steps
        return every_secs is not None and time.time() >= last_saved_time + every_secs

    def _saver(self):
        """The Saver of all global variables, keeping ``keep_checkpoint_max`` checkpoints."""
        saver = tf.train.Saver(
            sharded=True, max_to_keep=self._config.keep_checkpoint_max,
            keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
            save_relative_paths=True)
        tf.get_default_graph().add_to_collection(tf.GraphKeys.SAVERS, saver)
        return saver

    def _save(self, sess, saver, listeners, step):
        """Saves ``model.ckpt-<step>`` between the listeners' ``before_save`` and
        ``after_save``; returns True if a listener asks training to stop."""
        for listener in listeners:
            listener.before_save(sess, step)
        _logger.info("Saving checkpoints for %d into %s.", step,
                     os.path.join(self._model_dir, "model.ckpt"))
        saver.save(sess, os.path.join(self._model_dir, "model.ckpt"), global_step=step)
        stop = False
        for listener in listeners:
            if listener.after_save(sess, step):
                _logger.info("A CheckpointSaverListener requested that training be stopped. "
                             "listener: %s", listener)
                stop = True
        return stop

    # ---- evaluate -------------------------------------------------------------------------------
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model on the batches of ``input_fn``.

        Restores ``checkpoint_path`` (default: the newest checkpoint; without
        one, evaluates freshly initialised variables), runs every metric's
        ``update_op`` per batch until ``steps`` batches or OutOfRangeError,
        then reads the metrics' values.

        Args:
            input_fn: returns ``(features, labels)`` or a Dataset of them;
                it must end (``num_epochs=1``) unless ``steps`` is given.
            steps: how many batches to evaluate (None: until the input ends).
            hooks: not supported by minitf (must be empty).
            checkpoint_path: the checkpoint to evaluate.
            name: kept for TF's signature (TF writes results under ``eval_<name>``).

        Returns:
            A dict: the ``eval_metric_ops``' values, ``loss`` (the mean over
            batches of the spec's loss) and ``global_step``.

        Raises:
            ValueError: if ``steps`` <= 0, or ``eval_metric_ops`` uses the keys
                ``loss`` or ``global_step``.
        """
        del name
        _check_no_hooks(hooks)
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: %s" % (steps,))
        checkpoint_path = self._checkpoint_to_use(checkpoint_path, "evaluate")
        with tf.Graph().as_default() as graph:
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
            update_op = tf.group(*[update for _, update in eval_metric_ops.values()])
            values = {key: value for key, (value, _) in eval_metric_ops.items()}
            values["global_step"] = global_step
            saver = self._saver()
            with tf.Session(graph=graph, config=self._config.session_config) as sess:
                self._restore_or_initialize(sess, saver, checkpoint_path)
                evaluated = 0
                while steps is None or evaluated < steps:
                    try:
                        sess.run(update_op)
                    except tf.errors.OutOfRangeError:
                        break
                    evaluated += 1
                results = sess.run(values)
        _logger.info("Saving dict for global step %d: %s", results["global_step"],
                     ", ".join("%s = %s" % kv for kv in sorted(results.items())))
        return results

    # ---- predict -------------------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields the model's predictions for the features of ``input_fn``.

        A generator: nothing is built until the first ``next()``.  It runs
        ``predictions`` batch after batch until OutOfRangeError (so
        ``input_fn`` must end: ``num_epochs=1``).

        Args:
            input_fn: returns features, ``(features, labels)`` (labels are
                ignored) or a Dataset of either.
            predict_keys: the prediction keys to return (None: all).
            hooks: not supported by minitf (must be empty).
            checkpoint_path: the checkpoint to use (default: the newest;
                without one, freshly initialised variables).
            yield_single_examples: yield one dict per example (True) or per batch.

        Yields:
            Dicts ``{key: array}`` (or arrays, if ``predictions`` is one tensor).

        Raises:
            ValueError: if a ``predict_keys`` entry is not a prediction, or the
                predictions' batch sizes differ.
        """
        _check_no_hooks(hooks)
        checkpoint_path = self._checkpoint_to_use(checkpoint_path, "predict")
        with tf.Graph().as_default() as graph:
            self._create_global_step(graph)
            features, _ = self._get_features_and_labels(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self._config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            saver = self._saver()
            with tf.Session(graph=graph, config=self._config.session_config) as sess:
                self._restore_or_initialize(sess, saver, checkpoint_path)
                while True:
                    try:
                        batch = sess.run(predictions)
                    except tf.errors.OutOfRangeError:
                        return
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
            tf.set_random_seed(self._config.tf_random_seed)
        return tf.train.get_or_create_global_step(graph)

    def _checkpoint_global_step(self):
        path = self.latest_checkpoint()
        return 0 if path is None else int(tf.train.load_variable(path, "global_step"))

    def _checkpoint_to_use(self, checkpoint_path, what):
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            _logger.info("Could not find trained model in model_dir: %s, running initialization "
                         "to %s.", self._model_dir, what)
        return checkpoint_path

    @staticmethod
    def _restore_or_initialize(sess, saver, checkpoint_path):
        """Global variables from the checkpoint (or their initialisers); local ones initialised."""
        if checkpoint_path is None:
            sess.run(tf.global_variables_initializer())
        else:
            saver.restore(sess, checkpoint_path)
        sess.run(tf.local_variables_initializer())

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
        with tf.device("/cpu:0"):
            return input_fn(**kwargs)

    def _get_features_and_labels(self, input_fn, mode):
        """``(features, labels)`` from ``input_fn``'s tensors or Dataset (labels may be None)."""
        result = self._call_input_fn(input_fn, mode)
        if isinstance(result, tf.data.Dataset):
            result = tf.data.make_one_shot_iterator(result).get_next()
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
        _logger.warning("Using temporary folder as model directory: %s", model_dir)
    return model_dir


def _check_no_hooks(*hook_lists):
    for hooks in hook_lists:
        if hooks:
            raise ValueError("minitf's Estimator runs no SessionRunHooks; got %s" % (hooks,))


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
