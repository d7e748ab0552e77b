"""What a failing gradient check tells the student, and the second-order check.

Wrong gradients are registered here under names of their own
(``GradientHintTest*``) and selected with ``gradient_override_map`` for
test-only uses of ordinary ops: a factor 2 too many, a factor 2 forgotten, a
sign flipped, no gradient at all, a gradient of the wrong dtype, and a first
derivative that is right but whose own derivative is wrong.
"""

import ast
import pathlib

import numpy as np
import pytest

import minitf as tf
from minitf import labs
from minitf.test import check_gradients, gradgradcheck, gradient_checker


def _register(name, scale):
    @tf.RegisterGradient(name)
    def _grad(op, grad):
        return [grad * (2.0 * scale) * op.inputs[0]]


_register("GradientHintTestDoubled", 2.0)
_register("GradientHintTestHalved", 0.5)
_register("GradientHintTestNegated", -1.0)
_register("GradientHintTestNegatedTripled", -3.0)
_register("GradientHintTestZero", 0.0)


@tf.RegisterGradient("GradientHintTestOffByOne")
def _off_by_one_grad(op, grad):
    return [grad * (2.0 * op.inputs[0] + 1.0)]  # wrong, but not by a constant factor


@tf.RegisterGradient("GradientHintTestFloat32")
def _float32_grad(op, grad):
    return [tf.cast(grad * 2.0 * op.inputs[0], tf.float32)]  # float32 for a float64 input


@tf.RegisterGradient("GradientHintTestWrongSquareGrad")
def _wrong_square_of_square_grad(op, grad):
    return [grad * 3.0 * op.inputs[0]]  # d(x^2)/dx = 2x, said to be 3x


@tf.RegisterGradient("GradientHintTestTanh")
def _tanh_grad_with_a_wrong_second_derivative(op, grad):
    """Right values, ``grad * (1 - y^2)``, but y^2 is a Square whose gradient is wrong."""
    y = op.outputs[0]
    with tf.get_default_graph().gradient_override_map(
            {"Square": "GradientHintTestWrongSquareGrad"}):
        return [grad * (1.0 - tf.square(y))]


@tf.RegisterGradient("GradientHintTestTripledIdentity")
def _tripled_identity_grad(op, grad):
    return [grad * 3.0]


@tf.RegisterGradient("GradientHintTestThroughTripledIdentity")
def _square_grad_through_a_wrong_identity(op, grad):
    with tf.get_default_graph().gradient_override_map(
            {"Identity": "GradientHintTestTripledIdentity"}):
        upstream = tf.identity(grad)
    return [upstream * 2.0 * op.inputs[0]]


def _square(x, gradient):
    with tf.get_default_graph().gradient_override_map({"Square": gradient}):
        return tf.square(x, name="y")


def _failure(y, x, value):
    with pytest.raises(AssertionError) as info:
        check_gradients(y, x, value)
    return str(info.value)


# ---- hints: analytic = c × numeric ---------------------------------------------------------

@pytest.mark.parametrize("gradient, hint", [
    ("GradientHintTestDoubled", "hint: analytic = 2.00 × numeric everywhere: a constant factor "
                                "is off"),
    ("GradientHintTestHalved", "hint: analytic = 0.50 × numeric everywhere: a constant factor "
                               "is off"),
    ("GradientHintTestNegated", "hint: analytic = -1 × numeric everywhere: the sign is flipped"),
    ("GradientHintTestNegatedTripled", "hint: analytic = -3.00 × numeric everywhere: a constant "
                                       "factor (and the sign) is off"),
    ("GradientHintTestZero", "hint: analytic = 0 everywhere: no gradient reaches this input"),
])
def test_a_constant_factor_is_named(sess, gradient, hint):
    x = tf.placeholder(tf.float64, [2, 2], name="x")
    message = _failure(_square(x, gradient), x, [[1.0, -2.0], [0.5, 3.0]])
    assert message.startswith("Gradient check failed for input 'x:0' (shape (2, 2)) of 'y:0'")
    assert message.splitlines()[1] == hint, message


def test_the_hint_holds_in_float32(sess):
    x = tf.placeholder(tf.float32, [4], name="x")
    message = _failure(_square(x, "GradientHintTestNegated"), x, [0.5, 1.0, -2.0, 3.0])
    assert "analytic = -1 × numeric everywhere" in message, message


def test_no_hint_when_the_error_is_not_a_constant_factor(sess):
    x = tf.placeholder(tf.float64, [3], name="x")
    message = _failure(_square(x, "GradientHintTestOffByOne"), x, [1.0, 2.0, 3.0])
    assert "the worst element is d y:0[0] / d x:0[0]" in message
    assert "hint" not in message, message


def test_ratio_hint_needs_zeros_where_numeric_is_zero():
    numerical = np.diag([2.0, 4.0])
    assert gradient_checker.ratio_hint(2 * numerical, numerical, 1e-6, 1e-6) is not None
    off_diagonal = 2 * numerical + np.array([[0.0, 1.0], [0.0, 0.0]])
    assert gradient_checker.ratio_hint(off_diagonal, numerical, 1e-6, 1e-6) is None
    assert gradient_checker.ratio_hint(np.zeros((2, 2)), np.zeros((2, 2)), 1e-6, 1e-6) is None


# ---- inputs named, checker frames hidden ----------------------------------------------------

def test_the_failing_input_is_named_by_its_placeholder(sess):
    a = tf.placeholder(tf.float64, [2], name="weights")
    b = tf.placeholder(tf.float64, [2], name="bias")
    y = tf.identity(a) + _square(b, "GradientHintTestDoubled")
    message = _failure(y, [a, b], [np.ones(2), np.array([1.0, 2.0])])
    assert message.startswith("Gradient check failed for input 'bias:0' (shape (2,))"), message


def test_the_checker_hides_its_frames_from_pytest(sess, gradcheck):
    x = tf.placeholder(tf.float64, [2], name="x")
    y = _square(x, "GradientHintTestDoubled")
    for check in (check_gradients, gradcheck):
        with pytest.raises(AssertionError) as info:
            check(y, x, [1.0, 2.0])
        checker_frames = [entry for entry in info.traceback
                          if entry.path.name in ("gradient_checker.py", "pytest_plugin.py")]
        assert checker_frames, "the failure is raised inside the checker"
        assert all(entry.ishidden(info) for entry in checker_frames)
        shown = [entry for entry in info.traceback if not entry.ishidden(info)]
        assert shown[-1].path.name == pathlib.Path(__file__).name


def _lab_placeholders():
    """Every ``tf.placeholder(...)`` call in the labs' test and solution files."""
    root = pathlib.Path(labs.__file__).parent / labs.LAB_FILES
    for path in sorted(root.glob("*/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "placeholder"):
                yield path, node


def test_every_lab_placeholder_has_a_name():
    calls = list(_lab_placeholders())
    assert len(calls) > 20
    unnamed = ["%s:%d" % (path.name, node.lineno) for path, node in calls
               if not any(keyword.arg == "name" for keyword in node.keywords)]
    assert unnamed == [], "name them, so a failing check says which input: %s" % unnamed


# ---- a gradient of the wrong dtype ---------------------------------------------------------

def test_a_gradient_of_the_wrong_dtype_names_its_op(sess):
    x = tf.placeholder(tf.float64, [3], name="x")
    with pytest.raises(AssertionError) as info:
        check_gradients(_square(x, "GradientHintTestFloat32"), x, [1.0, 2.0, 3.0])
    assert str(info.value) == (
        "The gradient function of op 'y' (type Square, gradient 'GradientHintTestFloat32') "
        "returned gradients/y_grad/Cast:0 of dtype float32 for inputs of dtype float64: a "
        "gradient has its input's dtype")


def test_a_wrong_dtype_deep_inside_names_its_op_not_the_next_one(sess):
    # x gets two gradients, through y (float32) and directly through Mul (float64): their sum
    # is a TypeError of an AddN op, which the checker traces back to y's gradient function.
    x = tf.placeholder(tf.float64, [3], name="x")
    z = tf.multiply(_square(x, "GradientHintTestFloat32"), x, name="z")
    with pytest.raises(AssertionError, match="^The gradient function of op 'y' \\(type Square"):
        check_gradients(z, x, [1.0, 2.0, 3.0])


def test_compute_gradient_says_whose_dtype_is_wrong(sess):
    x = tf.placeholder(tf.float64, [2], name="x")
    with pytest.raises(AssertionError, match="gradient 'GradientHintTestFloat32'"):
        tf.test.compute_gradient(x, [2], _square(x, "GradientHintTestFloat32"), [2])


# ---- gradgradcheck -------------------------------------------------------------------------

RNG = np.random.default_rng(4)


@pytest.mark.parametrize("fn", [tf.tanh, tf.sigmoid, tf.nn.softmax, tf.nn.log_softmax,
                                lambda t: tf.reduce_sum(t * t * t)],
                         ids=["tanh", "sigmoid", "softmax", "log_softmax", "sum_of_cubes"])
def test_gradgradcheck_accepts_builtin_second_derivatives(sess, fn):
    x = tf.placeholder(tf.float64, [2, 3], name="x")
    gradgradcheck(fn(x), x, RNG.normal(size=[2, 3]))


def test_gradgradcheck_of_matmul_checks_both_inputs(sess):
    a = tf.placeholder(tf.float64, [2, 3], name="a")
    b = tf.placeholder(tf.float64, [3, 2], name="b")
    gradgradcheck(tf.tanh(tf.matmul(a, b)), [a, b], [RNG.normal(size=[2, 3]),
                                                     RNG.normal(size=[3, 2])])


def test_gradgradcheck_of_softmax_cross_entropy(sess):
    labels = tf.placeholder(tf.float64, [2, 3], name="labels")
    logits = tf.placeholder(tf.float64, [2, 3], name="logits")
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    gradgradcheck(loss, logits, RNG.normal(size=[2, 3]),
                  extra_feed_dict={labels: np.eye(3)[[0, 2]]})


def test_gradgradcheck_of_a_gather_whose_gradient_is_indexed_slices(sess):
    params = tf.placeholder(tf.float64, [4, 2], name="params")
    gradgradcheck(tf.tanh(tf.gather(params, [0, 2, 2])), params, RNG.normal(size=[4, 2]))


def _tanh(x):
    with tf.get_default_graph().gradient_override_map({"Tanh": "GradientHintTestTanh"}):
        return tf.tanh(x, name="y")


def test_gradgradcheck_catches_a_wrong_second_derivative(sess):
    x = tf.placeholder(tf.float64, [3], name="x")
    y = _tanh(x)
    check_gradients(y, x, [0.5, -1.0, 2.0])  # the first derivative is right
    with pytest.raises(AssertionError) as info:
        gradgradcheck(y, x, [0.5, -1.0, 2.0])
    message = str(info.value)
    assert message.startswith("Second-order gradient check (of d y:0 / d x:0) failed for input "
                              "'x:0' (shape (3,))"), message


def test_gradgradcheck_checks_the_upstream_gradient_too(sess):
    # Square's gradient 2x * id(v) has the right value, but id's gradient says 3.
    x = tf.placeholder(tf.float64, [3], name="x")
    y = _square(x, "GradientHintTestThroughTripledIdentity")
    check_gradients(y, x, [0.5, -1.0, 2.0])
    with pytest.raises(AssertionError) as info:
        gradgradcheck(y, x, [0.5, -1.0, 2.0])
    message = str(info.value)
    assert "failed for input 'gradgradcheck_v:0'" in message
    assert "hint: analytic = 3.00 × numeric everywhere" in message


def test_gradgradcheck_needs_a_fully_defined_y(sess):
    x = tf.placeholder(tf.float64, [None], name="x")
    with pytest.raises(ValueError, match="gradgradcheck needs y with a fully defined shape"):
        gradgradcheck(tf.tanh(x), x, [1.0])


def test_gradgradcheck_fixture(gradgradcheck):
    x = tf.placeholder(tf.float64, [3], name="x")
    gradgradcheck(tf.tanh(x), x, [0.5, -1.0, 2.0])
    with pytest.raises(AssertionError, match="^Second-order gradient check"):
        gradgradcheck(_tanh(x), x, [0.5, -1.0, 2.0])


def test_gradgradcheck_is_exported_next_to_check_gradients():
    assert tf.test.gradgradcheck is gradgradcheck
    assert "gradgradcheck" in tf.test.__all__
