"""``tf.test.compute_gradient`` / ``compute_gradient_error`` and ``check_gradients``.

The checker is tested on gradients registered here, under names of their own
(``GradientCheckerTest*``) and selected with ``gradient_override_map``: right
ones, which it must accept, and wrong ones, which it must catch.  So these
tests depend on no built-in gradient but Identity's.
"""

import inspect
import re

import numpy as np
import pytest

import minitf as tf
from minitf.test import check_gradients, compute_gradient, compute_gradient_error


@tf.RegisterGradient("GradientCheckerTestSquare")
def _square_grad(op, grad):
    return [grad * 2.0 * op.inputs[0]]


@tf.RegisterGradient("GradientCheckerTestWrongSquare")
def _wrong_square_grad(op, grad):
    return [grad * op.inputs[0]]  # the factor 2 forgotten


@tf.RegisterGradient("GradientCheckerTestSlightlyWrongSquare")
def _slightly_wrong_square_grad(op, grad):
    return [grad * 2.0 * op.inputs[0] * 1.0001]  # 1e-4 relative error


@tf.RegisterGradient("GradientCheckerTestMatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    return [tf.matmul(grad, b, transpose_b=True), tf.matmul(a, grad, transpose_a=True)]


@tf.RegisterGradient("GradientCheckerTestWrongMatMulB")
def _wrong_matmul_b_grad(op, grad):
    a, b = op.inputs
    return [tf.matmul(grad, b, transpose_b=True), tf.matmul(a, grad, transpose_a=True) * 2.0]


def _square(x, gradient="GradientCheckerTestSquare"):
    with tf.get_default_graph().gradient_override_map({"Square": gradient}):
        return tf.square(x, name="y")


def _matmul(a, b, gradient="GradientCheckerTestMatMul"):
    with tf.get_default_graph().gradient_override_map({"MatMul": gradient}):
        return tf.matmul(a, b)


# ---- compute_gradient ----------------------------------------------------------------------

TF1_SIGNATURE = [("x", inspect.Parameter.empty), ("x_shape", inspect.Parameter.empty),
                 ("y", inspect.Parameter.empty), ("y_shape", inspect.Parameter.empty),
                 ("x_init_value", None), ("delta", 1e-3), ("init_targets", None),
                 ("extra_feed_dict", None)]


@pytest.mark.parametrize("fn", [compute_gradient, compute_gradient_error], ids=str)
def test_tf1_signature(fn):
    """TF1's positional parameters and defaults, then minitf's keyword ``session``."""
    parameters = list(inspect.signature(fn).parameters.values())
    assert [(p.name, p.default) for p in parameters[:8]] == TF1_SIGNATURE
    assert [p.name for p in parameters[8:]] == ["session"]
    assert tf.test.compute_gradient is compute_gradient
    assert tf.test.compute_gradient_error is compute_gradient_error


def test_positional_tf1_call(sess):
    x = tf.placeholder(tf.float64, [2])
    y = _square(x)
    theoretical, numerical = compute_gradient(x, [2], y, [2], np.array([1.0, 3.0]), 1e-6)
    np.testing.assert_allclose(theoretical, np.diag([2.0, 6.0]))
    np.testing.assert_allclose(numerical, np.diag([2.0, 6.0]), atol=1e-6)


def test_jacobians_have_shape_x_size_by_y_size(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    y = _matmul(x, tf.constant(np.ones([3, 4])))
    theoretical, numerical = compute_gradient(x, [2, 3], y, [2, 4])
    assert theoretical.shape == (6, 8) and numerical.shape == (6, 8)


def test_identity_jacobian_is_the_identity_matrix(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    theoretical, numerical = compute_gradient(x, [2, 3], tf.identity(x), [2, 3])
    np.testing.assert_allclose(theoretical, np.eye(6))
    np.testing.assert_allclose(numerical, np.eye(6), atol=1e-9)


def test_square_jacobian_is_diagonal_two_x(sess):
    x = tf.placeholder(tf.float64, [3])
    value = np.array([0.5, -1.0, 2.0])
    theoretical, numerical = compute_gradient(x, [3], _square(x), [3], x_init_value=value)
    np.testing.assert_allclose(theoretical, np.diag(2 * value))
    np.testing.assert_allclose(numerical, np.diag(2 * value), atol=1e-9)


def test_jacobian_entry_i_j_is_dy_j_by_dx_i(sess):
    # y = a @ b with a: [1, 2], b: [2, 3]: dy[0, j] / da[0, i] = b[i, j].
    a = tf.placeholder(tf.float64, [1, 2])
    b_value = np.arange(6.0).reshape(2, 3)
    theoretical, numerical = compute_gradient(a, [1, 2], _matmul(a, tf.constant(b_value)), [1, 3])
    np.testing.assert_allclose(theoretical, b_value)
    np.testing.assert_allclose(numerical, b_value, atol=1e-9)


def test_list_of_x_gives_a_list_of_pairs(sess):
    a, b = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [3, 4])
    a_value, b_value = np.random.default_rng(0).normal(size=[2, 3]), np.ones([3, 4])
    results = compute_gradient([a, b], [[2, 3], [3, 4]], _matmul(a, b), [2, 4],
                               x_init_value=[a_value, b_value],
                               extra_feed_dict={a: a_value, b: b_value})
    assert isinstance(results, list) and len(results) == 2
    assert [t.shape for t, _ in results] == [(6, 8), (12, 8)]
    assert [n.shape for _, n in results] == [(6, 8), (12, 8)]
    for theoretical, numerical in results:
        np.testing.assert_allclose(theoretical, numerical, atol=1e-8)


def test_constants_can_be_x(sess):
    # TF1's usual form: x a constant, its value replaced by feeds.
    x = tf.constant([1.0, 2.0], tf.float64)
    theoretical, numerical = compute_gradient(x, [2], _square(x), [2])
    np.testing.assert_allclose(theoretical, numerical, atol=1e-8)


def test_default_x_init_value_is_uniform_in_0_1(sess):
    x = tf.placeholder(tf.float64, [4])
    theoretical, _ = compute_gradient(x, [4], _square(x), [4])
    diagonal = np.diag(theoretical) / 2.0
    assert np.all((diagonal >= 0) & (diagonal < 1)) and len(set(diagonal)) == 4


def test_x_init_value_of_the_wrong_shape_raises(sess):
    x = tf.placeholder(tf.float64, [3])
    with pytest.raises(ValueError, match=r"x_init_value has shape \(2,\), expected \(3,\)"):
        compute_gradient(x, [3], _square(x), [3], x_init_value=[1.0, 2.0])


def test_y_not_depending_on_x_gives_zero_jacobians(sess):
    x, z = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [3])
    theoretical, numerical = compute_gradient(x, [2], tf.identity(z), [3],
                                              extra_feed_dict={z: np.ones(3)})
    assert theoretical.shape == (2, 3)
    np.testing.assert_array_equal(theoretical, np.zeros([2, 3]))
    np.testing.assert_array_equal(numerical, np.zeros([2, 3]))


def test_init_targets_run_first(sess):
    x = tf.placeholder(tf.float64, [1, 2])
    w = tf.Variable(np.array([[1.0], [3.0]]))
    theoretical, numerical = compute_gradient(x, [1, 2], _matmul(x, w), [1, 1],
                                              init_targets=[tf.global_variables_initializer()])
    np.testing.assert_allclose(theoretical, [[1.0], [3.0]])
    np.testing.assert_allclose(numerical, [[1.0], [3.0]], atol=1e-9)


def test_an_explicit_session_is_used():
    x = tf.placeholder(tf.float64, [2])
    session = tf.Session()  # not the default session
    try:
        theoretical, _ = compute_gradient(x, [2], tf.identity(x), [2], session=session)
    finally:
        session.close()
    np.testing.assert_allclose(theoretical, np.eye(2))


def test_without_a_session_it_says_what_to_do():
    x = tf.placeholder(tf.float64, [2])
    with pytest.raises(ValueError, match="run in a session: pass session="):
        compute_gradient(x, [2], tf.identity(x), [2])


# ---- compute_gradient_error ----------------------------------------------------------------

def test_error_is_about_zero_for_square(sess):
    x = tf.placeholder(tf.float64, [2, 2])
    assert compute_gradient_error(x, [2, 2], _square(x), [2, 2]) < 1e-8


def test_error_is_about_zero_for_matmul_over_both_inputs(sess):
    a, b = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [3, 2])
    rng = np.random.default_rng(1)
    values = [rng.normal(size=[2, 3]), rng.normal(size=[3, 2])]
    error = compute_gradient_error([a, b], [[2, 3], [3, 2]], _matmul(a, b), [2, 2],
                                   x_init_value=values, extra_feed_dict=dict(zip([a, b], values)))
    assert error < 1e-8


def test_error_is_small_in_float32(sess):
    x = tf.placeholder(tf.float32, [3])
    assert compute_gradient_error(x, [3], _square(x), [3], x_init_value=[0.5, 1.0, 2.0]) < 1e-2


def test_error_is_large_for_a_wrong_gradient(sess):
    x = tf.placeholder(tf.float64, [3])
    y = _square(x, gradient="GradientCheckerTestWrongSquare")
    error = compute_gradient_error(x, [3], y, [3], x_init_value=[1.0, 2.0, 3.0])
    assert error == pytest.approx(3.0)  # analytic x vs numeric 2x, worst at x = 3


# ---- check_gradients -----------------------------------------------------------------------

def test_check_gradients_accepts_right_gradients(sess):
    x = tf.placeholder(tf.float64, [2, 3])
    check_gradients(_square(x), x, np.arange(6.0).reshape(2, 3))


def test_check_gradients_checks_every_x_of_a_list(sess):
    a, b = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [3, 1])
    rng = np.random.default_rng(2)
    check_gradients(_matmul(a, b), [a, b], [rng.normal(size=[2, 3]), rng.normal(size=[3, 1])])


def test_check_gradients_message_names_input_element_values_and_tolerance(sess):
    x = tf.placeholder(tf.float64, [3], name="x")
    y = _square(x, gradient="GradientCheckerTestWrongSquare")
    with pytest.raises(AssertionError) as info:
        check_gradients(y, x, [1.0, 2.0, 3.0])
    message = str(info.value)
    assert message.startswith("Gradient check failed for input 'x:0' (shape (3,)) of 'y:0'")
    assert "the worst element is d y:0[2] / d x:0[2]" in message
    assert "analytic 3 vs numeric 6" in message
    assert re.search(r"\|difference\| 3 > tolerance 7e-06 = atol 1e-06 \+ rtol 1e-06 "
                     r"\* \|numeric\|", message), message


def test_check_gradients_message_gives_multi_dimensional_indices(sess):
    x = tf.placeholder(tf.float64, [2, 2], name="x")
    y = _square(x, gradient="GradientCheckerTestWrongSquare")
    with pytest.raises(AssertionError, match=re.escape("d y:0[1, 0] / d x:0[1, 0]: analytic -4 "
                                                       "vs numeric -8")):
        check_gradients(y, x, [[1.0, 2.0], [-4.0, 3.0]])


def test_check_gradients_names_the_wrong_input_of_several(sess):
    a = tf.placeholder(tf.float64, [2, 2], name="a")
    b = tf.placeholder(tf.float64, [2, 2], name="b")
    y = _matmul(a, b, gradient="GradientCheckerTestWrongMatMulB")
    check_gradients(y, a, np.eye(2), extra_feed_dict={b: np.ones([2, 2])})  # a's part is right
    with pytest.raises(AssertionError, match="for input 'b:0'"):
        check_gradients(y, [a, b], [np.eye(2), np.ones([2, 2])])


def test_check_gradients_tolerance_depends_on_the_dtype(sess):
    x32 = tf.placeholder(tf.float32, [3])
    x64 = tf.placeholder(tf.float64, [3])
    values = [0.5, 1.0, 2.0]
    check_gradients(_square(x32, gradient="GradientCheckerTestSlightlyWrongSquare"), x32, values)
    with pytest.raises(AssertionError, match="atol 1e-06"):
        check_gradients(_square(x64, gradient="GradientCheckerTestSlightlyWrongSquare"), x64,
                        values)


def test_check_gradients_tolerances_can_be_given(sess):
    x = tf.placeholder(tf.float64, [3])
    y = _square(x, gradient="GradientCheckerTestWrongSquare")
    check_gradients(y, x, [1.0, 2.0, 3.0], atol=3.5)
    with pytest.raises(AssertionError, match="atol 0.1 \\+ rtol 0.2"):
        check_gradients(y, x, [1.0, 2.0, 3.0], atol=0.1, rtol=0.2)


def test_check_gradients_feeds_extra_placeholders(sess):
    a, b = tf.placeholder(tf.float64, [1, 2]), tf.placeholder(tf.float64, [2, 2])
    check_gradients(_matmul(a, b), a, [[1.0, -1.0]], extra_feed_dict={b: np.eye(2)})


def test_check_gradients_needs_a_fully_defined_y_shape(sess):
    x = tf.placeholder(tf.float64, [None])
    with pytest.raises(ValueError, match="fully defined shape"):
        check_gradients(tf.identity(x), x, [1.0])


def test_gradcheck_fixture_runs_check_gradients(gradcheck):
    x = tf.placeholder(tf.float64, [2], name="x")
    gradcheck(_square(x), x, [1.0, 2.0])
    with pytest.raises(AssertionError, match="input 'x:0'"):
        gradcheck(_square(x, gradient="GradientCheckerTestWrongSquare"), x, [1.0, 2.0])
