"""``tf.custom_gradient`` and ``tf.identity_n``: TF1's graph-mode custom gradients."""

import numpy as np
import pytest

import minitf as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.log(1 + e), grad


def test_grad_fn_replaces_the_automatic_gradient(sess):
    x = tf.constant([0.0, 2.0, 100.0])
    y = log1pexp(x)
    (dx,) = tf.gradients(y, x)
    (automatic,) = tf.gradients(tf.log(1 + tf.exp(x)), x)
    assert y.op.type == "IdentityN"
    value, grad, auto = sess.run([y, dx, automatic])
    np.testing.assert_allclose(value[:2], np.log1p(np.exp([0.0, 2.0])), rtol=1e-6)
    sigmoid = 1 / (1 + np.exp(-np.array([0.0, 2.0, 100.0])))
    np.testing.assert_allclose(grad, sigmoid, rtol=1e-6)
    assert np.isnan(auto[2])  # inf / inf: why one writes the gradient by hand


def test_grad_fn_receives_grad_ys_and_answers_each_input(sess):
    seen = []

    @tf.custom_gradient
    def product(a, b):
        def grad(dy):
            seen.append(dy)
            return [dy * 10.0, dy * 100.0]
        return a * b, grad

    a, b = tf.constant(2.0), tf.constant(3.0)
    y = product(a, b)
    da, db = tf.gradients(y, [a, b], grad_ys=tf.constant(0.5))
    assert sess.run([y, da, db]) == [6.0, 5.0, 50.0]
    assert len(seen) == 1


def test_nested_results_get_one_gradient_each(sess):
    @tf.custom_gradient
    def two(x):
        def grad(dy_diff, dy_sum):  # in nest.flatten's order: a dict's keys sorted
            return dy_sum * 2.0 + dy_diff * 3.0
        return {"sum": x + 1.0, "diff": x - 1.0}, grad

    x = tf.constant(5.0)
    out = two(x)
    assert sorted(out) == ["diff", "sum"]
    (d_both,) = tf.gradients([out["sum"], out["diff"]], x)
    (d_diff,) = tf.gradients(out["diff"], x)  # the other result's gradient is zero
    assert sess.run([out["sum"], out["diff"], d_both, d_diff]) == [6.0, 4.0, 5.0, 3.0]


def test_variables_get_the_gradients_grad_fn_returns(sess):
    w = tf.Variable(3.0, name="w")
    received = []

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            received.append(variables)
            return dy * 10.0, [dy * 100.0]
        return x * w, grad

    x = tf.constant(2.0)
    y = scale(x)
    dx, dw = tf.gradients(y, [x, w])
    sess.run(tf.global_variables_initializer())
    assert sess.run([y, dx, dw]) == [6.0, 10.0, 100.0]
    assert received == [[w]]
    train = tf.train.GradientDescentOptimizer(0.01).minimize(y, var_list=[w])
    sess.run(train)
    assert sess.run(w) == pytest.approx(3.0 - 0.01 * 100.0)


def test_variables_without_a_variables_argument_is_a_type_error():
    w = tf.Variable(3.0, name="weight")

    @tf.custom_gradient
    def scale(x):
        return x * w, lambda dy: dy

    with pytest.raises(TypeError, match="grad_fn must accept a keyword argument 'variables'"
                                        ".*weight"):
        scale(tf.constant(2.0))


def test_wrong_number_of_variable_gradients_is_a_value_error():
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scale(x):
        return x * w, lambda dy, variables=None: (dy, [dy, dy])

    y = scale(tf.constant(2.0))
    with pytest.raises(ValueError, match="Must return gradient for each variable"):
        tf.gradients(y, w)


def test_wrong_number_of_input_gradients_is_a_value_error():
    @tf.custom_gradient
    def add(a, b):
        return a + b, lambda dy: dy

    y = add(tf.constant(1.0), tf.constant(2.0))
    with pytest.raises(ValueError, match="'add' returned 1 gradients for 2 inputs"):
        tf.gradients(y, y.op.inputs[0])


def test_keyword_arguments_are_refused_as_in_graph_mode():
    with pytest.raises(ValueError, match="keywords arguments only when eager"):
        log1pexp(x=tf.constant(1.0))


def test_identity_n_passes_mixed_dtypes_through_one_op(sess):
    a = tf.placeholder(tf.float32, [None, 2])
    b = tf.constant([1, 2, 3])
    out_a, out_b = tf.identity_n([a, b], name="both")
    assert out_a.op is out_b.op and out_a.op.name == "both"
    assert (out_a.dtype, out_b.dtype) == (tf.float32, tf.int32)
    assert out_a.shape.as_list() == [None, 2] and out_b.shape.as_list() == [3]
    value_a, value_b = sess.run([out_a, out_b], {a: [[1.0, 2.0]]})
    np.testing.assert_array_equal(value_a, [[1.0, 2.0]])
    np.testing.assert_array_equal(value_b, [1, 2, 3])
    (da,) = tf.gradients(out_a * 3.0, a)
    np.testing.assert_array_equal(sess.run(da, {a: [[1.0, 2.0]]}), [[3.0, 3.0]])
