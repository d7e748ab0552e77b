"""Graph construction: naming, scopes, collections, dtypes, shapes, finalize."""

import numpy as np
import pytest

import minitf as tf
from minitf.framework.tensor_shape import Dimension, TensorShape


def test_tensor_repr_and_names():
    a = tf.constant(1)
    b = tf.constant(2)
    c = tf.add(a, b)
    assert repr(c) == 'Tensor("Add:0", shape=(), dtype=int32)'
    assert c.name == "Add:0" and c.op.name == "Add" and c.op.type == "Add"
    assert c.value_index == 0 and c.graph is tf.get_default_graph()
    assert list(c.op.inputs) == [a, b]
    assert a.consumers() == [c.op]


def test_unique_names_and_name_scopes():
    a = tf.constant(1.0)
    names = [tf.add(a, a).op.name for _ in range(3)]
    assert names == ["Add", "Add_1", "Add_2"]
    with tf.name_scope("scope") as scope:
        assert scope == "scope/"
        assert tf.add(a, a).op.name == "scope/Add"
        with tf.name_scope("inner"):
            assert tf.add(a, a).op.name == "scope/inner/Add"
    with tf.name_scope("scope") as scope2:
        assert scope2 == "scope_1/"
        assert tf.add(a, a).op.name == "scope_1/Add"
    with tf.name_scope("scope/"):  # re-enter exactly
        assert tf.add(a, a).op.name == "scope/Add_1"
    with tf.name_scope("scope"):
        with tf.name_scope(None):
            assert tf.add(a, a).op.name == "Add_3"


def test_explicit_names_and_converted_constants():
    x = tf.placeholder(tf.float32, name="x")
    y = tf.add(x, 2.0, name="plus")
    assert y.op.name == "plus"
    assert y.op.inputs[1].op.name == "plus/y"
    assert (x + 1.0).op.name == "add"
    with pytest.raises(ValueError):
        tf.constant(1.0, name="bad name!")


def test_get_by_name():
    c = tf.constant(3.0, name="c")
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    with pytest.raises(KeyError):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("c:1")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("c")
    with pytest.raises(ValueError):
        g.get_operation_by_name("c:0")
    assert g.get_operations() == [c.op]


def test_default_graph_stack():
    g = tf.Graph()
    outer = tf.get_default_graph()
    with g.as_default():
        assert tf.get_default_graph() is g
        c = tf.constant(1)
        with pytest.raises(AssertionError):
            tf.reset_default_graph()
    assert c.graph is g and tf.get_default_graph() is outer
    tf.reset_default_graph()
    assert tf.get_default_graph() is not outer


def test_finalize_blocks_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1)
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2)


def test_collections():
    g = tf.get_default_graph()
    g.add_to_collection("things", 1)
    g.add_to_collections(["things", "more"], 2)
    assert g.get_collection("things") == [1, 2]
    assert sorted(g.get_all_collection_keys()) == ["more", "things"]
    ref = g.get_collection_ref("things")
    ref.append(3)
    assert g.get_collection("things") == [1, 2, 3]
    v = tf.Variable(1.0, name="layer/w")
    tf.Variable(2.0, name="other/w", trainable=False)
    assert g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="layer") == [v]
    assert tf.trainable_variables() == [v]


def test_module_level_collection_functions_use_the_default_graph():
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "more"], 2)
    assert tf.get_collection("things") == [1, 2] and tf.get_collection("more") == [2]
    tf.get_collection_ref("things").append(3)
    assert tf.get_default_graph().get_collection("things") == [1, 2, 3]
    tf.get_collection("things").append(4)  # a copy
    assert tf.get_collection("things") == [1, 2, 3]
    v = tf.Variable(1.0, name="layer/w")
    tf.Variable(2.0, name="other/w")
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="layer") == [v]
    with tf.Graph().as_default():
        assert tf.get_collection("things") == []


def test_control_dependencies():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.add(b, b)
        d = tf.identity(c)  # already after `a` through c: no extra control edge
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    with tf.control_dependencies([a]):
        with tf.control_dependencies(None):
            e = tf.add(b, b)
    assert e.op.control_inputs == []


def test_node_def_view():
    x = tf.placeholder(tf.float32, [2], name="x")
    c = tf.constant([1.0, 2.0])
    with tf.control_dependencies([x]):
        y = tf.identity(c, name="y")
    nd = y.op.node_def
    assert nd.name == "y" and nd.op == "Identity"
    assert nd.input == ["Const", "^x"]
    assert 'op: "Identity"' in str(nd)


def test_tensor_equality_is_identity_and_bool_raises():
    a = tf.constant(1.0)
    b = tf.constant(1.0)
    assert (a == a) is True and (a == b) is False
    assert len({a, b, a}) == 2
    with pytest.raises(TypeError):
        bool(a)
    with pytest.raises(TypeError):
        if a:
            pass


def test_no_silent_promotion():
    i = tf.constant(1)
    f = tf.constant(1.0)
    with pytest.raises(TypeError):
        tf.add(i, f)
    assert tf.add(f, 1).dtype == tf.float32  # the Python int adopts float32
    assert tf.add(i, 1).dtype == tf.int32
    with pytest.raises(TypeError):
        tf.add(i, 1.5)
    with pytest.raises(TypeError):
        tf.add(tf.constant(True), tf.constant(False))  # bool is not numeric
    with pytest.raises(ValueError):
        tf.convert_to_tensor(f, dtype=tf.int32)


def test_constant_dtypes_and_shapes():
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(2 ** 40).dtype == tf.int64
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant([1, 2.5]).dtype == tf.float32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant(np.zeros(3)).dtype == tf.float64
    assert tf.constant(np.zeros(3, np.int16)).dtype == tf.int16
    assert tf.constant(1, dtype=tf.float16).dtype == tf.float16
    assert tf.constant(0, shape=[2, 3]).shape.as_list() == [2, 3]
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    # TF's constant_op_test.testShapeWrong: too many elements is a ValueError.
    with pytest.raises(ValueError, match="Too many elements provided. Needed at most 2"):
        tf.constant([1, 2, 3], shape=[2])


def test_incompatible_shapes_raise_at_construction():
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [4, 3])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.add(a, b)
    c = tf.placeholder(tf.float32, [None, 3])
    assert tf.add(a, c).shape.as_list() == [2, 3]
    assert tf.add(c, tf.placeholder(tf.float32, [5, 1, 1])).shape.as_list() == [5, None, 3]


def test_tensor_of_another_graph():
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
    with g2.as_default():
        b = tf.constant(1.0)
        with pytest.raises(ValueError):
            tf.add(a, b)


def test_dtypes():
    assert tf.float32.as_numpy_dtype is np.float32
    assert tf.as_dtype("float32") is tf.float32
    assert tf.as_dtype(np.int64) == tf.int64
    assert tf.float32._as_ref.name == "float32_ref"
    assert tf.float32._as_ref.base_dtype == tf.float32
    assert tf.float32.is_floating and tf.int8.is_integer and tf.bool.is_bool
    assert tf.uint8.max == 255 and tf.int8.min == -128
    assert repr(tf.float64) == "tf.float64"
    with pytest.raises(TypeError):
        tf.as_dtype("complex256")


def test_tensor_shape():
    s = TensorShape([2, None, 3])
    assert str(s) == "(2, ?, 3)" and s.ndims == 3 and not s.is_fully_defined()
    assert s.merge_with([2, 5, None]).as_list() == [2, 5, 3]
    with pytest.raises(ValueError):
        s.merge_with([3, None, 3])
    assert s.is_compatible_with([2, 7, 3]) and not s.is_compatible_with([2, 7])
    assert TensorShape(None).ndims is None
    assert TensorShape([4]).num_elements() == 4
    assert TensorShape([2]).concatenate([3]).as_list() == [2, 3]
    assert (Dimension(3) + Dimension(None)).value is None
    assert repr(TensorShape([1, None])) == "TensorShape([Dimension(1), Dimension(None)])"
    with pytest.raises(ValueError):
        TensorShape([1, 2]).with_rank(3)


def test_placeholder_partial_shapes():
    x = tf.placeholder(tf.float32, [None, 784])
    assert x.shape.as_list() == [None, 784]
    assert str(x.shape) == "(?, 784)"
    y = tf.placeholder(tf.int32)
    assert y.shape.ndims is None
    d = tf.placeholder_with_default([1.0, 2.0], shape=[None])
    assert d.shape.as_list() == [None]
    with pytest.raises(ValueError):
        tf.placeholder_with_default([1.0, 2.0], shape=[3])


def test_group_and_tuple():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    g = tf.group(a, b, name="both")
    assert g.type == "NoOp" and g.name == "both"
    assert set(g.control_inputs) == {a.op, b.op}
    ta, tb = tf.tuple([a, b])
    assert ta.op.type == "Identity" and ta.op.control_inputs
    # TF builds each output with with_dependencies: "<scope>/control_dependency".
    assert [ta.name, tb.name] == ["tuple/control_dependency:0", "tuple/control_dependency_1:0"]


def test_device_strings():
    spec = tf.DeviceSpec.from_string("/job:ps/task:0/device:GPU:1")
    assert spec.to_string() == "/job:ps/task:0/device:GPU:1"
    assert tf.DeviceSpec.from_string("/gpu:1").to_string() == "/device:GPU:1"
    assert tf.DeviceSpec.from_string("/cpu:0").device_type == "CPU"
    with pytest.raises(ValueError, match="/foo:bar"):
        tf.DeviceSpec.from_string("/foo:bar")
    with tf.device("/job:worker"):
        with tf.device("/gpu:0"):
            c = tf.constant(1.0)
    assert c.device == "/job:worker/device:GPU:0"
    with tf.device(lambda op: "/cpu:0" if op.type == "Const" else "/gpu:0"):
        d = tf.constant(1.0)
    assert d.device == "/device:CPU:0"


@pytest.mark.parametrize("value, dtype", [
    (2.0, tf.int32),          # integral, but a Python float: TF refuses it
    ([1, 2.5], tf.int64),
    (1, tf.bool),             # only Python bools become bool
])
def test_python_values_must_be_of_the_requested_kind(value, dtype):
    with pytest.raises(TypeError, match="Expected %s" % dtype.name):
        tf.constant(value, dtype=dtype)


def test_python_float_does_not_adopt_an_integer_operand():
    x = tf.constant([1, 2])
    with pytest.raises(TypeError, match="Expected int32"):
        x + 2.0
    with pytest.raises(TypeError, match="Expected int32"):
        tf.clip_by_value(x, 0.0, 2.0)
    assert (x + 2).dtype == tf.int32
    assert (tf.constant([1.0]) + 2).dtype == tf.float32


def test_constant_of_none_is_a_value_error():
    with pytest.raises(ValueError, match="None values not supported"):
        tf.constant(None)


def test_type_attr_t_is_the_polymorphic_input_dtype():
    """TF1 gradient functions read ``op.get_attr("T")``; it is the inputs' dtype."""
    x = tf.constant([1.0, 2.0], tf.float64)
    assert (x + x).op.get_attr("T") == tf.float64
    assert tf.matmul([[1.0]], [[2.0]]).op.get_attr("T") == tf.float32
    assert tf.concat([tf.constant([1]), tf.constant([2])], 0).op.get_attr("T") == tf.int32
    with pytest.raises(ValueError, match="has no attr named 'T'"):
        tf.no_op().get_attr("T")
