"""Tests of lab_softmax_cross_entropy.py.  Run them with ``pytest`` in this folder.

``gradcheck(y, x, x_value, extra_feed_dict=...)`` (a fixture of minitf's
pytest plugin) builds the gradient of y with tf.gradients, runs it, and
compares it with central differences; ``extra_feed_dict`` feeds the other
placeholders (here: the labels while logits are checked, and vice versa).
"""

import numpy as np
import pytest

import minitf as tf
from lab_softmax_cross_entropy import softmax_cross_entropy

RNG = np.random.default_rng(2)


def _softmax(logits):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _one_hot(classes, depth):
    return np.eye(depth)[classes]


def _placeholders(batch, classes):
    return (tf.placeholder(tf.float64, [batch, classes], name="labels"),
            tf.placeholder(tf.float64, [batch, classes], name="logits"))


def test_forward_is_cross_entropy(tf_session):
    labels, logits = _placeholders(3, 4)
    p, z = _softmax(RNG.normal(size=[3, 4])), RNG.normal(size=[3, 4])
    loss = tf_session.run(softmax_cross_entropy(labels, logits), {labels: p, logits: z})
    np.testing.assert_allclose(loss, -(p * np.log(_softmax(z))).sum(axis=-1))


@pytest.mark.gradient
def test_gradient_wrt_logits_with_one_hot_labels(gradcheck):
    labels, logits = _placeholders(4, 5)
    gradcheck(softmax_cross_entropy(labels, logits), logits, RNG.normal(size=[4, 5]),
              extra_feed_dict={labels: _one_hot([0, 3, 1, 4], 5)})


@pytest.mark.gradient
def test_gradient_wrt_logits_with_soft_labels(gradcheck):
    labels, logits = _placeholders(3, 4)
    gradcheck(softmax_cross_entropy(labels, logits), logits, RNG.normal(size=[3, 4]),
              extra_feed_dict={labels: _softmax(RNG.normal(size=[3, 4]))})


@pytest.mark.gradient
def test_gradient_wrt_large_logits(gradcheck):
    # exp(500) overflows float64; a correct gradient stays finite and right.
    labels, logits = _placeholders(2, 3)
    gradcheck(softmax_cross_entropy(labels, logits), logits,
              [[500.0, 499.0, 498.0], [-300.0, -301.0, -299.5]],
              extra_feed_dict={labels: _one_hot([1, 2], 3)})


@pytest.mark.gradient
def test_each_row_is_scaled_by_its_own_upstream_gradient(tf_session):
    # grad_ys plays dL/dloss: a different weight for every row of the batch.
    labels, logits = _placeholders(3, 4)
    weights = np.array([1.0, -2.0, 0.5])
    [d_logits] = tf.gradients(softmax_cross_entropy(labels, logits), [logits], grad_ys=[weights])
    p, z = _one_hot([2, 0, 1], 4), RNG.normal(size=[3, 4])
    value = tf_session.run(d_logits, {labels: p, logits: z})
    np.testing.assert_allclose(value, weights[:, None] * (_softmax(z) - p))


@pytest.mark.gradient
def test_gradient_wrt_labels(gradcheck):
    labels, logits = _placeholders(3, 4)
    gradcheck(softmax_cross_entropy(labels, logits), labels, _softmax(RNG.normal(size=[3, 4])),
              extra_feed_dict={logits: RNG.normal(size=[3, 4])})


def test_gradient_wrt_logits_sums_to_zero_per_row(tf_session):
    # With one-hot labels, softmax - labels sums to 1 - 1 = 0 in every row.
    labels, logits = _placeholders(2, 3)
    [d_logits] = tf.gradients(softmax_cross_entropy(labels, logits), [logits])
    value = tf_session.run(d_logits, {labels: _one_hot([0, 2], 3),
                                      logits: RNG.normal(size=[2, 3])})
    np.testing.assert_allclose(value.sum(axis=-1), 0.0, atol=1e-12)
