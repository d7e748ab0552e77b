"""``tf.variable_scope`` / ``tf.get_variable``: naming, sharing, inheritance and
TF1's error messages (checked against TensorFlow 1.x behaviour)."""

import re

import numpy as np
import pytest

import minitf as tf


def initial_value(sess, var):
    sess.run(var.initializer)
    return sess.run(var)


# ---- names ----------------------------------------------------------------------------------
def test_names_and_name_scope():
    with tf.variable_scope("conv1") as scope:
        w = tf.get_variable("weights", [3, 4])
        c = tf.constant(1.0, name="c")
        with tf.variable_scope("inner"):
            b = tf.get_variable("bias", [4])
    assert (w.name, b.name, c.name) == ("conv1/weights:0", "conv1/inner/bias:0", "conv1/c:0")
    assert scope.name == "conv1" and scope.original_name_scope == "conv1/"
    assert scope.reuse is False
    assert w.op.type == "VariableV2" and w.shape.as_list() == [3, 4]
    assert w.dtype.is_ref and w.dtype.base_dtype == tf.float32


def test_name_scope_does_not_prefix_variables():
    with tf.name_scope("ns"):
        v = tf.get_variable("v", [1])
        c = tf.constant(0.0, name="c")
    assert v.name == "v:0" and c.name == "ns/c:0"


def test_root_scope():
    scope = tf.get_variable_scope()
    assert isinstance(scope, tf.VariableScope)
    assert (scope.name, scope.original_name_scope, scope.reuse) == ("", "", False)


def test_reentering_scope_object_keeps_variable_prefix_but_new_name_scope():
    with tf.variable_scope("conv1") as scope:
        pass
    with tf.variable_scope("other"):
        with tf.variable_scope(scope) as again:
            v = tf.get_variable("w", [1])
            c = tf.constant(0.0, name="c")
            with tf.variable_scope("sub") as sub:
                d = tf.constant(0.0, name="d")
    assert v.name == "conv1/w:0"          # the scope's name, not other/conv1
    assert c.name == "other/conv1/c:0"    # a name scope opened where we are
    assert again.original_name_scope == "conv1/"
    assert sub.name == "conv1/sub" and d.name == "other/conv1/sub/d:0"


def test_reopening_by_name_uniquifies_the_name_scope():
    with tf.variable_scope("conv1"):
        tf.get_variable("w", [1])
    with tf.variable_scope("conv1", reuse=True) as scope:
        c = tf.constant(0.0, name="c")
    assert c.name == "conv1_1/c:0" and scope.original_name_scope == "conv1_1/"


def test_default_name_made_unique():
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="layer") as scope:
            names.append((scope.name, tf.get_variable("w", [1]).name))
    assert names == [("layer", "layer/w:0"), ("layer_1", "layer_1/w:0")]


def test_default_names_restart_when_the_parent_is_reopened():
    for _ in range(2):
        with tf.variable_scope("rnn", reuse=tf.AUTO_REUSE):
            with tf.variable_scope(None, default_name="cell") as scope:
                tf.get_variable("w", [1])
        assert scope.name == "rnn/cell"
    assert len(tf.global_variables()) == 1


def test_auxiliary_name_scope_false():
    with tf.name_scope("outer"):
        with tf.variable_scope("vs", auxiliary_name_scope=False) as scope:
            c = tf.constant(0.0, name="c")
            v = tf.get_variable("v", [1])
    assert c.name == "outer/c:0" and v.name == "vs/v:0"
    assert scope.original_name_scope == "outer/"


def test_initializer_ops_live_under_the_variable():
    w = tf.get_variable("w", [5, 5])
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert "w/Initializer/random_uniform/RandomUniform" in names
    assert names[-3:] == ["w", "w/Assign", "w/read"]
    assert w.initial_value.op.name == "w/Initializer/random_uniform"


# ---- reuse ------------------------------------------------------------------------------------
def test_reuse_true_returns_the_same_variable():
    with tf.variable_scope("conv1"):
        w = tf.get_variable("weights", [3, 4])
    with tf.variable_scope("conv1", reuse=True):
        assert tf.get_variable("weights", [3, 4]) is w
        assert tf.get_variable("weights") is w  # shape may be omitted when reusing
    assert tf.global_variables() == [w]


def test_reuse_variables_on_the_current_scope():
    with tf.variable_scope("tower") as scope:
        w = tf.get_variable("w", [2])
        scope.reuse_variables()
        assert scope.reuse is True
        assert tf.get_variable("w", [2]) is w


def test_auto_reuse():
    assert repr(tf.AUTO_REUSE) == "<_ReuseMode.AUTO_REUSE: 1>"
    for _ in range(3):
        with tf.variable_scope("a", reuse=tf.AUTO_REUSE):
            x = tf.get_variable("x", [2])
    assert [v.name for v in tf.global_variables()] == ["a/x:0"]
    assert x.name == "a/x:0"


def test_reuse_is_inherited_and_cannot_be_switched_off():
    with tf.variable_scope("a"):
        with tf.variable_scope("b"):
            w = tf.get_variable("w", [1])
    with tf.variable_scope("a", reuse=True):
        with tf.variable_scope("b") as inner:
            assert inner.reuse is True
            assert tf.get_variable("w") is w
        with tf.variable_scope("b", reuse=False) as still:
            assert still.reuse is True


def test_reentered_scope_object_keeps_its_own_reuse():
    with tf.variable_scope("s") as scope:
        pass
    with tf.variable_scope("r", reuse=True):
        with tf.variable_scope(scope) as again:
            assert again.reuse is False
        with tf.variable_scope(scope, reuse=True) as again:
            assert again.reuse is True


def test_existing_variable_without_reuse_is_an_error():
    with tf.variable_scope("conv1"):
        tf.get_variable("weights", [3, 4])
        with pytest.raises(ValueError) as info:
            tf.get_variable("weights", [3, 4])
    message = str(info.value)
    assert message.startswith(
        "Variable conv1/weights already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope?")
    assert "Originally defined at" in message and "test_variable_scope.py" in message


def test_missing_variable_with_reuse_is_an_error():
    with tf.variable_scope("conv1", reuse=True):
        with pytest.raises(ValueError, match=re.escape(
                "Variable conv1/weights does not exist, or was not created with "
                "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")):
            tf.get_variable("weights", [3, 4])


def test_sharing_with_another_shape_or_dtype_is_an_error():
    with tf.variable_scope("conv1"):
        tf.get_variable("weights", [3, 4])
    with tf.variable_scope("conv1", reuse=True):
        with pytest.raises(ValueError, match=re.escape(
                "Trying to share variable conv1/weights, but specified shape (3, 5) and found "
                "shape (3, 4).")):
            tf.get_variable("weights", [3, 5])
        with pytest.raises(ValueError, match=re.escape(
                "Trying to share variable conv1/weights, but specified dtype int32 and found "
                "dtype float32.")):
            tf.get_variable("weights", [3, 4], dtype=tf.int32)


# ---- initializers and dtypes -----------------------------------------------------------------
def test_default_initializer_is_glorot_uniform(sess):
    w = tf.get_variable("w", [300, 100])
    value = initial_value(sess, w)
    limit = np.sqrt(6.0 / (300 + 100))
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.95 * limit
    assert abs(value.var() - limit ** 2 / 3) < 0.05 * limit ** 2


@pytest.mark.parametrize("dtype, zero", [(tf.int32, 0), (tf.int64, 0), (tf.bool, False),
                                         (tf.string, b"")])
def test_default_initializer_for_other_types_is_zeros(sess, dtype, zero):
    v = tf.get_variable("v", [2, 3], dtype=dtype)
    assert v.dtype.base_dtype == dtype
    np.testing.assert_array_equal(initial_value(sess, v), np.full((2, 3), zero))
    assert v.initial_value.op.name == "v/Initializer/zeros"


def test_scope_initializer_and_dtype_are_inherited(sess):
    with tf.variable_scope("outer", initializer=tf.constant_initializer(0.5), dtype=tf.float64):
        with tf.variable_scope("inner"):
            z = tf.get_variable("z", [2])
            o = tf.get_variable("o", [2], initializer=tf.ones_initializer())
        with tf.variable_scope("other", initializer=tf.zeros_initializer()):
            y = tf.get_variable("y", [2])
    assert z.dtype.base_dtype == tf.float64
    np.testing.assert_array_equal(initial_value(sess, z), [0.5, 0.5])
    np.testing.assert_array_equal(initial_value(sess, o), [1.0, 1.0])
    np.testing.assert_array_equal(initial_value(sess, y), [0.0, 0.0])
    w = tf.get_variable("w", [2])  # outside: back to glorot, float32
    assert w.dtype.base_dtype == tf.float32


def test_scope_setters(sess):
    with tf.variable_scope("s") as scope:
        scope.set_initializer(tf.ones_initializer())
        scope.set_dtype(tf.float64)
        v = tf.get_variable("v", [2])
    assert v.dtype.base_dtype == tf.float64
    np.testing.assert_array_equal(initial_value(sess, v), [1.0, 1.0])


def test_initializer_class_is_instantiated(sess):
    v = tf.get_variable("v", [3], initializer=tf.ones_initializer)
    np.testing.assert_array_equal(initial_value(sess, v), [1.0, 1.0, 1.0])


def test_initial_value_as_python_value_or_ndarray(sess):
    a = tf.get_variable("a", initializer=[1, 2])
    b = tf.get_variable("b", initializer=np.ones((2, 2)))
    c = tf.get_variable("c", initializer=tf.constant([1.5]))
    d = tf.get_variable("d", initializer=lambda: tf.constant([7.0, 8.0]))
    assert a.dtype.base_dtype == tf.int32 and b.dtype.base_dtype == tf.float64
    assert a.shape.as_list() == [2] and b.shape.as_list() == [2, 2]
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(a), [1, 2])
    np.testing.assert_array_equal(sess.run(c), [1.5])
    np.testing.assert_array_equal(sess.run(d), [7.0, 8.0])


def test_initializer_errors():
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        tf.get_variable("a", [2], initializer=[1.0, 2.0])
    with pytest.raises(ValueError, match="Initializer type .* and explicit dtype .* don't match"):
        tf.get_variable("b", initializer=[1.0, 2.0], dtype=tf.int32)
    with pytest.raises(ValueError, match="did not get an initializer, so its `shape`"):
        tf.get_variable("c")
    with pytest.raises(ValueError, match=re.escape("Shape of a new variable (d) must be fully")):
        tf.get_variable("d", [None, 3])
    with pytest.raises(ValueError, match="but instead was <unknown>"):
        tf.get_variable("d", initializer=tf.zeros_initializer())
    assert tf.global_variables() == []


# ---- collections, regularizers, getters ---------------------------------------------------------
def test_trainable_and_collections():
    w = tf.get_variable("w", [1])
    frozen = tf.get_variable("frozen", [1], trainable=False)
    local = tf.get_variable("local", [1], collections=[tf.GraphKeys.LOCAL_VARIABLES],
                            trainable=False)
    assert tf.global_variables() == [w, frozen]
    assert tf.trainable_variables() == [w]
    assert tf.local_variables() == [local]


def test_scope_collections():
    with tf.variable_scope("a") as a:
        w = tf.get_variable("w", [1])
    with tf.variable_scope("ab"):
        tf.get_variable("w", [1])
    assert a.global_variables() == [w] and a.trainable_variables() == [w]
    assert a.local_variables() == []


def test_regularizer_adds_a_loss():
    with tf.variable_scope("layer", regularizer=lambda v: tf.identity(v, name="l2")):
        w = tf.get_variable("w", [2])
        b = tf.get_variable("b", [2], regularizer=lambda v: None)
    losses = tf.get_default_graph().get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [loss.name for loss in losses] == ["layer/w/Regularizer/l2:0"]
    assert losses[0].op.inputs[0] is w.value() and b.name == "layer/b:0"


def test_custom_getters_nest():
    calls = []

    def outer_getter(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner_getter(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("s", custom_getter=outer_getter):
        with tf.variable_scope("t", custom_getter=inner_getter):
            v = tf.get_variable("v", [1])
    assert calls == [("inner", "s/t/v"), ("outer", "s/t/v")]
    assert v.name == "s/t/v:0" and tf.trainable_variables() == []


def test_store_is_per_graph():
    tf.get_variable("w", [1])
    assert len(tf.get_default_graph().get_collection(("__variable_store",))) == 1
    with tf.Graph().as_default():
        assert tf.get_variable("w", [1]).name == "w:0"  # no clash: another store


def test_values_pick_the_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("s", values=[x]):
        v = tf.get_variable("v", [1])
    assert v.graph is graph


def test_variable_scope_argument_errors():
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        tf.variable_scope(None)
    with pytest.raises(TypeError, match="must be a string or VariableScope"):
        tf.variable_scope(3)
    with pytest.raises(ValueError, match="The reuse parameter must be True or False or None."):
        tf.variable_scope("x", reuse="yes")
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass


def test_scope_is_restored_after_an_exception():
    with pytest.raises(RuntimeError):
        with tf.variable_scope("broken"):
            raise RuntimeError("boom")
    assert tf.get_variable_scope().name == ""
    assert tf.constant(0.0, name="c").name == "c:0"
