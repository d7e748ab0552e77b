"""``tf.estimator``: models that train, evaluate and predict themselves.

* :mod:`~minitf.estimator.estimator` — ``Estimator``: the train/evaluate/predict
  loops, each in a fresh graph, resuming from ``model_dir``'s checkpoints;
* :mod:`~minitf.estimator.model_fn` — ``EstimatorSpec``, ``ModeKeys``: what a
  ``model_fn`` returns;
* :mod:`~minitf.estimator.run_config` — ``RunConfig``;
* :mod:`~minitf.estimator.head` — loss, predictions and metrics after the logits;
* :mod:`~minitf.estimator.canned` — ``DNNClassifier``, ``DNNRegressor``,
  ``LinearClassifier``, ``LinearRegressor``;
* :mod:`~minitf.estimator.training` — ``train_and_evaluate``, ``TrainSpec``, ``EvalSpec``;
* :mod:`~minitf.estimator.inputs` — ``tf.estimator.inputs.numpy_input_fn``.
"""

from minitf.estimator import inputs
from minitf.estimator.canned.dnn import DNNClassifier, DNNRegressor
from minitf.estimator.canned.linear import LinearClassifier, LinearRegressor
from minitf.estimator.estimator import CheckpointSaverListener, Estimator
from minitf.estimator.model_fn import EstimatorSpec, ModeKeys
from minitf.estimator.run_config import RunConfig
from minitf.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
# TF 1.15 also names the session hooks under tf.estimator.
from minitf.train import (
    CheckpointSaverHook, FeedFnHook, FinalOpsHook, GlobalStepWaiterHook, LoggingTensorHook,
    NanLossDuringTrainingError, NanTensorHook, SecondOrStepTimer, SessionRunArgs,
    SessionRunContext, SessionRunHook, SessionRunValues, StepCounterHook, StopAtStepHook,
    SummarySaverHook)

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener", "DNNClassifier", "DNNRegressor",
           "Estimator", "EstimatorSpec", "EvalSpec", "FeedFnHook", "FinalOpsHook",
           "GlobalStepWaiterHook", "LinearClassifier", "LinearRegressor", "LoggingTensorHook",
           "ModeKeys", "NanLossDuringTrainingError", "NanTensorHook", "RunConfig",
           "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext", "SessionRunHook",
           "SessionRunValues", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
           "TrainSpec", "inputs", "train_and_evaluate"]
