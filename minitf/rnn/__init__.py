"""Recurrent networks: cells (``tf.nn.rnn_cell``) and the loops that run them over time.

``tf.nn.rnn_cell.BasicLSTMCell``, ``tf.nn.dynamic_rnn`` and
``tf.nn.static_rnn`` are :mod:`minitf.rnn.rnn_cell` and :mod:`minitf.rnn.rnn`.
"""

from minitf.rnn import rnn_cell  # noqa: F401 - tf.nn.rnn_cell
from minitf.rnn.rnn import dynamic_rnn, static_rnn  # noqa: F401
