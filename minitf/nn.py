"""``tf.nn``: the neural-network functions of the TF1 API.

Activations, softmax, losses, convolution, pooling, dropout and
normalisation, as ``tf.compat.v1.nn`` names them.  Ops with kernels are
declared in :mod:`minitf.ops.nn_ops` (activations, ``bias_add``, ``dropout``),
:mod:`~minitf.ops.softmax_ops` (softmax and the losses),
:mod:`~minitf.ops.conv_ops` and :mod:`~minitf.ops.pooling_ops`; formulas over
other ops live in :mod:`minitf.ops.nn_impl`; ``sigmoid`` and ``tanh`` are the math ops
(``tf.nn.sigmoid is tf.sigmoid``).  This module only chooses what is public.

Example:
    >>> import minitf as tf
    >>> logits = tf.constant([[2.0, 1.0, 0.1]])
    >>> loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=logits)
"""

from minitf.ops.unary_ops import sigmoid, tanh  # noqa: F401 - the public tf.nn API
from minitf.ops.top_k_ops import in_top_k, top_k  # noqa: F401
from minitf.ops.nn_impl import (  # noqa: F401
    batch_normalization, conv1d, conv2d_transpose, embedding_lookup, embedding_lookup_sparse,
    l2_normalize, moments, weighted_cross_entropy_with_logits, xw_plus_b)
from minitf.ops.nn_ops import (  # noqa: F401
    bias_add, dropout, elu, leaky_relu, local_response_normalization, lrn, relu, relu6, selu,
    softplus, softsign)
from minitf.ops.softmax_ops import (  # noqa: F401
    l2_loss, log_softmax, sigmoid_cross_entropy_with_logits, softmax,
    softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits)
from minitf.ops.conv_ops import conv2d  # noqa: F401
from minitf.ops.pooling_ops import avg_pool, max_pool  # noqa: F401
from minitf.ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler, log_uniform_candidate_sampler, uniform_candidate_sampler)
from minitf.ops.sampled_losses import nce_loss, sampled_softmax_loss  # noqa: F401
from minitf.ops.conv_ops import conv2d_backprop_filter, conv2d_backprop_input  # noqa: F401

_RNN_NAMES = ("rnn_cell", "dynamic_rnn", "static_rnn", "bidirectional_dynamic_rnn",
              "static_bidirectional_rnn")


def __getattr__(name):
    """``tf.nn.rnn_cell``, ``tf.nn.dynamic_rnn``, ``tf.nn.static_rnn``: the library
    :mod:`minitf.rnn`, loaded on first use because it is built on ``tf.layers``,
    which needs the rest of ``minitf`` first."""
    if name in _RNN_NAMES:
        import minitf.rnn
        return getattr(minitf.rnn, name)
    raise AttributeError("module 'minitf.nn' has no attribute %r" % name)
