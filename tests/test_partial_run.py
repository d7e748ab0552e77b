"""sess.partial_run_setup / sess.partial_run: one step run over several calls, TF's errors."""

import numpy as np
import pytest

import minitf as tf


@pytest.fixture
def graph():
    """The lecture-deck graph: r1 = a + b, r2 = r1 * c, and a counter ``inc``."""
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    c = tf.placeholder(tf.float32, [], name="c")
    r1 = tf.add(a, b)
    r2 = tf.multiply(r1, c)
    counter = tf.Variable(0.0, name="counter")
    inc = tf.assign_add(counter, 1.0)
    return dict(a=a, b=b, c=c, r1=r1, r2=r2, counter=counter, inc=inc, r3=r2 + inc)


@pytest.fixture
def session(graph):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        yield sess


def test_a_later_call_feeds_what_an_earlier_one_fetched(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"], g["r2"]], [g["a"], g["b"], g["c"]])
    assert isinstance(h, str)
    res = session.partial_run(h, g["r1"], feed_dict={g["a"]: 1, g["b"]: 2})
    assert res == 3.0
    assert session.partial_run(h, g["r2"], feed_dict={g["c"]: res}) == 9.0


def test_ops_run_at_most_once_per_handle(graph, session):
    g = graph
    h = session.partial_run_setup([g["inc"], g["r3"]], [g["a"], g["b"], g["c"]])
    assert session.partial_run(h, g["inc"]) == 1.0
    # r3 = (a + b) * c + inc reuses inc's value: the counter is not incremented again.
    assert session.partial_run(h, g["r3"], {g["a"]: 1, g["b"]: 2, g["c"]: 1}) == 4.0
    assert session.run(g["counter"]) == 1.0
    # A new handle is a new step: the counter moves once more.
    h = session.partial_run_setup([g["r3"]], [g["a"], g["b"], g["c"]])
    assert session.partial_run(h, g["r3"], {g["a"]: 0, g["b"]: 0, g["c"]: 0}) == 2.0


def test_an_intermediate_value_is_kept_for_a_later_fetch(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"], g["r2"], g["r3"], g["inc"]],
                                  [g["a"], g["b"], g["c"]])
    assert session.partial_run(h, g["r2"], {g["a"]: 1, g["b"]: 2, g["c"]: 2}) == 6.0
    assert session.partial_run(h, g["r1"]) == 3.0  # computed by the first call
    assert session.partial_run(h, [g["r3"], g["inc"]]) == [7.0, 1.0]
    assert session.run(g["counter"]) == 1.0


def test_a_control_dependency_that_ran_earlier_is_not_run_again(graph, session):
    g = graph
    with tf.control_dependencies([g["inc"]]):
        y = tf.identity(g["r1"])
    h = session.partial_run_setup([g["inc"], y], [g["a"], g["b"]])
    assert session.partial_run(h, g["inc"]) == 1.0
    assert session.partial_run(h, y, {g["a"]: 1, g["b"]: 2}) == 3.0
    assert session.run(g["counter"]) == 1.0


def test_setup_targets_run_once_their_feeds_are_given(graph, session):
    g = graph
    add_b = tf.assign_add(g["counter"], g["b"])
    h = session.partial_run_setup([g["r1"], add_b.op], [g["a"], g["b"]])
    assert session.run(g["counter"]) == 0.0  # waits for b
    assert session.partial_run(h, g["r1"], {g["a"]: 1, g["b"]: 5}) == 6.0
    assert session.run(g["counter"]) == 5.0
    # A target that needs no feed runs at setup, as TF's executor starts it at once.
    session.partial_run_setup([g["r1"], g["inc"].op], [g["a"], g["b"]])
    assert session.run(g["counter"]) == 6.0


def test_nested_fetches_and_feeds(graph, session):
    g = graph
    h = session.partial_run_setup({"sum": g["r1"], "both": (g["r2"],)}, [g["a"], g["b"], g["c"]])
    assert session.partial_run(h, {"s": g["r1"]}, {(g["a"], g["b"]): (1, 2)}) == {"s": 3.0}
    assert session.partial_run(h, (g["r2"],), {"c:0": 2}) == (6.0,)


def test_feeding_twice_or_fetching_twice_is_invalid(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"], g["r2"]], [g["a"], g["b"], g["c"]])
    session.partial_run(h, g["r1"], {g["a"]: 1, g["b"]: 2})
    with pytest.raises(tf.errors.InvalidArgumentError, match="The feed a:0 has already been fed"):
        session.partial_run(h, g["r2"], {g["a"]: 1, g["c"]: 2})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The fetch Add:0 has already been fetched"):
        session.partial_run(h, g["r1"])
    # Errors of validation leave the handle as it was.
    assert session.partial_run(h, g["r2"], {g["c"]: 2}) == 6.0


def test_tensors_not_declared_in_the_setup_are_invalid(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"], g["r2"]], [g["a"], g["b"]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The feed c:0 was not specified in partial_run_setup"):
        session.partial_run(h, g["r1"], {g["a"]: 1, g["b"]: 2, g["c"]: 3})
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="The fetch AssignAdd:0 was not specified in partial_run_setup"):
        session.partial_run(h, g["inc"], {g["a"]: 1, g["b"]: 2})
    with pytest.raises(RuntimeError, match="requires empty target_list"):
        session.partial_run(h, g["inc"].op)


def test_a_fetch_needing_a_feed_not_given_yet_is_invalid(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"], g["r2"]], [g["a"], g["b"], g["c"]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Fetch c:0 can't be computed from the feeds that have been fed"):
        session.partial_run(h, g["r2"], {g["a"]: 1, g["b"]: 2})
    # That call fed nothing: a and b are still to be given.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Fetch a:0 can't be computed"):
        session.partial_run(h, g["r2"], {g["c"]: 1})


def test_the_handle_is_used_up_when_everything_is_fed_and_fetched(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"]], [g["a"], g["b"], g["c"]])
    session.partial_run(h, g["r1"], {g["a"]: 1, g["b"]: 2})
    assert session.partial_run(h, [], {g["c"]: 0}) == []
    with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup' before"):
        session.partial_run(h, [], {g["c"]: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup' before"):
        session.partial_run("not a handle", g["r1"], {g["a"]: 1})


def test_an_op_failing_ends_the_handle(graph, session):
    g = graph
    check = tf.assert_positive(g["c"], message="c must be positive")
    with tf.control_dependencies([check]):
        ratio = g["r1"] / g["c"]
    h = session.partial_run_setup([ratio, g["r1"]], [g["a"], g["b"], g["c"]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="c must be positive"):
        session.partial_run(h, ratio, {g["a"]: 1, g["b"]: 1, g["c"]: 0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Must run 'setup' before"):
        session.partial_run(h, g["r1"])


def test_bad_values_and_setups(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"]], [g["a"], g["b"]])
    with pytest.raises(ValueError, match="Cannot feed value of shape \\(2,\\) for Tensor 'a:0'"):
        session.partial_run(h, g["r1"], {g["a"]: [1, 2], g["b"]: 2})
    assert session.partial_run(h, g["r1"], {g["a"]: 1, g["b"]: 2}) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match='Endpoint "a:0" fed more than once'):
        session.partial_run_setup([g["r1"]], [g["a"], g["a"]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="a:0 is both fed and fetched"):
        session.partial_run_setup([g["r1"], g["a"]], [g["a"], g["b"]])
    with pytest.raises(TypeError):
        session.partial_run_setup([g["r1"]], [3])
    with pytest.raises(TypeError, match="Fetch argument None"):
        session.partial_run_setup(None, [g["a"]])
    session.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        session.partial_run_setup([g["r1"]], [g["a"]])


def test_an_undeclared_placeholder_fails_when_run(graph, session):
    g = graph
    h = session.partial_run_setup([g["r1"]], [g["a"]])  # b is neither declared nor fed
    with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value for placeholder"):
        session.partial_run(h, g["r1"], {g["a"]: 1})


def test_partial_run_through_a_while_loop_and_variables(session):
    x = tf.placeholder(tf.float32, [3], name="x")
    scale = tf.placeholder(tf.float32, [], name="scale")
    w = tf.Variable(np.arange(3, dtype=np.float32), name="w")
    session.run(w.initializer)
    total = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x * w),
                          [tf.constant(0), tf.zeros([3])])[1]
    scaled = total * scale
    h = session.partial_run_setup([total, scaled], [x, scale])
    np.testing.assert_allclose(session.partial_run(h, total, {x: [1, 1, 1]}), [0, 3, 6])
    np.testing.assert_allclose(session.partial_run(h, scaled, {scale: 2}), [0, 6, 12])


def test_a_fed_reference_tensor_is_read_as_its_value(graph, session):
    g = graph
    doubled = g["inc"] * 2
    plus_one = doubled + 1
    h = session.partial_run_setup([doubled, plus_one], [g["inc"]])
    assert session.partial_run(h, doubled, {g["inc"]: 10.0}) == 20.0
    assert session.partial_run(h, plus_one) == 21.0
    assert session.run(g["counter"]) == 0.0  # the fed assign_add did not run
