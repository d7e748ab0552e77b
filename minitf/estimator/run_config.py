"""``tf.estimator.RunConfig``: where and how an Estimator runs.

The settings that are not about the model: the directory of its
checkpoints, the graph-level random seed, how often to save, how many
checkpoints to keep, how often to log, and the ``tf.ConfigProto`` of its
sessions.  A RunConfig is immutable; :meth:`RunConfig.replace` returns a
changed copy::

    config = tf.estimator.RunConfig(tf_random_seed=42, save_checkpoints_steps=100)
    classifier = tf.estimator.DNNClassifier(..., config=config)

minitf runs on one machine, so the cluster settings of TF's RunConfig
(``TF_CONFIG``, parameter servers, distribution strategies) are absent;
``is_chief`` is always True.

Mirrors ``tensorflow_estimator/python/estimator/run_config.py`` (TF 1.x).
"""

_USE_DEFAULT = object()
_DEFAULT_SAVE_CHECKPOINTS_SECS = 600

_FIELDS = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
           "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
           "keep_checkpoint_every_n_hours", "log_step_count_steps")


class RunConfig:
    """An Estimator's run settings (``tf.estimator.RunConfig``).

    Args:
        model_dir: the directory of checkpoints (None: the Estimator's ``model_dir``).
        tf_random_seed: the graph-level seed set in every graph the Estimator
            builds (``tf.set_random_seed``), so initial weights and shuffles repeat.
        save_summary_steps: kept for TF's signature (minitf writes no summaries here).
        save_checkpoints_steps: save every this many global steps.
        save_checkpoints_secs: save every this many seconds (default 600
            when neither this nor ``save_checkpoints_steps`` is given).
            ``train`` also saves when it starts and when it ends.
        session_config: the ``tf.ConfigProto`` of the sessions.
        keep_checkpoint_max: how many recent checkpoints to keep.
        keep_checkpoint_every_n_hours: keep one more checkpoint per this many hours.
        log_step_count_steps: log the loss every this many steps.

    Raises:
        ValueError: if both ``save_checkpoints_steps`` and ``save_checkpoints_secs`` are set.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, _DEFAULT_SAVE_CHECKPOINTS_SECS
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_secs and "
                             "save_checkpoints_steps.")
        self._values = dict(
            model_dir=model_dir, tf_random_seed=tf_random_seed,
            save_summary_steps=save_summary_steps, save_checkpoints_steps=save_checkpoints_steps,
            save_checkpoints_secs=save_checkpoints_secs, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps)

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError("'RunConfig' object has no attribute %r" % name)

    # One machine, one worker: the cluster properties of TF's RunConfig, fixed.
    is_chief = True
    num_ps_replicas = 0
    num_worker_replicas = 1
    task_type = "worker"
    task_id = 0
    master = ""

    def replace(self, **kwargs):
        """A copy with the given settings changed (``RunConfig.replace``).

        Raises:
            ValueError: for a setting RunConfig does not have.
        """
        for key in kwargs:
            if key not in _FIELDS:
                raise ValueError("Replacing %s is not supported. Allowed properties are %s."
                                 % (key, _FIELDS))
        values = dict(self._values, **kwargs)
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            values["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            values["save_checkpoints_steps"] = None
        return RunConfig(**values)

    def __repr__(self):
        return "RunConfig(%s)" % ", ".join("%s=%r" % item for item in self._values.items())
