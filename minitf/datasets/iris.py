"""The Iris flower data set (Fisher, 1936), shipped with minitf.

150 flowers, 50 of each species (*setosa*, *versicolor*, *virginica*), each
measured four times in centimetres: sepal length, sepal width, petal length,
petal width.  Small enough to train a classifier in a second, and one class
is linearly separable from the other two while those two overlap — a good
first data set for softmax regression.

The table is ``iris.csv`` in this package (package data, read with
``importlib.resources``): a header line, then
``sepal_length,sepal_width,petal_length,petal_width,species`` per row, in the
classic order (rows 1-50 setosa ...).  Its values are Fisher's, as in R's
``iris`` and scikit-learn; the UCI repository's copy differs in two
well-known entries (rows 35 and 38).

Example:
    >>> features, labels = load_iris()
    >>> features.shape, features.dtype, labels[:3]
    ((150, 4), dtype('float32'), array([0, 0, 0]))
"""

import csv
import importlib.resources
import io

import numpy as np

FEATURE_NAMES = ("sepal_length", "sepal_width", "petal_length", "petal_width")
CLASS_NAMES = ("setosa", "versicolor", "virginica")


def load_iris(return_names=False):
    """Loads the 150-row Iris table.

    Args:
        return_names: also return ``(FEATURE_NAMES, CLASS_NAMES)``.

    Returns:
        ``(features, labels)``: float32 ``[150, 4]`` measurements (cm) and
        int64 ``[150]`` class indices into :data:`CLASS_NAMES`; with
        ``return_names``, ``(features, labels, feature_names, class_names)``.
    """
    text = importlib.resources.files(__package__).joinpath("iris.csv").read_text("utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    header, rows = rows[0], [r for r in rows[1:] if r]
    if tuple(header) != FEATURE_NAMES + ("species",):
        raise ValueError("iris.csv has an unexpected header: %s" % header)
    features = np.array([[float(x) for x in row[:4]] for row in rows], dtype=np.float32)
    labels = np.array([CLASS_NAMES.index(row[4]) for row in rows], dtype=np.int64)
    if return_names:
        return features, labels, FEATURE_NAMES, CLASS_NAMES
    return features, labels
