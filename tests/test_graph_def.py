"""GraphDef: TF's protocol buffer, TF's field values, round trips, imports of TF-style graphs."""

import random
import struct

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import attr_value_pb2, graph_pb2, node_def_pb2

import minitf as tf
from minitf.framework import attr_value


def _build():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0, 2.0]], np.float32), name="w")
    y = tf.add(x, w, name="y")
    with tf.control_dependencies([y]):
        done = tf.no_op(name="done")
    return x, w, y, done


def _node(graph_def, name):
    (node,) = [n for n in graph_def.node if n.name == name]
    return node


def _wire(graph_def):
    """``graph_def`` as another process receives it: parsed by TensorBoard's own class."""
    return graph_pb2.GraphDef.FromString(graph_def.SerializeToString())


# ---- TF's message, TF's values -----------------------------------------------------------------
def test_as_graph_def_is_tensorflows_graph_def():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    assert isinstance(graph_def, graph_pb2.GraphDef) and tf.GraphDef is graph_pb2.GraphDef
    assert tf.NodeDef is node_def_pb2.NodeDef and tf.AttrValue is attr_value_pb2.AttrValue
    assert len(graph_def.node) == len(tf.get_default_graph().get_operations())
    assert graph_def.node[0].op == "Placeholder" and graph_def.versions.producer >= 1
    assert list(_node(graph_def, "done").input) == ["^y"]
    assert list(_node(graph_def, "y").input) == ["x", "w/read"]


def test_const_value_is_a_tensor_proto_with_tf_encoding():
    tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="matrix")
    tf.constant(3, name="scalar")
    tf.constant([b"a", "b\xe9"], name="strings")
    tf.constant([True, False], name="flags")
    graph_def = _wire(tf.get_default_graph().as_graph_def())
    matrix = _node(graph_def, "matrix").attr["value"].tensor
    assert matrix.dtype == 1  # DT_FLOAT
    assert [d.size for d in matrix.tensor_shape.dim] == [2, 3]
    assert matrix.tensor_content == struct.pack("<6f", 0, 1, 2, 3, 4, 5)
    assert _node(graph_def, "matrix").attr["dtype"].type == 1
    scalar = _node(graph_def, "scalar").attr["value"].tensor
    assert (scalar.dtype, list(scalar.int_val), scalar.tensor_content) == (3, [3], b"")
    strings = _node(graph_def, "strings").attr["value"].tensor
    assert strings.dtype == 7 and list(strings.string_val) == [b"a", "b\xe9".encode("utf-8")]
    flags = _node(graph_def, "flags").attr["value"].tensor
    assert flags.dtype == 10 and list(flags.bool_val) == [True, False]  # TF: no bool content


def test_matmul_and_placeholder_attrs_have_tf_values():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.placeholder(tf.int64, None, name="anything")
    tf.matmul(x, tf.ones([3, 2]), transpose_b=True, name="y")
    graph_def = _wire(tf.get_default_graph().as_graph_def())
    y = _node(graph_def, "y")
    assert (y.attr["transpose_a"].b, y.attr["transpose_b"].b) == (False, True)
    placeholder = _node(graph_def, "x")
    assert placeholder.attr["dtype"].type == 1
    assert [d.size for d in placeholder.attr["shape"].shape.dim] == [-1, 2]
    anything = _node(graph_def, "anything").attr["shape"].shape
    assert anything.unknown_rank and _node(graph_def, "anything").attr["dtype"].type == 9


def test_op_node_def_is_the_node_of_the_graph_def():
    x = tf.placeholder(tf.float32, [2], name="x")
    y, z = tf.split(tf.stack([x, x]), 2, name="split")
    tf.identity(z, name="second")
    node_def = tf.get_default_graph().get_operation_by_name("second").node_def
    assert isinstance(node_def, node_def_pb2.NodeDef)
    assert list(node_def.input) == ["split:1"]
    assert 'op: "Identity"' in str(node_def)
    assert node_def == _node(tf.get_default_graph().as_graph_def(), "second")


def test_attr_values_of_every_kind_round_trip():
    cases = [tf.float32, tf.as_dtype("int32_ref"),
             tf.TensorShape([None, 3]), tf.TensorShape(None), True, -7, 0.2, 1e-3, "SAME",
             [1, 2, 2, 1], [tf.float32, tf.string], [tf.TensorShape([]), tf.TensorShape([2])],
             [], ["a", "b"], [0.5, 0.25], attr_value.FunctionName("f_1"), None]
    for value in cases:
        proto = attr_value.attr_value(value)
        wire = attr_value_pb2.AttrValue.FromString(proto.SerializeToString())
        back = attr_value.python_value(wire)
        # (by repr: a TensorShape with an unknown dimension is not == to itself, as in TF)
        assert (type(back), repr(back)) == (type(value), repr(value))
    array = attr_value.python_value(attr_value.attr_value(np.arange(4, dtype=np.int16)))
    assert array.dtype == np.int16 and array.tolist() == [0, 1, 2, 3]
    assert attr_value.attr_value(0.2).f == pytest.approx(0.2)  # TF's 32-bit float field
    assert attr_value.attr_value(attr_value.FunctionName("f_1")).func.name == "f_1"
    assert attr_value.attr_value(None).WhichOneof("value") is None
    assert attr_value.attr_value([]).WhichOneof("value") == "list"


def test_attrs_without_an_attr_value_kind_are_refused():
    with pytest.raises(TypeError, match="nested lists"):
        attr_value.attr_value([[1, 2], [3]])
    with pytest.raises(TypeError, match="function"):
        attr_value.attr_value(lambda: 1)
    x = tf.placeholder(tf.float32, [], name="x")
    op = tf.identity(x, name="y").op
    op._attrs["callback"] = print
    with pytest.raises(TypeError, match="Op 'y' .*attr 'callback'"):
        tf.get_default_graph().as_graph_def()


# ---- round trips ------------------------------------------------------------------------------
def test_round_trip_through_bytes_runs_the_same():
    _build()
    wire = _wire(tf.get_default_graph().as_graph_def())
    imported = tf.Graph()
    with imported.as_default():
        y, init = tf.import_graph_def(wire, return_elements=["y:0", "w/Assign"], name="copy")
        assert y.name == "copy/y:0" and y.shape.as_list() == [None, 2]
        assert imported.get_operation_by_name("copy/done").control_inputs == [y.op]
        with tf.Session() as sess:
            sess.run(init)
            out = sess.run(y, {"copy/x:0": [[1.0, 1.0], [0.0, 0.0]]})
    np.testing.assert_array_equal(out, [[2.0, 3.0], [1.0, 2.0]])


def test_text_format_round_trip():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    text = text_format.MessageToString(graph_def)
    assert 'op: "VariableV2"' in text and "type: DT_FLOAT" in text
    parsed = text_format.Parse(text, graph_pb2.GraphDef())
    assert parsed == graph_def
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(parsed, return_elements=["y:0"], name="")
        assert y.name == "y:0"


def test_import_then_export_gives_the_same_nodes():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    w = tf.constant(np.ones((4, 3), np.float32), name="w")
    tf.nn.leaky_relu(tf.matmul(x, w), alpha=0.2, name="out")
    tf.nn.max_pool(tf.reshape(x, [-1, 2, 2, 1]), [1, 2, 2, 1], [1, 1, 1, 1], "VALID", name="pool")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as copy:
        tf.import_graph_def(graph_def, name="")
    again = copy.as_graph_def()
    for node in graph_def.node:
        assert _node(again, node.name) == node, node.name
    assert copy.get_operation_by_name("out").get_attr("alpha") == 0.2


def test_while_loop_and_unordered_nodes_import():
    i = tf.constant(0, name="i")
    total = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [i, tf.constant(0)])[1]
    graph_def = tf.get_default_graph().as_graph_def()
    shuffled = graph_pb2.GraphDef()
    shuffled.CopyFrom(graph_def)
    nodes = list(graph_def.node)
    random.Random(0).shuffle(nodes)
    del shuffled.node[:]
    shuffled.node.extend(nodes)
    for definition in (graph_def, shuffled):
        with tf.Graph().as_default():
            (result,) = tf.import_graph_def(definition, return_elements=[total.name], name="")
            with tf.Session() as sess:
                assert sess.run(result) == 10


def test_input_map_replaces_tensors():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        z = tf.constant([[5.0, 5.0]])
        (y,) = tf.import_graph_def(graph_def, input_map={"x": z}, return_elements=["y:0"],
                                   name="")
        with tf.Session() as sess:
            sess.run(tf.get_default_graph().get_operation_by_name("w/Assign"))
            np.testing.assert_array_equal(sess.run(y), [[6.0, 7.0]])


def test_import_errors_are_tfs():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    pruned = graph_pb2.GraphDef()
    pruned.node.extend(n for n in graph_def.node if n.name != "x")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'x'"):
            tf.import_graph_def(pruned)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="nope"):
            tf.import_graph_def(graph_pb2.GraphDef(), return_elements=["nope:0"])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"not found in graph_def: \[nope:0\]"):
            tf.import_graph_def(graph_def, input_map={"nope:0": tf.constant(1.0)})
        with pytest.raises(TypeError, match="input_map values must be Tensors"):
            tf.import_graph_def(graph_def, input_map={"x:0": 1.0})
        with pytest.raises(TypeError, match="graph_def must be a GraphDef proto"):
            tf.import_graph_def({"node": []})
        with pytest.raises(TypeError, match="graph_def must be a GraphDef proto"):
            tf.import_graph_def(graph_def.SerializeToString())


# A GraphDef as TensorFlow 1.x writes one: a scalar Const in float_val, a "T" attr, and
# attrs left out because they have their default (export with strip_default_attrs).
_TF_GRAPH = """
node { name: "x" op: "Placeholder"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
node { name: "w" op: "Const"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT
                                            tensor_shape { dim { size: 2 } dim { size: 1 } }
                                            float_val: 0.5 } } } }
node { name: "b" op: "Const"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "y" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Add" input: "y" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "total" op: "Sum" input: "out" input: "axes"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } } }
node { name: "axes" op: "Const"
       attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                            int_val: 0 } } } }
versions { producer: 27 }
"""


def test_import_of_a_tensorflow_style_graph_def_fills_defaults():
    graph_def = text_format.Parse(_TF_GRAPH, graph_pb2.GraphDef())
    with tf.Graph().as_default() as graph:
        out, total = tf.import_graph_def(graph_def, return_elements=["out:0", "total:0"],
                                         name="")
        matmul = graph.get_operation_by_name("y")
        assert matmul.get_attr("transpose_a") is False and matmul.get_attr("transpose_b") is False
        assert graph.get_operation_by_name("total").get_attr("keep_dims") is False
        np.testing.assert_array_equal(graph.get_operation_by_name("w").get_attr("value"),
                                      [[0.5], [0.5]])  # one value fills the tensor
        assert out.shape.as_list() == [None, 1]
        with tf.Session() as sess:
            got_out, got_total = sess.run([out, total], {"x:0": [[2.0, 4.0], [0.0, 2.0]]})
    np.testing.assert_array_equal(got_out, [[4.0], [2.0]])
    np.testing.assert_array_equal(got_total, [6.0])


# ---- functions --------------------------------------------------------------------------------
def test_dataset_functions_travel_in_the_library():
    scale = tf.constant(3, tf.int64, name="scale")
    dataset = tf.data.Dataset.range(4).map(lambda x: x * scale).filter(lambda x: x > 2)
    next_element = dataset.make_one_shot_iterator().get_next()
    graph_def = _wire(tf.get_default_graph().as_graph_def())
    map_node = _node(graph_def, "MapDataset")
    (function,) = [f for f in graph_def.library.function
                   if f.signature.name == map_node.attr["f"].func.name]
    assert [(a.name, a.type) for a in function.signature.input_arg] == [
        ("args_0", 9), ("captured_0", 9)]  # the element, then the captured constant
    assert [a.type for a in function.signature.output_arg] == [9]
    assert function.ret["output_0"] == "mul:z:0"
    with tf.Graph().as_default():
        (element,) = tf.import_graph_def(graph_def, return_elements=[next_element.name], name="")
        values = []
        with tf.Session() as sess:
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    values.append(int(sess.run(element)))
    assert values == [3, 6, 9]


# ---- files ------------------------------------------------------------------------------------
def test_write_graph_as_text_and_binary(tmp_path):
    _build()
    graph = tf.get_default_graph()
    text_path = tf.train.write_graph(graph, str(tmp_path / "new"), "graph.pbtxt")
    assert text_path == str(tmp_path / "new" / "graph.pbtxt")
    parsed = text_format.Parse(open(text_path).read(), graph_pb2.GraphDef())
    assert parsed == graph.as_graph_def()
    binary_path = tf.io.write_graph(graph.as_graph_def(), str(tmp_path), "graph.pb",
                                    as_text=False)
    assert graph_pb2.GraphDef.FromString(open(binary_path, "rb").read()) == graph.as_graph_def()
    with pytest.raises(TypeError, match="tf.Graph or a GraphDef"):
        tf.train.write_graph({"node": []}, str(tmp_path), "bad.pb")
