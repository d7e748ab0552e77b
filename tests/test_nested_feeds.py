"""Nested structures in sess.run: feed_dict keys (TF's nest.flatten_dict_items) and fetches."""

import collections

import numpy as np
import pytest

import minitf as tf

LSTMStateTuple = tf.nn.rnn_cell.LSTMStateTuple
ONES = np.ones([1, 2])
THREES = np.full([1, 2], 3.0)


@pytest.fixture
def state():
    c = tf.placeholder(tf.float32, [None, 2], name="c")
    h = tf.placeholder(tf.float32, [None, 2], name="h")
    return LSTMStateTuple(c, h)


@pytest.mark.parametrize("value", [(ONES, THREES), [ONES, THREES], LSTMStateTuple(ONES, THREES),
                                   {"a": ONES, "b": THREES}])
def test_a_state_tuple_key_takes_a_value_of_the_same_structure(sess, state, value):
    out = state.c + 2 * state.h
    np.testing.assert_array_equal(sess.run(out, {state: value}), [[7.0, 7.0]])


@pytest.mark.parametrize("key, value", [
    (lambda s: (s.c, s.h), (ONES, THREES)),
    (lambda s: ((s.c,), s.h), ((ONES,), THREES)),
    (lambda s: ((s.c,), s.h), (ONES, THREES)),  # only the numbers of leaves must agree
    (lambda s: ("c:0", "h:0"), (ONES, THREES)),
    (lambda s: (s,), ((ONES, THREES),)),
])
def test_nested_keys_are_paired_leaf_by_leaf(sess, state, key, value):
    out = state.c + 2 * state.h
    np.testing.assert_array_equal(sess.run(out, {key(state): value}), [[7.0, 7.0]])


def test_feeding_a_multi_rnn_cell_state_back_in(sess):
    """The TF1 idiom: the final state of one batch is the initial state of the next."""
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(3),
                                        tf.nn.rnn_cell.BasicLSTMCell(3)])
    x = tf.placeholder(tf.float32, [2, 4, 1])
    initial = cell.zero_state(2, tf.float32)
    outputs, final = tf.nn.dynamic_rnn(cell, x, initial_state=initial)
    sess.run(tf.global_variables_initializer())
    xs = np.random.RandomState(0).randn(2, 8, 1).astype(np.float32)
    whole = sess.run(outputs, {x: xs[:, :4]})
    state = sess.run(final, {x: xs[:, :4]})
    assert isinstance(state, tuple) and isinstance(state[1], LSTMStateTuple)
    second = sess.run(outputs, {x: xs[:, 4:], initial: state})
    # The same as one run of the cell over all eight steps.
    static, _ = tf.nn.static_rnn(cell, tf.unstack(tf.constant(xs), axis=1), dtype=tf.float32)
    expected = np.stack(sess.run(static), 1)
    np.testing.assert_allclose(np.concatenate([whole, second], 1), expected, rtol=1e-5)


@pytest.mark.parametrize("value, count", [((ONES,), 1), ((ONES, THREES, THREES), 3),
                                          (np.stack([ONES, THREES]), 1), (3, 1)])
def test_a_value_of_another_structure_is_a_value_error(sess, state, value, count):
    with pytest.raises(ValueError, match="Could not flatten dictionary. Key had 2 elements, but "
                                         "value had %d elements" % count):
        sess.run(state.c, {(state.c, state.h): value})


def test_a_tensor_in_two_keys_is_a_value_error(sess, state):
    with pytest.raises(ValueError, match="Cannot flatten dict because this key is not unique: "
                                         "Tensor\\(\"c:0\""):
        sess.run(state.c, {(state.c, state.h): (ONES, THREES), state.c: ONES})
    with pytest.raises(ValueError, match="this key is not unique"):
        sess.run(state.c, {(state.c, state.c): (ONES, THREES)})


def test_make_callable_with_a_nested_feed(sess, state):
    fn = sess.make_callable(state.c * state.h, [state])
    np.testing.assert_array_equal(fn((ONES, THREES)), [[3.0, 3.0]])


def test_nested_fetches_keep_their_types(sess, state):
    feed = {state: (ONES, THREES)}
    got = sess.run(state, feed)
    assert type(got) is LSTMStateTuple
    np.testing.assert_array_equal(got.h, THREES)
    got = sess.run({"s": [state, (state.c,)]}, feed)
    assert type(got["s"][0]) is LSTMStateTuple and type(got["s"][1]) is tuple
    ordered = sess.run(collections.OrderedDict([("b", state.h), ("a", state.c)]), feed)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    assert sess.run([[], {"a": ()}], feed) == [[], {"a": ()}]
    assert sess.run((), feed) == () and sess.run({}, feed) == {}


def test_a_set_is_not_a_fetch(sess, state):
    with pytest.raises(TypeError, match="Fetch argument .* has invalid type <class 'set'>"):
        sess.run({state.c}, {state: (ONES, THREES)})
