"""``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss``.

With ``sampled_values`` given, both losses are deterministic: they are checked
against a NumPy re-computation of TF's ``_compute_sampled_logits`` (true and
sampled logits, accidental hits at ``-FLT_MAX``, ``log Q`` subtracted), for
one and two true classes and sharded weights.  Gradients reach the weights,
biases and inputs (checked by finite differences), and a word2vec-style
training loop with the default sampler learns.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.test.gradient_checker import check_gradients

FLT_MIN = np.finfo(np.float32).min


def sampled_logits_np(weights, biases, labels, inputs, sampled, true_count, sampled_count,
                      remove_accidental_hits):
    """TF's ``_compute_sampled_logits`` in NumPy: ``(logits, labels)``."""
    num_true = labels.shape[1]
    true_logits = np.einsum("bd,btd->bt", inputs, weights[labels]) + biases[labels]
    sampled_logits = inputs @ weights[sampled].T + biases[sampled]
    if remove_accidental_hits:
        for row in range(len(labels)):
            for j, candidate in enumerate(sampled):
                if candidate in labels[row]:
                    sampled_logits[row, j] += FLT_MIN
    true_logits = true_logits - np.log(true_count)
    sampled_logits = sampled_logits - np.log(sampled_count)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1.0 / num_true),
                              np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def nce_loss_np(logits, targets):
    losses = np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))
    return losses.sum(1)


def sampled_softmax_loss_np(logits, targets):
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return -(targets * log_softmax).sum(1)


@pytest.fixture
def problem():
    """Weights of 10 classes in 4 dimensions, a batch of 3, and fixed samples."""
    rng = np.random.RandomState(0)
    return dict(
        weights=rng.randn(10, 4), biases=rng.randn(10), inputs=rng.randn(3, 4),
        labels=np.array([[1, 2], [3, 3], [0, 9]], np.int64),
        sampled=np.array([2, 5, 3, 7], np.int64),
        true_count=rng.rand(3, 2) + 0.1, sampled_count=rng.rand(4) + 0.1)


def _sampled_values(p, num_true):
    return (tf.constant(p["sampled"]), tf.constant(p["true_count"][:, :num_true], tf.float32),
            tf.constant(p["sampled_count"], tf.float32))


def _expected(p, num_true, remove_accidental_hits, loss_np):
    logits, targets = sampled_logits_np(
        p["weights"], p["biases"], p["labels"][:, :num_true], p["inputs"], p["sampled"],
        p["true_count"][:, :num_true].astype(np.float32).astype(np.float64),
        p["sampled_count"].astype(np.float32).astype(np.float64), remove_accidental_hits)
    return loss_np(logits, targets)


LOSSES = [(tf.nn.nce_loss, nce_loss_np), (tf.nn.sampled_softmax_loss, sampled_softmax_loss_np)]


@pytest.mark.parametrize("loss_fn, loss_np", LOSSES)
@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("remove_accidental_hits", [False, True])
def test_loss_matches_numpy(problem, sess, loss_fn, loss_np, num_true, remove_accidental_hits):
    p = problem
    loss = loss_fn(tf.constant(p["weights"], tf.float32), tf.constant(p["biases"], tf.float32),
                   p["labels"][:, :num_true], tf.constant(p["inputs"], tf.float32),
                   num_sampled=4, num_classes=10, num_true=num_true,
                   sampled_values=_sampled_values(p, num_true),
                   remove_accidental_hits=remove_accidental_hits)
    assert loss.shape.as_list() == [3] and loss.dtype == tf.float32
    expected = _expected(p, num_true, remove_accidental_hits, loss_np)
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5, atol=1e-5)


def test_accidental_hits_change_the_loss(problem, sess):
    # Rows 0 and 1 have true classes among the samples (2 and 3): masking them changes
    # those rows' loss only.
    p = problem
    losses = [tf.nn.sampled_softmax_loss(
        p["weights"].astype(np.float32), p["biases"].astype(np.float32), p["labels"][:, :1],
        p["inputs"].astype(np.float32), 4, 10, sampled_values=_sampled_values(p, 1),
        remove_accidental_hits=remove) for remove in (False, True)]
    kept, removed = sess.run(losses)
    assert not np.isclose(kept[1], removed[1]) and np.isclose(kept[2], removed[2])


def test_graph_follows_tf(problem):
    p = problem
    args = (p["weights"].astype(np.float32), p["biases"].astype(np.float32))
    nce = tf.nn.nce_loss(*args, p["labels"], p["inputs"].astype(np.float32), 4, 10, num_true=2)
    softmax = tf.nn.sampled_softmax_loss(*args, p["labels"][:, :1],
                                         p["inputs"].astype(np.float32), 4, 10)
    ops = {op.name: op for op in tf.get_default_graph().get_operations()}
    # TF's names: the logits under the loss's scope, the last ops outside it.
    assert nce.name == "Reshape:0" and nce.shape.as_list() == [3]
    assert softmax.name == "softmax_cross_entropy_with_logits/Reshape_2:0"
    sampler = ops["nce_loss/LogUniformCandidateSampler"]
    assert sampler.get_attr("unique") and sampler.get_attr("range_max") == 10
    assert sampler.get_attr("num_true") == 2 and sampler.get_attr("num_sampled") == 4
    assert ops["sampled_losses"].type == "SigmoidCrossEntropyWithLogits"
    assert ops["sampled_softmax_loss/ComputeAccidentalHits"].type == "ComputeAccidentalHits"
    assert ops["sampled_softmax_loss/SparseToDense"].type == "SparseToDense"
    assert "nce_loss/ComputeAccidentalHits" not in ops  # nce_loss keeps the hits by default


@pytest.mark.parametrize("partition_strategy", ["mod", "div"])
def test_sharded_weights(problem, sess, partition_strategy):
    p = problem
    weights, biases = p["weights"].astype(np.float32), p["biases"].astype(np.float32)
    if partition_strategy == "mod":
        shards, bias_shards = [weights[i::3] for i in range(3)], [biases[i::3] for i in range(3)]
    else:
        shards = [weights[:4], weights[4:7], weights[7:]]
        bias_shards = [biases[:4], biases[4:7], biases[7:]]
    args = dict(labels=p["labels"], inputs=p["inputs"].astype(np.float32), num_sampled=4,
                num_classes=10, num_true=2, sampled_values=_sampled_values(p, 2))
    whole = tf.nn.nce_loss(weights, biases, **args)
    sharded = tf.nn.nce_loss([tf.constant(s) for s in shards],
                             [tf.constant(b) for b in bias_shards],
                             partition_strategy=partition_strategy, **args)
    np.testing.assert_allclose(*sess.run([whole, sharded]), rtol=1e-6)


def test_partitioned_variable_weights(problem, sess):
    p = problem
    with tf.variable_scope("emb", partitioner=tf.fixed_size_partitioner(3)):
        weights = tf.get_variable("w", shape=[10, 4], initializer=tf.random_normal_initializer())
    assert isinstance(weights, tf.PartitionedVariable)
    loss = tf.nn.sampled_softmax_loss(weights, p["biases"].astype(np.float32), p["labels"],
                                      p["inputs"].astype(np.float32), 4, 10, num_true=2,
                                      sampled_values=_sampled_values(p, 2),
                                      partition_strategy="div")
    sess.run(tf.global_variables_initializer())
    whole = sess.run(tf.concat(list(weights), 0)).astype(np.float64)
    np.testing.assert_allclose(sess.run(loss),
                               _expected(dict(p, weights=whole), 2, True, sampled_softmax_loss_np),
                               rtol=1e-5)


@pytest.mark.parametrize("loss_fn", [tf.nn.nce_loss, tf.nn.sampled_softmax_loss])
def test_gradients_reach_weights_biases_and_inputs(problem, sess, loss_fn):
    p = problem
    weights = tf.placeholder(tf.float64, [10, 4])
    biases = tf.placeholder(tf.float64, [10])
    inputs = tf.placeholder(tf.float64, [3, 4])
    sampled_values = (tf.constant(p["sampled"]), tf.constant(p["true_count"]),
                      tf.constant(p["sampled_count"]))
    loss = tf.reduce_sum(loss_fn(weights, biases, p["labels"], inputs, 4, 10, num_true=2,
                                 sampled_values=sampled_values))
    grads = tf.gradients(loss, [weights, biases, inputs])
    assert all(g is not None for g in grads)
    check_gradients(loss, [weights, biases, inputs],
                    [p["weights"], p["biases"], p["inputs"]], session=sess)


def test_no_gradient_reaches_the_sampled_values(problem):
    p = problem
    true_count = tf.placeholder(tf.float32, [3, 2])
    sampled_count = tf.placeholder(tf.float32, [4])
    loss = tf.nn.nce_loss(p["weights"].astype(np.float32), p["biases"].astype(np.float32),
                          p["labels"], p["inputs"].astype(np.float32), 4, 10, num_true=2,
                          sampled_values=(p["sampled"], true_count, sampled_count))
    assert tf.gradients(loss, [true_count, sampled_count]) == [None, None]


def _skip_gram_pairs(vocabulary_size, batch_size, rng):
    """A toy corpus where the context of word ``w`` is ``(w + 1) % V`` or ``(w + 2) % V``."""
    centers = rng.randint(0, vocabulary_size, batch_size)
    contexts = (centers + rng.randint(1, 3, batch_size)) % vocabulary_size
    return centers, contexts.reshape(-1, 1)


@pytest.mark.parametrize("loss_fn", [tf.nn.nce_loss, tf.nn.sampled_softmax_loss])
def test_word2vec_training_reduces_the_loss(loss_fn):
    # The skip-gram model of TF's word2vec_basic.py, on a toy corpus.
    vocabulary_size, embedding_size, batch_size = 50, 16, 64
    tf.set_random_seed(1)
    train_inputs = tf.placeholder(tf.int32, shape=[batch_size])
    train_labels = tf.placeholder(tf.int32, shape=[batch_size, 1])
    embeddings = tf.Variable(tf.random_uniform([vocabulary_size, embedding_size], -1.0, 1.0))
    embed = tf.nn.embedding_lookup(embeddings, train_inputs)
    weights = tf.Variable(tf.truncated_normal([vocabulary_size, embedding_size],
                                              stddev=1.0 / np.sqrt(embedding_size)))
    biases = tf.Variable(tf.zeros([vocabulary_size]))
    loss = tf.reduce_mean(loss_fn(weights=weights, biases=biases, labels=train_labels,
                                  inputs=embed, num_sampled=8, num_classes=vocabulary_size))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(300):
            centers, contexts = _skip_gram_pairs(vocabulary_size, batch_size, rng)
            _, value = sess.run([train, loss], {train_inputs: centers, train_labels: contexts})
            losses.append(value)
    first, last = np.mean(losses[:20]), np.mean(losses[-20:])
    assert np.isfinite(losses).all() and last < 0.25 * first, (first, last)
