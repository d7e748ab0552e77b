"""``tf.nn.rnn_cell``: one step of a recurrent network, as a layer.

A cell maps ``(inputs_t, state_{t-1})`` to ``(output_t, state_t)``.  It is a
:class:`tf.layers.Layer <minitf.layers.base.Layer>`: the first call creates
its variables in its own variable scope (``rnn/basic_lstm_cell/kernel``),
later calls — the next time steps — reuse them.  :func:`~minitf.rnn.dynamic_rnn`
and :func:`~minitf.rnn.static_rnn` call a cell once per time step.

=====================  ============================================================
cell                   one step
=====================  ============================================================
``BasicRNNCell``       ``h = tanh([x, h] W + b)``
``BasicLSTMCell``      ``i, j, f, o = [x, h] W + b``;
                       ``c = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)``;
                       ``h = tanh(c) * sigmoid(o)``; state ``LSTMStateTuple(c, h)``
``LSTMCell``           the same, with an ``initializer`` (no peepholes or projection)
``GRUCell``            ``r, u = sigmoid([x, h] W_g + b_g)``;
                       ``h = u * h + (1 - u) * tanh([x, r * h] W_c + b_c)``
``MultiRNNCell``       cells stacked: cell *i* reads cell *i-1*'s output
``DropoutWrapper``     dropout on a cell's inputs and outputs
=====================  ============================================================

Mirrors ``tensorflow/python/ops/rnn_cell_impl.py`` (TF 1.15), whose variable
names these cells reproduce.
"""

import collections

from minitf.api_scopes import name_scope
from minitf.framework.tensor_shape import TensorShape
from minitf.layers.base import Layer
from minitf.ops import array_ops, init_ops, joining_ops, linalg_ops, nn_ops, unary_ops
from minitf.ops.variable_scope import variable_scope


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell ``c`` and the output ``h``, each ``[batch, num_units]``."""

    __slots__ = ()

    @property
    def dtype(self):
        return self.c.dtype


def _zeros(size, batch_size, dtype):
    """Zeros of the (nested) state ``size``: ``[batch_size, size]`` per component."""
    if isinstance(size, LSTMStateTuple):
        return LSTMStateTuple(*(_zeros(s, batch_size, dtype) for s in size))
    if isinstance(size, tuple):
        return tuple(_zeros(s, batch_size, dtype) for s in size)
    return array_ops.zeros(joining_ops.stack([batch_size, size]), dtype=dtype)


class RNNCell(Layer):
    """The abstract cell: ``call(inputs, state) -> (output, new_state)``.

    Subclasses give ``state_size`` (an int or a tuple of them),
    ``output_size``, ``build(input_shape)`` and ``call``.
    """

    @property
    def state_size(self):
        raise NotImplementedError("RNNCell subclasses define state_size")

    @property
    def output_size(self):
        raise NotImplementedError("RNNCell subclasses define output_size")

    def __call__(self, inputs, state, scope=None):
        """One step: ``(output, new_state)``; the first call creates the variables."""
        return super().__call__(inputs, state, scope=scope)

    def zero_state(self, batch_size, dtype):
        """The all-zeros initial state for a batch of ``batch_size`` (an int or a tensor)."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return _zeros(self.state_size, batch_size, dtype)


def _input_depth(input_shape, cell_name):
    depth = TensorShape(input_shape)[-1].value
    if depth is None:
        raise ValueError("Expected inputs.shape[-1] to be known for %s, saw shape: %s"
                         % (cell_name, input_shape))
    return depth


class BasicRNNCell(RNNCell):
    """The plain (Elman) recurrent cell: ``output = new_state = act([x, h] W + b)``.

    Args:
        num_units: the size of the state.
        activation: default ``tf.tanh``.
        reuse, name, dtype: as for layers.
    """

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        self._num_units = num_units
        self._activation = activation or unary_ops.tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self.name)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        output = self._activation(nn_ops.bias_add(
            linalg_ops.matmul(joining_ops.concat([inputs, state], 1), self._kernel), self._bias))
        return output, output


class BasicLSTMCell(RNNCell):
    """The LSTM cell of Zaremba et al. (no peepholes): see the module docstring.

    Args:
        num_units: the size of ``c`` and ``h``.
        forget_bias: added to the forget gate's pre-activation (1.0: remember
            at first).
        state_is_tuple: must be True (``LSTMStateTuple(c, h)``); the
            concatenated form is deprecated in TF1 and not supported.
        activation: default ``tf.tanh``.
        reuse, name, dtype: as for layers.
    """

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        if not state_is_tuple:
            raise NotImplementedError("minitf's LSTM cells keep their state as an "
                                      "LSTMStateTuple (state_is_tuple=True)")
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._activation = activation or unary_ops.tanh
        self._initializer = None

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self.name)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, 4 * self._num_units],
                                       initializer=self._initializer)
        self._bias = self.add_weight("bias", [4 * self._num_units],
                                     initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        c, h = state
        gate_inputs = nn_ops.bias_add(
            linalg_ops.matmul(joining_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = joining_ops.split(gate_inputs, 4, axis=1)
        new_c = (c * unary_ops.sigmoid(f + self._forget_bias)
                 + unary_ops.sigmoid(i) * self._activation(j))
        new_h = self._activation(new_c) * unary_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class LSTMCell(BasicLSTMCell):
    """``tf.nn.rnn_cell.LSTMCell``: :class:`BasicLSTMCell` with a kernel ``initializer``.

    Raises:
        NotImplementedError: for peepholes, projections or clipping.
    """

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None):
        super().__init__(num_units, forget_bias=forget_bias, state_is_tuple=state_is_tuple,
                         activation=activation, reuse=reuse, name=name, dtype=dtype)
        if use_peepholes or cell_clip is not None or num_proj is not None or proj_clip is not None:
            raise NotImplementedError("minitf's LSTMCell has no peepholes, projection or "
                                      "clipping")
        self._initializer = initializer


class GRUCell(RNNCell):
    """The gated recurrent unit of Cho et al. (2014): see the module docstring.

    Args:
        num_units: the size of the state.
        activation: default ``tf.tanh``.
        reuse, name, dtype: as for layers.
        kernel_initializer, bias_initializer: default Glorot uniform, and
            1.0 for the gates' bias (gates open at first) / 0 for the candidate's.
    """

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype, _reuse=reuse)
        self._num_units = num_units
        self._activation = activation or unary_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self.name)
        n = self._num_units
        self._gate_kernel = self.add_weight("gates/kernel", [depth + n, 2 * n],
                                            initializer=self._kernel_initializer)
        self._gate_bias = self.add_weight(
            "gates/bias", [2 * n],
            initializer=self._bias_initializer or init_ops.ones_initializer())
        self._candidate_kernel = self.add_weight("candidate/kernel", [depth + n, n],
                                                 initializer=self._kernel_initializer)
        self._candidate_bias = self.add_weight(
            "candidate/bias", [n],
            initializer=self._bias_initializer or init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = unary_ops.sigmoid(nn_ops.bias_add(
            linalg_ops.matmul(joining_ops.concat([inputs, state], 1), self._gate_kernel),
            self._gate_bias))
        r, u = joining_ops.split(gates, 2, axis=1)
        candidate = self._activation(nn_ops.bias_add(
            linalg_ops.matmul(joining_ops.concat([inputs, r * state], 1), self._candidate_kernel),
            self._candidate_bias))
        new_h = u * state + (1 - u) * candidate
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked in layers; the state is the tuple of their states.

    Cell ``i`` runs in variable scope ``cell_i``
    (``rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel``) and reads cell
    ``i-1``'s output.  The state is a tuple with one entry per layer — an
    ``LSTMStateTuple`` for an LSTM layer — and so is ``zero_state``, built by
    each layer's own ``zero_state``.

    Raises:
        TypeError: if ``cells`` is not a list or tuple.
        ValueError: if ``cells`` is empty.
    """

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not isinstance(cells, (list, tuple)):
            raise TypeError("cells must be a list or tuple, but saw: %s." % (cells,))
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not state_is_tuple:
            raise NotImplementedError("minitf's MultiRNNCell keeps a tuple of states")
        self._cells = list(cells)

    @property
    def state_size(self):
        return tuple(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        """One zero state per layer, each from its cell's own ``zero_state``."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def call(self, inputs, state):
        if not isinstance(state, tuple) or len(state) != len(self._cells):
            raise ValueError("Expected state to be a tuple of length %d, but received: %s"
                             % (len(self._cells), state))
        new_states = []
        output = inputs
        for i, (cell, cell_state) in enumerate(zip(self._cells, state)):
            with variable_scope("cell_%d" % i):
                output, new_state = cell(output, cell_state)
            new_states.append(new_state)
        return output, tuple(new_states)


class DropoutWrapper(RNNCell):
    """Applies dropout to a cell's inputs and outputs (``keep_prob`` may be a placeholder).

    Raises:
        NotImplementedError: for ``state_keep_prob`` below 1 or variational dropout.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None):
        super().__init__()
        if variational_recurrent or (isinstance(state_keep_prob, float) and state_keep_prob < 1):
            raise NotImplementedError("minitf's DropoutWrapper drops inputs and outputs only")
        self._cell = cell
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._seed = seed

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def __call__(self, inputs, state, scope=None):
        """Runs the wrapped cell in the caller's scope (the wrapper adds none)."""
        inputs = self._dropout(inputs, self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        return self._dropout(output, self._output_keep_prob), new_state

    def _dropout(self, value, keep_prob):
        if isinstance(keep_prob, (int, float)) and keep_prob == 1:
            return value
        return nn_ops.dropout(value, keep_prob, seed=self._seed)


__all__ = ["BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell"]
