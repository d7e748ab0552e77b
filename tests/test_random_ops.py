"""Random ops: distributions checked by the moments of large samples, graph
structure and names as in TF1, and the seeding contract of ``tf.set_random_seed``."""

import subprocess
import sys

import numpy as np
import pytest

import minitf as tf
from minitf.api_scopes import DEFAULT_GRAPH_SEED
from tests.conftest import device_config

N = 200_000  # samples for moment checks: the standard error of a mean is ~0.002 * stddev


def sample(device, build):
    """Runs ``build()`` on ``device`` in a fresh session (an op without a kernel there
    on the CPU, see ``conftest.device_config``)."""
    with tf.device(device):
        out = build()
    with tf.Session(config=device_config(device)) as session:
        return session.run(out)


# ---- distributions -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_random_normal_moments(device, dtype):
    x = sample(device, lambda: tf.random_normal([N], mean=3.0, stddev=2.0, dtype=dtype))
    assert x.shape == (N,) and x.dtype == dtype.as_numpy_dtype
    assert abs(x.mean() - 3.0) < 0.03
    assert abs(x.std() - 2.0) < 0.03
    assert 0.30 < np.mean(np.abs(x - 3.0) < 2.0 * 0.5) < 0.40  # P(|z| < 0.5) = 0.383


def test_random_normal_float16(device):
    x = sample(device, lambda: tf.random_normal([1000], dtype=tf.float16, seed=1))
    assert x.dtype == np.float16 and abs(x.mean()) < 0.15


def test_truncated_normal_stays_within_two_stddev(device):
    x = sample(device, lambda: tf.truncated_normal([N], mean=-1.0, stddev=0.5))
    assert np.all(np.abs(x + 1.0) <= 2 * 0.5)
    assert abs(x.mean() + 1.0) < 0.01
    # Truncation at ±2σ leaves a standard deviation of 0.8796σ.
    assert abs(x.std() - 0.87962566 * 0.5) < 0.01


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_random_uniform_float(device, dtype):
    x = sample(device, lambda: tf.random_uniform([N], minval=-2.0, maxval=6.0, dtype=dtype))
    assert x.dtype == dtype.as_numpy_dtype
    assert x.min() >= -2.0 and x.max() < 6.0
    assert abs(x.mean() - 2.0) < 0.05
    assert abs(x.var() - 64.0 / 12) < 0.1
    counts, _ = np.histogram(x, bins=8, range=(-2, 6))
    assert np.all(np.abs(counts / N - 1 / 8) < 0.01)


def test_random_uniform_defaults_to_unit_interval(device):
    x = sample(device, lambda: tf.random_uniform([1000]))
    assert x.min() >= 0.0 and x.max() < 1.0


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int(device, dtype):
    x = sample(device, lambda: tf.random_uniform([10_000], minval=-3, maxval=4, dtype=dtype))
    assert x.dtype == dtype.as_numpy_dtype
    assert set(np.unique(x)) == set(range(-3, 4))


def test_random_shuffle_permutes_rows(device):
    value = np.arange(20).reshape(10, 2)
    with tf.device(device):
        shuffled = tf.random_shuffle(value)
    with tf.Session(config=device_config(device)) as session:
        results = [session.run(shuffled) for _ in range(5)]
    for r in results:
        np.testing.assert_array_equal(r[:, 1] - r[:, 0], np.ones(10))  # rows stay intact
        np.testing.assert_array_equal(np.sort(r[:, 0]), value[:, 0])
    assert len({r.tobytes() for r in results}) > 1


def test_random_shuffle_scalar_and_empty(sess):
    assert sess.run(tf.random_shuffle(7)) == 7
    assert sess.run(tf.random_shuffle(np.zeros((0, 3)))).shape == (0, 3)


def test_multinomial_frequencies(device):
    logits = np.log([[0.2, 0.3, 0.5], [0.9, 0.1, 1e-30]]).astype(np.float32)
    x = sample(device, lambda: tf.multinomial(logits, N))
    assert x.shape == (2, N) and x.dtype == np.int64
    np.testing.assert_allclose(np.bincount(x[0], minlength=3) / N, [0.2, 0.3, 0.5], atol=0.01)
    np.testing.assert_allclose(np.bincount(x[1], minlength=3) / N, [0.9, 0.1, 0.0], atol=0.01)


# ---- graph structure, shapes, dtypes --------------------------------------------------------
def test_random_normal_graph_matches_tf1():
    x = tf.random_normal([2, 3], mean=1.0, stddev=2.0)
    assert x.op.name == "random_normal" and x.shape.as_list() == [2, 3]
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert names == ["random_normal/shape", "random_normal/mean", "random_normal/stddev",
                     "random_normal/RandomStandardNormal", "random_normal/mul", "random_normal"]
    rnd = tf.get_default_graph().get_operation_by_name("random_normal/RandomStandardNormal")
    assert rnd.type == "RandomStandardNormal"
    assert (rnd.get_attr("seed"), rnd.get_attr("seed2")) == (0, 0)


def test_random_uniform_graph_matches_tf1():
    x = tf.random_uniform([2], 1.0, 5.0)
    y = tf.random_uniform([2], 1, 5, dtype=tf.int32)
    assert x.op.name == "random_uniform" and y.op.name == "random_uniform_1"
    assert y.op.type == "RandomUniformInt" and y.dtype == tf.int32
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert names[:7] == ["random_uniform/shape", "random_uniform/min", "random_uniform/max",
                         "random_uniform/RandomUniform", "random_uniform/sub",
                         "random_uniform/mul", "random_uniform"]


def test_other_op_names():
    assert tf.truncated_normal([1]).op.name == "truncated_normal"
    assert tf.random_shuffle([1, 2]).op.name == "RandomShuffle"
    assert tf.multinomial([[0.0, 0.0]], 2).op.name == "multinomial/Multinomial"
    assert tf.random_normal([1], name="noise").op.name == "noise"


@pytest.mark.parametrize("shape", [[2, 3], (2, 3), tf.TensorShape([2, 3]),
                                   np.array([2, 3], np.int32)])
def test_shape_forms(sess, shape):
    x = tf.random_normal(shape)
    assert x.shape.as_list() == [2, 3]
    assert sess.run(x).shape == (2, 3)


def test_shape_from_constant_and_fed_tensors(sess):
    assert tf.random_uniform(tf.constant([4, 1])).shape.as_list() == [4, 1]
    dims = tf.placeholder(tf.int32, [2])
    x = tf.random_normal(dims)
    assert x.shape.as_list() == [None, None]
    assert sess.run(x, {dims: [3, 5]}).shape == (3, 5)
    assert tf.random_normal(tf.placeholder(tf.int32, [None])).shape.ndims is None


def test_scalar_shape(sess):
    assert sess.run(tf.random_normal([])).shape == ()


def test_tensor_mean_and_stddev(sess):
    mean = tf.placeholder(tf.float32, [3])
    x = tf.random_normal([50_000, 3], mean=mean, stddev=0.01)
    np.testing.assert_allclose(sess.run(x, {mean: [1.0, -2.0, 5.0]}).mean(axis=0),
                               [1.0, -2.0, 5.0], atol=1e-3)


def test_construction_errors():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        tf.random_uniform([2], dtype=tf.bool)
    with pytest.raises(TypeError, match="floating point"):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(TypeError, match="floating point"):
        tf.truncated_normal([2], dtype=tf.int64)
    with pytest.raises(ValueError, match="rank 1"):
        tf.random_normal(3)
    with pytest.raises(ValueError, match="partially known"):
        tf.random_normal(tf.TensorShape([None, 2]))
    with pytest.raises(TypeError):
        tf.random_normal(tf.constant([2.0]))
    with pytest.raises(ValueError, match="rank 2"):
        tf.multinomial([1.0, 2.0], 3)


def test_run_time_errors(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
        sess.run(tf.random_uniform([2], 5, 5, dtype=tf.int32))


# ---- seeds ------------------------------------------------------------------------------------
def _build_program(graph_seed=None, op_seed=None):
    graph = tf.Graph()
    with graph.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        a = tf.random_normal([4], seed=op_seed)
        b = tf.random_uniform([4], seed=op_seed)
        c = tf.truncated_normal([4], seed=op_seed)
        d = tf.random_shuffle(np.arange(10), seed=op_seed)
    return graph, [a, b, c, d]


def _run_twice(graph, fetches):
    with tf.Session(graph=graph) as session:
        return [session.run(fetches) for _ in range(2)]


def _same(x, y):
    return all(np.array_equal(a, b) for a, b in zip(x, y))


def test_graph_seed_repeats_across_sessions_and_graphs():
    graph, fetches = _build_program(graph_seed=42)
    first = _run_twice(graph, fetches)
    again = _run_twice(graph, fetches)
    other_graph = _run_twice(*_build_program(graph_seed=42))
    assert _same(first[0], again[0]) and _same(first[1], again[1])
    assert _same(first[0], other_graph[0]) and _same(first[1], other_graph[1])


def test_successive_runs_draw_new_numbers():
    first, second = _run_twice(*_build_program(graph_seed=42))
    assert not any(np.array_equal(a, b) for a, b in zip(first[:3], second[:3]))


def _random_op(x):
    """The RandomStandardNormal/RandomUniform op behind ``x = rnd * scale + shift``."""
    return x.op.inputs[0].op.inputs[0].op


def test_graph_seed_gives_each_op_its_own_stream():
    tf.set_random_seed(1)
    a, b = tf.random_normal([5]), tf.random_normal([5])
    assert _random_op(a).get_attr("seed") == _random_op(b).get_attr("seed") == 1
    assert _random_op(a).get_attr("seed2") != _random_op(b).get_attr("seed2")
    with tf.Session() as session:
        x, y = session.run([a, b])
    assert not np.array_equal(x, y)


def test_other_graph_seed_gives_other_numbers():
    first = _run_twice(*_build_program(graph_seed=42))
    other = _run_twice(*_build_program(graph_seed=43))
    assert not any(np.array_equal(a, b) for a, b in zip(first[0][:3], other[0][:3]))


def test_op_seed_alone_is_deterministic():
    graph, fetches = _build_program(op_seed=7)
    rnd = _random_op(fetches[0])
    assert (rnd.get_attr("seed"), rnd.get_attr("seed2")) == (DEFAULT_GRAPH_SEED, 7)
    first = _run_twice(graph, fetches)
    assert _same(first[0], _run_twice(graph, fetches)[0])


def test_no_seed_differs_between_sessions():
    graph, fetches = _build_program()
    first, second = _run_twice(graph, fetches)[0], _run_twice(graph, fetches)[0]
    assert not any(np.array_equal(a, b) for a, b in zip(first[:3], second[:3]))


_SEEDED_PROGRAM = """
import minitf as tf
tf.set_random_seed(1234)
x = tf.random_normal([3])
y = tf.random_uniform([3], 0, 100, dtype=tf.int64)
with tf.Session() as s:
    print(s.run([x, y]), s.run([x, y]))
"""


def test_graph_seed_repeats_across_processes():
    outputs = [subprocess.run([sys.executable, "-c", _SEEDED_PROGRAM], capture_output=True,
                              text=True, check=True).stdout for _ in range(2)]
    assert outputs[0] == outputs[1] and "array" in outputs[0]
