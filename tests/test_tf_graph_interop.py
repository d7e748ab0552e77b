"""TensorFlow's graph files in minitf, minitf's in TensorFlow.

The files in tests/data/ were written once: ``tf_*`` by TensorFlow 2.21
(tests/data/make_tf_frozen_graphs.py, and make_tf_addv2_graph.py for TF 2's
``AddV2``), ``minitf_*`` by minitf and then run in
TensorFlow (tests/data/make_minitf_frozen_graphs.py, whose docstring records
what TensorFlow printed).  TensorFlow is not needed here.
"""

import importlib.util
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import minitf as tf
from minitf.framework import tf_op_defs
from minitf.ops.op_def_library import OP_DEFS

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _data(name):
    return os.path.join(DATA, name)


def _graph_def(name):
    with open(_data(name), "rb") as f:
        return graph_pb2.GraphDef.FromString(f.read())


def _node(graph_def, name):
    (node,) = [n for n in graph_def.node if n.name == name]
    return node


def _run_probs(graph_def, batch):
    with tf.Graph().as_default():
        (probs,) = tf.import_graph_def(graph_def, return_elements=["probs:0"], name="")
        with tf.Session() as sess:
            return probs, sess.run(probs, {"x:0": batch})


# ---- TensorFlow's frozen graphs run in minitf --------------------------------------------------
@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_a_graph_frozen_by_tensorflow_runs_with_tfs_outputs(model):
    graph_def = _graph_def("tf_%s_frozen.pb" % model)
    assert graph_def.versions.producer > 1000  # TF 2's, with TF's attrs (T, data_format...)
    probs, got = _run_probs(graph_def, np.load(_data("tf_%s_input.npy" % model)))
    assert probs.shape.as_list() == [None, 3]
    np.testing.assert_allclose(got, np.load(_data("tf_%s_output.npy" % model)),
                               rtol=1e-5, atol=1e-6)


# ---- TF 2's AddV2: every ``+`` TF 2 writes, its gradients' included -------------------------
def _addv2_graph_and_feeds():
    with np.load(_data("tf_addv2_inputs.npz")) as inputs:
        feeds = {"x:0": inputs["x"], "y:0": inputs["y"]}
    return _graph_def("tf_addv2_frozen.pb"), feeds


def _tfs_addv2_outputs():
    with np.load(_data("tf_addv2_outputs.npz")) as outputs:
        return dict(outputs.items())


def test_tf2s_add_v2_graph_runs_with_tfs_outputs():
    graph_def, feeds = _addv2_graph_and_feeds()
    add_v2 = {n.name: n.attr["T"].type for n in graph_def.node if n.op == "AddV2"}
    assert add_v2 == {"prediction": tf.float32.as_datatype_enum,  # tf.add(x @ w, b)
                      "gradients/loss_grad/add": tf.int32.as_datatype_enum}  # reduce_mean's
    expected = _tfs_addv2_outputs()
    with tf.Graph().as_default() as graph:
        fetches = tf.import_graph_def(graph_def, return_elements=[n + ":0" for n in expected],
                                      name="")
        with tf.Session() as sess:
            got = sess.run(fetches, feeds)
        exported = graph.as_graph_def()
    for name, value in zip(expected, got):
        np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for name in add_v2:  # written back as TF wrote them
        assert _node(exported, name) == _node(graph_def, name)


def test_minitf_differentiates_tf2s_add_v2_as_tf_did():
    """minitf's own gradient of the imported loss, through AddV2 ([4, 1] + [1]:
    b's gradient is summed over the batch), equals the gradients TF built."""
    graph_def, feeds = _addv2_graph_and_feeds()
    expected = _tfs_addv2_outputs()
    with tf.Graph().as_default():
        loss, w, b = tf.import_graph_def(
            graph_def, return_elements=["loss:0", "MatMul/ReadVariableOp:0",
                                        "prediction/ReadVariableOp:0"], name="")
        grad_w, grad_b = tf.gradients(loss, [w, b])
        assert grad_b.shape.as_list() == [1]
        with tf.Session() as sess:
            got_w, got_b = sess.run([grad_w, grad_b], feeds)
    np.testing.assert_allclose(got_w, expected["grad_w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_b, expected["grad_b"], rtol=1e-5, atol=1e-6)


def test_tfs_attrs_are_kept_and_written_back():
    graph_def = _graph_def("tf_cnn_frozen.pb")
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        conv = graph.get_operation_by_name("Conv2D")
        assert conv.get_attr("data_format") == "NHWC" and conv.get_attr("use_cudnn_on_gpu")
        exported = graph.as_graph_def()
    for node in graph_def.node:  # every attr TF wrote comes back, of the same value
        assert _node(exported, node.name).attr == node.attr, node.name


def test_an_attr_minitf_does_not_implement_is_refused_unless_at_tfs_default():
    graph_def = _graph_def("tf_cnn_frozen.pb")
    _node(graph_def, "Conv2D").attr["use_cudnn_on_gpu"].b = False  # a hint: ignored
    _node(graph_def, "MaxPool").attr["explicit_paddings"].list.SetInParent()  # TF's default
    _run_probs(graph_def, np.load(_data("tf_cnn_input.npy")))
    _node(graph_def, "Conv2D").attr["data_format"].s = b"NCHW"
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Node 'Conv2D' \\(op: 'Conv2D'\\) sets attr "
                                             "'data_format' to s: \"NCHW\", which minitf's "
                                             "Conv2D does not implement \\(it computes TF's "
                                             "default, s: \"NHWC\"\\)"):
            tf.import_graph_def(graph_def, name="")


def test_an_attr_left_out_gets_tfs_default():
    graph_def = text_format.Parse("""
        node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
        node { name: "y" op: "Neg" input: "x" attr { key: "T" value { type: DT_INT32 } } }
        """, graph_pb2.GraphDef())
    with tf.Graph().as_default() as graph:
        (y,) = tf.import_graph_def(graph_def, return_elements=["y:0"], name="")
        assert graph.get_tensor_by_name("x:0").shape.ndims is None  # TF's default: unknown
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {"x:0": [[1, 2]]}), [[-1, -2]])


def test_an_op_minitf_does_not_have_is_tfs_not_found_error():
    graph_def = _graph_def("tf_mlp_frozen.pb")
    _node(graph_def, "hidden").op = "NoSuchOp"
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
            tf.import_graph_def(graph_def, name="")


def test_a_tf_graph_def_as_text_through_write_graph(tmp_path):
    path = tf.train.write_graph(_graph_def("tf_mlp_frozen.pb"), str(tmp_path), "mlp.pbtxt")
    with open(path) as f:
        text = f.read()
    assert 'op: "BiasAdd"' in text and 'key: "T"' in text
    parsed = text_format.Parse(text, graph_pb2.GraphDef())
    assert parsed == _graph_def("tf_mlp_frozen.pb")
    _, got = _run_probs(parsed, np.load(_data("tf_mlp_input.npy")))
    np.testing.assert_allclose(got, np.load(_data("tf_mlp_output.npy")), rtol=1e-5, atol=1e-6)


# ---- freezing TF's graph of resource variables, as TF froze it ------------------------------
class _TfSessionValues:
    """What TF's session gave convert_variables_to_constants for each variable."""

    def __init__(self):
        with np.load(_data("tf_mlp_variables.npz")) as values:
            self.values = dict(values.items())

    def run(self, fetches):
        return [self.values[name] for name in fetches]


def test_minitf_freezes_tfs_resource_variable_graph_as_tf_did():
    graph_def = _graph_def("tf_mlp_graph.pb")
    assert {"VarHandleOp", "ReadVariableOp", "AssignVariableOp"} <= {n.op for n in graph_def.node}
    frozen = tf.graph_util.convert_variables_to_constants(_TfSessionValues(), graph_def,
                                                          ["probs"])
    assert frozen == _graph_def("tf_mlp_frozen.pb")  # byte for byte TF's result


# ---- minitf's frozen graphs, as TensorFlow ran them ------------------------------------------
def _maker():
    """tests/data/make_minitf_frozen_graphs.py, which builds and freezes the models."""
    spec = importlib.util.spec_from_file_location(
        "make_minitf_frozen_graphs", _data("make_minitf_frozen_graphs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_minitf_writes_the_frozen_graph_tensorflow_ran(model):
    """A freshly frozen model equals, node for node, the file TensorFlow imported and ran."""
    checked_in = _graph_def("minitf_%s_frozen.pb" % model)
    frozen, output = _maker().frozen_graph_def(model, np.load(_data("minitf_%s_input.npy" % model)))
    assert [n.name for n in frozen.node] == [n.name for n in checked_in.node]
    for node in frozen.node:
        assert node == _node(checked_in, node.name), node.name
    assert frozen.versions == checked_in.versions
    np.testing.assert_allclose(output, np.load(_data("minitf_%s_output.npy" % model)), rtol=1e-6)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_minitfs_nodes_carry_every_attr_tfs_op_defs_require(model):
    for node in _graph_def("minitf_%s_frozen.pb" % model).node:
        definition = tf_op_defs.op_def(node.op)
        required = {a.name for a in definition.attr if not a.HasField("default_value")}
        assert required <= set(node.attr), (node.name, required - set(node.attr))
        for attr in definition.attr:  # each of the kind TF declares
            if attr.name in node.attr and attr.type in ("type", "bool", "int", "float"):
                kind = {"type": "type", "bool": "b", "int": "i", "float": "f"}[attr.type]
                assert node.attr[attr.name].WhichOneof("value") == kind, (node.name, attr.name)


# Ops TensorFlow does not have (a composite of several ops there): their
# NodeDefs are written and read as minitf declares them.
# TF has no such op (its XLA clusters compile to _XlaCompile/_XlaRun instead of one kernel).
MINITF_ONLY_OPS = {"SigmoidCrossEntropyWithLogits", "_FusedElementwise"}


def test_tfs_op_defs_cover_every_op_minitf_declares():
    missing = {d.name for d in OP_DEFS if tf_op_defs.op_def(d.name) is None}
    assert missing == MINITF_ONLY_OPS, (
        "minitf/framework/tf_op_defs.pb lacks %s: rerun tests/data/make_tf_op_defs.py with "
        "TensorFlow (or list an op TF does not have in MINITF_ONLY_OPS)"
        % sorted(missing - MINITF_ONLY_OPS))


def test_type_attrs_are_derived_as_tf_does():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.stack([x, x, x], name="pack")
    tf.concat([x, x], 1, name="concat")
    tf.cast(x, tf.int32, name="cast")
    tf.reduce_sum(x, axis=tf.constant([1], tf.int64), name="sum")
    tf.nn.leaky_relu(x, alpha=0, name="leaky")
    v = tf.Variable(tf.zeros([2], tf.float64), name="v")
    tf.train.Saver([v])
    graph_def = tf.get_default_graph().as_graph_def()

    def attr(node, name):
        return tf.AttrValue.FromString(_node(graph_def, node).attr[name].SerializeToString())

    assert attr("pack", "N").i == 3 and attr("pack", "T").type == tf.float32.as_datatype_enum
    assert attr("concat", "N").i == 2 and attr("concat", "Tidx").type == tf.int32.as_datatype_enum
    assert (attr("cast", "SrcT").type, attr("cast", "DstT").type) == (
        tf.float32.as_datatype_enum, tf.int32.as_datatype_enum)
    assert attr("sum", "Tidx").type == tf.int64.as_datatype_enum
    assert attr("leaky", "alpha").WhichOneof("value") == "f"  # TF's float, though 0 was passed
    assert attr("v/Assign", "T").type == tf.float64.as_datatype_enum  # a ref's base type
    assert list(attr("save/SaveV2", "dtypes").list.type) == [tf.float64.as_datatype_enum]
    assert "T" not in _node(graph_def, "x").attr  # Placeholder's type attr is its dtype


# ---- a meta graph saved by TensorFlow's Saver ----------------------------------------------------
def test_a_meta_graph_saved_by_tensorflow_imports():
    with np.load(_data("tf_saver_variables.npz")) as saved:
        w, b = saved["w"], saved["b"]
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(_data("tf_saver_model.ckpt.meta"))
        assert isinstance(saver, tf.train.Saver)
        variables = tf.global_variables()
        assert [(v.op.name, v.shape.as_list()) for v in variables] == [("w", [3, 1]), ("b", [1])]
        assert tf.trainable_variables() == variables
        (prediction,) = tf.get_collection("prediction")
        (loss,) = tf.get_collection("loss")
        batch = np.arange(6, dtype=np.float32).reshape(2, 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())  # TF's initial values: those it saved
            got_w, got_b = sess.run(variables)
            np.testing.assert_array_equal(got_w, w)
            np.testing.assert_array_equal(got_b, b)
            np.testing.assert_allclose(sess.run(prediction, {"x:0": batch}), batch @ w + b,
                                       rtol=1e-6)
            assert sess.run(loss, {"x:0": batch, "y:0": batch @ w + b}) == pytest.approx(0.0)
            # minitf does not read TF's checkpoint format (docs/differences.rst).
            with pytest.raises(tf.errors.DataLossError, match="not a minitf checkpoint"):
                saver.restore(sess, _data("tf_saver_model.ckpt"))
