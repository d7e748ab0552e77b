"""The ops and composites the TF1 compatibility sweep added, checked against NumPy.

(Sorting, masks, diagonals, norms and contractions; their gradients by finite
differences.  The course programs that needed them are in test_tf1_programs.py.)
"""

import numpy as np
import pytest

import minitf as tf


def _check_gradients(build, *values, shape=None):
    """Finite differences of ``build(*placeholders)`` at ``values`` (float64)."""
    placeholders = [tf.placeholder(tf.float64, v.shape) for v in values]
    y = build(*placeholders)
    if shape is not None:
        y.set_shape(shape)
    with tf.Session():
        tf.test.check_gradients(y, placeholders, list(values) if len(values) > 1 else values[0])


def test_sort_and_argsort(sess):
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.5, -1.0, 4.0, 0.0]], np.float32)
    np.testing.assert_array_equal(sess.run(tf.sort(x)), np.sort(x, axis=-1))
    np.testing.assert_array_equal(sess.run(tf.argsort(x)), np.argsort(x, axis=-1, kind="stable"))
    np.testing.assert_array_equal(sess.run(tf.sort(x, direction="DESCENDING")),
                                  -np.sort(-x, axis=-1))
    with pytest.raises(ValueError, match="last axis"):
        tf.sort(x, axis=0)


def test_sequence_mask(sess):
    lengths = np.array([1, 3, 0])
    expected = np.arange(4)[None, :] < lengths[:, None]
    np.testing.assert_array_equal(sess.run(tf.sequence_mask(lengths, 4)), expected)
    np.testing.assert_array_equal(sess.run(tf.sequence_mask(lengths, dtype=tf.float32)),
                                  expected[:, :3].astype(np.float32))


def test_boolean_mask_values_and_gradient(sess):
    x = np.arange(12.0).reshape(3, 2, 2)
    rows = np.array([True, False, True])
    np.testing.assert_array_equal(sess.run(tf.boolean_mask(x, rows)), x[rows])
    cells = np.array([[True, False], [False, True], [True, True]])
    np.testing.assert_array_equal(sess.run(tf.boolean_mask(x, cells)), x[cells])
    with pytest.raises(ValueError):
        tf.boolean_mask(x, np.array([True, False]))
    _check_gradients(lambda t: tf.boolean_mask(t, rows), x, shape=x[rows].shape)


def test_diagonals_and_trace(sess):
    m = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(sess.run(tf.diag([1.0, 2.0, 3.0])), np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(sess.run(tf.diag_part(m)), np.diag(m))
    batch = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(sess.run(tf.trace(batch)), np.trace(batch, axis1=1, axis2=2))
    assert sess.run(tf.trace(m)) == np.trace(m)


def test_norms(sess):
    x = np.array([[3.0, -4.0, 1.0], [0.0, 2.0, -2.0]])
    assert sess.run(tf.norm(x)) == pytest.approx(np.linalg.norm(x))
    np.testing.assert_allclose(sess.run(tf.norm(x, axis=1)), np.linalg.norm(x, axis=1))
    np.testing.assert_allclose(sess.run(tf.norm(x, ord=1, axis=0, keepdims=True)),
                               np.abs(x).sum(0, keepdims=True))
    assert sess.run(tf.norm(x, ord=np.inf)) == 4.0
    with pytest.raises(ValueError, match="ord"):
        tf.norm(x, ord=2, axis=[0, 1])
    _check_gradients(lambda t: tf.norm(t, axis=1), x)


@pytest.mark.parametrize("axes, a_shape, b_shape", [
    (1, (2, 3), (3, 4)), (2, (2, 3, 4), (3, 4, 5)), ([[0], [1]], (3, 2), (4, 3)),
    ([[1, 2], [1, 0]], (2, 3, 4), (4, 3)), (0, (2,), (3,))])
def test_tensordot_matches_numpy(sess, axes, a_shape, b_shape):
    rng = np.random.RandomState(0)
    a, b = rng.randn(*a_shape), rng.randn(*b_shape)
    result = tf.tensordot(a, b, axes)
    expected = np.tensordot(a, b, axes)
    assert result.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(sess.run(result), expected, rtol=1e-12)
    _check_gradients(lambda x, y: tf.tensordot(x, y, axes), a, b)


def test_namespaces(sess):
    assert tf.linalg.inv is tf.matrix_inverse and tf.linalg.norm is tf.norm
    assert tf.math.argsort is tf.argsort and tf.io.gfile.exists is tf.gfile.Exists


def test_reduce_variance_and_std(sess):
    x = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]])
    np.testing.assert_allclose(sess.run(tf.math.reduce_variance(x)), np.var(x))
    np.testing.assert_allclose(sess.run(tf.math.reduce_std(x, axis=1, keepdims=True)),
                               np.std(x, axis=1, keepdims=True))
    _check_gradients(lambda t: tf.math.reduce_std(t, axis=0), x)


def test_weighted_cross_entropy_with_logits(sess):
    logits = np.array([[-3.0, -0.5, 0.0, 2.0, 30.0]])
    labels = np.array([[1.0, 0.0, 1.0, 0.3, 0.0]])
    loss = tf.nn.weighted_cross_entropy_with_logits(labels, logits, pos_weight=3.0)
    p = 1 / (1 + np.exp(-logits))
    with np.errstate(divide="ignore"):
        expected = -labels * np.log(p) * 3.0 - (1 - labels) * np.log1p(-p)
    expected[0, 4] = 30.0  # -log(1 - sigmoid(30)) = 30 + log1p(exp(-30)), beyond float64's 1 - p
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-9)
    assert loss.op.name == "logistic_loss"


def test_gather_nd_and_scatter_nd(sess):
    params = np.arange(24.0).reshape(2, 3, 4)
    indices = np.array([[[1, 2], [0, 0]], [[1, 1], [1, 2]]])
    gathered = tf.gather_nd(params, indices)
    assert gathered.shape.as_list() == [2, 2, 4]
    np.testing.assert_array_equal(sess.run(gathered), params[tuple(np.moveaxis(indices, -1, 0))])
    expected = np.zeros(5)
    np.add.at(expected, [1, 3, 1], [9.0, 10.0, 1.0])
    scattered = tf.scatter_nd([[1], [3], [1]], [9.0, 10.0, 1.0], [5])
    assert scattered.shape.as_list() == [5]
    np.testing.assert_array_equal(sess.run(scattered), expected)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not index into shape"):
        sess.run(tf.gather_nd(params, [[2, 0]]))


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij->ji", [(2, 3)]), ("i,i->", [(4,), (4,)]), ("ij,kj", [(2, 3), (4, 3)]),
    ("ii->i", [(3, 3)]), ("...ij,jk->...ik", [(2, 2, 3), (3, 4)])])
def test_einsum_matches_numpy(sess, equation, shapes):
    rng = np.random.RandomState(3)
    values = [rng.randn(*s) for s in shapes]
    result = tf.einsum(equation, *values)
    expected = np.einsum(equation, *values)
    if "." not in equation:
        assert result.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(sess.run(result), expected, rtol=1e-12)


def test_einsum_gradients_and_errors(sess):
    rng = np.random.RandomState(4)
    a, b, c = rng.randn(2, 3), rng.randn(3, 4), rng.randn(4)
    _check_gradients(lambda x, y, z: tf.einsum("ij,jk,k->i", x, y, z), a, b, c)
    _check_gradients(lambda x: tf.einsum("ij->", x), a)
    with pytest.raises(ValueError, match="2 input terms"):
        tf.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="letter 'j' is both 3 and 2"):
        tf.einsum("ij,jk->ik", a, a)
    square = tf.placeholder(tf.float64, [3, 3])
    with pytest.raises(NotImplementedError, match="diagonal"):
        tf.gradients(tf.einsum("ii->i", square), square)
