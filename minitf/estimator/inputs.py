"""``tf.estimator.inputs.numpy_input_fn``: feeding NumPy arrays to an Estimator.

An Estimator never sees data directly: it calls an ``input_fn`` inside the
graph it builds, and the ``input_fn`` returns tensors that yield one batch
each time the session runs them.  :func:`numpy_input_fn` makes such a
function from arrays already in memory::

    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": x_train}, y=y_train, batch_size=32, num_epochs=None, shuffle=True)
    classifier.train(train_input_fn, steps=1000)

TF1 builds it from a queue filled by Python threads (``feeding_functions``);
minitf builds it from ``tf.data`` — ``from_tensor_slices``, ``shuffle``,
``repeat(num_epochs)``, ``batch`` — which yields the same batches without
threads.  When the epochs are used up, the next run raises
``tf.errors.OutOfRangeError``, which ends ``train``, ``evaluate`` and
``predict``.

Mirrors ``tensorflow_estimator/python/estimator/inputs/numpy_io.py`` (TF 1.x).
"""

import collections

import numpy as np

from minitf.data.dataset import Dataset
from minitf.data.iterator import make_one_shot_iterator

_DIRECT_INPUT_KEY = "__direct_np_input__"
_TARGET_KEY = "__target_key__"


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """Returns an ``input_fn`` that feeds dicts of NumPy arrays to a model.

    Args:
        x: a dict of arrays (the features, by key) or one array.
        y: the labels: an array, a dict of arrays, or None (prediction).
        batch_size: examples per batch.  With ``num_epochs`` set the last
            batch may be smaller; with ``num_epochs=None`` every batch is full
            (and the batch dimension is known statically).
        num_epochs: passes over the data before ``OutOfRangeError``; None:
            forever (train with ``steps`` then).
        shuffle: shuffle the examples, a new order each epoch.  Must be given:
            True for training, False for evaluating and predicting.
        queue_capacity: the shuffle buffer size (TF1: the queue's capacity);
            at least the number of examples gives a uniform permutation.
        num_threads: accepted for TF's signature (minitf uses no threads).

    Returns:
        ``input_fn()`` returning ``(features, labels)`` (or only ``features``
        when ``y`` is None); ``features`` is a dict of tensors, or one tensor
        when ``x`` is an array.

    Raises:
        ValueError: here, if ``shuffle`` is not a bool; when ``input_fn`` is
            called, if ``x`` or ``y`` is empty, keys repeat between ``x`` and
            ``y``, or the arrays' lengths differ.
        TypeError: when ``input_fn`` is called, if ``x`` is neither a dict nor an array.
    """
    del num_threads
    if not isinstance(shuffle, bool):
        raise ValueError("shuffle must be provided and explicitly set as boolean (it is "
                         "recommended to set it as True for training); got %s" % (shuffle,))
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError("num_epochs must be None or a positive integer; got %s" % (num_epochs,))

    def input_fn():
        data, feature_keys, target_keys = _ordered_data(x, y)
        dataset = Dataset.from_tensor_slices(data)
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs)
        dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
        batch = make_one_shot_iterator(dataset).get_next()
        if isinstance(x, np.ndarray):
            features = batch[_DIRECT_INPUT_KEY]
        else:
            features = {key: batch[key] for key in feature_keys}
        if target_keys is None:
            return features
        if target_keys == _TARGET_KEY:
            return features, batch[_TARGET_KEY]
        return features, {key: batch[key] for key in target_keys}

    return input_fn


def _ordered_data(x, y):
    """All arrays in one dict sorted by key, with the feature keys and the
    target key(s) (None, one key, or a list of keys for a dict ``y``)."""
    data = _validate_and_convert_features(x)
    feature_keys = list(data)
    if y is None:
        target_keys = None
    elif isinstance(y, dict):
        if not y:
            raise ValueError("y cannot be empty dict, use None instead.")
        target_keys = sorted(y)
        duplicate_keys = set(feature_keys) & set(target_keys)
        if duplicate_keys:
            raise ValueError("%d duplicate keys are found in both x and y: %s"
                             % (len(duplicate_keys), duplicate_keys))
        data.update((key, np.asarray(y[key])) for key in target_keys)
    else:
        target_keys = _TARGET_KEY
        data[_TARGET_KEY] = np.asarray(y)
    if len({len(array) for array in data.values()}) != 1:
        shapes_of_x = {key: data[key].shape for key in feature_keys}
        if target_keys is None:
            shapes_of_y = None
        elif target_keys == _TARGET_KEY:
            shapes_of_y = data[_TARGET_KEY].shape
        else:
            shapes_of_y = {key: data[key].shape for key in target_keys}
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y "
                         "must have the same length.\nShapes in x: %s\nShapes in y: %s\n"
                         % (shapes_of_x, shapes_of_y))
    return data, feature_keys, target_keys


def _validate_and_convert_features(x):
    """``x`` as an ordered dict of arrays (one array is keyed ``__direct_np_input__``)."""
    if isinstance(x, dict):
        if not x:
            raise ValueError("x cannot be an empty dict")
        return collections.OrderedDict((key, np.asarray(x[key])) for key in sorted(x))
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError("x cannot be an empty array")
        return collections.OrderedDict([(_DIRECT_INPUT_KEY, x)])
    raise TypeError("x must be a dict or array; got %s" % type(x).__name__)
