"""``examples/rnn_while_loop.py``: the while_loop RNN computes what its equations say and learns."""

import importlib.util
import pathlib

import numpy as np
import pytest

import minitf as tf

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "rnn_while_loop.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("rnn_while_loop_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rnn_matches_its_equations_in_numpy(example):
    x = np.random.RandomState(3).uniform(-1, 1, size=(4, 6, 1)).astype(np.float32)
    inputs = tf.placeholder(tf.float32, [None, None, 1])
    prediction = example.rnn(inputs, hidden=5)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        names = ["rnn/U", "rnn/W", "rnn/b", "rnn/V", "rnn/c"]
        u, w, b, v, c = sess.run([tf.get_default_graph().get_tensor_by_name(n + ":0")
                                  for n in names])
        got = sess.run(prediction, {inputs: x})
    h = np.zeros((4, 5), np.float32)
    for t in range(6):
        h = np.tanh(x[:, t] @ u + h @ w + b)
    np.testing.assert_allclose(got, h @ v + c, rtol=1e-5, atol=1e-6)


def test_training_lowers_the_held_out_loss(example, capsys):
    losses = example.main(["--steps", "60", "--log-every", "30", "--seq-len", "6"])
    assert losses[-1] < 0.5 * losses[0]
    assert "Loss went from" in capsys.readouterr().out
