"""``tf.random``: the random ops under their TF 1.13+ names (``tf.random.normal``...).

The same functions as ``tf.random_normal``, ``tf.random_uniform``,
``tf.truncated_normal``, ``tf.random_shuffle``, ``tf.multinomial`` and
``tf.set_random_seed`` (see :mod:`minitf.ops.random_ops`), and the candidate
samplers of ``tf.nn``; this module only gives them the ``tf.compat.v1.random``
spelling.
"""

from minitf.api_scopes import get_seed, set_random_seed  # noqa: F401 - the public API
from minitf.ops.random_ops import (  # noqa: F401
    multinomial, random_shuffle as shuffle, random_normal as normal,
    random_uniform as uniform, truncated_normal)

from minitf.ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler)

categorical = multinomial
