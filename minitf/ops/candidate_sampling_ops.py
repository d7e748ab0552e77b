"""Candidate samplers: ``tf.nn.log_uniform_candidate_sampler`` and its siblings.

A softmax over a vocabulary of 50,000 words costs 50,000 logits per example.
*Candidate sampling* (Jean et al. 2014, Mikolov et al. 2013) computes the
logits of the true classes and of a few dozen *sampled* classes only; the
sampled losses of :mod:`minitf.ops.sampled_losses` are built on the ops here.

Each sampler op takes the true classes, ``[batch_size, num_true]`` int64, and
returns three tensors (a named tuple named after the op, as in TF):

* ``sampled_candidates`` ``[num_sampled]`` int64: the classes drawn, the same
  for the whole batch;
* ``true_expected_count`` ``[batch_size, num_true]`` float32 and
* ``sampled_expected_count`` ``[num_sampled]`` float32: how many times each
  class is expected among the samples — ``P(c) * num_sampled``, or, with
  ``unique=True`` (draws repeated until ``num_sampled`` distinct classes were
  drawn, ``num_tries`` draws in all), ``1 - (1 - P(c)) ** num_tries``.  The
  losses subtract their log, ``log Q(c)``, from the logits.

The samplers differ in their distribution ``P`` over ``[0, range_max)``:

* ``uniform_candidate_sampler``: ``1 / range_max``;
* ``log_uniform_candidate_sampler``:
  ``log((c + 2) / (c + 1)) / log(range_max + 1)`` (Zipf: for vocabularies
  sorted by frequency);
* ``learned_unigram_candidate_sampler``: the counts of the true classes seen
  so far in the session (each starts at 1);
* ``fixed_unigram_candidate_sampler``: given counts (``unigrams`` or a
  ``vocab_file``) raised to ``distortion``;
* ``all_candidate_sampler``: not random, every class of ``[0, num_sampled)``.

The random ones are seeded like every random op (``seed``/``seed2`` attrs
from :func:`tf.set_random_seed` and ``seed``).  ``compute_accidental_hits``
finds the samples that are one of their row's true classes.  None of these
ops is differentiable.

Mirrors ``tensorflow/python/ops/candidate_sampling_ops.py`` (TF's ops
``UniformCandidateSampler``, ...); the kernels are
``plugins/numpy_cpu/kernels/candidate_sampling.py``.
"""

import collections

from minitf.api_scopes import get_seed
from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.op_def_library import apply_op, define_op, graph_of, not_differentiable

_OUTPUTS = ("sampled_candidates", "true_expected_count", "sampled_expected_count")
_COMMON_ATTRS = {"num_true": None, "num_sampled": None, "unique": None, "seed": 0, "seed2": 0}


# ---- declarations ---------------------------------------------------------------------------
def _sampler_shapes(op):
    """``[num_sampled]``, ``[batch_size, num_true]``, ``[num_sampled]``."""
    true_classes = op.inputs[0].shape.with_rank(2)
    num_sampled = op.get_attr("num_sampled")
    return [TensorShape([num_sampled]), TensorShape([true_classes[0], op.get_attr("num_true")]),
            TensorShape([num_sampled])]


def _sampler_dtypes(op):
    return [dtypes.int64, dtypes.float32, dtypes.float32]


def _define_sampler(op_type, doc, **attrs):
    """Declares a sampler op and the named tuple its wrapper returns."""
    op_def = define_op(op_type, stacklevel=2, inputs=("true_classes",), outputs=_OUTPUTS,
                       attrs=dict(_COMMON_ATTRS, **attrs), shape_fn=_sampler_shapes,
                       dtype_fn=_sampler_dtypes, type_constraint=(dtypes.int64,),
                       stateful=True, doc=doc)
    return op_def, collections.namedtuple(op_type, _OUTPUTS)


_uniform, _UniformOutputs = _define_sampler(
    "UniformCandidateSampler", "num_sampled classes drawn uniformly from [0, range_max).",
    range_max=None)
_log_uniform, _LogUniformOutputs = _define_sampler(
    "LogUniformCandidateSampler", "num_sampled classes drawn from the log-uniform (Zipf) "
    "distribution over [0, range_max).", range_max=None)
_learned_unigram, _LearnedUnigramOutputs = _define_sampler(
    "LearnedUnigramCandidateSampler", "num_sampled classes drawn from the unigram counts of "
    "the true classes seen so far.", range_max=None)
_fixed_unigram, _FixedUnigramOutputs = _define_sampler(
    "FixedUnigramCandidateSampler", "num_sampled classes drawn from given unigram counts.",
    range_max=None, vocab_file="", distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0,
    unigrams=())
_all, _AllOutputs = _define_sampler(
    "AllCandidateSampler", "Every class of [0, num_sampled), with expected count 1.")


def _accidental_hits_shapes(op):
    true_classes = op.inputs[0].shape.with_rank(2)
    op.inputs[1].shape.with_rank(1)
    num_true = op.get_attr("num_true")
    if true_classes[1].value is not None and true_classes[1].value != num_true:
        raise ValueError("Dimension must be %d but is %d" % (num_true, true_classes[1].value))
    return [TensorShape([None])] * 3


_compute_accidental_hits = define_op(
    "ComputeAccidentalHits", inputs=("true_classes", "sampled_candidates"),
    outputs=("indices", "ids", "weights"), attrs={"num_true": None, "seed": 0, "seed2": 0},
    shape_fn=_accidental_hits_shapes,
    dtype_fn=lambda op: [dtypes.int32, dtypes.int64, dtypes.float32],
    type_constraint=(dtypes.int64,), same_dtype_inputs=("true_classes", "sampled_candidates"),
    doc="The samples that are one of their row's true classes, and where.")
ComputeAccidentalHits = collections.namedtuple("ComputeAccidentalHits",
                                               ("indices", "ids", "weights"))

not_differentiable("UniformCandidateSampler", "LogUniformCandidateSampler",
                   "LearnedUnigramCandidateSampler", "FixedUnigramCandidateSampler",
                   "AllCandidateSampler", "ComputeAccidentalHits",
                   reason="they draw or compare integer classes")


# ---- building a sampler op ---------------------------------------------------------------------
def _check_minimum(op_type, attrs, names, minimum):
    """TF's attr constraints (``num_sampled: int >= 1``), checked when the op is built."""
    for name in names:
        if attrs[name] < minimum:
            raise ValueError("Attr '%s' of '%s' Op passed %d less than minimum %d."
                             % (name, op_type, attrs[name], minimum))


def _int64_input(value, name):
    """``value`` as an int64 tensor: Python and NumPy values are converted, a
    tensor of another dtype is left for the op to reject with TF's TypeError."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value, name=name)
    return convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _sampler(op_def, outputs_type, true_classes, attrs, seed, name):
    """Adds a sampler op to the graph of ``true_classes``; returns its named tuple."""
    attrs = dict(attrs, num_true=int(attrs["num_true"]), num_sampled=int(attrs["num_sampled"]),
                 unique=bool(attrs["unique"]))
    _check_minimum(op_def.name, attrs, [n for n in ("num_true", "num_sampled", "range_max")
                                        if n in attrs], 1)
    seed1, seed2 = get_seed(seed)
    attrs.update(seed=seed1 or 0, seed2=seed2 or 0)
    graph = graph_of([true_classes])
    with graph.as_default(), graph.name_scope(name or op_def.name) as scope:
        true_classes = _int64_input(true_classes, "true_classes")
        return outputs_type(*apply_op(op_def, [true_classes], attrs=attrs, name=scope))


# ---- the public wrappers -----------------------------------------------------------------------
def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """Samples classes uniformly from ``[0, range_max)`` (``tf.nn.uniform_candidate_sampler``).

    Args:
        true_classes: ``[batch_size, num_true]`` int64, the target classes.
        num_true: the number of target classes per example.
        num_sampled: how many classes to draw (the same for the whole batch).
        unique: draw ``num_sampled`` distinct classes (then ``num_sampled``
            must be at most ``range_max``).
        range_max: the number of classes.
        seed: the op-level seed (see :func:`tf.set_random_seed`).
        name: the op's name (default ``UniformCandidateSampler``).

    Returns:
        ``UniformCandidateSampler(sampled_candidates, true_expected_count,
        sampled_expected_count)``, see the module docstring.

    Raises:
        ValueError: if ``true_classes`` is not a matrix, or an int argument is below 1.
        TypeError: if ``true_classes`` is a tensor of a dtype other than int64.
        InvalidArgumentError: when run, for ``true_classes`` with another
            number of columns or a class outside ``[0, range_max)``.

    Example:
        >>> labels = tf.constant([[3], [7]], tf.int64)
        >>> sampled, true_count, sampled_count = tf.nn.uniform_candidate_sampler(
        ...     labels, num_true=1, num_sampled=4, unique=True, range_max=10, seed=1)
    """
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique,
                 range_max=int(range_max))
    return _sampler(_uniform, _UniformOutputs, true_classes, attrs, seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Samples classes from the log-uniform (Zipfian) distribution over ``[0, range_max)``.

    ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``: class 0 is the
    most likely and the probabilities fall like ``1 / c``, as word
    frequencies do in a vocabulary sorted by frequency — the sampler word2vec
    uses (``tf.nn.log_uniform_candidate_sampler``, the default of
    :func:`~minitf.ops.sampled_losses.nce_loss`).  Arguments, results and
    errors as for :func:`uniform_candidate_sampler`.
    """
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique,
                 range_max=int(range_max))
    return _sampler(_log_uniform, _LogUniformOutputs, true_classes, attrs, seed, name)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes by how often they have been true classes so far in the session.

    Each class starts with a count of 1; each run of the op first samples,
    then adds the batch's true classes to the counts, so ``P(c) =
    count(c) / sum(counts)`` follows the training data as it goes
    (``tf.nn.learned_unigram_candidate_sampler``).  A new session starts
    afresh.  Arguments, results and errors as for
    :func:`uniform_candidate_sampler`.
    """
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique,
                 range_max=int(range_max))
    return _sampler(_learned_unigram, _LearnedUnigramOutputs, true_classes, attrs, seed, name)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes from given counts: ``P(c)`` proportional to ``count(c) ** distortion``.

    (``tf.nn.fixed_unigram_candidate_sampler``.)  The counts come from
    ``unigrams`` or from ``vocab_file``, one line a class in CSV with the
    count last (``the,2345``).  ``distortion`` below 1 flattens the
    distribution (word2vec uses 0.75).  Ids ``0 .. num_reserved_ids - 1``
    come first with count 0 (never sampled).  With ``num_shards > 1`` only
    the ids ``i`` with ``i % num_shards == shard`` are kept, renumbered from 0.

    Args:
        true_classes, num_true, num_sampled, unique, seed, name: as for
            :func:`uniform_candidate_sampler`.
        range_max: the number of classes; it must equal the number of
            counts kept (reserved ids included), else the op fails when run.
        vocab_file: a vocabulary file (give it or ``unigrams``, not both).
        distortion: the exponent applied to each count.
        num_reserved_ids: ids before the counts, never sampled.
        num_shards, shard: which ids this sampler covers.
        unigrams: the counts, one per class.

    Raises:
        InvalidArgumentError: when run, for neither or both of ``vocab_file``
            and ``unigrams``, a ``range_max`` other than the number of counts,
            or a bad line in the vocabulary file; NotFoundError for a missing one.
    """
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique,
                 range_max=int(range_max), vocab_file=vocab_file, distortion=float(distortion),
                 num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards),
                 shard=int(shard), unigrams=tuple(float(u) for u in unigrams))
    _check_minimum("FixedUnigramCandidateSampler", attrs, ["num_shards"], 1)
    _check_minimum("FixedUnigramCandidateSampler", attrs, ["shard"], 0)
    return _sampler(_fixed_unigram, _FixedUnigramOutputs, true_classes, attrs, seed, name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """"Samples" every class of ``[0, num_sampled)`` (``tf.nn.all_candidate_sampler``).

    Not random: ``sampled_candidates`` is ``0 .. num_sampled - 1`` and every
    expected count is 1 — the full softmax written as a sampled one, for
    testing a sampled loss.  ``unique`` and ``seed`` change nothing.
    """
    attrs = dict(num_true=num_true, num_sampled=num_sampled, unique=unique)
    return _sampler(_all, _AllOutputs, true_classes, attrs, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Finds the sampled candidates that are one of their row's true classes.

    A sampled softmax must not count a true class as a negative example:
    adding ``weights`` (the lowest float32) to the logit of such a hit takes
    it out of the softmax (``tf.nn.compute_accidental_hits``).

    Args:
        true_classes: ``[batch_size, num_true]`` int64.
        sampled_candidates: ``[num_sampled]`` int64, from a sampler.
        num_true: the number of true classes per example.
        seed, name: the op's seed (unused, as in TF) and name
            (default ``ComputeAccidentalHits``).

    Returns:
        ``ComputeAccidentalHits(indices, ids, weights)``, three vectors with
        one entry per hit, in row order: the row (int32), the hit's position
        in ``sampled_candidates`` (int64) and ``-FLT_MAX`` (float32).

    Example:
        >>> tf.nn.compute_accidental_hits([[1, 2], [3, 0]], [7, 1, 4, 0, 2], num_true=2)
        ... # indices [0, 0, 1], ids [1, 4, 3]
    """
    seed1, seed2 = get_seed(seed)
    attrs = {"num_true": int(num_true), "seed": seed1 or 0, "seed2": seed2 or 0}
    graph = graph_of([true_classes, sampled_candidates])
    with graph.as_default(), graph.name_scope(name or "ComputeAccidentalHits") as scope:
        true_classes = _int64_input(true_classes, "true_classes")
        sampled_candidates = _int64_input(sampled_candidates, "sampled_candidates")
        outputs = apply_op(_compute_accidental_hits, [true_classes, sampled_candidates],
                           attrs=attrs, name=scope)
    return ComputeAccidentalHits(*outputs)
