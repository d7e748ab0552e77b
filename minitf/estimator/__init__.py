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

__all__ = ["CheckpointSaverListener", "DNNClassifier", "DNNRegressor", "Estimator",
           "EstimatorSpec", "EvalSpec", "LinearClassifier", "LinearRegressor", "ModeKeys",
           "RunConfig", "TrainSpec", "inputs", "train_and_evaluate"]
