"""``tf.py_func``: a Python function run by the op's kernel, with TF's checks and errors."""

import numpy as np
import pytest

import minitf as tf


def test_one_output(sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(lambda a: a * 2, [x], tf.float32)
    assert isinstance(y, tf.Tensor) and y.op.type == "PyFunc" and y.shape.ndims is None
    assert y.op.get_attr("token").startswith("pyfunc_")
    np.testing.assert_array_equal(sess.run(y, {x: [1, 2, 3]}), [2, 4, 6])


def test_several_outputs_and_what_the_function_receives(sess):
    seen = []

    def func(scalar, text, vector, texts):
        seen.append([type(scalar), type(text), vector.dtype, texts.dtype])
        return np.float32(scalar) + 1, [b"a", b"bc"], vector[::-1]
    outputs = tf.py_func(func, [tf.constant(1.0), tf.constant("ab"), tf.constant([1, 2]),
                                tf.constant(["a"])], [tf.float32, tf.string, tf.int32])
    assert isinstance(outputs, list) and [t.dtype for t in outputs] == [tf.float32, tf.string,
                                                                       tf.int32]
    first, strings, reversed_ = sess.run(outputs)
    assert first == 2.0 and strings.tolist() == [b"a", b"bc"] and reversed_.tolist() == [2, 1]
    assert seen == [[np.float32, bytes, np.int32, object]]  # as TF passes them


def test_no_outputs_returns_the_operation_and_runs_for_its_effect(sess):
    calls = []
    op = tf.py_func(lambda a: calls.append(a), [tf.constant(5)], [])
    assert isinstance(op, tf.Operation)
    sess.run(op)
    sess.run(op)
    assert calls == [5, 5]  # stateful: runs every time


def test_stateful_and_stateless_ops():
    x = tf.constant(1.0)
    assert tf.py_func(np.exp, [x], tf.float32, stateful=False).op.type == "PyFuncStateless"
    assert tf.numpy_function(np.exp, [x], tf.float32).op.type == "PyFunc"


@pytest.mark.parametrize("raised, error_class", [
    (ValueError("bad value"), tf.errors.InvalidArgumentError),
    (TypeError("bad type"), tf.errors.InvalidArgumentError),
    (StopIteration(), tf.errors.OutOfRangeError),
    (NotImplementedError("later"), tf.errors.UnimplementedError),
    (RuntimeError("boom"), tf.errors.UnknownError),
])
def test_exceptions_become_tf_errors(sess, raised, error_class):
    def func(a):
        raise raised
    y = tf.py_func(func, [tf.constant(1.0)], tf.float32, name="failing")
    with pytest.raises(error_class, match=type(raised).__name__) as info:
        sess.run(y)
    assert info.value.op is y.op


def test_results_are_checked_against_tout(sess):
    x = tf.constant([1.0, 2.0])
    wrong_dtype = tf.py_func(lambda a: np.float64(1.0), [x], tf.float32)
    too_many = tf.py_func(lambda a: (a, a), [x], tf.float32)
    too_few = tf.py_func(lambda a: a, [x], [tf.float32, tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="0-th value returned by pyfunc_\\d+ is double, but expects float"):
        sess.run(wrong_dtype)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="returns 2 values, but expects to see 1 values"):
        sess.run(too_many)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="returns 1 values, but expects to see 2 values"):
        sess.run(too_few[0])
    text = tf.py_func(lambda a: "caf\u00e9", [x], tf.string)  # str becomes UTF-8 bytes
    assert sess.run(text) == "caf\u00e9".encode()


def test_no_gradient_unless_overridden(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.py_func(np.square, [x], tf.float32)
    assert tf.gradients(y, x) == [None]

    @tf.RegisterGradient("PyFuncSquareGrad")
    def _square_grad(op, grad):
        return [grad * 2.0 * op.inputs[0]]
    with tf.get_default_graph().gradient_override_map({"PyFunc": "PyFuncSquareGrad"}):
        z = tf.py_func(np.square, [x], tf.float32)
    z.set_shape([2])
    grad = tf.gradients(tf.reduce_sum(z), x)[0]
    np.testing.assert_array_equal(sess.run(grad, {x: [1.0, 3.0]}), [2.0, 6.0])


def test_inside_a_dataset_map(sess):
    dataset = tf.data.Dataset.from_tensor_slices(np.array([1, 2, 3], np.int64))
    dataset = dataset.map(lambda v: tf.py_func(lambda a: a * 10, [v], tf.int64))
    element = dataset.make_one_shot_iterator().get_next()
    assert [sess.run(element) for _ in range(3)] == [10, 20, 30]


def test_an_imported_graph_has_no_function():
    graph = tf.Graph()
    with graph.as_default():
        tf.py_func(lambda: np.float32(1), [], tf.float32, name="f")
    imported = tf.Graph()
    with imported.as_default():
        tf.import_graph_def(graph.as_graph_def(), name="")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="Could not find callback"):
            sess.run("f:0")
