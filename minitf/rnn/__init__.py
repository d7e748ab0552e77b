"""Recurrent networks: cells (``tf.nn.rnn_cell``) and the loops that run them over time.

``tf.nn.rnn_cell.BasicLSTMCell``, ``tf.nn.dynamic_rnn``, ``tf.nn.static_rnn``
and their bidirectional forms are :mod:`minitf.rnn.rnn_cell` and :mod:`minitf.rnn.rnn`.
"""

from minitf.rnn import rnn_cell  # noqa: F401 - tf.nn.rnn_cell
from minitf.rnn.rnn import (  # noqa: F401
    bidirectional_dynamic_rnn, dynamic_rnn, static_bidirectional_rnn, static_rnn)
