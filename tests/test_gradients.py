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
    types = {op.type for op in tf.get_default_graph().get_operations()}
    assert "AddN" in types


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
    assert tf.gradients(y, [x, z, i])[1:] == [None, None]


def test_stop_gradient_and_stop_gradients(sess):
    x = tf.constant(2.0)
    y = tf.stop_gradient(x * x) + x
    (d,) = tf.gradients(y, x)
    assert sess.run(d) == 1.0
    a = tf.constant(1.0)
    b = 2.0 * a
    c = 3.0 * b
    da, db = tf.gradients(c, [a, b], stop_gradients=[a, b])
    assert da is None or sess.run(da) == 0.0  # TF gives None: a is only reached through b
    assert sess.run(db) == 3.0
    (dx,) = tf.gradients(c, [a], stop_gradients=[b])
    assert dx is None


def test_second_order_and_hessians(sess):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x * x * x)
    (g,) = tf.gradients(y, x)
    (gg,) = tf.gradients(g, x)
    np.testing.assert_allclose(sess.run(gg), 6.0 * np.array([1.0, 2.0]))
    (h,) = tf.hessians(y, x)
    assert h.shape.as_list() == [2, 2]
    np.testing.assert_allclose(sess.run(h), np.diag([6.0, 12.0]))


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


class _Plugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(_NO_GRAD)
        registry.register_op(_BAD_GRAD)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("NoGradientOp_test", "CPU", lambda ctx, x: x)
        registry.register_kernel("BadGradientOp_test", "CPU", lambda ctx, x: x)

    @hookimpl
    def minitf_register_gradients(self, registry):
        registry.register_gradient("BadGradientOp_test", lambda op, grad: [grad, grad])


@pytest.fixture
def plugin():
    p = _Plugin()
    register_plugin(p, name="gradient_test_plugin")
    yield p
    unregister_plugin(p)


def test_missing_gradient_is_lookup_error(plugin):
    x = tf.constant(1.0)
    y = apply_op(_NO_GRAD, [x], name="nograd")
    with pytest.raises(LookupError,
                       match=r"No gradient defined for operation 'nograd' \(op type: NoGradientOp_test\)"):
        tf.gradients(y, x)


def test_wrong_number_of_gradients_names_the_op_type(plugin):
    x = tf.constant(1.0)
    y = apply_op(_BAD_GRAD, [x], name="badgrad")
    with pytest.raises(ValueError, match="BadGradientOp_test"):
        tf.gradients(y, x)


def test_bad_inputs():
    x = tf.constant(1.0)
    with pytest.raises(TypeError):
        tf.gradients(x * 2.0, [1.0])
    with pytest.raises(ValueError):
        tf.gradients(x * 2.0, x, grad_ys=[tf.constant([1.0, 2.0])])
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError):
        tf.gradients(x * 2.0, other)
