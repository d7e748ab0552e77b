"""The candidate samplers (``tf.nn.*_candidate_sampler``) and ``compute_accidental_hits``.

Distributions are checked statistically against their closed forms, with
fixed seeds (so each check is deterministic) and tolerances of several
standard errors; expected counts are checked against TF's formulas:
``P(c) * num_sampled`` when no draw was rejected, else
``1 - (1 - P(c)) ** num_tries``.
"""

import numpy as np
import pytest

import minitf as tf


def log_uniform_p(classes, range_max):
    classes = np.asarray(classes, np.float64)
    return np.log((classes + 2.0) / (classes + 1.0)) / np.log(range_max + 1.0)


def frequencies(samples, range_max):
    return np.bincount(np.asarray(samples).reshape(-1), minlength=range_max) / np.size(samples)


def assert_distribution(samples, p, sigmas=5.0):
    """Each class's frequency within ``sigmas`` standard errors of ``p``."""
    n = np.size(samples)
    freq = frequencies(samples, len(p))
    stderr = np.sqrt(p * (1 - p) / n) + 1e-12
    assert np.all(np.abs(freq - p) <= sigmas * stderr + 1e-9), (freq, p)


def num_tries(counts, p):
    """``T`` with ``counts = 1 - (1 - p) ** T``, from every entry (they must agree)."""
    tries = np.log1p(-np.asarray(counts, np.float64)) / np.log1p(-np.asarray(p))
    assert np.allclose(tries, np.round(tries[0]), atol=1e-2), tries
    return int(np.round(tries[0]))


# ---- the op, its outputs and their shapes -------------------------------------------------------
SAMPLERS = {
    "UniformCandidateSampler": tf.nn.uniform_candidate_sampler,
    "LogUniformCandidateSampler": tf.nn.log_uniform_candidate_sampler,
    "LearnedUnigramCandidateSampler": tf.nn.learned_unigram_candidate_sampler,
}


@pytest.mark.parametrize("op_type", sorted(SAMPLERS))
def test_outputs_are_a_named_tuple_of_the_op(op_type):
    labels = tf.placeholder(tf.int64, [None, 2])
    result = SAMPLERS[op_type](labels, num_true=2, num_sampled=5, unique=True, range_max=10)
    assert type(result).__name__ == op_type
    assert result._fields == ("sampled_candidates", "true_expected_count",
                              "sampled_expected_count")
    assert result.sampled_candidates.op.type == op_type
    assert result.sampled_candidates.op.name == op_type
    assert [t.dtype for t in result] == [tf.int64, tf.float32, tf.float32]
    assert [t.shape.as_list() for t in result] == [[5], [None, 2], [5]]
    assert result.sampled_candidates.op.get_attr("range_max") == 10


def test_the_tf_random_aliases():
    for name in ("uniform", "log_uniform", "learned_unigram", "fixed_unigram", "all"):
        sampler = name + "_candidate_sampler"
        assert getattr(tf.random, sampler) is getattr(tf.nn, sampler)


def test_python_true_classes_become_int64_under_the_op():
    result = tf.nn.uniform_candidate_sampler([[1], [2]], 1, 3, True, 10)
    true_classes = result.sampled_candidates.op.inputs[0]
    assert true_classes.dtype == tf.int64
    assert true_classes.op.name == "UniformCandidateSampler/true_classes"


def test_construction_errors():
    with pytest.raises(ValueError, match="rank 2"):
        tf.nn.uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 1, 3, True, 10)
    with pytest.raises(TypeError, match="int32"):
        tf.nn.uniform_candidate_sampler(tf.constant([[1], [2]]), 1, 3, True, 10)
    with pytest.raises(ValueError, match="Attr 'range_max' of 'UniformCandidateSampler' Op "
                                         "passed 0 less than minimum 1"):
        tf.nn.uniform_candidate_sampler([[1]], 1, 3, False, 0)
    with pytest.raises(ValueError, match="'num_sampled'.*less than minimum 1"):
        tf.nn.log_uniform_candidate_sampler([[1]], 1, 0, False, 10)
    with pytest.raises(ValueError, match="'num_shards'.*less than minimum 1"):
        tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 1, False, 2, unigrams=[1, 1],
                                              num_shards=0)


def test_run_time_errors(sess):
    labels = tf.placeholder(tf.int64)
    two_true = tf.nn.uniform_candidate_sampler(labels, 2, 3, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="true_classes must have num_true columns"):
        sess.run(two_true, {labels: [[1, 2, 3]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="true_classes must be a matrix"):
        sess.run(two_true, {labels: [1, 2]})
    too_many = tf.nn.uniform_candidate_sampler(labels, 1, 30, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):
        sess.run(too_many, {labels: [[1]]})
    log_uniform = tf.nn.log_uniform_candidate_sampler(labels, 1, 3, False, 5)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"`true_candidate` out of range \[0, 5\), received -1"):
        sess.run(log_uniform, {labels: [[-1], [3]]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="received 5"):
        sess.run(log_uniform, {labels: [[5]]})


# ---- seeds --------------------------------------------------------------------------------------
def test_seeded_samples_repeat_across_sessions_and_change_across_runs():
    tf.set_random_seed(7)
    sampled = tf.nn.log_uniform_candidate_sampler([[0]], 1, 8, False, 1000, seed=3)[0]
    with tf.Session() as sess:
        first = [sess.run(sampled) for _ in range(3)]
    with tf.Session() as sess:
        again = [sess.run(sampled) for _ in range(3)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[1])


# ---- the distributions -------------------------------------------------------------------------
def test_uniform_distribution_and_expected_counts(sess):
    result = tf.nn.uniform_candidate_sampler([[3], [7]], 1, 20000, False, 10, seed=1)
    sampled, true_count, sampled_count = sess.run(result)
    assert_distribution(sampled, np.full(10, 0.1))
    np.testing.assert_allclose(true_count, [[2000.0], [2000.0]])  # P * num_sampled
    np.testing.assert_allclose(sampled_count, np.full(20000, 2000.0))


def test_log_uniform_distribution_and_expected_counts(sess):
    range_max, num_sampled = 50, 40000
    result = tf.nn.log_uniform_candidate_sampler([[0, 9], [49, 3]], 2, num_sampled, False,
                                                 range_max, seed=2)
    sampled, true_count, sampled_count = sess.run(result)
    p = log_uniform_p(np.arange(range_max), range_max)
    assert_distribution(sampled, p)
    np.testing.assert_allclose(true_count, num_sampled * p[[[0, 9], [49, 3]]], rtol=1e-6)
    np.testing.assert_allclose(sampled_count, num_sampled * p[sampled], rtol=1e-6)


def test_unique_samples_are_distinct_and_counts_use_the_number_of_tries(sess):
    range_max, num_sampled = 20, 8
    labels = [[0], [5], [19]]
    result = tf.nn.log_uniform_candidate_sampler(labels, 1, num_sampled, True, range_max,
                                                 seed=4)
    p = log_uniform_p(np.arange(range_max), range_max)
    tries_seen = set()
    for _ in range(50):
        sampled, true_count, sampled_count = sess.run(result)
        assert len(set(sampled.tolist())) == num_sampled
        if np.allclose(sampled_count, num_sampled * p[sampled]):
            tries = num_sampled  # no draw was rejected: TF's shortcut P * num_sampled
        else:
            # 1 - (1 - P) ** T, with one T for the true classes and the samples.
            tries = num_tries(np.concatenate([sampled_count, true_count.ravel()]),
                              np.concatenate([p[sampled], p[np.ravel(labels)]]))
            assert tries > num_sampled
        tries_seen.add(tries)
    assert len(tries_seen) > 3  # the number of tries varies from run to run


def test_unique_sampling_draws_in_order_without_replacement(sess):
    # Rejection sampling: the first sample follows P, the second P(c) / (1 - P(first)).
    range_max = 6
    sampled = tf.nn.log_uniform_candidate_sampler([[0]], 1, 2, True, range_max, seed=5)[0]
    pairs = np.array([sess.run(sampled) for _ in range(4000)])
    p = log_uniform_p(np.arange(range_max), range_max)
    second = np.array([sum(p[a] * p[c] / (1 - p[a]) for a in range(range_max) if a != c)
                       for c in range(range_max)])
    assert_distribution(pairs[:, 0], p)
    assert_distribution(pairs[:, 1], second)
    assert np.all(pairs[:, 0] != pairs[:, 1])


def test_unique_sampling_of_the_whole_range(sess):
    result = tf.nn.uniform_candidate_sampler([[2]], 1, 10, True, 10, seed=6)
    sampled, true_count, sampled_count = sess.run(result)
    assert sorted(sampled.tolist()) == list(range(10))
    tries = num_tries(sampled_count, np.full(10, 0.1)) if sampled_count[0] != 1.0 else 10
    assert tries >= 10
    np.testing.assert_allclose(true_count, [[sampled_count[0]]])


def test_learned_unigram_counts_the_true_classes_of_earlier_runs():
    labels = np.full((50, 1), 3, np.int64)
    result = tf.nn.learned_unigram_candidate_sampler(labels, 1, 4, False, 5, seed=3)
    for _ in range(2):  # each session starts from counts of 1
        with tf.Session() as sess:
            # Run 1: all counts 1, P = 1/5.  Then class 3 has count 51 of 55, then 101 of 105.
            for p3 in (1 / 5, 51 / 55, 101 / 105):
                sampled, true_count, _ = sess.run(result)
                np.testing.assert_allclose(true_count, np.full((50, 1), 4 * p3), rtol=1e-6)
    with tf.Session() as sess:
        for _ in range(20):
            sess.run(result)
        sampled = np.concatenate([sess.run(result).sampled_candidates for _ in range(200)])
    p3 = (1 + 50 * 21) / (5 + 50 * 21)  # barely anything but class 3 by now
    assert np.mean(sampled == 3) > p3 - 0.01


def test_fixed_unigram_with_distortion_reserved_ids_and_shards(sess):
    # 2 reserved ids, then 8 counts: ids 0..9.  Shard 1 of 2 keeps ids 1, 3, 5, 7, 9:
    # reserved id 1 (weight 0) and counts 2, 4, 6, 8, each ** 0.5.
    result = tf.nn.fixed_unigram_candidate_sampler(
        [[0], [1], [4]], 1, 30000, False, 5, unigrams=[1, 2, 3, 4, 5, 6, 7, 8],
        num_reserved_ids=2, distortion=0.5, num_shards=2, shard=1, seed=2)
    sampled, true_count, sampled_count = sess.run(result)
    weights = np.array([0.0, 2, 4, 6, 8]) ** 0.5
    p = weights / weights.sum()
    assert_distribution(sampled, p)
    assert not np.any(sampled == 0)
    np.testing.assert_allclose(true_count, 30000 * p[[[0], [1], [4]]], rtol=1e-6)
    np.testing.assert_allclose(sampled_count, 30000 * p[sampled], rtol=1e-6)


def test_fixed_unigram_from_a_vocabulary_file(tmp_path, sess):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,40\nof,30\nand,20\nzebra,10\n")
    result = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 20000, False, 4,
                                                   vocab_file=str(vocab), seed=1)
    sampled, true_count, _ = sess.run(result)
    assert_distribution(sampled, np.array([0.4, 0.3, 0.2, 0.1]))
    np.testing.assert_allclose(true_count, [[8000.0]], rtol=1e-6)


def test_fixed_unigram_unique_never_samples_a_zero_weight(sess):
    result = tf.nn.fixed_unigram_candidate_sampler([[2]], 1, 3, True, 5, unigrams=[1, 2, 3],
                                                   num_reserved_ids=2, seed=3)
    for _ in range(20):
        assert sorted(sess.run(result).sampled_candidates.tolist()) == [2, 3, 4]
    impossible = tf.nn.fixed_unigram_candidate_sampler([[2]], 1, 4, True, 5,
                                                       unigrams=[1, 2, 3], num_reserved_ids=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        sess.run(impossible)


def test_fixed_unigram_errors(tmp_path, sess):
    def run(**kwargs):
        sess.run(tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 4, **kwargs))

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="range is 4 must be equal to weights size  5"):
        run(unigrams=[1.0] * 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="either vocab_file or unigrams"):
        run()
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("a,1\nb,2\n\nc,3\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="only provide one of"):
        run(unigrams=[1.0] * 4, vocab_file=str(vocab))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Wrong vocabulary format"):
        run(vocab_file=str(vocab))
    with pytest.raises(tf.errors.NotFoundError, match="nope.csv"):
        run(vocab_file=str(tmp_path / "nope.csv"))


def test_all_candidate_sampler(sess):
    result = tf.nn.all_candidate_sampler([[0, 1], [4, 2]], 2, 5, True)
    assert type(result).__name__ == "AllCandidateSampler"
    sampled, true_count, sampled_count = sess.run(result)
    assert sampled.tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_array_equal(true_count, np.ones((2, 2)))
    np.testing.assert_array_equal(sampled_count, np.ones(5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="received 5"):
        sess.run(tf.nn.all_candidate_sampler([[5]], 1, 5, False))


def test_samplers_are_not_differentiable():
    inputs = tf.placeholder(tf.float32, [2, 1])
    labels = tf.cast(inputs, tf.int64)
    counts = tf.nn.uniform_candidate_sampler(labels, 1, 2, False, 10).true_expected_count
    assert tf.gradients(counts, inputs) == [None]


# ---- accidental hits ----------------------------------------------------------------------------
def test_compute_accidental_hits(sess):
    true_classes = tf.constant([[1, 2], [3, 0], [2, 2]], tf.int64)
    sampled = tf.constant([7, 1, 4, 0, 2, 1], tf.int64)
    hits = tf.nn.compute_accidental_hits(true_classes, sampled, num_true=2)
    assert type(hits).__name__ == "ComputeAccidentalHits" and hits._fields == (
        "indices", "ids", "weights")
    assert [t.dtype for t in hits] == [tf.int32, tf.int64, tf.float32]
    assert hits.indices.op.type == "ComputeAccidentalHits"
    indices, ids, weights = sess.run(hits)
    # Row by row; a candidate sampled twice (1) is found at its last position.
    assert indices.tolist() == [0, 0, 1, 2, 2]
    assert ids.tolist() == [5, 4, 3, 4, 4]
    np.testing.assert_array_equal(weights, np.full(5, np.finfo(np.float32).min))
    empty = sess.run(tf.nn.compute_accidental_hits([[9]], [1, 2], num_true=1))
    assert [len(t) for t in empty] == [0, 0, 0]


def test_compute_accidental_hits_errors(sess):
    with pytest.raises(ValueError, match="Dimension must be 2 but is 1"):
        tf.nn.compute_accidental_hits([[1]], [1, 2], num_true=2)
    with pytest.raises(ValueError, match="rank 1"):
        tf.nn.compute_accidental_hits([[1]], [[1, 2]], num_true=1)
    with pytest.raises(TypeError):
        tf.nn.compute_accidental_hits(tf.constant([[1]]), [1, 2], num_true=1)
    labels = tf.placeholder(tf.int64)
    hits = tf.nn.compute_accidental_hits(labels, [1, 2], num_true=2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="true_candidates must be a batch_size \\* num_true matrix"):
        sess.run(hits, {labels: [[1, 2, 3]]})
