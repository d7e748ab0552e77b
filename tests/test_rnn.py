"""tf.nn.rnn_cell, static_rnn and dynamic_rnn against NumPy recurrences."""

import numpy as np
import pytest

import minitf as tf


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _numpy_lstm(xs, kernel, bias, forget_bias=1.0):
    batch, n = xs.shape[0], kernel.shape[1] // 4
    c, h = np.zeros((batch, n)), np.zeros((batch, n))
    outputs = []
    for t in range(xs.shape[1]):
        i, j, f, o = np.split(np.concatenate([xs[:, t], h], 1) @ kernel + bias, 4, axis=1)
        c = c * _sigmoid(f + forget_bias) + _sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * _sigmoid(o)
        outputs.append(h)
    return np.stack(outputs, 1), (c, h)


def _numpy_gru(xs, gate_kernel, gate_bias, kernel, bias, lengths):
    batch, n = xs.shape[0], kernel.shape[1]
    h = np.zeros((batch, n))
    outputs = []
    for t in range(xs.shape[1]):
        r, u = np.split(_sigmoid(np.concatenate([xs[:, t], h], 1) @ gate_kernel + gate_bias), 2, 1)
        candidate = np.tanh(np.concatenate([xs[:, t], r * h], 1) @ kernel + bias)
        new_h = u * h + (1 - u) * candidate
        alive = (t < lengths)[:, None]
        outputs.append(np.where(alive, new_h, 0.0))
        h = np.where(alive, new_h, h)
    return np.stack(outputs, 1), h


def test_static_rnn_lstm_matches_numpy(sess):
    rng = np.random.RandomState(0)
    xs = rng.randn(3, 4, 2)
    x = tf.placeholder(tf.float64, [None, 4, 2])
    cell = tf.nn.rnn_cell.BasicLSTMCell(5, forget_bias=0.5)
    outputs, state = tf.nn.static_rnn(cell, tf.unstack(x, 4, 1), dtype=tf.float64)
    assert [v.name for v in tf.trainable_variables()] == [
        "rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple) and len(outputs) == 4
    sess.run(tf.global_variables_initializer())
    kernel, bias = sess.run(tf.trainable_variables())
    expected, (c, h) = _numpy_lstm(xs, kernel, bias, forget_bias=0.5)
    got_outputs, got_state = sess.run([outputs, state], {x: xs})
    np.testing.assert_allclose(np.stack(got_outputs, 1), expected, rtol=1e-10)
    np.testing.assert_allclose(got_state.c, c, rtol=1e-10)
    np.testing.assert_allclose(got_state.h, h, rtol=1e-10)


def test_dynamic_rnn_equals_static_rnn_and_backprops(sess):
    rng = np.random.RandomState(1)
    xs = rng.randn(2, 3, 4)
    x = tf.placeholder(tf.float64, [2, None, 4])
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    dynamic, dynamic_state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    static, _ = tf.nn.static_rnn(cell, tf.unstack(tf.reshape(x, [2, 3, 4]), 3, 1),
                                 dtype=tf.float64)
    assert len(tf.trainable_variables()) == 2  # the same cell: the same variables
    assert dynamic.shape.as_list() == [2, None, 3]
    loss = tf.reduce_sum(tf.square(dynamic)) + tf.reduce_sum(dynamic_state.c)
    grads = tf.gradients(loss, tf.trainable_variables())
    static_grads = tf.gradients(tf.reduce_sum(tf.square(tf.stack(static, 1)))
                                + tf.reduce_sum(_static_c(cell, x)), tf.trainable_variables())
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(dynamic, {x: xs}),
                               np.stack(sess.run(static, {x: xs}), 1), rtol=1e-12)
    for g, s in zip(sess.run(grads, {x: xs}), sess.run(static_grads, {x: xs})):
        np.testing.assert_allclose(g, s, rtol=1e-9)


def _static_c(cell, x):
    with tf.variable_scope("rnn", reuse=True):
        _, state = tf.nn.static_rnn(cell, tf.unstack(tf.reshape(x, [2, 3, 4]), 3, 1),
                                    dtype=tf.float64, scope="rnn")
    return state.c


def test_dynamic_rnn_with_lengths_and_stacked_gru(sess):
    rng = np.random.RandomState(2)
    xs, lengths = rng.randn(2, 5, 3), np.array([5, 2])
    x = tf.placeholder(tf.float64, [None, None, 3])
    seq = tf.placeholder(tf.int32, [None])
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(2)])
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, dtype=tf.float64)
    names = [v.name for v in tf.trainable_variables()]
    assert names[0] == "rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel:0"
    assert names[-1] == "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0"
    sess.run(tf.global_variables_initializer())
    w = sess.run(tf.trainable_variables())
    hidden, h0 = _numpy_gru(xs, *w[:4], lengths)
    expected, h1 = _numpy_gru(hidden, *w[4:], lengths)
    got, (s0, s1) = sess.run([outputs, state], {x: xs, seq: lengths})
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    np.testing.assert_allclose(s0, h0, rtol=1e-10)
    np.testing.assert_allclose(s1, h1, rtol=1e-10)
    assert np.all(got[1, 2:] == 0)


def test_basic_rnn_cell_and_dropout_wrapper(sess):
    x = tf.constant(np.ones((2, 3)), tf.float64)
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), output_keep_prob=1.0)
    state = cell.zero_state(2, tf.float64)
    output, new_state = cell(x, state)
    sess.run(tf.global_variables_initializer())
    kernel, bias = sess.run(tf.trainable_variables())
    np.testing.assert_allclose(sess.run(output),
                               np.tanh(np.concatenate([np.ones((2, 3)), np.zeros((2, 4))], 1)
                                       @ kernel + bias), rtol=1e-12)
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(2), tf.zeros([1, 2, 3]))
