"""Running a cell over time: ``tf.nn.static_rnn`` and ``tf.nn.dynamic_rnn``.

Both apply one cell (see :mod:`.rnn_cell`) at every time step, threading the
state from step to step, under the variable scope ``rnn``:

* ``static_rnn(cell, [x_0, ..., x_{T-1}])`` unrolls the loop in Python: one
  copy of the cell's ops per step (``rnn/basic_lstm_cell/MatMul_3``), so
  ``T`` must be known while the graph is built;
* ``dynamic_rnn(cell, x)`` builds the step once, inside a ``tf.while_loop``
  that runs it ``T = tf.shape(x)[1]`` times; the inputs are read from, and
  the outputs written to, ``TensorArray``\\ s.  ``T`` may change from run to run.

With ``sequence_length``, a batch of sequences of different lengths is
handled as TF does: past a sequence's end its outputs are zeros and its
state is carried through unchanged, so the final state is the one at each
sequence's last step.

A *bidirectional* RNN runs two cells over the same sequence, one forward and
one backward, under ``bidirectional_rnn/fw`` and ``bidirectional_rnn/bw``:
``static_bidirectional_rnn`` and ``bidirectional_dynamic_rnn``.  The backward
cell reads each sequence from its own last step (``tf.reverse_sequence``
when lengths differ), and its outputs are reversed back, so that output
``t`` of both directions belongs to input ``t``.

Mirrors ``tensorflow/python/ops/rnn.py`` (TF 1.15).
"""

from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import (array_ops, comparison_ops, constant_op, joining_ops, select_ops,
                        transpose_ops, unary_ops)
from minitf.ops.tensor_array_ops import TensorArray
from minitf.ops.variable_scope import variable_scope
from minitf.ops.while_loop import while_loop
from minitf.rnn.rnn_cell import LSTMStateTuple


# ---- nested states ----------------------------------------------------------------------------
def _flatten(state):
    """The tensors of a (nested) state, in order."""
    if isinstance(state, tuple):
        return [t for part in state for t in _flatten(part)]
    return [state]


def _pack(structure, flat):
    """``flat`` tensors put back into the nesting of ``structure`` (the inverse of ``_flatten``)."""
    flat = list(flat)

    def pack(node):
        if isinstance(node, LSTMStateTuple):
            return LSTMStateTuple(*(pack(part) for part in node))
        if isinstance(node, tuple):
            return tuple(pack(part) for part in node)
        return flat.pop(0)

    return pack(structure)


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


# ---- static_rnn -------------------------------------------------------------------------------
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolls ``cell`` over the list ``inputs`` (``tf.nn.static_rnn``).

    Args:
        cell: an :class:`~minitf.rnn.rnn_cell.RNNCell`.
        inputs: a non-empty list of ``[batch, depth]`` tensors, one per step.
        initial_state: the state before the first step (default: zeros).
        dtype: the state's dtype when there is no ``initial_state``.
        sequence_length: optional ``[batch]`` int lengths (see the module docstring).
        scope: the variable scope (default ``rnn``).

    Returns:
        ``(outputs, state)``: the list of per-step outputs and the final state.

    Raises:
        TypeError: if ``inputs`` is not a list; ValueError: if it is empty.
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "rnn") as varscope:
        first = convert_to_tensor(inputs[0])
        batch_size = first.shape[0].value
        if batch_size is None:
            batch_size = array_ops.shape(first)[0]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        outputs = []
        for t, input_t in enumerate(inputs):
            if t > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_t, state)
            if sequence_length is not None:
                output, new_state = _mask_step(t, sequence_length, output, state, new_state)
            outputs.append(output)
            state = new_state
        return outputs, state


def _mask_step(t, sequence_length, output, state, new_state):
    """Past a sequence's end: a zero output and the old state (per batch row)."""
    alive = comparison_ops.less(t, sequence_length)
    output = select_ops.where(alive, output, array_ops.zeros_like(output))
    new_state = _pack(new_state, [select_ops.where(alive, new, old) for new, old
                                  in zip(_flatten(new_state), _flatten(state))])
    return output, new_state


# ---- dynamic_rnn ------------------------------------------------------------------------------
def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs ``cell`` over the time axis of ``inputs`` in a while loop (``tf.nn.dynamic_rnn``).

    Args:
        cell: an :class:`~minitf.rnn.rnn_cell.RNNCell`.
        inputs: ``[batch, time, depth]`` (``[time, batch, depth]`` if ``time_major``);
            ``depth`` must be known.
        sequence_length: optional ``[batch]`` int lengths.
        initial_state: the state before the first step (default: zeros).
        dtype: the state's dtype when there is no ``initial_state``.
        parallel_iterations, swap_memory: passed to / accepted for ``tf.while_loop``.
        time_major: the layout of ``inputs`` and of the returned outputs.
        scope: the variable scope (default ``rnn``).

    Returns:
        ``(outputs, state)``: ``[batch, time, output_size]`` outputs (time-major
        if ``time_major``) and the final state.
    """
    with variable_scope(scope or "rnn"):
        inputs = convert_to_tensor(inputs, name="inputs")
        if inputs.shape.ndims is not None and inputs.shape.ndims < 3:
            raise ValueError("dynamic_rnn inputs must be at least rank 3 ([batch, time, "
                             "depth]), got shape %s" % inputs.shape)
        if not time_major:
            inputs = transpose_ops.transpose(inputs, [1, 0, 2], name="transpose")
        time_steps = array_ops.shape(inputs)[0]
        batch_size = inputs.shape[1].value
        if batch_size is None:
            batch_size = array_ops.shape(inputs)[1]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = unary_ops.to_int32(sequence_length, name="sequence_length")
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, time_steps, state,
                                                 sequence_length, parallel_iterations or 32,
                                                 swap_memory)
        if not time_major:
            outputs = transpose_ops.transpose(outputs, [1, 0, 2], name="transpose_1")
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, time_steps, state, sequence_length, parallel_iterations,
                      swap_memory):
    """The while loop: step ``time`` reads ``input_ta[time]`` and writes ``output_ta[time]``."""
    input_shape = inputs.shape[1:]
    input_ta = TensorArray(inputs.dtype, size=time_steps, name="input_ta").unstack(inputs)
    output_ta = TensorArray(inputs.dtype, size=time_steps, name="output_ta")
    flat_state = _flatten(state)

    def body(time, output_ta, *flat_state):
        input_t = input_ta.read(time)
        input_t.set_shape(input_shape)
        old_state = _pack(state, flat_state)
        output, new_state = cell(input_t, old_state)
        if sequence_length is not None:
            output, new_state = _mask_step(time, sequence_length, output, old_state, new_state)
        return [time + 1, output_ta.write(time, output)] + _flatten(new_state)

    results = while_loop(
        lambda time, *_: time < time_steps, body, [constant_op.constant(0, name="time"), output_ta]
        + flat_state, parallel_iterations=parallel_iterations, swap_memory=swap_memory)
    outputs = results[1].stack()
    outputs.set_shape(TensorShape([inputs.shape[0].value, input_shape[0].value,
                                   _output_size(cell)]))
    return outputs, _pack(state, results[2:])


def _output_size(cell):
    size = cell.output_size
    return size if isinstance(size, int) else None


# ---- bidirectional RNNs -----------------------------------------------------------------------
def _check_cell(cell, argument):
    """TF's TypeError for a ``cell_fw``/``cell_bw`` that is not a cell."""
    missing = [attr for attr in ("output_size", "state_size", "zero_state")
               if not hasattr(cell, attr)]
    if missing or not callable(cell):
        raise TypeError("The argument '%s' (%s) is not an RNNCell: %s is missing or it is not "
                        "callable." % (argument, cell, ", ".join(missing) or "__call__"))


def _reverse_seq(inputs, lengths):
    """The list ``inputs`` read backwards; with ``lengths``, each row from its own last step."""
    if lengths is None:
        return list(reversed(inputs))
    joined = joining_ops.stack(inputs)
    reversed_ = transpose_ops.reverse_sequence(joined, lengths, seq_axis=0, batch_axis=1)
    steps = joining_ops.unstack(reversed_, num=len(inputs))
    for step, original in zip(steps, inputs):
        step.set_shape(original.shape)
    return steps


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """Unrolls a forward and a backward cell over ``inputs`` (``tf.nn.static_bidirectional_rnn``).

    Each direction is a :func:`static_rnn` in its own variable scope
    (``bidirectional_rnn/fw/basic_lstm_cell/kernel``, ``.../bw/...``).  The
    backward cell reads the list reversed — with ``sequence_length``, each
    row from its own last step — and its outputs are reversed back.

    Args:
        cell_fw, cell_bw: the two cells (their output sizes may differ).
        inputs: a non-empty list of ``[batch, depth]`` tensors.
        initial_state_fw, initial_state_bw: the states before the first step.
        dtype: the states' dtype when there are no initial states.
        sequence_length: optional ``[batch]`` int32/int64 lengths.
        scope: the variable scope (default ``bidirectional_rnn``).

    Returns:
        ``(outputs, output_state_fw, output_state_bw)``: per step the depth
        concatenation ``[fw_output_t, bw_output_t]``, and each direction's
        final state.

    Raises:
        TypeError: if a cell is not a cell or ``inputs`` is not a list.
        ValueError: if ``inputs`` is empty.
    """
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Argument `inputs` must be a sequence. Received: %s" % (inputs,))
    if not inputs:
        raise ValueError("Argument `inputs` must not be empty.")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    output_bw = _reverse_seq(tmp, sequence_length)
    outputs = [joining_ops.concat([fw, bw], 1) for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """Runs a forward and a backward cell in while loops (``tf.nn.bidirectional_dynamic_rnn``).

    Each direction is a :func:`dynamic_rnn` in its own variable scope
    (``bidirectional_rnn/fw/...``, ``.../bw/...``).  The backward cell reads
    the time axis reversed — ``tf.reverse`` for sequences of one length,
    ``tf.reverse_sequence`` with ``sequence_length`` — and its outputs are
    reversed back.

    Args:
        cell_fw, cell_bw: the two cells.
        inputs: ``[batch, time, depth]`` (``[time, batch, depth]`` if ``time_major``).
        sequence_length: optional ``[batch]`` int32/int64 lengths.
        initial_state_fw, initial_state_bw: the states before the first step.
        dtype: the states' dtype when there are no initial states.
        parallel_iterations, swap_memory, time_major: as for :func:`dynamic_rnn`.
        scope: the variable scope (default ``bidirectional_rnn``).

    Returns:
        ``((output_fw, output_bw), (output_state_fw, output_state_bw))``; the
        outputs are not concatenated (``tf.concat(outputs, 2)`` does that).

    Raises:
        TypeError: if a cell is not a cell.
        ValueError: if there is neither an initial state nor a ``dtype``.
    """
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(tensor):
        if sequence_length is None:
            return transpose_ops.reverse(tensor, [time_axis])
        return transpose_ops.reverse_sequence(tensor, sequence_length, seq_axis=time_axis,
                                              batch_axis=batch_axis)

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype, parallel_iterations,
                swap_memory, time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            tmp, state_bw = dynamic_rnn(
                cell_bw, reverse(inputs), sequence_length, initial_state_bw, dtype,
                parallel_iterations, swap_memory, time_major, scope=bw_scope)
    return (output_fw, reverse(tmp)), (state_fw, state_bw)


__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "static_bidirectional_rnn", "static_rnn"]
