"""Where Graphviz puts what ``minitf.draw`` draws: read back from ``dot``'s JSON layout.

The autodiff picture has its forward ops above the ``gradients/`` box and no
device legend; the device notebook's pictures (notebooks/06) have edge labels
that neither cross another edge nor crowd one another.  These tests need
Graphviz's ``dot`` program, and skip, saying so, without it.
"""

import itertools
import json

import numpy as np
import pytest

import minitf as tf

pytest.importorskip("graphviz", reason="the `graphviz` Python package is missing: "
                    "pip install -e '.[test]' (or '.[viz]')")
from minitf import draw  # noqa: E402 - after the importorskip above

pytestmark = pytest.mark.skipif(not draw.dot_available(),
                                reason="Graphviz's `dot` program is missing: apt-get install "
                                       "graphviz")
THREE_CPUS = tf.ConfigProto(device_count={"CPU": 3}, device_processes=False)
MIN_LABEL_GAP = 8.0  # points between two edge labels on the same line


def _layout(digraph):
    return json.loads(digraph.pipe(format="json").decode())


def _label_boxes(layout):
    """``[(edge index, text, x0, y0, x1, y1)]``: each edge label's box, in points."""
    boxes = []
    for index, edge in enumerate(layout.get("edges", [])):
        for op in edge.get("_ldraw_", []):
            if op["op"] == "T":
                x, y = op["pt"]
                left = {"l": x, "c": x - op["width"] / 2, "r": x - op["width"]}[op["align"]]
                boxes.append((index, op["text"], left, y - 2, left + op["width"], y + 9))
    return boxes


def _curves(layout):
    """``{edge index: points sampled along its Bézier curve}``."""
    curves = {}
    for index, edge in enumerate(layout.get("edges", [])):
        for op in edge.get("_draw_", []):
            if op["op"] == "b":
                points = np.array(op["points"], dtype=float)
                t = np.linspace(0, 1, 40)[:, None]
                samples = [(1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t * t * p2
                           + t ** 3 * p3
                           for p0, p1, p2, p3 in (points[k:k + 4]
                                                  for k in range(0, len(points) - 3, 3))]
                curves[index] = np.concatenate(samples)
    return curves


def _crowded_labels(digraph):
    """Edge labels that cross another edge, or sit closer than MIN_LABEL_GAP to another label."""
    layout = _layout(digraph)
    boxes, curves = _label_boxes(layout), _curves(layout)
    problems = []
    for index, text, x0, y0, x1, y1 in boxes:
        for other, points in curves.items():
            inside = ((points[:, 0] > x0) & (points[:, 0] < x1)
                      & (points[:, 1] > y0) & (points[:, 1] < y1))
            if other != index and inside.any():
                problems.append("%r crosses edge %d" % (text, other))
    for a, b in itertools.combinations(boxes, 2):
        same_line = a[3] < b[5] and b[3] < a[5]
        gap = max(b[2] - a[4], a[2] - b[4])
        if same_line and gap < MIN_LABEL_GAP:
            problems.append("%r and %r are %.0f pt apart" % (a[1], b[1], gap))
    return problems


def _placement_graph():
    """The graph of notebook 06's placement section (cells 9, 13 and 15)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/cpu:1"):
            v = tf.Variable([1.0, 2.0, 3.0], name="v")
        tf.assign_add(v, [1.0, 1.0, 1.0], name="bump")
        squared = tf.square(v, name="squared")
        with tf.device("/cpu:2"):
            total = tf.add(squared, x, name="total")
        with tf.colocate_with(total):
            label = tf.identity(total, name="label")
        with tf.device("/cpu:0"):
            result = tf.reduce_sum(label, name="result")
    return graph, x, result


def test_the_device_notebooks_graph_has_uncrowded_edge_labels():
    graph, _, _ = _placement_graph()
    assert _crowded_labels(draw.draw_graph(graph, title="the graph, by requested device")) == []


def test_the_device_notebooks_partitions_have_uncrowded_edge_labels():
    graph, x, result = _placement_graph()
    with tf.Session(graph=graph, config=THREE_CPUS) as sess:
        parts = sess.partition_graphs(result, {x: [0.5, 0.5, 0.5]})
    assert _crowded_labels(draw.draw_graph(parts, title="the partitions of `result`")) == []


def _gradients_picture(**options):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, shape=[3], name="x")
        w = tf.constant([1.0, -2.0, 0.5], dtype=tf.float64, name="w")
        y = tf.reduce_sum(tf.tanh(x * w), name="y")
        tf.gradients(y, [x])
    return draw.draw_graph(graph, **options)


def test_the_forward_graph_is_drawn_above_the_gradients_box():
    layout = _layout(_gradients_picture())
    (box,) = [g for g in layout["objects"] if g.get("label") == "gradients/"]
    box_top = float(box["bb"].split(",")[3])          # y grows upwards in dot's coordinates
    nodes = [o for o in layout["objects"] if "pos" in o and o.get("style") != "invis"]
    forward = [o for o in nodes if not o["name"].split("/", 1)[1].startswith("gradients/")]
    backward = [o for o in nodes if o["name"].split("/", 1)[1].startswith("gradients/")]
    assert {o["name"] for o in forward} >= {"(no device)/x", "(no device)/w", "(no device)/y"}
    assert backward and all(o["_gvid"] in box["nodes"] for o in backward)
    assert min(float(o["pos"].split(",")[1]) for o in forward) > box_top


def test_no_device_legend_without_devices():
    source = _gradients_picture().source
    assert "legend" not in source and "devices" not in source
    (table,) = [line for line in _gradients_picture(legend=True).source.splitlines()
                if line.strip().startswith("legend [")]
    assert "<B>legend</B>" in table and "data: dtype (shape)" in table
    assert "devices" not in table and "(no device)" not in table
