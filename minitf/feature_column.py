"""``tf.feature_column``: how raw input features become the input of a model.

An estimator's ``input_fn`` returns *features*: a dict from a name
(``"sepal_length"``) to a batch tensor.  A *feature column* says how one of
them enters the model — which key to read, its shape per example, how to
normalise or bucket it — without building anything yet.  The model then asks
for all its columns at once:

* :func:`input_layer` (used by ``DNNClassifier``) turns each *dense* column
  into a ``[batch, n]`` float tensor and concatenates them, columns sorted by
  name, into the first layer's input;
* :func:`linear_model` (used by ``LinearClassifier``) gives each column its
  own weight matrix ``<column>/weights`` and sums ``x @ w`` over columns plus
  one ``bias_weights``.

Columns come in two kinds:

=====================================  ===================================================
dense (a float vector per example)     :func:`numeric_column`, :func:`indicator_column`,
                                       :func:`embedding_column`, :func:`bucketized_column`
categorical (integer ids per example)  :func:`categorical_column_with_identity`,
                                       :func:`bucketized_column`
=====================================  ===================================================

A categorical column enters a network through an indicator (multi-hot) or an
embedding column; a linear model uses it directly, one weight row per id.

Example:
    >>> columns = [tf.feature_column.numeric_column("x", shape=[4])]
    >>> features = {"x": tf.placeholder(tf.float32, [None, 4])}
    >>> net = tf.feature_column.input_layer(features, columns)     # [None, 4]

TF1 represents categorical ids as ``SparseTensor``\\ s, so that an example
may have any number of them; minitf has no sparse tensors and keeps ids
dense: every example has the same number of ids (the feature's shape), and
string vocabularies and hashing are absent.  An id outside
``[0, num_buckets)`` raises ``InvalidArgumentError`` when the model runs.

Mirrors ``tensorflow/python/feature_column/feature_column.py`` (TF 1.x, the
``_FeatureColumn`` generation).
"""

import collections
import numbers

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import (
    array_ops, comparison_ops, constant_op, gather_ops, init_ops, joining_ops, linalg_ops, math_ops,
    nn_ops, reduction_ops, select_ops, unary_ops, variables)
from minitf.ops.variable_scope import get_variable, variable_scope


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


class _CategoricalColumn(_FeatureColumn):
    """A column of integer ids in ``[0, num_buckets)``, ``[batch, n]`` of them."""

    @property
    def _num_buckets(self):
        raise NotImplementedError

    def _get_ids(self, features):
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
        return TensorShape(self.shape)

    def _get_dense_tensor(self, features):
        """``normalizer_fn(features[key])`` as float32, of shape ``[batch, *shape]``."""
        tensor = _raw_feature(features, self.key)
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return unary_ops.cast(tensor, dtypes.float32)


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


# ---- categorical columns and the dense columns made from them ----------------------------------
class _IdentityCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_IdentityCategoricalColumn", ["key", "num_buckets", "default_value"])):
    """Integer features used as ids themselves."""

    __slots__ = ()

    @property
    def name(self):
        return self.key

    @property
    def _num_buckets(self):
        return self.num_buckets

    def _get_ids(self, features):
        ids = _raw_feature(features, self.key)
        if not ids.dtype.is_integer:
            raise ValueError("Invalid input, not integer. key: %s dtype: %s"
                             % (self.key, ids.dtype))
        ids = unary_ops.cast(ids, dtypes.int64)
        if self.default_value is None:
            return ids
        in_range = comparison_ops.logical_and(comparison_ops.greater_equal(ids, 0),
                                              comparison_ops.less(ids, self.num_buckets))
        default = array_ops.fill(array_ops.shape(ids),
                                 constant_op.constant(self.default_value, dtypes.int64))
        return select_ops.where(in_range, ids, default)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer features ``0 .. num_buckets - 1`` used as their own ids
    (``tf.feature_column.categorical_column_with_identity``).

    Args:
        key: the feature's name; its values must be integers.
        num_buckets: the number of distinct ids.
        default_value: the id for values outside ``[0, num_buckets)``; None:
            such a value raises InvalidArgumentError when looked up.

    Raises:
        ValueError: if ``num_buckets`` < 1 or ``default_value`` is out of range.

    Example:
        >>> day = tf.feature_column.categorical_column_with_identity("weekday", 7)
        >>> tf.feature_column.indicator_column(day)    # a one-hot [batch, 7] input
    """
    if num_buckets < 1:
        raise ValueError("num_buckets %s < 1, column_name %s" % (num_buckets, key))
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError("default_value %s not in range [0, %s), column_name %s"
                         % (default_value, num_buckets, key))
    if not isinstance(key, str):
        raise ValueError("key must be a string. Got: type %s. Given key: %s" % (type(key), key))
    return _IdentityCategoricalColumn(key, int(num_buckets), default_value)


class _BucketizedColumn(_DenseColumn, _CategoricalColumn, collections.namedtuple(
        "_BucketizedColumn", ["source_column", "boundaries"])):
    """A numeric column cut into ranges: bucket ``i`` holds
    ``boundaries[i - 1] <= x < boundaries[i]``."""

    __slots__ = ()

    @property
    def name(self):
        return "%s_bucketized" % self.source_column.name

    @property
    def _buckets_per_value(self):
        return len(self.boundaries) + 1

    @property
    def _variable_shape(self):
        return TensorShape([self._num_buckets])

    @property
    def _num_buckets(self):
        return self._buckets_per_value * self.source_column._variable_shape.num_elements()

    def _buckets(self, features):
        """``[batch, n]``: the bucket of each of an example's ``n`` values."""
        values = _flat_dense_tensor(self.source_column, features)
        above = comparison_ops.greater_equal(array_ops.expand_dims(values, -1),
                                             constant_op.constant(self.boundaries, dtypes.float32))
        return reduction_ops.reduce_sum(unary_ops.cast(above, dtypes.int64), axis=-1)

    def _get_ids(self, features):
        # Value j of an example gets its own ids: j * (len(boundaries) + 1) + bucket.
        count = self.source_column._variable_shape.num_elements()
        offsets = constant_op.constant([j * self._buckets_per_value for j in range(count)],
                                       dtypes.int64)
        return self._buckets(features) + offsets

    def _get_dense_tensor(self, features):
        one_hot = gather_ops.one_hot(self._buckets(features), self._buckets_per_value,
                                     dtype=dtypes.float32)
        return array_ops.reshape(
            one_hot, joining_ops.stack([array_ops.shape(one_hot)[0], self._num_buckets]))


def bucketized_column(source_column, boundaries):
    """A numeric column cut into ranges (``tf.feature_column.bucketized_column``).

    ``boundaries=[0., 10., 100.]`` makes four buckets: ``(-inf, 0)``,
    ``[0, 10)``, ``[10, 100)`` and ``[100, inf)``.  As a dense column it is
    the one-hot bucket of each value (``[batch, n * (len(boundaries) + 1)]``);
    as a categorical column, the bucket ids — so a linear model learns one
    weight per range, a piecewise-constant function of the value.

    Raises:
        ValueError: if ``source_column`` is not a ``numeric_column`` or the
            boundaries are not a sorted list.
    """
    if not isinstance(source_column, _NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). "
                         "Given: %s" % (source_column,))
    if len(source_column.shape) > 1:
        raise ValueError("source_column must be one-dimensional column. Given: %s"
                         % (source_column,))
    if (not boundaries or not isinstance(boundaries, (list, tuple))
            or list(boundaries) != sorted(boundaries)):
        raise ValueError("boundaries must be a sorted list.")
    return _BucketizedColumn(source_column, tuple(float(b) for b in boundaries))


class _IndicatorColumn(_DenseColumn, collections.namedtuple(
        "_IndicatorColumn", ["categorical_column"])):
    """A categorical column as a multi-hot vector: how often each id occurs."""

    __slots__ = ()

    @property
    def name(self):
        return "%s_indicator" % self.categorical_column.name

    @property
    def _variable_shape(self):
        return TensorShape([self.categorical_column._num_buckets])

    def _get_dense_tensor(self, features):
        num_buckets = self.categorical_column._num_buckets
        # Rows of an identity matrix, gathered: an out-of-range id raises
        # InvalidArgumentError (tf.one_hot would give a silent zero row).
        identity = constant_op.constant(np.eye(num_buckets, dtype=np.float32))
        one_hot = gather_ops.gather(identity, self.categorical_column._get_ids(features))
        return reduction_ops.reduce_sum(one_hot, axis=1)


def indicator_column(categorical_column):
    """A categorical column as a multi-hot ``[batch, num_buckets]`` float input
    (``tf.feature_column.indicator_column``)."""
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError("Unsupported input type. Input must be a _CategoricalColumn. Given: %s"
                         % (categorical_column,))
    return _IndicatorColumn(categorical_column)


_COMBINERS = ("mean", "sqrtn", "sum")


class _EmbeddingColumn(_DenseColumn, collections.namedtuple(
        "_EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer",
                             "trainable"])):
    """A categorical column looked up in a learned ``[num_buckets, dimension]`` table."""

    __slots__ = ()

    @property
    def name(self):
        return "%s_embedding" % self.categorical_column.name

    @property
    def _variable_shape(self):
        return TensorShape([self.dimension])

    def _get_dense_tensor(self, features):
        weights = get_variable(
            "embedding_weights", shape=[self.categorical_column._num_buckets, self.dimension],
            initializer=self.initializer, trainable=self.trainable)
        vectors = gather_ops.gather(weights, self.categorical_column._get_ids(features))
        return _combine(vectors, self.combiner)


def _combine(vectors, combiner):
    """``[batch, n, d] -> [batch, d]``: the sum, mean or sum / sqrt(n) over the n ids."""
    total = reduction_ops.reduce_sum(vectors, axis=1)
    if combiner == "sum":
        return total
    count = unary_ops.cast(array_ops.shape(vectors)[1], dtypes.float32)
    return total / (count if combiner == "mean" else unary_ops.sqrt(count))


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True):
    """A categorical column as a learned dense vector (``tf.feature_column.embedding_column``).

    The variable ``<scope>/<column>_embedding/embedding_weights`` holds one
    row of ``dimension`` floats per id; an example's vector combines the rows
    of its ids.

    Args:
        categorical_column: the ids to embed.
        dimension: the size of each vector.
        combiner: how an example's several ids combine: ``"mean"``,
            ``"sqrtn"`` or ``"sum"``.
        initializer: the table's initializer (default: truncated normal with
            standard deviation ``1 / sqrt(dimension)``, as in TF1).
        ckpt_to_load_from, tensor_name_in_ckpt, max_norm: not supported (None).
        trainable: train the table.

    Raises:
        ValueError: for a dimension < 1, an unknown combiner, an initializer
            that is not callable, or a checkpoint to load from.
    """
    if dimension is None or dimension < 1:
        raise ValueError("Invalid dimension %s." % (dimension,))
    if combiner not in _COMBINERS:
        raise ValueError("combiner must be one of %s, got %r." % (_COMBINERS, combiner))
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. Embedding of column_name: "
                         "%s" % categorical_column.name)
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None or max_norm is not None:
        raise ValueError("minitf's embedding_column does not support ckpt_to_load_from, "
                         "tensor_name_in_ckpt or max_norm.")
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError("Unsupported input type. Input must be a _CategoricalColumn. Given: %s"
                         % (categorical_column,))
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0,
                                                            stddev=1.0 / np.sqrt(dimension))
    return _EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, trainable)


# ---- reading features ---------------------------------------------------------------------------
def _raw_feature(features, key):
    """``features[key]`` as a tensor of rank >= 2: a ``[batch]`` vector becomes ``[batch, 1]``."""
    if key not in features:
        raise ValueError("Feature %s is not in features dictionary." % (key,))
    tensor = convert_to_tensor(features[key])
    rank = tensor.shape.ndims
    if rank == 0:
        raise ValueError("Feature (key: %s) cannot have rank 0. Give: %s" % (key, tensor))
    if rank == 1:
        tensor = array_ops.expand_dims(tensor, -1)
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
        if not isinstance(column, _FeatureColumn):
            raise ValueError("Items of feature_columns must be a _FeatureColumn. Given (type "
                             "%s): %s." % (type(column), column))
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
    batch_size = array_ops.shape(tensor)[0]
    flat = array_ops.reshape(tensor, joining_ops.stack([batch_size, num_elements]))
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
    ``input_layer`` (``input_layer/x/Reshape``, ``input_layer/concat``), an
    embedding's table in ``input_layer/<column>_embedding/embedding_weights``.

    Args:
        features: a dict from feature key to batch tensor (or array).
        feature_columns: an iterable of dense columns (numeric, bucketized,
            indicator or embedding).
        weight_collections: extra collections for the columns' variables.
        trainable: False keeps the columns' variables (embeddings) out of
            ``TRAINABLE_VARIABLES``.
        cols_to_vars: if a dict, filled with ``{column: [its variables]}``.

    Returns:
        A float32 tensor ``[batch, sum of the columns' sizes]``.

    Raises:
        ValueError: for empty or duplicate columns, a categorical column not
            wrapped in ``indicator_column``/``embedding_column``, or a missing feature.
    """
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a "
                             "categorical column with an embedding_column or indicator_column. "
                             "Given: %s" % (column,))
    with variable_scope(None, default_name="input_layer"):
        output_tensors = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            with variable_scope(None, default_name=column.name), \
                    _VariablesOf(column, cols_to_vars, weight_collections, trainable):
                output_tensors.append(_flat_dense_tensor(column, features))
        return joining_ops.concat(output_tensors, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A linear prediction ``sum over columns of x @ weights + bias``
    (``tf.feature_column.linear_model``).

    Each column gets a variable ``linear_model/<column>/weights``, and the
    model one ``linear_model/bias_weights`` of shape ``[units]``, all
    initialised to zeros (a linear model has no symmetry to break).  A dense
    column's weights are ``[num_elements, units]`` and multiply its value; a
    categorical column's are ``[num_buckets, units]``, one row per id, and an
    example adds up (``sparse_combiner``) the rows of its ids.

    Args:
        features: a dict from feature key to batch tensor.
        feature_columns: an iterable of feature columns.
        units: the output size (the number of logits).
        sparse_combiner: ``"sum"``, ``"mean"`` or ``"sqrtn"``: how the rows
            of an example's several ids of one categorical column combine.
        weight_collections: extra collections for the variables.
        trainable: put the variables in ``TRAINABLE_VARIABLES``.
        cols_to_vars: if a dict, filled with ``{column: [weights]}`` and
            ``{"bias": [bias_weights]}``.

    Returns:
        The predictions, float32 ``[batch, units]`` (op ``linear_model/weighted_sum``).
    """
    if sparse_combiner not in _COMBINERS:
        raise ValueError("sparse_combiner must be one of %s, got %r."
                         % (_COMBINERS, sparse_combiner))
    feature_columns = _normalize_feature_columns(feature_columns)
    collections = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    collections += list(weight_collections or [])
    with variable_scope(None, default_name="linear_model"):
        weighted_sums = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            with variable_scope(None, default_name=column.name), \
                    _VariablesOf(column, cols_to_vars, weight_collections, trainable):
                if isinstance(column, _CategoricalColumn):
                    rows = column._num_buckets
                else:
                    tensor = _flat_dense_tensor(column, features)
                    rows = column._variable_shape.num_elements()
                weights = get_variable(
                    "weights", shape=[rows, units], initializer=init_ops.zeros_initializer(),
                    trainable=trainable, collections=collections)
                if isinstance(column, _CategoricalColumn):
                    rows_of_ids = gather_ops.gather(weights, column._get_ids(features))
                    weighted_sums.append(array_ops.identity(_combine(rows_of_ids, sparse_combiner),
                                                            name="weighted_sum"))
                else:
                    weighted_sums.append(linalg_ops.matmul(tensor, weights, name="weighted_sum"))
        predictions_no_bias = math_ops.add_n(weighted_sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], initializer=init_ops.zeros_initializer(),
                            trainable=trainable, collections=collections)
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return nn_ops.bias_add(predictions_no_bias, bias, name="weighted_sum")


class _VariablesOf:
    """Within this block, notes the global variables a column creates: adds
    them to ``weight_collections``, removes them from the trainable ones if
    not ``trainable``, and lists them in ``cols_to_vars[column]``."""

    def __init__(self, column, cols_to_vars, weight_collections, trainable):
        self._column = column
        self._cols_to_vars = cols_to_vars
        self._weight_collections = list(weight_collections or [])
        self._trainable = trainable

    def __enter__(self):
        self._before = set(variables.global_variables())

    def __exit__(self, *exc_info):
        graph = get_default_graph()
        created = [v for v in variables.global_variables() if v not in self._before]
        for variable in created:
            for key in self._weight_collections:
                if variable not in graph.get_collection(key):
                    graph.add_to_collection(key, variable)
            if not self._trainable:
                trainable = graph.get_collection_ref(GraphKeys.TRAINABLE_VARIABLES)
                if variable in trainable:
                    trainable.remove(variable)
        if self._cols_to_vars is not None:
            self._cols_to_vars[self._column] = created
