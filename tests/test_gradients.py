"""tf.gradients: structure, aggregation, stop_gradient, overrides, errors, second order."""

import numpy as np
import pytest

import minitf as tf
from minitf.registry import OpDef, get_registry, register_plugin, unregister_plugin, hookimpl
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op


def test_gradient_ops_live_under_gradients_scope(sess):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.reduce_sum(x * x)
    (dx,) = tf.gradients(y, [x])
    assert dx.op.name.startswith("gradients/")
    new_ops = [op for op in tf.get_default_graph().get_operations()
               if op.name.startswith("gradients")]
    assert new_ops and all(op.name.startswith("gradients/") for op in new_ops)
    np.testing.assert_allclose(sess.run(dx, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])
    (dx2,) = tf.gradients(y, x)
    assert dx2.op.name.startswith("gradients_1/")


def test_known_derivatives(sess):
    x = tf.constant(3.0)
    (d,) = tf.gradients(x * x * x + 2.0 * x, x)
    assert sess.run(d) == pytest.approx(3 * 9.0 + 2.0)
    (d,) = tf.gradients(tf.exp(x), x)
    assert sess.run(d) == pytest.approx(np.exp(3.0), rel=1e-6)
    (d,) = tf.gradients(tf.log(x), x)
    assert sess.run(d) == pytest.approx(1 / 3.0)


def test_multiple_consumers_are_summed_with_add_n(sess):
    x = tf.constant(2.0)
    y = tf.add(tf.multiply(x, 3.0), tf.square(x))
    (d,) = tf.gradients(y, x)
    assert sess.run(d) == pytest.approx(3.0 + 4.0)
    assert d.op.type == "AddN" and d.op.name == "gradients/AddN"
    # One contribution from each consumer's gradient scope (TF: <op name>_grad).
    assert sorted(t.op.name.rsplit("/", 1)[0] for t in d.op.inputs) == [
        "gradients/Mul_grad", "gradients/Square_grad"]


def test_each_tensor_gets_one_add_n():
    """An x that is also an op's output is summed once (TF names it gradients/AddN)."""
    x = tf.constant([1.0, 2.0, 3.0])
    (d,) = tf.gradients(x * x, [x])
    add_ns = [op for op in tf.get_default_graph().get_operations() if op.type == "AddN"]
    assert [op.name for op in add_ns] == ["gradients/AddN"]
    assert d.op is add_ns[0]


def test_gradient_of_x_with_respect_to_itself_is_ones(sess):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    (d,) = tf.gradients(x, x)
    np.testing.assert_array_equal(sess.run(d), np.ones([2, 2]))
    (d,) = tf.gradients(x, x, grad_ys=[[[5.0, 6.0], [7.0, 8.0]]])
    np.testing.assert_array_equal(sess.run(d), [[5.0, 6.0], [7.0, 8.0]])


def test_several_ys_and_grad_ys(sess):
    x = tf.constant([1.0, 2.0])
    y1 = x * 2.0
    y2 = x * x
    (d,) = tf.gradients([y1, y2], x, grad_ys=[tf.constant([1.0, 1.0]), tf.constant([0.5, 2.0])])
    np.testing.assert_allclose(sess.run(d), [2.0 + 0.5 * 2.0, 2.0 + 2.0 * 4.0])


def test_unconnected_and_integer_xs_get_none(sess):
    x = tf.constant(1.0)
    z = tf.constant(2.0)
    i = tf.constant(3)
    y = x * 2.0 + tf.cast(i, tf.float32)
    dx, dz, di = tf.gradients(y, [x, z, i])
    assert sess.run(dx) == 2.0
    assert dz is None and di is None


def test_integer_tensors_cut_the_gradient(sess):
    """A path through an integer tensor carries no gradient (TF: None, no error)."""
    x = tf.constant([1.5, 2.5])
    rounded = tf.cast(x, tf.int32)
    assert tf.gradients(rounded, x) == [None]
    assert tf.gradients(tf.cast(rounded, tf.float32), x) == [None]
    (d,) = tf.gradients(tf.cast(rounded, tf.float32) * x, x)
    np.testing.assert_array_equal(sess.run(d), [1.0, 2.0])  # only the direct path


def test_stop_gradient_and_stop_gradients(sess):
    x = tf.constant(2.0)
    y = tf.stop_gradient(x * x) + x
    (d,) = tf.gradients(y, x)
    assert sess.run(d) == 1.0
    a = tf.constant(1.0)
    b = 2.0 * a
    c = 3.0 * b
    da, db = tf.gradients(c, [a, b], stop_gradients=[a, b])
    assert da is None  # as in TF: a is reached only through b, which is held constant
    assert sess.run(db) == 3.0
    (dx,) = tf.gradients(c, [a], stop_gradients=[b])
    assert dx is None
    assert tf.gradients(c, a, stop_gradients=b) == [None]  # one tensor, not a list
    # TF's documented example: the total derivative becomes the partial one.
    da, db = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert sess.run([da, db]) == [1.0, 1.0]
    da, db = tf.gradients(a + b, [a, b])
    assert sess.run([da, db]) == [3.0, 1.0]


def test_second_order_and_hessians(sess):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x * x * x)
    (g,) = tf.gradients(y, x)
    (gg,) = tf.gradients(g, x)
    np.testing.assert_allclose(sess.run(gg), 6.0 * np.array([1.0, 2.0]))
    (h,) = tf.hessians(y, x)
    assert h.shape.as_list() == [2, 2]
    np.testing.assert_allclose(sess.run(h), np.diag([6.0, 12.0]))


def test_hessians_of_a_matrix_have_shape_x_shape_twice(sess):
    value = np.array([[1.0, -2.0], [0.5, 3.0]])
    x = tf.constant(value)
    y = tf.reduce_sum(x * x * x) + x[0, 0] * x[1, 1]
    (h,) = tf.hessians(y, x)
    assert h.shape.as_list() == [2, 2, 2, 2]
    expected = np.diag(6.0 * value.ravel())
    expected[0, 3] = expected[3, 0] = 1.0
    np.testing.assert_allclose(sess.run(h), expected.reshape(2, 2, 2, 2))


def test_gradients_of_variables(sess):
    w = tf.Variable([1.0, 2.0])
    loss = tf.reduce_sum(w * w)
    (dw,) = tf.gradients(loss, w)
    sess.run(w.initializer)
    np.testing.assert_allclose(sess.run(dw), [2.0, 4.0])


def test_register_gradient_and_override_map(sess):
    @tf.RegisterGradient("DoubledIdentityGrad_test")
    def _doubled(op, grad):
        return [2.0 * grad]

    x = tf.constant(3.0)
    with tf.get_default_graph().gradient_override_map({"Identity": "DoubledIdentityGrad_test"}):
        y = tf.identity(x)
    z = tf.identity(x)
    assert sess.run(tf.gradients(y, x)[0]) == 2.0
    assert sess.run(tf.gradients(z, x)[0]) == 1.0
    with pytest.raises(KeyError):
        tf.RegisterGradient("DoubledIdentityGrad_test")(_doubled)


_NO_GRAD = OpDef("NoGradientOp_test", inputs=("x",), shape_fn=unchanged_shape)
_BAD_GRAD = OpDef("BadGradientOp_test", inputs=("x",), shape_fn=unchanged_shape)
_TRIPLE = OpDef("TripleOp_test", inputs=("x",), shape_fn=unchanged_shape)


class _Plugin:
    """A third-party plugin: its ops, kernels and gradients arrive through the hooks."""

    @hookimpl
    def minitf_register_ops(self, registry):
        for op_def in (_NO_GRAD, _BAD_GRAD, _TRIPLE):
            registry.register_op(op_def)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("NoGradientOp_test", "CPU", lambda ctx, x: x)
        registry.register_kernel("BadGradientOp_test", "CPU", lambda ctx, x: x)
        registry.register_kernel("TripleOp_test", "CPU", lambda ctx, x: 3 * x)

    @hookimpl
    def minitf_register_gradients(self, registry):
        registry.register_gradient("BadGradientOp_test", lambda op, grad: [grad, grad])
        registry.register_gradient("TripleOp_test", lambda op, grad: [3.0 * grad])


@pytest.fixture
def plugin():
    p = _Plugin()
    register_plugin(p, name="gradient_test_plugin")
    yield p
    unregister_plugin(p)


def test_a_plugin_op_brings_its_gradient_through_the_hook(plugin, sess):
    x = tf.placeholder(tf.float64, [2, 2], name="x")
    y = apply_op(_TRIPLE, [tf.square(x)], name="triple")
    (dx,) = tf.gradients(y, x)
    assert dx.op.name.startswith("gradients/")
    value = np.array([[1.0, -2.0], [0.5, 3.0]])
    np.testing.assert_allclose(sess.run(dx, {x: value}), 6.0 * value)
    tf.test.check_gradients(y, x, value, session=sess)


def test_missing_gradient_is_lookup_error(plugin):
    x = tf.constant(1.0)
    y = apply_op(_NO_GRAD, [x], name="nograd")
    with pytest.raises(LookupError) as raised:
        tf.gradients(y, x)
    assert str(raised.value) == ("No gradient defined for operation 'nograd' "
                                 "(op type: NoGradientOp_test)")


def test_missing_gradient_off_the_path_is_no_error(plugin, sess):
    """Only ops between xs and ys need a gradient."""
    x = tf.constant(2.0)
    y = x * apply_op(_NO_GRAD, [tf.constant(5.0)], name="nograd")
    (dx,) = tf.gradients(y, x)
    assert sess.run(dx) == 5.0


def test_wrong_number_of_gradients_names_the_op_type(plugin):
    x = tf.constant(1.0)
    y = apply_op(_BAD_GRAD, [x], name="badgrad")
    with pytest.raises(ValueError, match=r"Num gradients 2 generated for op badgrad \(op type: "
                                         r"BadGradientOp_test\) do not match num inputs 1"):
        tf.gradients(y, x)


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("xs", [1.0, [1.0], np.ones(2), "x", None, [tf.float32]],
                         ids=["float", "list of float", "ndarray", "str", "None", "dtype"])
def test_xs_that_are_not_tensors_are_a_type_error(xs):
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="xs must be Tensors or Variables"):
        tf.gradients(x * 2.0, xs)


def test_ys_that_are_not_tensors_are_a_type_error():
    x = tf.constant(1.0)
    with pytest.raises(TypeError, match="ys must be Tensors or Variables"):
        tf.gradients(2.0, x)


@pytest.mark.parametrize("which", ["xs", "ys", "stop_gradients"])
def test_tensors_from_another_graph_are_a_value_error(which):
    x = tf.constant(1.0, name="x")
    with tf.Graph().as_default():
        other = tf.constant(1.0, name="other")
    args = {"ys": x * 2.0, "xs": x, "stop_gradients": None}
    args[which] = other
    with pytest.raises(ValueError, match="must be from the same graph") as raised:
        tf.gradients(**args)
    assert "other:0" in str(raised.value)


@pytest.mark.parametrize("grad_y", [[1.0, 2.0], [[1.0], [2.0]], 1.0],
                         ids=["longer", "rank 2", "scalar"])
def test_grad_ys_of_the_wrong_shape_are_a_value_error(grad_y):
    x = tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"grad_ys\[0\] has shape .* but mul:0 has shape \(3,\)"):
        tf.gradients(x * 2.0, x, grad_ys=[tf.constant(grad_y)])


@pytest.mark.parametrize("dtype", [tf.float64, tf.int32])
def test_grad_ys_of_another_dtype_are_a_type_error(dtype):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(TypeError, match="grad_ys\\[0\\] has dtype %s but mul:0 has dtype float32"
                       % dtype.name):
        tf.gradients(x * 2.0, x, grad_ys=[tf.constant([1, 2], dtype)])


def test_as_many_grad_ys_as_ys():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
        tf.gradients(x * 2.0, x, grad_ys=[1.0, 2.0])


def test_a_gradient_of_the_wrong_shape_names_the_op():
    @tf.RegisterGradient("WrongShapeIdentity_test")
    def _wrong_shape(op, grad):
        return [tf.concat([grad, grad], 0)]

    x = tf.constant([1.0, 2.0])
    with tf.get_default_graph().gradient_override_map({"Identity": "WrongShapeIdentity_test"}):
        y = tf.identity(x, name="wrong")
    with pytest.raises(ValueError, match="Forward operation: wrong. Input index: 0"):
        tf.gradients(y, x)


def test_unconnected_gradients_zero_gives_zeros_of_x(sess):
    """TF1.15's ``unconnected_gradients``: None by default, zeros_like(x) on request."""
    a = tf.constant([1.0, 2.0])
    b = tf.constant([[3.0], [4.0]])
    y = a * 2.0
    assert tf.gradients(y, [a, b])[1] is None
    assert tf.gradients(y, [a, b], unconnected_gradients="none")[1] is None
    da, db = tf.gradients(y, [a, b], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(sess.run(da), [2.0, 2.0])
    np.testing.assert_array_equal(sess.run(db), np.zeros((2, 1)))
    with pytest.raises(ValueError):
        tf.gradients(y, a, unconnected_gradients="sometimes")


def test_aggregation_methods_are_accepted(sess):
    x = tf.constant(3.0)
    for method in (tf.AggregationMethod.ADD_N, tf.AggregationMethod.DEFAULT,
                   tf.AggregationMethod.EXPERIMENTAL_TREE,
                   tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        (dx,) = tf.gradients(x * x + x, x, aggregation_method=method)
        assert sess.run(dx) == 2 * 3.0 + 1


def test_missing_override_gradient_names_the_op_type():
    """TF's message gives the op's own type even when an override map renamed it."""
    x = tf.constant(1.0)
    with tf.get_default_graph().gradient_override_map({"Square": "NoSuchGradient_test"}):
        y = tf.square(x, name="sq")
    with pytest.raises(LookupError) as raised:
        tf.gradients(y, x)
    assert str(raised.value) == "No gradient defined for operation 'sq' (op type: Square)"


def test_duplicate_register_gradient_reports_both_definitions():
    def first(op, grad):
        return [grad]

    def second(op, grad):
        return [grad]

    tf.RegisterGradient("TwiceRegisteredGrad_test")(first)
    with pytest.raises(KeyError) as raised:
        tf.RegisterGradient("TwiceRegisteredGrad_test")(second)
    message = str(raised.value)
    for fn in (first, second):
        assert "%s:%d" % (__file__, fn.__code__.co_firstlineno) in message
