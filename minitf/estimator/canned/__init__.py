"""The canned estimators: ready-made models on feature columns.

* :mod:`~minitf.estimator.canned.dnn` — ``DNNClassifier``, ``DNNRegressor``;
* :mod:`~minitf.estimator.canned.linear` — ``LinearClassifier``, ``LinearRegressor``;
* :mod:`~minitf.estimator.canned.optimizers` — the ``optimizer=`` argument.
"""
