"""``import_graph_def`` and ``import_meta_graph`` check what they build.

A GraphDef or ``.meta`` file may come from anybody.  What would otherwise
surface later as a wrong value, or as a raw ``KeyError``/``IndexError``, is
refused at import with a ``ValueError`` naming the node (the class TF's
importer raises); an unknown op type is TF's ``NotFoundError``.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.framework import protos


def _graph_def():
    """``x = Const([1, 2])``, ``y = x + x``."""
    with tf.Graph().as_default() as graph:
        x = tf.constant([1.0, 2.0], name="x")
        tf.add(x, x, name="y")
    return graph.as_graph_def()


def _import(graph_def):
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            return sess.run("y:0")


def test_the_unchanged_graph_imports_and_runs():
    np.testing.assert_array_equal(_import(_graph_def()), [2.0, 4.0])


@pytest.mark.parametrize("name,message", [
    ("x:99", r"Node 'y': Connecting to invalid output 99 of source node x which has 1 outputs"),
    ("x:1", r"Node 'y': Connecting to invalid output 1 of source node x which has 1 outputs"),
    ("x:-1", r"Node 'y': Unknown input node 'x:-1'"),
    ("x:abc", r"Node 'y': Unknown input node 'x:abc'"),
    ("nope", r"Node 'y' has an input from 'nope', which is not in the graph_def"),
])
def test_an_input_naming_no_output_is_a_value_error(name, message):
    graph_def = _graph_def()
    graph_def.node[1].input[1] = name
    with pytest.raises(ValueError, match=message):
        _import(graph_def)


def test_a_return_element_naming_no_output_is_a_value_error():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="return_element 'y:3' not found in graph_def: "
                                             "node y has 1 outputs"):
            tf.import_graph_def(_graph_def(), return_elements=["y:3"])


def _damage_const(damage):
    graph_def = _graph_def()
    damage(graph_def.node[0])
    return graph_def


@pytest.mark.parametrize("damage,message", [
    # The dtype attr says int32, the value is float32: TF fails only at run time.
    (lambda node: setattr(node.attr["dtype"], "type", tf.int32.as_datatype_enum),
     "type mismatch between value \\(float32\\) and dtype \\(int32\\)"),
    (lambda node: setattr(node.attr["value"].tensor, "dtype", tf.int32.as_datatype_enum),
     "type mismatch between value \\(int32\\) and dtype \\(float32\\)"),
    (lambda node: setattr(node.attr["value"].tensor.tensor_shape.dim[0], "size", 5),
     "8 bytes of tensor_content for shape \\[5\\] of float32, expected 20"),
    (lambda node: setattr(node.attr["value"].tensor, "tensor_content", b"\x00" * 3),
     "3 bytes of tensor_content for shape \\[2\\] of float32, expected 8"),
    (lambda node: setattr(node.attr["value"].tensor.tensor_shape.dim[0], "size", -2),
     "shape \\[-2\\] is not fully defined"),
    (lambda node: node.attr["value"].tensor.float_val.extend([1.0, 2.0, 3.0])
     or setattr(node.attr["value"].tensor, "tensor_content", b""),
     "3 values for shape \\[2\\]"),
    (lambda node: node.attr.pop("value"), "has no attr 'value' of type tensor"),
    (lambda node: node.attr["value"].CopyFrom(node.attr["dtype"]),
     "has no attr 'value' of type tensor"),
])
def test_a_const_whose_value_does_not_match_its_attrs_is_a_value_error(damage, message):
    with pytest.raises(ValueError, match="Node 'x' \\(op: 'Const'\\).*" + message):
        _import(_damage_const(damage))


def test_the_short_form_of_a_const_is_still_accepted():
    """TF's short form: fewer values than elements, the last one repeats."""
    graph_def = _graph_def()
    tensor = graph_def.node[0].attr["value"].tensor
    tensor.tensor_content = b""
    tensor.float_val.append(3.0)
    np.testing.assert_array_equal(_import(graph_def), [6.0, 6.0])


def test_a_type_attr_disagreeing_with_the_inputs_is_a_value_error():
    graph_def = _graph_def()
    graph_def.node[1].attr["T"].type = tf.int32.as_datatype_enum
    with pytest.raises(ValueError, match="Node 'y' \\(op: 'Add'\\) sets attr 'T' to int32, but "
                                         "its inputs and outputs make it float32"):
        _import(graph_def)


def test_an_unknown_op_type_is_tfs_not_found_error():
    graph_def = _graph_def()
    graph_def.node[1].op = "NoSuchOp"
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        _import(graph_def)


# ---- meta graphs --------------------------------------------------------------------------------
def _meta_graph():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="v")
        return tf.train.Saver().export_meta_graph()


def _import_meta(meta):
    with tf.Graph().as_default():
        return tf.train.import_meta_graph(meta)


def test_a_variable_def_naming_a_missing_op_is_a_value_error():
    meta = _meta_graph()
    variable_def = protos.load("variable_pb2").VariableDef.FromString(
        meta.collection_def["variables"].bytes_list.value[0])
    variable_def.variable_name = "nope:0"
    meta.collection_def["variables"].bytes_list.value[0] = variable_def.SerializeToString()
    with pytest.raises(ValueError, match="Collection 'variables': value 0 names something the "
                                         "graph does not have.*nope"):
        _import_meta(meta)


def test_a_collection_proto_that_does_not_parse_is_a_value_error():
    meta = _meta_graph()
    meta.collection_def["variables"].bytes_list.value[0] = b"\xff\xff\xff"
    with pytest.raises(ValueError, match="Collection 'variables': value 0 is not a serialized "
                                         "variable_pb2.VariableDef"):
        _import_meta(meta)


@pytest.mark.parametrize("field", ["filename_tensor_name", "save_tensor_name",
                                   "restore_op_name"])
def test_a_saver_def_naming_missing_ops_is_a_value_error(field):
    meta = _meta_graph()
    setattr(meta.saver_def, field, "nowhere:0" if field.endswith("tensor_name") else "nowhere")
    with pytest.raises(ValueError, match="saver_def names %s 'nowhere" % field):
        _import_meta(meta)


def test_a_malformed_graph_inside_a_meta_graph_is_a_value_error():
    meta = _meta_graph()
    meta.graph_def.node[-1].input.append("v:7")
    with pytest.raises(ValueError, match="invalid output 7 of source node v"):
        _import_meta(meta)


def test_a_file_that_is_no_meta_graph_is_an_os_error(tmp_path):
    path = tmp_path / "model.meta"
    path.write_bytes(b"\x00garbage\xff" * 10)
    with pytest.raises(OSError, match="is not a MetaGraphDef"):
        _import_meta(str(path))
