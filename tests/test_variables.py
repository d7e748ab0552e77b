"""``tf.Variable``: its ops, assignments, collections, initialization and operators."""

import numpy as np
import pytest

import minitf as tf


# ---- construction ---------------------------------------------------------------------------
def test_ops_names_shape_and_dtype():
    v = tf.Variable([[1.0, 2.0]], name="v")
    w = tf.Variable(3)
    u = tf.Variable(4.0)
    assert (v.name, w.name, u.name) == ("v:0", "Variable:0", "Variable_1:0")
    assert v.op.type == "VariableV2" and v.op.name == "v"
    assert v.initializer.name == "v/Assign" and v.value().name == "v/read:0"
    assert v.shape.as_list() == [1, 2] and v.get_shape() == v.shape
    assert v.dtype.is_ref and v.dtype.base_dtype == tf.float32 and w.dtype.base_dtype == tf.int32
    assert repr(v) == "<tf.Variable 'v:0' shape=(1, 2) dtype=float32_ref>"
    assert v.graph is tf.get_default_graph()


def test_initial_value_forms(sess):
    a = tf.Variable(np.arange(3, dtype=np.int64), name="a")
    b = tf.Variable(lambda: tf.constant([1.0, 2.0]), name="b")
    c = tf.Variable(tf.zeros_initializer()([2, 2]), name="c")
    d = tf.Variable(2, dtype=tf.float64, name="d")
    assert b.initial_value.op.name == "b/Initializer/Const"
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(a), [0, 1, 2])
    np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(c), np.zeros((2, 2)))
    assert sess.run(d) == 2.0 and sess.run(d).dtype == np.float64


def test_initializers_feed_variables(sess):
    tf.set_random_seed(0)
    v = tf.Variable(tf.random_uniform([1000], -1.0, 1.0), name="v")
    c = tf.Variable(tf.constant_initializer([1, 2, 3, 4])([2, 2]), name="c")
    sess.run(tf.global_variables_initializer())
    value = sess.run(v)
    assert value.min() >= -1.0 and value.max() < 1.0 and value.std() > 0.5
    np.testing.assert_array_equal(sess.run(c), [[1, 2], [3, 4]])


def test_missing_initial_value():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        tf.Variable()


# ---- initialization -------------------------------------------------------------------------
def test_uninitialized_variable_names_itself(sess):
    v = tf.Variable([1.0], name="weights")
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="Attempting to use uninitialized value weights"):
        sess.run(v)
    with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
        sess.run(v + 1.0)
    assert not sess.run(tf.is_variable_initialized(v))
    sess.run(v.initializer)
    assert sess.run(tf.is_variable_initialized(v))


def test_variables_initializer_initializes_only_its_list(sess):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    init = tf.variables_initializer([a])
    assert init.name == "init" and init.type == "NoOp"
    sess.run(init)
    assert sess.run(a) == 1.0
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value b"):
        sess.run(b)
    assert tf.variables_initializer([]).type == "NoOp"


def test_initialize_all_variables_is_global_initializer(sess):
    a = tf.Variable(1.0)
    b = tf.Variable(2.0, trainable=False)
    sess.run(tf.initialize_all_variables())
    assert sess.run([a, b]) == [1.0, 2.0]
    sess.run(tf.initializers.global_variables())


def test_initialized_value_runs_the_initializer_first(sess):
    w = tf.Variable([1.0, 2.0], name="w")
    w2 = tf.Variable(w.initialized_value() * 2.0, name="w2")
    sess.run(w2.initializer)  # w.initializer runs through a control dependency
    np.testing.assert_array_equal(sess.run(w2), [2.0, 4.0])
    np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])


def test_reinitializing_resets_the_value(sess):
    v = tf.Variable(5, name="v")
    sess.run(v.initializer)
    sess.run(v.assign(7))
    sess.run(v.initializer)
    assert sess.run(v) == 5


# ---- collections ----------------------------------------------------------------------------
def test_global_and_trainable_collections():
    a = tf.Variable(1.0, name="layer/a")
    b = tf.Variable(2.0, name="layer/b", trainable=False)
    c = tf.Variable(3.0, name="other/c")
    local = tf.Variable(0, name="step", collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        trainable=False)
    assert tf.global_variables() == [a, b, c]
    assert tf.trainable_variables() == [a, c]
    assert tf.global_variables(scope="layer") == [a, b]
    assert tf.trainable_variables("other") == [c]
    assert tf.local_variables() == [local]
    assert (a.trainable, b.trainable) == (True, False)


# ---- assignments ----------------------------------------------------------------------------
def test_assign_add_sub(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v.assign([5.0, 6.0])), [5.0, 6.0])
    np.testing.assert_array_equal(sess.run(v.assign_add([1.0, 1.0])), [6.0, 7.0])
    np.testing.assert_array_equal(sess.run(v.assign_sub([2.0, 4.0])), [4.0, 3.0])
    np.testing.assert_array_equal(sess.run(tf.assign(v, [0.0, 0.0])), [0.0, 0.0])
    np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 2.0])), [1.0, 2.0])
    np.testing.assert_array_equal(sess.run(tf.assign_sub(v, [1.0, 1.0])), [0.0, 1.0])
    np.testing.assert_array_equal(sess.run(v), [0.0, 1.0])


def test_assign_op_names_and_read_value():
    v = tf.Variable(1.0, name="v")
    assert v.assign(2.0).op.name == "Assign"
    assert v.assign_add(1.0, name="inc").op.name == "inc"
    assert v.assign_sub(1.0, read_value=False).type == "AssignSub"


def test_assign_shape_and_dtype_errors():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        v.assign_add(tf.constant([1, 2]))
    # A Tensor of another dtype is TF's op-construction TypeError for Assign too.
    with pytest.raises(TypeError, match="Input 'value' of 'Assign' Op has type int32"):
        tf.assign(v, tf.constant([1, 2]))
    with pytest.raises(TypeError):
        v.assign(tf.constant([1, 2]))


def test_assign_converts_python_values_to_the_variable_dtype(sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(tf.assign(v, [3, 4])), np.array([3.0, 4.0], np.float32))


def test_values_persist_across_runs_and_not_across_sessions():
    counter = tf.Variable(0, name="counter")
    increment = counter.assign_add(1)
    with tf.Session() as session:
        session.run(counter.initializer)
        assert [session.run(increment) for _ in range(3)] == [1, 2, 3]
        assert session.run(counter) == 3
    with tf.Session() as session:
        with pytest.raises(tf.errors.FailedPreconditionError):
            session.run(counter)


def test_fetched_arrays_are_not_changed_by_later_assignments(sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    before = sess.run(v)
    sess.run(v.assign_add([10.0, 10.0]))
    np.testing.assert_array_equal(before, [1.0, 2.0])


def test_load_and_eval():
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.Session() as session:
        session.run(v.initializer)
        v.load([3.0, 4.0], session)
        np.testing.assert_array_equal(v.eval(session), [3.0, 4.0])
        with session.as_default():
            v.load([5.0, 6.0])
            np.testing.assert_array_equal(v.eval(), [5.0, 6.0])
        assert len(tf.get_default_graph().get_operations()) == 4  # load adds no ops
    with pytest.raises(ValueError, match="session"):
        v.load([1.0, 1.0])


# ---- using a variable as a tensor ------------------------------------------------------------
def test_operators_read_the_value(sess):
    v = tf.Variable([2.0, 4.0], name="v")
    sess.run(v.initializer)
    results = sess.run([v + 1.0, 1.0 + v, v - 1.0, 10.0 - v, v * 3.0, v / 2.0, -v, v[1], v > 3.0])
    expected = [[3, 5], [3, 5], [1, 3], [8, 6], [6, 12], [1, 2], [-2, -4], 4.0, [False, True]]
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)
    assert (v + 1.0).op.inputs[0] is v.value()


def test_variable_converts_to_its_read_tensor(sess):
    v = tf.Variable(3.0, name="v")
    t = tf.convert_to_tensor(v)
    assert t is v.value() and t.dtype == tf.float32
    sess.run(v.initializer)
    assert sess.run(tf.identity(v)) == 3.0


def test_read_value_is_a_fresh_read(sess):
    v = tf.Variable(1.0, name="v")
    read = v.read_value()
    assert read.op.type == "Identity" and read is not v.value()
    sess.run(v.initializer)
    assert sess.run(read) == 1.0


def test_variable_is_not_iterable():
    v = tf.Variable([1.0])
    with pytest.raises(TypeError):
        iter(v)


def test_a_variable_is_truthy_like_tf1_ref_variables():
    # TF1's RefVariable defines no __bool__: ``if v:`` asks whether v exists.
    v = tf.Variable(0.0)
    assert bool(v) is True
    with pytest.raises(TypeError):
        bool(v.value())  # a Tensor, in contrast, refuses


def test_reads_under_control_dependencies_see_the_assignment(sess):
    # The TF1 idiom: ``with tf.control_dependencies([assign]): tf.identity(v)``.
    v = tf.Variable(0.0)
    assign = tf.assign(v, 5.0)
    with tf.control_dependencies([assign]):
        via_identity = tf.identity(v)
        via_operator = v + 0.0
    sess.run(v.initializer)
    assert sess.run(via_identity) == 5.0
    sess.run(v.initializer)
    assert sess.run(via_operator) == 5.0


def test_identity_of_a_variable_carries_the_control_inputs(sess):
    # TF1: tf.identity(v) under control_dependencies([op]) is an Identity whose
    # control_inputs are [op] (not those of a hidden read op).
    v = tf.Variable(0.0, name="v")
    assign = tf.assign(v, 5.0)
    with tf.control_dependencies([assign]):
        y = tf.identity(v, name="y")
    assert y.op.type == "Identity" and y.op.name == "y"
    assert y.op.control_inputs == [assign.op]
    assert y.dtype == tf.float32
    plain = tf.identity(v)
    assert plain.op.control_inputs == [] and plain.op.inputs[0].name == "v/read:0"
    sess.run(v.initializer)
    assert sess.run(y) == 5.0


def test_report_uninitialized_variables(sess):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    report = tf.report_uninitialized_variables()
    assert sorted(sess.run(report).tolist()) == [b"a", b"b"]
    sess.run(a.initializer)
    assert sess.run(report).tolist() == [b"b"]
