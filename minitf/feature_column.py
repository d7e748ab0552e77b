"""``tf.feature_column``: how raw input features become the input of a model.

An estimator's ``input_fn`` returns *features*: a dict from a name
(``"sepal_length"``) to a batch tensor.  A *feature column* says how one of
them enters the model — which key to read, its shape per example, how to
normalise it — without building anything yet.  The model then asks for all
its columns at once:

* :func:`input_layer` (used by ``DNNClassifier``) turns each column into a
  ``[batch, n]`` float tensor and concatenates them, columns sorted by name,
  into the first layer's input;
* :func:`linear_model` (used by ``LinearClassifier``) gives each column its
  own weight matrix ``<column>/weights`` and sums ``x @ w`` over columns plus
  one ``bias_weights``.

Example:
    >>> columns = [tf.feature_column.numeric_column("x", shape=[4])]
    >>> features = {"x": tf.placeholder(tf.float32, [None, 4])}
    >>> net = tf.feature_column.input_layer(features, columns)     # [None, 4]

minitf has the dense column TF1 courses use first, :func:`numeric_column`;
categorical columns (vocabularies, hashing, embeddings) need sparse tensors,
which minitf does not have.

Mirrors ``tensorflow/python/feature_column/feature_column.py`` (TF 1.x, the
``_FeatureColumn`` generation).
"""

import collections
import numbers

import numpy as np

import minitf as tf
from minitf.framework import dtypes


# ---- columns ------------------------------------------------------------------------------------
class _FeatureColumn:
    """What every feature column has: a ``name``, unique among a model's columns."""

    @property
    def name(self):
        raise NotImplementedError


class _DenseColumn(_FeatureColumn):
    """A column that becomes a dense ``[batch, *variable_shape]`` float tensor."""

    @property
    def _variable_shape(self):
        raise NotImplementedError

    def _get_dense_tensor(self, features):
        raise NotImplementedError


class _NumericColumn(_DenseColumn, collections.namedtuple(
        "_NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """A real-valued feature: ``features[key]``, ``shape`` values per example."""

    __slots__ = ()

    @property
    def name(self):
        return self.key

    @property
    def _variable_shape(self):
        return tf.TensorShape(self.shape)

    def _get_dense_tensor(self, features):
        """``normalizer_fn(features[key])`` as float32, of shape ``[batch, *shape]``."""
        tensor = _raw_feature(features, self.key)
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return tf.cast(tensor, tf.float32)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    """A column of real values read from ``features[key]`` (``tf.feature_column.numeric_column``).

    Args:
        key: the feature's name in the features dict.
        shape: the shape of one example's value (an int or a tuple of ints);
            ``(1,)`` is a scalar per example.
        default_value: the value for a missing feature, a number or a nested
            list of ``shape`` (used when parsing ``tf.Example`` protos in TF;
            minitf only keeps it, checked and as a tuple).
        dtype: the feature's dtype, an integer or float type; the column's
            output is always float32.
        normalizer_fn: ``fn(tensor) -> tensor`` applied before the cast, e.g.
            ``lambda x: (x - 3.0) / 4.2``.

    Returns:
        A ``_NumericColumn`` (a namedtuple, as in TF).

    Raises:
        ValueError: if ``key`` is not a string, a dimension is < 1, ``dtype``
            is not numeric, or ``default_value`` does not fit ``shape``.
        TypeError: if a dimension is not an int, or ``normalizer_fn`` is not callable.

    Example:
        >>> column = tf.feature_column.numeric_column("petal_length")
        >>> column.key, column.shape, column.dtype
        ('petal_length', (1,), tf.float32)
    """
    if not isinstance(key, str):
        raise ValueError("key must be a string. Got: type %s. Given key: %s" % (type(key), key))
    shape = _check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError("dtype must be convertible to float. dtype: %s, key: %s" % (dtype, key))
    default_value = _check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("normalizer_fn must be a callable. Given: %s" % (normalizer_fn,))
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def _check_shape(shape, key):
    if isinstance(shape, numbers.Integral):
        shape = [shape]
    shape = tuple(shape)
    for dimension in shape:
        if not isinstance(dimension, numbers.Integral):
            raise TypeError("shape dimensions must be integer. shape: %s, key: %s" % (shape, key))
        if dimension < 1:
            raise ValueError("shape dimensions must be greater than 0. shape: %s, key: %s"
                             % (shape, key))
    return tuple(int(d) for d in shape)


def _check_default_value(shape, default_value, dtype, key):
    """``default_value`` as a nested tuple of ``shape`` (a number is repeated)."""
    if default_value is None:
        return None
    np_dtype = np.int64 if dtype.is_integer else np.float64
    if isinstance(default_value, numbers.Number):
        return _as_tuple(np.full(shape, default_value, dtype=np_dtype))
    value = np.asarray(default_value)
    if value.dtype.kind not in "iuf" or (dtype.is_integer and value.dtype.kind == "f"):
        raise TypeError("default_value must be compatible with dtype. default_value: %s, "
                        "dtype: %s, key: %s" % (default_value, dtype, key))
    if value.shape != shape:
        raise ValueError("The shape of default_value must be equal to given shape. "
                         "default_value: %s, shape: %s, key: %s" % (default_value, shape, key))
    return _as_tuple(value.astype(np_dtype))


def _as_tuple(array):
    if array.ndim == 0:
        return array.item()
    return tuple(_as_tuple(row) for row in array)


# ---- reading features ---------------------------------------------------------------------------
def _raw_feature(features, key):
    """``features[key]`` as a tensor of rank >= 2: a ``[batch]`` vector becomes ``[batch, 1]``."""
    if key not in features:
        raise ValueError("Feature %s is not in features dictionary." % (key,))
    tensor = tf.convert_to_tensor(features[key])
    rank = tensor.shape.ndims
    if rank == 0:
        raise ValueError("Feature (key: %s) cannot have rank 0. Give: %s" % (key, tensor))
    if rank == 1:
        tensor = tf.expand_dims(tensor, -1)
    return tensor


def _normalize_feature_columns(feature_columns):
    """The columns as a list, checked: not empty, all columns, names unique."""
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    feature_columns = list(feature_columns)
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn (minitf has "
                             "numeric_column). Given (type %s): %s." % (type(column), column))
        if column.name in by_name:
            raise ValueError("Duplicate feature column name found for columns: %s and %s. This "
                             "usually means that these columns refer to same base feature."
                             % (by_name[column.name], column))
        by_name[column.name] = column
    return feature_columns


def _flat_dense_tensor(column, features):
    """The column's tensor reshaped to ``[batch, num_elements]`` (op ``<column>/Reshape``)."""
    tensor = column._get_dense_tensor(features)
    num_elements = column._variable_shape.num_elements()
    batch_size = tf.shape(tensor)[0]
    flat = tf.reshape(tensor, tf.stack([batch_size, num_elements]))
    flat.set_shape([tensor.shape[0], num_elements])
    return flat


# ---- the two ways a model consumes columns ------------------------------------------------------
def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None):
    """The dense input of a network: every column's value, concatenated
    (``tf.feature_column.input_layer``).

    Columns are taken in order of their names (not of the list), each as a
    ``[batch, num_elements]`` float32 block, so a model's first layer sees
    the same layout however the columns were listed.  Ops live in the scope
    ``input_layer`` (``input_layer/x/Reshape``, ``input_layer/concat``).

    Args:
        features: a dict from feature key to batch tensor (or array).
        feature_columns: an iterable of dense columns (from :func:`numeric_column`).
        weight_collections, trainable, cols_to_vars: accepted for TF's
            signature; numeric columns have no variables.

    Returns:
        A float32 tensor ``[batch, sum of the columns' sizes]``.

    Raises:
        ValueError: for empty or duplicate columns, or a missing feature.
    """
    del weight_collections, trainable
    feature_columns = _normalize_feature_columns(feature_columns)
    with tf.variable_scope(None, default_name="input_layer"):
        output_tensors = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            with tf.variable_scope(None, default_name=column.name):
                output_tensors.append(_flat_dense_tensor(column, features))
                if cols_to_vars is not None:
                    cols_to_vars[column] = []
        return tf.concat(output_tensors, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A linear prediction ``sum over columns of x @ weights + bias``
    (``tf.feature_column.linear_model``).

    Each column gets a variable ``linear_model/<column>/weights`` of shape
    ``[num_elements, units]``, and the model one ``linear_model/bias_weights``
    of shape ``[units]``, all initialised to zeros (a linear model has no
    symmetry to break).

    Args:
        features: a dict from feature key to batch tensor.
        feature_columns: an iterable of dense columns.
        units: the output size (the number of logits).
        sparse_combiner: accepted for TF's signature (minitf has no sparse columns).
        weight_collections: extra collections for the variables.
        trainable: put the variables in ``TRAINABLE_VARIABLES``.
        cols_to_vars: if a dict, filled with ``{column: [weights]}`` and
            ``{"bias": [bias_weights]}``.

    Returns:
        The predictions, float32 ``[batch, units]`` (op ``linear_model/weighted_sum``).
    """
    del sparse_combiner
    feature_columns = _normalize_feature_columns(feature_columns)
    collections = [tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]
    collections += list(weight_collections or [])
    with tf.variable_scope(None, default_name="linear_model"):
        weighted_sums = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            with tf.variable_scope(None, default_name=column.name):
                tensor = _flat_dense_tensor(column, features)
                weights = tf.get_variable(
                    "weights", shape=[column._variable_shape.num_elements(), units],
                    initializer=tf.zeros_initializer(), trainable=trainable,
                    collections=collections)
                weighted_sums.append(tf.matmul(tensor, weights, name="weighted_sum"))
                if cols_to_vars is not None:
                    cols_to_vars[column] = [weights]
        predictions_no_bias = tf.add_n(weighted_sums, name="weighted_sum_no_bias")
        bias = tf.get_variable("bias_weights", shape=[units], initializer=tf.zeros_initializer(),
                               trainable=trainable, collections=collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return tf.nn.bias_add(predictions_no_bias, bias, name="weighted_sum")
