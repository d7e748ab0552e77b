"""tf.graph_util: extract_sub_graph, convert_variables_to_constants, remove_training_nodes,
must_run_on_cpu, with TF1's results and errors."""

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import minitf as tf


def _names(graph_def):
    return [node.name for node in graph_def.node]


def _node(graph_def, name):
    (node,) = [n for n in graph_def.node if n.name == name]
    return node


def _parse(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


def _mlp():
    """x -> relu(x w + b) -> softmax, with a Saver and an update op around it."""
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0, -1.0], [2.0, 0.5]], np.float32), name="w")
    b = tf.Variable(np.array([0.1, 0.2], np.float32), name="b")
    probs = tf.nn.softmax(tf.nn.relu(tf.matmul(x, w) + b), name="probs")
    update = tf.assign_add(w, tf.ones([2, 2]), name="update")
    tf.train.Saver()
    return x, w, b, probs, update


def test_the_module_has_tf1s_names():
    assert tf.compat.v1.graph_util is tf.graph_util
    for name in ("convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
                 "must_run_on_cpu", "tensor_shape_from_node_def_name"):
        assert callable(getattr(tf.graph_util, name))


# ---- convert_variables_to_constants ------------------------------------------------------------
def test_freezing_makes_variables_consts_with_the_sessions_values():
    x, w, b, probs, update = _mlp()
    feed = np.array([[1.0, 2.0], [-1.0, 0.5]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)  # the frozen value is the session's, not the initial one
        expected = sess.run(probs, {x: feed})
        trained_w = sess.run(w)
        frozen = tf.graph_util.convert_variables_to_constants(
            sess, sess.graph.as_graph_def(), ["probs"])
    assert isinstance(frozen, graph_pb2.GraphDef)
    assert _names(frozen) == ["x", "w", "w/read", "b", "b/read", "MatMul", "add", "Relu",
                              "probs"]  # no initializer, Assign, update or save op
    const = _node(frozen, "w")
    assert const.op == "Const" and sorted(const.attr) == ["dtype", "value"]
    assert const.attr["dtype"].type == tf.float32.as_datatype_enum
    np.testing.assert_array_equal(tf.make_ndarray(const.attr["value"].tensor), trained_w)
    assert (_node(frozen, "w/read").op, list(_node(frozen, "w/read").input)) == ("Identity", ["w"])
    assert frozen.versions.producer == tf.get_default_graph().as_graph_def().versions.producer
    with tf.Graph().as_default():
        (imported,) = tf.import_graph_def(frozen, return_elements=["probs:0"], name="")
        assert tf.global_variables() == []
        with tf.Session() as sess:  # no initialization needed: there are no variables
            np.testing.assert_allclose(sess.run(imported, {"x:0": feed}), expected, rtol=1e-6)


def test_whitelist_and_blacklist_choose_the_variables_to_freeze():
    _mlp()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        graph_def = sess.graph.as_graph_def()
        only_w = tf.graph_util.convert_variables_to_constants(
            sess, graph_def, ["probs"], variable_names_whitelist=["w"])
        not_w = tf.graph_util.convert_variables_to_constants(
            sess, graph_def, ["probs"], variable_names_blacklist=["w"])
    assert (_node(only_w, "w").op, _node(only_w, "b").op) == ("Const", "VariableV2")
    assert (_node(not_w, "w").op, _node(not_w, "b").op) == ("VariableV2", "Const")


def test_freezing_an_output_that_is_not_in_the_graph_is_tfs_assertion_error():
    _mlp()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(AssertionError, match="^nope is not in graph$"):
            tf.graph_util.convert_variables_to_constants(sess, sess.graph.as_graph_def(),
                                                         ["probs", "nope"])


def test_an_uninitialized_variable_cannot_be_frozen():
    _mlp()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            tf.graph_util.convert_variables_to_constants(sess, sess.graph.as_graph_def(),
                                                         ["probs"])


class _Values:
    """A session double: ``run`` returns fixed values for the tensor names it is given."""

    def __init__(self, values):
        self.values, self.fetched = values, []

    def run(self, fetches):
        self.fetched.append(list(fetches))
        return [self.values[name] for name in fetches]


_RESOURCE_GRAPH = """
node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } }
       attr { key: "shared_name" value { s: "v" } } }
node { name: "v/Read/ReadVariableOp" op: "ReadVariableOp" input: "v"
       attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "handle" op: "Identity" input: "v" attr { key: "T" value { type: DT_RESOURCE } } }
node { name: "read" op: "ReadVariableOp" input: "handle"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@v" } } } }
node { name: "out" op: "Neg" input: "read" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
"""


def test_resource_variables_freeze_as_tf_does():
    session = _Values({"v/Read/ReadVariableOp:0": np.array([1.5, -2.0], np.float32)})
    frozen = tf.graph_util.convert_variables_to_constants(session, _parse(_RESOURCE_GRAPH),
                                                          ["out"])
    assert session.fetched == [["v/Read/ReadVariableOp:0"]]  # TF's name for the value
    assert _names(frozen) == ["v", "handle", "read", "out"]
    assert _node(frozen, "v").op == "Const"
    np.testing.assert_array_equal(tf.make_ndarray(_node(frozen, "v").attr["value"].tensor),
                                  [1.5, -2.0])
    # The Identity on the handle now passes the value on; the read is an Identity.
    assert _node(frozen, "handle").attr["T"].type == tf.float32.as_datatype_enum
    read = _node(frozen, "read")
    assert (read.op, list(read.input), sorted(read.attr)) == ("Identity", ["handle"],
                                                              ["T", "_class"])
    with tf.Graph().as_default():
        (out,) = tf.import_graph_def(frozen, return_elements=["out:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [-1.5, 2.0])


def test_a_read_of_something_else_than_a_var_handle_is_a_value_error():
    graph_def = _parse("""
        node { name: "h" op: "Placeholder" attr { key: "dtype" value { type: DT_RESOURCE } } }
        node { name: "read" op: "ReadVariableOp" input: "h"
               attr { key: "dtype" value { type: DT_FLOAT } } }""")
    with pytest.raises(ValueError, match="Cannot find the variable"):
        tf.graph_util.convert_variables_to_constants(_Values({}), graph_def, ["read"])


# ---- extract_sub_graph ---------------------------------------------------------------------------
_GRAPH = """
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "unused" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "colocated" op: "NoOp" }
node { name: "ctrl" op: "NoOp" }
node { name: "b" op: "Neg" input: "a" input: "^ctrl" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@colocated" } } } }
node { name: "c" op: "Identity" input: "b:0" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "other" op: "Neg" input: "unused" attr { key: "T" value { type: DT_FLOAT } } }
library { function { signature { name: "f" } } }
versions { producer: 27 min_consumer: 3 }
"""


def test_extract_sub_graph_keeps_what_the_outputs_need_in_order():
    graph_def = _parse(_GRAPH)
    sub = tf.graph_util.extract_sub_graph(graph_def, ["c"])
    assert _names(sub) == ["a", "colocated", "ctrl", "b", "c"]  # inputs, control, _class
    assert sub.versions == graph_def.versions and sub.library == graph_def.library
    assert _node(sub, "b") == _node(graph_def, "b")
    assert _names(tf.graph_util.extract_sub_graph(graph_def, ["c", "other"])) == [
        "a", "unused", "colocated", "ctrl", "b", "c", "other"]


def test_extract_sub_graph_errors_are_tfs():
    graph_def = _parse(_GRAPH)
    with pytest.raises(AssertionError, match="^c:0 is not in graph$"):
        tf.graph_util.extract_sub_graph(graph_def, ["c:0"])  # node names, not tensor names
    with pytest.raises(TypeError, match="graph_def must be a graph_pb2.GraphDef proto"):
        tf.graph_util.extract_sub_graph(graph_def.SerializeToString(), ["c"])
    with pytest.raises(TypeError, match="dest_nodes must be an iterable of strings"):
        tf.graph_util.extract_sub_graph(graph_def, "c")


# ---- remove_training_nodes -----------------------------------------------------------------------
_TRAINING_GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "check" op: "CheckNumerics" input: "x" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "message" value { s: "bad" } } }
node { name: "id1" op: "Identity" input: "x" input: "^check"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "id2" op: "StopGradient" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "id3" op: "Identity" input: "id2" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "guard" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Add" input: "id1" input: "id3" input: "^guard"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "out" op: "Identity" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
"""


def test_remove_training_nodes_drops_checks_and_splices_identities():
    graph_def = _parse(_TRAINING_GRAPH)
    pruned = tf.graph_util.remove_training_nodes(graph_def)
    # CheckNumerics goes (and the control edge on it); id1 then has no control
    # input and is spliced, as are the chain id2 -> id3 and out; guard is a
    # control input, so it stays.
    assert _names(pruned) == ["x", "guard", "y"]
    assert list(_node(pruned, "y").input) == ["x", "x", "^guard"]
    assert not pruned.HasField("versions")  # TF's result holds nodes only
    kept = tf.graph_util.remove_training_nodes(graph_def, protected_nodes=["out", "check"])
    assert _names(kept) == ["x", "check", "id1", "guard", "y", "out"]
    assert list(_node(kept, "id1").input) == ["x", "^check"]  # a control input: not spliced
    assert list(_node(kept, "y").input) == ["id1", "x", "^guard"]
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(pruned, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            assert sess.run(y, {"x:0": 2.0}) == 4.0


# ---- must_run_on_cpu and tensor_shape_from_node_def_name --------------------------------------
def test_must_run_on_cpu_follows_tfs_rules():
    ints = tf.constant([1, 2], name="ints")
    floats = tf.constant([1.0], name="floats")
    strings = tf.constant(["a"], name="strings")
    cast = tf.cast(ints, tf.float32, name="cast")
    var = tf.Variable(1.0, name="var")
    assert tf.graph_util.must_run_on_cpu(ints.op) and tf.graph_util.must_run_on_cpu(strings.op)
    assert tf.graph_util.must_run_on_cpu(cast.op)  # a Cast from int32 (its SrcT attr)
    assert not tf.graph_util.must_run_on_cpu(floats.op)
    assert not tf.graph_util.must_run_on_cpu(tf.cast(floats, tf.int32).op)
    assert not tf.graph_util.must_run_on_cpu(var.op)
    assert tf.graph_util.must_run_on_cpu(var.op.node_def, pin_variables_on_cpu=True)
    with pytest.raises(AssertionError):
        tf.graph_util.must_run_on_cpu("ints")


def test_tensor_shape_from_node_def_name():
    tf.placeholder(tf.float32, [None, 3], name="x")
    graph = tf.get_default_graph()
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "x").as_list() == [None, 3]
    assert tf.graph_util.tensor_shape_from_node_def_name(graph, "x:0").as_list() == [None, 3]
