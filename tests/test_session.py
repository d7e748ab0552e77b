"""Session.run: fetch structures, feeds, pruning, the plan cache, lifetime, errors."""

import collections

import numpy as np
import pytest

import minitf as tf
from minitf.registry import register_plugin, unregister_plugin
from tests import plugin_fixtures
from tests.plugin_fixtures import TestPlugin, counting_identity


@pytest.fixture
def counting():
    plugin = TestPlugin()
    register_plugin(plugin, name="counting_plugin")
    plugin_fixtures.CALLS.clear()
    yield plugin_fixtures.CALLS
    unregister_plugin(plugin)


def test_single_fetch_returns_numpy(sess):
    c = tf.constant([1.0, 2.0]) + 1.0
    out = sess.run(c)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [2.0, 3.0])
    assert sess.run(tf.constant(3)) == 3


def test_nested_fetch_structures(sess):
    Pair = collections.namedtuple("Pair", "a b")
    a = tf.constant(1)
    b = tf.constant(2.0)
    op = tf.no_op()
    out = sess.run({"x": [a, (b, op)], "p": Pair(a, b), "n": collections.OrderedDict(z=a)})
    assert out["x"][0] == 1 and out["x"][1][0] == 2.0 and out["x"][1][1] is None
    assert isinstance(out["x"][1], tuple) and isinstance(out["x"], list)
    assert isinstance(out["p"], Pair) and out["p"] == (1, 2.0)
    assert isinstance(out["n"], collections.OrderedDict) and out["n"]["z"] == 1
    assert sess.run(op) is None
    assert sess.run([a, a]) == [1, 1]


def test_fetch_by_name_and_variable(sess):
    c = tf.constant(5.0, name="five")
    v = tf.Variable(7.0, name="v")
    sess.run(tf.global_variables_initializer())
    assert sess.run("five:0") == 5.0
    assert sess.run(["five:0", v]) == [5.0, 7.0]
    assert sess.run("five") is None  # an operation name runs the op


def test_feeds(sess):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x + 1.0
    z = tf.identity(y)
    np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[2, 3]])
    np.testing.assert_array_equal(sess.run(y, {"x:0": np.ones((3, 2))}), np.full((3, 2), 2))
    # Any tensor can be fed, not only placeholders: feeding y cuts the graph there.
    np.testing.assert_array_equal(sess.run(z, {y: [[10, 10]]}), [[10, 10]])
    # A fed tensor can be fetched: its value is the fed value.
    np.testing.assert_array_equal(sess.run(y, {y: [[4, 4]]}), [[4, 4]])


def test_feed_errors(sess):
    x = tf.placeholder(tf.float32, [2], name="x")
    i = tf.placeholder(tf.int32, [], name="i")
    y = x + 1.0
    with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor 'x:0', "
                                         r"which has shape '\(2,\)'"):
        sess.run(y, {x: [1, 2, 3]})
    assert sess.run(i + 1, {i: 1.5}) == 2  # TF1 truncates like np.asarray(1.5, np.int32)
    with pytest.raises(TypeError):
        sess.run(i + 1, {i: 2 ** 40})  # but an int that does not fit is an error
    with pytest.raises(ValueError, match="could not convert string"):
        sess.run(y, {x: ["a", "b"]})  # TF1: np.asarray(["a", "b"], np.float32) raises ValueError
    with pytest.raises(TypeError):
        sess.run(y, {x: tf.constant([1.0, 2.0])})
    with pytest.raises(TypeError):
        sess.run(y, {"x": [1.0, 2.0]})  # an op name is not a tensor
    with pytest.raises(TypeError):
        sess.run(y, {3: [1.0, 2.0]})
    g = tf.Graph()
    with g.as_default():
        other = tf.placeholder(tf.float32)
    with pytest.raises(TypeError, match="not an element of this graph"):
        sess.run(y, {other: 1.0, x: [1, 2]})  # TF's class for a key of another graph
    assert sess.run(i + 1, {i: np.int64(4)}) == 5  # a lossless conversion is fine


def test_unfed_placeholder_names_it_and_its_origin(sess):
    x = tf.placeholder(tf.float32, [3], name="images")
    y = x + 1.0
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y)
    message = str(info.value)
    assert "images" in message and "float32" in message and "[3]" in message
    assert "test_session.py:" in message
    assert info.value.op is x.op


def test_uninitialized_variable(sess):
    v = tf.Variable([1.0], name="weights")
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights"):
        sess.run(v + 1.0)
    with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
        sess.run(v)
    assert not sess.run(tf.is_variable_initialized(v))
    sess.run(v.initializer)
    assert sess.run(tf.is_variable_initialized(v))


def test_fetch_errors(sess):
    with pytest.raises(TypeError):
        sess.run(3)
    with pytest.raises(TypeError):
        sess.run([tf.constant(1), object()])
    with pytest.raises(TypeError):
        sess.run(None)
    g = tf.Graph()
    with g.as_default():
        other = tf.constant(1)
    with pytest.raises(ValueError):
        sess.run(other)
    with pytest.raises(ValueError):
        sess.run("missing:0")


def test_pruning_runs_only_what_fetches_need(counting, sess):
    a = counting_identity(tf.constant(1.0), "a")
    b = counting_identity(tf.constant(2.0), "b")
    c = counting_identity(a + 1.0, "c")
    unfed = tf.placeholder(tf.float32)
    d = counting_identity(unfed + b, "d")  # an unfed placeholder in another branch
    assert sess.run(c) == 2.0
    assert counting == {"a": 1, "c": 1}
    sess.run(b)
    assert counting == {"a": 1, "b": 1, "c": 1}
    # Feeding a cuts the graph: the op producing `a` does not run.
    sess.run(c, {a: 10.0})
    assert counting == {"a": 1, "b": 1, "c": 2}
    assert sess.run(d, {unfed: 1.0}) == 3.0
    assert counting == {"a": 1, "b": 2, "c": 2, "d": 1}


def test_control_dependencies_run_first(counting, sess):
    a = counting_identity(tf.constant(1.0), "a")
    with tf.control_dependencies([a]):
        out = tf.identity(tf.constant(2.0))
    assert sess.run(out) == 2.0
    assert counting == {"a": 1}


def test_plan_is_cached_per_signature(sess):
    x = tf.placeholder(tf.float32)
    y = x + 1.0
    def compiled():
        return len({id(r) for r in sess._runners.values()})
    sess.run(y, {x: 1.0})
    assert compiled() == 1
    for value in range(5):
        assert sess.run(y, {x: float(value)}) == value + 1
    sess.run([y], {x: 1.0})
    sess.run([y], {x: 2.0})  # a new list object with the same structure: same plan
    assert compiled() == 2


@pytest.mark.parametrize("read", [
    lambda v: v, lambda v: v.read_value(), lambda v: tf.identity(v),
    lambda v: tf.reshape(v, [-1]), lambda v: v[0], lambda v: tf.transpose(v)])
def test_writing_into_a_fetched_array_leaves_the_variable_alone(sess, read):
    """The fetched array is the caller's own, even when the kernel returned the
    variable's buffer or a view of it (TF hands out copies)."""
    initial = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    v = tf.Variable(initial)
    sess.run(v.initializer)
    fetched = sess.run(read(v))
    fetched[...] = 99.0
    np.testing.assert_array_equal(sess.run(v), initial)


def test_variables_persist_across_runs(sess):
    v = tf.Variable(0, name="counter")
    inc = tf.assign_add(v, 1)
    sess.run(tf.global_variables_initializer())
    for expected in (1, 2, 3):
        assert sess.run(inc) == expected
    assert sess.run(v) == 3
    fetched = sess.run(v)
    sess.run(inc)
    assert fetched == 3  # a fetched value never changes afterwards
    with tf.Session() as other:  # state is per session
        other.run(v.initializer)
        assert other.run(v) == 0


def test_assign_semantics(sess):
    v = tf.Variable([1.0, 2.0])
    sess.run(v.initializer)
    assert list(sess.run(tf.assign(v, [5.0, 6.0]))) == [5.0, 6.0]
    assert list(sess.run(tf.assign_sub(v, [1.0, 1.0]))) == [4.0, 5.0]
    with pytest.raises(ValueError):
        tf.assign(v, [1.0, 2.0, 3.0])
    w = tf.Variable([1.0], validate_shape=False)
    sess.run(w.initializer)
    sess.run(tf.assign(w, [1.0, 2.0, 3.0], validate_shape=False))
    assert sess.run(w).shape == (3,)


def test_run_after_close(sess):
    c = tf.constant(1)
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(c)
    sess.close()  # closing twice is harmless


def test_default_session_eval_and_run():
    c = tf.constant(4.0)
    v = tf.Variable(1.0)
    with pytest.raises(ValueError, match="default session"):
        c.eval()
    with tf.Session() as s:
        assert tf.get_default_session() is s
        v.initializer.run()
        assert c.eval() == 4.0 and v.eval() == 1.0
    assert tf.get_default_session() is None
    s2 = tf.Session()
    with s2.as_default():
        assert c.eval() == 4.0
    assert c.eval(session=s2) == 4.0
    s2.close()


def test_interactive_session():
    c = tf.constant(2.0) + 1.0
    s = tf.InteractiveSession()
    try:
        assert c.eval() == 3.0
    finally:
        s.close()
    assert tf.get_default_session() is None


def test_session_on_other_graph():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(2)
    with tf.Session(graph=g) as s:
        assert s.graph is g and s.run(c) == 2
    with pytest.raises(ValueError):
        c.eval(session=tf.Session())


def test_make_callable(sess):
    x = tf.placeholder(tf.float32)
    f = sess.make_callable(x + 1.0, [x])
    assert f(1.0) == 2.0 and f(2.0) == 3.0


def test_kernel_failure_becomes_located_op_error(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    x = tf.placeholder(tf.float32, name="x")
    bad = tf.assign(v, x, validate_shape=True)
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(bad, {x: [1.0, 2.0, 3.0]})
    assert "Assign" in str(info.value) and "test_session.py:" in str(info.value)
    assert sess.run(v).tolist() == [1.0, 2.0]  # nothing lost


def test_list_devices_and_config():
    config = tf.ConfigProto(device_count={"CPU": 2, "GPU": 0}, log_device_placement=False)
    with tf.Session(config=config) as s:
        names = [d.name for d in s.list_devices()]
    assert names == ["/job:localhost/replica:0/task:0/device:CPU:0",
                     "/job:localhost/replica:0/task:0/device:CPU:1"]


def test_explicit_missing_device(sess):
    with tf.device("/device:GPU:3"):
        c = tf.constant(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:0"):
        sess.run(c)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as soft:
        assert soft.run(c) == 1.0


def test_log_device_placement(capsys):
    c = tf.add(tf.constant(1.0), 2.0, name="sum")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as s:
        s.run(c)
    err = capsys.readouterr().err
    assert "sum: (Add): /job:localhost/replica:0/task:0/device:CPU:0" in err


@pytest.mark.parametrize("config", [
    tf.ConfigProto(), tf.ConfigProto(inter_op_parallelism_threads=4),
    tf.ConfigProto(device_count={"CPU": 2})], ids=["straight-line", "parallel", "two-devices"])
def test_fetched_arrays_are_the_callers_own_on_every_executor(config):
    w = tf.Variable([1.0, 2.0])
    x = tf.placeholder(tf.float32, [])
    through_cond = tf.cond(x > 0, w.read_value, w.read_value)   # control-flow executor
    with tf.device("/cpu:1" if config.device_count.get("CPU", 1) > 1 else "/cpu:0"):
        across = tf.identity(w)                                # crosses devices when it can
    with tf.Session(config=config) as sess:
        sess.run(w.initializer)
        for fetch in (w, through_cond, across):
            value = sess.run(fetch, {x: 1.0})
            value[0] = 100.0                                   # writeable, and ours alone
            np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])


def test_fed_strings_keep_trailing_nul_bytes(sess):
    """A fed serialized proto often ends in NUL bytes; NumPy's bytes dtype would drop them."""
    record = tf.placeholder(tf.string, [])
    records = tf.placeholder(tf.string, [None])
    assert sess.run(tf.identity(record), {record: b"ab\x00\x00"}) == b"ab\x00\x00"
    assert sess.run(records, {records: [b"a\x00", "\u00e9"]}).tolist() == [b"a\x00", b"\xc3\xa9"]
    with pytest.raises(ValueError, match="Cannot feed value of shape"):
        sess.run(records, {records: b"x"})
