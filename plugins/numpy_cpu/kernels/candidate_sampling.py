"""CPU kernels of the candidate samplers and ``ComputeAccidentalHits``.

Every sampler kernel does what TF's ``BaseCandidateSamplerOp`` does
(``tensorflow/core/kernels/candidate_sampler_ops.cc`` and
``range_sampler.cc``):

1. check ``true_classes`` (a ``[batch_size, num_true]`` matrix of ids in
   ``[0, range)``);
2. draw ``num_sampled`` candidates from the sampler's distribution ``P`` —
   with ``unique=True`` a draw already taken is rejected and drawn again,
   and ``num_tries`` counts every draw, rejected ones included;
3. give each true class and each candidate its *expected count*, how often
   it is expected among the samples: ``P(c) * num_sampled`` when every draw
   was kept, else ``1 - (1 - P(c)) ** num_tries``, the probability of being
   drawn at least once in ``num_tries`` draws (TF's ``ExpectedCountHelper``);
4. (learned unigram only) count the true classes into the distribution, for
   the next step.

A sampler has a ``range`` (its classes are ``[0, range)``), a ``support``
(how many of them have a nonzero probability) and two functions of the class
ids: ``draw(rng, n)`` and ``probability(ids)``.  The draws come from ``ctx.random_generator()``
(seeded by the op's ``seed``/``seed2``, living as long as the session); the
learned and fixed unigram weights live as long as the session too
(``ctx.resources.kernel_state``), as TF keeps them in its kernel object.
"""

import numpy as np

from minitf.plugin import errors
from minitf_numpy_cpu.kernels.table import kernel


# ---- the distributions -----------------------------------------------------------------------
class _Uniform:
    """Every class in ``[0, range)`` with probability ``1 / range``."""

    def __init__(self, range_max):
        self.range = self.support = range_max

    def draw(self, rng, n):
        return rng.integers(0, self.range, size=n, dtype=np.int64)

    def probability(self, ids):
        return np.full(np.shape(ids), 1.0 / self.range)


class _LogUniform:
    """Zipf-like: ``P(c) = log((c + 2) / (c + 1)) / log(range + 1)``.

    A draw is ``floor(exp(u * log(range + 1))) - 1`` for ``u`` uniform in
    ``[0, 1)``, which is ``c`` exactly when ``exp(...)`` falls in
    ``[c + 1, c + 2)``: small ids (frequent words, when a vocabulary is sorted
    by frequency) come up most.
    """

    def __init__(self, range_max):
        self.range = self.support = range_max
        self._log_range = np.log1p(range_max)

    def draw(self, rng, n):
        values = np.exp(rng.random(n) * self._log_range).astype(np.int64) - 1
        return values % self.range  # guards the (theoretical) round-off to range

    def probability(self, ids):
        ids = np.asarray(ids, dtype=np.float64)
        return np.log((ids + 2.0) / (ids + 1.0)) / self._log_range


class _Unigram:
    """``P(c) = weights[c] / sum(weights)``, drawn by inverse CDF."""

    def __init__(self, weights):
        self.weights = weights
        self.range = len(weights)
        self.support = int(np.count_nonzero(weights))

    def draw(self, rng, n):
        cumulative = np.cumsum(self.weights)
        picks = np.searchsorted(cumulative, rng.random(n) * cumulative[-1], side="right")
        return np.minimum(picks, self.range - 1).astype(np.int64)

    def probability(self, ids):
        return self.weights[ids] / np.sum(self.weights)


# ---- sampling and expected counts -------------------------------------------------------------
def _sample(ctx, sampler, true_classes, num_true, num_sampled, unique):
    """Steps 1-3 of the module docstring: the three outputs of a sampler op."""
    _check_true_classes(ctx, true_classes, num_true, sampler.range)
    if unique and num_sampled > sampler.range:
        raise ctx.invalid_argument("Sampler's range is too small.")
    rng = ctx.random_generator()
    if unique:
        sampled, num_tries = _draw_unique(ctx, sampler, rng, num_sampled)
    else:
        sampled, num_tries = sampler.draw(rng, num_sampled), num_sampled

    def expected_count(ids):
        return _expected_count(sampler.probability(ids), num_sampled, num_tries)

    return sampled, expected_count(true_classes), expected_count(sampled)


def _check_true_classes(ctx, true_classes, num_true, range_max):
    if true_classes.ndim != 2:
        raise ctx.invalid_argument("true_classes must be a matrix")
    if true_classes.shape[1] != num_true:
        raise ctx.invalid_argument("true_classes must have num_true columns, expected: %d was: %d"
                                   % (true_classes.shape[1], num_true))
    outside = (true_classes < 0) | (true_classes >= range_max)
    if outside.any():
        raise ctx.invalid_argument("`true_candidate` out of range [0, %d), received %d"
                                   % (range_max, true_classes[outside][0]))


def _draw_unique(ctx, sampler, rng, num_sampled):
    """``num_sampled`` distinct ids, each drawn until it is new, and the number of draws.

    Draws come in batches for speed, but are examined one by one and the
    count stops at the draw that completes the sample, so ``num_tries`` is
    what drawing one at a time would give.
    """
    if num_sampled > sampler.support:  # TF would draw forever
        raise ctx.invalid_argument("Sampler's range is too small: %d unique candidates "
                                   "requested, %d classes have a nonzero probability"
                                   % (num_sampled, sampler.support))
    picked, seen, num_tries = [], set(), 0
    while len(picked) < num_sampled:
        for value in sampler.draw(rng, 2 * (num_sampled - len(picked))).tolist():
            num_tries += 1
            if value not in seen:
                seen.add(value)
                picked.append(value)
                if len(picked) == num_sampled:
                    break
    return np.array(picked, dtype=np.int64), num_tries


def _expected_count(probability, num_sampled, num_tries):
    """TF's ``ExpectedCountHelper``: ``P * num_sampled`` without rejections,
    else ``1 - (1 - P) ** num_tries`` (as ``-expm1(num_tries * log1p(-P))``)."""
    if num_tries == num_sampled:
        counts = probability * num_sampled
    else:
        with np.errstate(divide="ignore"):
            counts = -np.expm1(num_tries * np.log1p(-probability))
    return np.asarray(counts, dtype=np.float32)


# ---- the sampler kernels ---------------------------------------------------------------------
@kernel("UniformCandidateSampler")
def uniform_candidate_sampler(ctx, true_classes, num_true, num_sampled, unique, range_max,
                              seed, seed2):
    return _sample(ctx, _Uniform(range_max), true_classes, num_true, num_sampled, unique)


@kernel("LogUniformCandidateSampler")
def log_uniform_candidate_sampler(ctx, true_classes, num_true, num_sampled, unique, range_max,
                                  seed, seed2):
    return _sample(ctx, _LogUniform(range_max), true_classes, num_true, num_sampled, unique)


@kernel("LearnedUnigramCandidateSampler")
def learned_unigram_candidate_sampler(ctx, true_classes, num_true, num_sampled, unique,
                                      range_max, seed, seed2):
    """Unigram counts learned from the true classes seen so far in this session.

    Every class starts with count 1; after sampling, each true class of the
    batch adds 1 to its count (TF's ``UnigramSampler::Update``), so the next
    step samples frequent classes more.
    """
    counts = ctx.resources.kernel_state(("unigram_counts", ctx.op.name),
                                        lambda: np.ones(range_max, dtype=np.float64))
    outputs = _sample(ctx, _Unigram(counts), true_classes, num_true, num_sampled, unique)
    np.add.at(counts, true_classes.reshape(-1), 1.0)
    return outputs


@kernel("FixedUnigramCandidateSampler")
def fixed_unigram_candidate_sampler(ctx, true_classes, num_true, num_sampled, unique,
                                    range_max, vocab_file, distortion, num_reserved_ids,
                                    num_shards, shard, unigrams, seed, seed2):
    weights = ctx.resources.kernel_state(
        ("unigram_weights", ctx.op.name),
        lambda: _fixed_weights(ctx, range_max, vocab_file, distortion, num_reserved_ids,
                               num_shards, shard, unigrams))
    return _sample(ctx, _Unigram(weights), true_classes, num_true, num_sampled, unique)


def _fixed_weights(ctx, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard,
                   unigrams):
    """TF's ``FixedUnigramSampler`` weights: ``num_reserved_ids`` zeros, then each
    class's count raised to ``distortion``, keeping only the ids of this shard
    (``id % num_shards == shard``)."""
    vocab_file = vocab_file.decode() if isinstance(vocab_file, bytes) else vocab_file
    if not vocab_file and not len(unigrams):
        raise ctx.invalid_argument("Must provide either vocab_file or unigrams.")
    if vocab_file and len(unigrams):
        raise ctx.invalid_argument("Must only provide one of vocab_file and unigrams.")
    counts = _vocab_counts(ctx, vocab_file) if vocab_file else [float(u) for u in unigrams]
    all_weights = [0.0] * num_reserved_ids + [c ** distortion for c in counts]
    weights = np.array(all_weights[shard::num_shards], dtype=np.float64)
    if len(weights) != range_max:
        raise ctx.invalid_argument("range is %d must be equal to weights size  %d"
                                   % (range_max, len(weights)))
    return weights


def _vocab_counts(ctx, vocab_file):
    """The counts of a vocabulary file: one line a class, CSV, the count last."""
    try:
        with open(vocab_file, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise ctx.error(errors.NotFoundError, "%s; No such file or directory" % vocab_file) \
            from None
    counts = []
    for line in lines:
        try:
            counts.append(float(line.split(",")[-1]))
        except ValueError:
            raise ctx.invalid_argument("Wrong vocabulary format at line: %s" % line) from None
    return counts


@kernel("AllCandidateSampler")
def all_candidate_sampler(ctx, true_classes, num_true, num_sampled, unique, seed, seed2):
    """Every class ``0 .. num_sampled - 1``, each with expected count 1."""
    _check_true_classes(ctx, true_classes, num_true, num_sampled)
    return (np.arange(num_sampled, dtype=np.int64),
            np.ones(true_classes.shape, dtype=np.float32),
            np.ones(num_sampled, dtype=np.float32))


# ---- accidental hits ---------------------------------------------------------------------------
@kernel("ComputeAccidentalHits")
def compute_accidental_hits(ctx, true_classes, sampled_candidates, num_true, seed, seed2):
    """Where a sampled candidate is one of its row's true classes.

    For each row ``i`` and each of its true classes that was also sampled, in
    row order: ``indices`` gets ``i``, ``ids`` the candidate's position among
    the samples (the last one, for a candidate drawn twice), ``weights`` the
    lowest float32 — added to that logit, it takes the candidate out of the
    softmax.
    """
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise ctx.invalid_argument("true_candidates must be a batch_size * num_true matrix")
    position = {int(c): j for j, c in enumerate(sampled_candidates.tolist())}
    hits = [(i, position[c]) for i, row in enumerate(true_classes.tolist()) for c in row
            if c in position]
    indices = np.array([i for i, _ in hits], dtype=np.int32)
    ids = np.array([j for _, j in hits], dtype=np.int64)
    weights = np.full(len(hits), np.finfo(np.float32).min, dtype=np.float32)
    return indices, ids, weights
