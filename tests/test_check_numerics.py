"""``tf.check_numerics``, ``tf.verify_tensor_all_finite`` and ``tf.add_check_numerics_ops``.

Expected behaviour is TF1's: an identity on a float tensor that raises
``InvalidArgumentError("<message> : Tensor had NaN values")`` (``Inf``,
``Inf and NaN``) naming the op when the step runs, a ``TypeError`` for an
integer tensor when the graph is built, a checked gradient.
"""

import numpy as np
import pytest

import minitf as tf
from tests.conftest import run_on

NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_finite_values_pass_through(device, dtype):
    value = np.array([[1.5, -2.0], [0.0, 3.25]], dtype)
    result = run_on(device, lambda x: tf.check_numerics(x, "fine"), value)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, value)
    y = tf.check_numerics(tf.constant(value), "fine")
    assert y.dtype == tf.as_dtype(dtype) and y.shape.as_list() == [2, 2]


@pytest.mark.parametrize("values,found", [
    ([1.0, NAN], "NaN"), ([INF, 1.0], "Inf"), ([-INF, 2.0], "Inf"), ([NAN, -INF], "Inf and NaN"),
])
def test_nan_or_inf_is_invalid_argument_naming_the_op(values, found):
    x = tf.placeholder(tf.float32, [2], name="x")
    checked = tf.check_numerics(x, "bad x", name="guard")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(checked, {x: values})
        assert sess.run(checked, {x: [1.0, 2.0]}).tolist() == [1.0, 2.0]
    assert info.value.message.startswith("bad x : Tensor had %s values" % found)
    assert info.value.op.name == "guard"
    assert "guard" in str(info.value)


def test_a_constant_nan_is_not_folded_away():
    """CheckNumerics is stateful, as in TF: constant folding must not skip it."""
    checked = tf.check_numerics(tf.constant([NAN]) * 2.0, "folded?")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="folded\\? : Tensor had NaN"):
            sess.run(checked)


def test_integer_tensors_are_a_type_error_at_construction():
    with pytest.raises(TypeError, match="int32"):
        tf.check_numerics(tf.constant([1, 2]), "ints")


def test_the_gradient_is_checked_too():
    x = tf.placeholder(tf.float32, [2])
    y = tf.check_numerics(x, "forward") * tf.constant([1.0, INF])
    grad, = tf.gradients(y, x)
    assert grad.op.type == "CheckNumerics"
    assert grad.op.get_attr("message") == (
        "Not a number (NaN) or infinity (Inf) values detected in gradient. forward")
    dy, = tf.gradients(tf.check_numerics(x, "m") * 3.0, x)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(dy, {x: [1.0, 2.0]}), [3.0, 3.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient"):
            sess.run(grad, {x: [1.0, 2.0]})


def test_verify_tensor_all_finite_is_the_tensor_behind_a_check():
    x = tf.placeholder(tf.float64, [3], name="x")
    y = tf.verify_tensor_all_finite(x, "x must be finite")
    assert y.name == "VerifyFinite/control_dependency:0"
    assert [op.type for op in y.op.control_inputs] == ["CheckNumerics"]
    with tf.Session() as sess:
        assert sess.run(y, {x: [1.0, 2.0, 3.0]}).tolist() == [1.0, 2.0, 3.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="x must be finite : Tensor "
                                                                  "had Inf values"):
            sess.run(y, {x: [1.0, INF, 3.0]})
    z = tf.verify_tensor_all_finite(x=x, message="newer names", name="check_x")
    assert z.op.control_inputs[0].get_attr("message") == "newer names"


def test_add_check_numerics_ops_checks_every_float_output_in_order():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.log(x, name="y")
    z = tf.add(y, 1.0, name="z")
    tf.cast(z, tf.int32, name="as_int")  # not a float output: no check
    check = tf.add_check_numerics_ops()
    checks = [op for op in tf.get_default_graph().get_operations()
              if op.type == "CheckNumerics"]
    assert [op.get_attr("message") for op in checks] == ["x:0", "y:0", "z/y:0", "z:0"]
    # Each check runs after the previous one: inputs before outputs.
    for before, after in zip(checks, checks[1:]):
        assert after.control_inputs == [before]
    assert check.type == "NoOp" and check.control_inputs == [checks[-1]]
    with tf.Session() as sess:
        sess.run(check, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="y:0 : Tensor had Inf") as info:
            sess.run(check, {x: [1.0, 0.0]})  # log(0) = -inf: y is the first bad tensor
    assert info.value.op is checks[1]


def test_add_check_numerics_ops_refuses_control_flow():
    x = tf.placeholder(tf.float32, [])
    tf.cond(x > 0, lambda: x * 2.0, lambda: x)
    with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
        tf.add_check_numerics_ops()
