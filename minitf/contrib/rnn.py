"""``tf.contrib.rnn``: the recurrent cells and the static loops, aliases of :mod:`minitf.rnn`.

As in TF1, ``dynamic_rnn`` and ``bidirectional_dynamic_rnn`` are not here
but in ``tf.nn``.
"""

from minitf.contrib.framework import missing
from minitf.rnn.rnn import static_bidirectional_rnn, static_rnn  # noqa: F401
from minitf.rnn.rnn_cell import (  # noqa: F401
    BasicLSTMCell, BasicRNNCell, DropoutWrapper, GRUCell, LSTMCell, LSTMStateTuple,
    MultiRNNCell, RNNCell)


def __getattr__(name):
    raise missing("tf.contrib.rnn", name)


__all__ = ["BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell", "static_bidirectional_rnn", "static_rnn"]
