"""Synthetic digits: MNIST's arrays, reproducible, and distinguishable digits."""

import numpy as np

import minitf as tf
from minitf.datasets import synthetic_digits


def test_shapes_dtypes_and_balanced_labels():
    (x_train, y_train), (x_test, y_test) = tf.datasets.load_synthetic_digits(300, 50, seed=1)
    assert x_train.shape == (300, 28, 28) and x_test.shape == (50, 28, 28)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.int64
    assert np.bincount(y_train, minlength=10).tolist() == [30] * 10
    assert np.bincount(y_test, minlength=10).tolist() == [5] * 10
    assert set(np.unique(y_test)) == set(range(10))


def test_same_seed_same_images_other_seed_other_images():
    first = tf.datasets.load_synthetic_digits(40, 10, seed=3)
    again = tf.datasets.load_synthetic_digits(40, 10, seed=3)
    other = tf.datasets.load_synthetic_digits(40, 10, seed=4)
    for part, part_again in zip(first, again):
        for array, array_again in zip(part, part_again):
            np.testing.assert_array_equal(array, array_again)
    assert not np.array_equal(first[0][0], other[0][0])
    assert not np.array_equal(first[0][0][:10], first[1][0][:10])  # train and test differ


def test_images_look_like_mnist():
    images = synthetic_digits.render_digits(np.arange(100) % 10, seed=0)
    # Ink in the middle, background (exactly 0) around it, like MNIST's centred digits
    # (a digit made very tall by its random handwriting may touch the edge).
    assert images.max() == 255
    borders = [images[:, :2], images[:, -2:], images[:, :, :2], images[:, :, -2:]]
    clean = np.all([np.all(b == 0, axis=(1, 2)) for b in borders], axis=0)
    assert clean.mean() >= 0.95
    ink = (images > 127).mean(axis=(1, 2))
    assert np.all(ink > 0.03) and np.all(ink < 0.4)
    assert 15 < images.mean() < 70  # MNIST's mean pixel is about 33


def test_every_digit_has_its_own_shape():
    """A nearest-class-mean classifier fitted on some digits recognises fresh ones."""
    labels = np.arange(1000) % 10
    train = synthetic_digits.render_digits(labels, seed=0).reshape(1000, -1) / 255.0
    test = synthetic_digits.render_digits(labels[:200], seed=1).reshape(200, -1) / 255.0
    means = np.stack([train[labels == d].mean(axis=0) for d in range(10)])
    distances = ((test[:, None, :] - means[None]) ** 2).sum(-1)
    accuracy = np.mean(distances.argmin(axis=1) == labels[:200])
    assert accuracy > 0.6, accuracy  # chance is 0.1
