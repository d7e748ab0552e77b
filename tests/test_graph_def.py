"""GraphDef round trips: export, JSON, import into a fresh graph, run."""

import json

import numpy as np
import pytest

import minitf as tf
from minitf.framework.graph_def import import_graph_def, to_json


def _build():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0, 2.0]], np.float32), name="w")
    y = tf.add(x, w, name="y")
    with tf.control_dependencies([y]):
        done = tf.no_op(name="done")
    return x, w, y, done


def test_round_trip_through_json_runs_the_same():
    _build()
    text = to_json(tf.get_default_graph().as_graph_def())
    assert "pickle" not in text
    json.loads(text)  # plain JSON
    imported = tf.Graph()
    with imported.as_default():
        y, init = import_graph_def(text, return_elements=["y:0", "w/Assign"], name="copy")
        assert y.name == "copy/y:0" and y.shape.as_list() == [None, 2]
        assert imported.get_operation_by_name("copy/done").control_inputs == [y.op]
        with tf.Session() as sess:
            sess.run(init)
            out = sess.run(y, {"copy/x:0": [[1.0, 1.0], [0.0, 0.0]]})
    np.testing.assert_array_equal(out, [[2.0, 3.0], [1.0, 2.0]])


def test_input_map_replaces_tensors():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        z = tf.constant([[5.0, 5.0]])
        (y,) = import_graph_def(graph_def, input_map={"x:0": z}, return_elements=["y:0"],
                                name="")
        with tf.Session() as sess:
            sess.run(tf.get_default_graph().get_operation_by_name("w/Assign"))
            np.testing.assert_array_equal(sess.run(y), [[6.0, 7.0]])


def test_missing_inputs_and_elements_are_errors():
    _build()
    graph_def = tf.get_default_graph().as_graph_def()
    graph_def["node"] = [n for n in graph_def["node"] if n["name"] != "x"]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'x'"):
            import_graph_def(graph_def)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="nope"):
            import_graph_def({"node": []}, return_elements=["nope:0"])
