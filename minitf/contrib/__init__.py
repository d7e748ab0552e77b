"""``tf.contrib``: the few names of TF1's contributed modules that tutorials use most.

TF1's ``tf.contrib`` was a large, unstable area; TF 2 removed it.  Many TF1
programs still reach for a handful of its names, so minitf provides those —
each a thin alias of, or a small layer over, the core implementation:

=====================  ================================================================
module                 what it holds
=====================  ================================================================
``contrib.layers``     ``fully_connected``, ``conv2d``, ``flatten``, ``batch_norm``,
                       pooling and dropout with contrib's defaults and variable names;
                       initializers, regularizers, ``arg_scope``
``contrib.rnn``        the cells of ``tf.nn.rnn_cell``, ``static_rnn``,
                       ``static_bidirectional_rnn``
``contrib.seq2seq``    ``sequence_loss``
``contrib.opt``        ``LazyAdamOptimizer``
``contrib.framework``  ``arg_scope``, ``add_arg_scope``, ``get_or_create_global_step``
=====================  ================================================================

Any other name raises an ``AttributeError`` saying that minitf does not
provide it, so a program fails where it first needs what is missing.
"""

from minitf.contrib import framework, layers, opt, rnn, seq2seq  # noqa: F401
from minitf.contrib.framework import missing


def __getattr__(name):
    raise missing("tf.contrib", name)
