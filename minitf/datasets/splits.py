"""Splitting a data set into training and test parts.

A model is judged on examples it never trained on, so before training we set
some aside.  :func:`train_test_split` shuffles (reproducibly, with a seed)
and, by default for labelled data, *stratifies*: each class keeps its
proportion in both parts, which matters for small sets like Iris.

Example:
    >>> x, y = minitf.datasets.load_iris()
    >>> (x_train, y_train), (x_test, y_test) = train_test_split(x, y, test_fraction=0.2, seed=0)
    >>> len(x_train), len(x_test)
    (120, 30)
"""

import numpy as np


def train_test_split(features, labels=None, test_fraction=0.2, seed=None, shuffle=True,
                     stratify=True):
    """Splits ``features`` (and ``labels``) into a training and a test part.

    Args:
        features: an array whose first dimension indexes examples.
        labels: integer class labels (or None), one per example.
        test_fraction: the share of examples in the test part (0 < f < 1).
        seed: seeds the shuffle (None: a different split each call).
        shuffle: shuffle before splitting; False keeps the order (the test
            part is then the last examples).
        stratify: with labels and ``shuffle``, take ``test_fraction`` of each class.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``, or ``(x_train, x_test)``
        without labels.

    Raises:
        ValueError: if ``test_fraction`` is not in (0, 1) or the lengths differ.
    """
    features = np.asarray(features)
    if not 0.0 < test_fraction < 1.0:
        raise ValueError("test_fraction must be between 0 and 1, got %r" % (test_fraction,))
    count = len(features)
    if labels is not None:
        labels = np.asarray(labels)
        if len(labels) != count:
            raise ValueError("features has %d examples but labels has %d" % (count, len(labels)))
    rng = np.random.default_rng(seed)
    if not shuffle:
        n_test = int(round(count * test_fraction))
        test = np.arange(count - n_test, count)
    elif labels is not None and stratify:
        test = []
        for cls in np.unique(labels):
            members = np.flatnonzero(labels == cls)
            n_test = int(round(len(members) * test_fraction))
            test.extend(rng.permutation(members)[:n_test])
        test = rng.permutation(np.array(test, dtype=np.int64))
    else:
        test = rng.permutation(count)[:int(round(count * test_fraction))]
    is_test = np.zeros(count, dtype=bool)
    is_test[test] = True
    train = np.flatnonzero(~is_test)
    if shuffle:
        train = rng.permutation(train)
    if labels is None:
        return features[train], features[test]
    return (features[train], labels[train]), (features[test], labels[test])
