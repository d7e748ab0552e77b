"""Bidirectional RNNs, static_rnn with lengths, MultiRNNCell states and tf.reverse_sequence.

The numbers are checked against NumPy recurrences written here from TF1's
definitions; the variable names are TF1's (``bidirectional_rnn/fw/...``,
``rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel``).
"""

import numpy as np
import pytest

import minitf as tf


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_step(x, state, kernel, bias):
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    c = c * _sigmoid(f + 1.0) + _sigmoid(i) * np.tanh(j)
    h = np.tanh(c) * _sigmoid(o)
    return h, (c, h)


def _rnn_step(x, state, kernel, bias):
    h = np.tanh(np.concatenate([x, state], 1) @ kernel + bias)
    return h, h


def _run(step, xs, state, lengths):
    """A cell over ``xs`` [batch, time, depth] as TF's rnn with ``sequence_length``:
    zero outputs and a frozen state past each row's length."""
    outputs = []
    for t in range(xs.shape[1]):
        output, new_state = step(xs[:, t], state)
        alive = (t < lengths)[:, None]
        outputs.append(np.where(alive, output, 0.0))
        state = tuple(np.where(alive, n, o) for n, o in zip(new_state, state)) \
            if isinstance(state, tuple) else np.where(alive, new_state, state)
    return np.stack(outputs, 1), state


def _reverse_rows(xs, lengths):
    """NumPy reverse_sequence along axis 1: each row's first ``lengths[b]`` steps reversed."""
    out = xs.copy()
    for b, n in enumerate(lengths):
        out[b, :n] = xs[b, :n][::-1]
    return out


def _bidirectional_numpy(fw_step, fw_state, bw_step, bw_state, xs, lengths):
    out_fw, state_fw = _run(fw_step, xs, fw_state, lengths)
    out_bw, state_bw = _run(bw_step, _reverse_rows(xs, lengths), bw_state, lengths)
    return out_fw, _reverse_rows(out_bw, lengths), state_fw, state_bw


def _variables(sess, scope):
    return sess.run([v for v in tf.global_variables() if v.name.startswith(scope)])


# ---- tf.reverse_sequence --------------------------------------------------------------------
def test_reverse_sequence_reverses_each_row_up_to_its_length(sess):
    x = np.arange(24).reshape(2, 4, 3).astype(np.float32)
    got = sess.run(tf.reverse_sequence(x, [3, 1], seq_axis=1, batch_axis=0))
    np.testing.assert_array_equal(got, _reverse_rows(x, [3, 1]))
    # Batch after sequence, int64 lengths, TF1's deprecated argument names.
    xt = np.transpose(x, [1, 0, 2])
    y = tf.reverse_sequence(xt, tf.constant([4, 0], tf.int64), seq_dim=0, batch_dim=1)
    assert y.op.type == "ReverseSequence" and y.op.get_attr("seq_dim") == 0
    np.testing.assert_array_equal(sess.run(y), np.transpose(_reverse_rows(x, [4, 0]), [1, 0, 2]))


def test_reverse_sequence_shape_and_dtype_errors():
    x = tf.placeholder(tf.float32, [2, 4, 3])
    assert tf.reverse_sequence(x, [1, 2], 1, 0).shape.as_list() == [2, 4, 3]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.reverse_sequence(x, [4, 2, 1], seq_axis=1, batch_axis=0)
    with pytest.raises(ValueError, match="seq_dim must be < input rank: 3 vs. 3"):
        tf.reverse_sequence(x, [4, 2], seq_axis=3, batch_axis=0)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.reverse_sequence(x, [[4, 2]], seq_axis=1, batch_axis=0)
    with pytest.raises(TypeError, match="'seq_lengths' has DataType float32"):
        tf.reverse_sequence(x, [4.0, 2.0], seq_axis=1, batch_axis=0)


@pytest.mark.parametrize("lengths, message", [([5, 2], r"seq_lens\(0\) > input.dims\(1\)"),
                                              ([1, -1], r"seq_lens\(1\) < 0")])
def test_reverse_sequence_bad_lengths_fail_when_run(sess, lengths, message):
    x = tf.placeholder(tf.float32, [2, 4, 3])
    y = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(y, {x: np.zeros([2, 4, 3])})


# ---- static_rnn with sequence_length -----------------------------------------------------------
def test_static_rnn_with_lengths_zeros_outputs_and_copies_state(sess):
    rng = np.random.RandomState(0)
    xs, lengths = rng.randn(3, 4, 2), np.array([4, 1, 0])
    x = tf.placeholder(tf.float64, [3, 4, 2])
    outputs, state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), tf.unstack(x, axis=1),
                                      dtype=tf.float64, sequence_length=lengths)
    sess.run(tf.global_variables_initializer())
    kernel, bias = _variables(sess, "rnn/")
    zeros = np.zeros((3, 3))
    expected, (c, h) = _run(lambda x, s: _lstm_step(x, s, kernel, bias), xs, (zeros, zeros),
                            lengths)
    got_outputs, got_state = sess.run([outputs, state], {x: xs})
    np.testing.assert_allclose(np.stack(got_outputs, 1), expected, rtol=1e-10)
    assert not got_outputs[1][1:].any()  # rows 1 and 2 are over at step 1
    np.testing.assert_allclose(got_state.c, c, rtol=1e-10)
    np.testing.assert_allclose(got_state.h, h, rtol=1e-10)
    np.testing.assert_array_equal(got_state.h[2], 0.0)  # an empty sequence keeps the zero state


# ---- static_bidirectional_rnn ---------------------------------------------------------------
@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_bidirectional_rnn_matches_numpy(sess, with_lengths):
    rng = np.random.RandomState(1)
    xs = rng.randn(2, 4, 3)
    lengths = np.array([4, 2]) if with_lengths else np.array([4, 4])
    x = tf.placeholder(tf.float64, [2, 4, 3])
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.BasicLSTMCell(5), tf.nn.rnn_cell.BasicRNNCell(4), tf.unstack(x, axis=1),
        dtype=tf.float64, sequence_length=lengths if with_lengths else None)
    assert [v.name for v in tf.global_variables()] == [
        "bidirectional_rnn/fw/basic_lstm_cell/kernel:0",
        "bidirectional_rnn/fw/basic_lstm_cell/bias:0",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel:0",
        "bidirectional_rnn/bw/basic_rnn_cell/bias:0"]
    assert len(outputs) == 4 and outputs[0].shape.as_list() == [2, 9]
    assert isinstance(state_fw, tf.nn.rnn_cell.LSTMStateTuple)
    sess.run(tf.global_variables_initializer())
    fw_kernel, fw_bias = _variables(sess, "bidirectional_rnn/fw/")
    bw_kernel, bw_bias = _variables(sess, "bidirectional_rnn/bw/")
    out_fw, out_bw, (c, h), h_bw = _bidirectional_numpy(
        lambda x, s: _lstm_step(x, s, fw_kernel, fw_bias), (np.zeros((2, 5)),) * 2,
        lambda x, s: _rnn_step(x, s, bw_kernel, bw_bias), np.zeros((2, 4)), xs, lengths)
    got, got_fw, got_bw = sess.run([outputs, state_fw, state_bw], {x: xs})
    np.testing.assert_allclose(np.stack(got, 1), np.concatenate([out_fw, out_bw], 2),
                               rtol=1e-10)
    np.testing.assert_allclose(got_fw.c, c, rtol=1e-10)
    np.testing.assert_allclose(got_fw.h, h, rtol=1e-10)
    np.testing.assert_allclose(got_bw, h_bw, rtol=1e-10)


def test_static_bidirectional_rnn_argument_errors():
    x = tf.placeholder(tf.float32, [2, 4, 3])
    gru = tf.nn.rnn_cell.GRUCell
    with pytest.raises(TypeError, match="must be a sequence"):
        tf.nn.static_bidirectional_rnn(gru(2), gru(2), x, dtype=tf.float32)
    with pytest.raises(ValueError, match="must not be empty"):
        tf.nn.static_bidirectional_rnn(gru(2), gru(2), [], dtype=tf.float32)
    with pytest.raises(TypeError, match="'cell_fw' \\(3\\) is not an RNNCell"):
        tf.nn.static_bidirectional_rnn(3, gru(2), [x[:, 0]], dtype=tf.float32)


# ---- bidirectional_dynamic_rnn --------------------------------------------------------------
@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_bidirectional_dynamic_rnn_matches_numpy(sess, time_major, with_lengths):
    rng = np.random.RandomState(2)
    xs = rng.randn(3, 5, 2)
    lengths = np.array([5, 3, 1]) if with_lengths else np.array([5, 5, 5])
    shape = [5, 3, 2] if time_major else [3, 5, 2]
    x = tf.placeholder(tf.float64, shape)
    fw = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                      tf.nn.rnn_cell.BasicLSTMCell(4)])
    (output_fw, output_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        fw, tf.nn.rnn_cell.BasicRNNCell(2), x, dtype=tf.float64, time_major=time_major,
        sequence_length=lengths if with_lengths else None)
    assert [v.name for v in tf.global_variables()] == [
        "bidirectional_rnn/fw/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
        "bidirectional_rnn/fw/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
        "bidirectional_rnn/fw/multi_rnn_cell/cell_1/basic_lstm_cell/kernel:0",
        "bidirectional_rnn/fw/multi_rnn_cell/cell_1/basic_lstm_cell/bias:0",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel:0",
        "bidirectional_rnn/bw/basic_rnn_cell/bias:0"]
    assert output_fw.shape.as_list() == shape[:2] + [4]
    assert output_bw.shape.as_list() == shape[:2] + [2]
    assert len(state_fw) == 2 and all(isinstance(s, tf.nn.rnn_cell.LSTMStateTuple)
                                      for s in state_fw)
    assert output_bw.op.type == ("ReverseSequence" if with_lengths else "ReverseV2")
    sess.run(tf.global_variables_initializer())
    k0, b0, k1, b1 = _variables(sess, "bidirectional_rnn/fw/")
    bw_kernel, bw_bias = _variables(sess, "bidirectional_rnn/bw/")

    def stacked(x, state):
        h0, s0 = _lstm_step(x, state[0], k0, b0)
        h1, s1 = _lstm_step(h0, state[1], k1, b1)
        return h1, (s0, s1)

    def frozen_past_length(step):  # _run freezes flat states; a stacked state nests two
        def flat_step(x, flat):
            output, (s0, s1) = step(x, (flat[:2], flat[2:]))
            return output, s0 + s1
        return flat_step

    zeros = tuple(np.zeros((3, n)) for n in (3, 3, 4, 4))
    out_fw, out_bw, flat_fw, h_bw = _bidirectional_numpy(
        frozen_past_length(stacked), zeros, lambda x, s: _rnn_step(x, s, bw_kernel, bw_bias),
        np.zeros((3, 2)), xs, lengths)
    feed = np.transpose(xs, [1, 0, 2]) if time_major else xs
    got_fw, got_bw, got_state_fw, got_state_bw = sess.run(
        [output_fw, output_bw, state_fw, state_bw], {x: feed})
    if time_major:
        got_fw, got_bw = np.transpose(got_fw, [1, 0, 2]), np.transpose(got_bw, [1, 0, 2])
    np.testing.assert_allclose(got_fw, out_fw, rtol=1e-10)
    np.testing.assert_allclose(got_bw, out_bw, rtol=1e-10)
    got_flat = [a for layer in got_state_fw for a in layer]
    for got, expected in zip(got_flat, flat_fw):
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(got_state_bw, h_bw, rtol=1e-10)


def test_bidirectional_dynamic_rnn_needs_a_dtype_or_states():
    x = tf.placeholder(tf.float32, [2, 4, 3])
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2), x)


def test_bidirectional_dynamic_rnn_backprops_through_both_directions(sess):
    x = tf.placeholder(tf.float64, [2, 3, 2])
    (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(
        tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2), x, sequence_length=[3, 2],
        dtype=tf.float64, scope="birnn")
    loss = tf.reduce_sum(tf.concat([out_fw, out_bw], 2) ** 2)
    grads = tf.gradients(loss, [x] + tf.trainable_variables())
    assert all(g is not None for g in grads)
    sess.run(tf.global_variables_initializer())
    xs = np.random.RandomState(3).randn(2, 3, 2)
    got = sess.run(grads[0], {x: xs})
    eps = 1e-6  # a central difference for one element of x
    bumped = xs.copy()
    bumped[1, 0, 1] += eps
    plus = sess.run(loss, {x: bumped})
    bumped[1, 0, 1] -= 2 * eps
    minus = sess.run(loss, {x: bumped})
    np.testing.assert_allclose(got[1, 0, 1], (plus - minus) / (2 * eps), rtol=1e-5)
    np.testing.assert_array_equal(got[1, 2], 0.0)  # past row 1's length: no influence


# ---- MultiRNNCell states ----------------------------------------------------------------------
def test_multi_rnn_cell_state_tuples_and_zero_state(sess):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2),
                                        tf.nn.rnn_cell.GRUCell(3)])
    assert cell.state_size == (tf.nn.rnn_cell.LSTMStateTuple(2, 2), 3)
    zero = cell.zero_state(4, tf.float32)
    assert isinstance(zero[0], tf.nn.rnn_cell.LSTMStateTuple)
    assert zero[0].c.name == "MultiRNNCellZeroState/BasicLSTMCellZeroState/zeros:0"
    assert [s.shape.as_list() for s in (zero[0].c, zero[0].h, zero[1])] == [[4, 2], [4, 2], [4, 3]]
    x = tf.placeholder(tf.float32, [4, 3, 5])
    _, state = tf.nn.dynamic_rnn(cell, x, initial_state=zero)
    assert [v.name for v in tf.trainable_variables()] == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0",
        "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias:0",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0",
        "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0"]
    assert isinstance(state[0], tf.nn.rnn_cell.LSTMStateTuple)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(zero[1]), np.zeros([4, 3]))


def test_multi_rnn_cell_argument_errors():
    with pytest.raises(TypeError, match="cells must be a list or tuple"):
        tf.nn.rnn_cell.MultiRNNCell(tf.nn.rnn_cell.GRUCell(2))
    with pytest.raises(ValueError, match="at least one cell"):
        tf.nn.rnn_cell.MultiRNNCell([])
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(2)])
    with pytest.raises(ValueError, match="Expected state to be a tuple of length 2"):
        cell(tf.zeros([1, 3]), tf.zeros([1, 2]))
