"""Pictures of graphs and partitions (``minitf.draw``), checked on their DOT source.

Only the SVG test needs Graphviz's ``dot`` program; everything else reads the
DOT text, which the pure-Python ``graphviz`` package writes.
"""

import re
import shutil

import numpy as np
import pytest

import minitf as tf

graphviz = pytest.importorskip("graphviz", reason="the `graphviz` Python package is missing: "
                               "pip install -e '.[test]' (or '.[viz]')")
from minitf import draw  # noqa: E402 - after the importorskip above

TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2}, device_processes=False)
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"

_STATEMENT = re.compile(r'^\s*("[^"]*"|\w+)(?: -> ("[^"]*"|\w+))? \[(.*)\]$')
_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|<.*>|[^\s\]]+)')


def _parse(source):
    """``(nodes, edges)`` of DOT text: ``{id: attrs}`` and ``[(tail, head, attrs)]``."""
    nodes, edges = {}, []
    for line in source.splitlines():
        match = _STATEMENT.match(line)
        if not match or match.group(1) in ("graph", "node", "edge"):
            continue
        attrs = {k: v.strip('"') for k, v in _ATTR.findall(match.group(3))}
        tail, head = match.group(1).strip('"'), match.group(2)
        if head is None:
            nodes[tail] = attrs
        else:
            edges.append((tail, head.strip('"'), attrs))
    return nodes, edges


def _clusters(source):
    """``{cluster label: [node ids]}``."""
    clusters, current = {}, None
    for line in source.splitlines():
        if line.strip().startswith("subgraph cluster_"):
            current = []
        elif current is not None and " label=" in line and "[" not in line.split("label=")[0]:
            label = re.search(r' label="([^"]*)"', line).group(1)
            clusters[label] = current
        elif current is not None and line.strip() == "}":
            current = None
        elif current is not None:
            match = _STATEMENT.match(line)
            if match:
                current.append(match.group(1).strip('"'))
    return clusters


def _model():
    """x (fed) -> matmul/relu on cpu:1 -> sum on cpu:0, plus a cross-device control edge."""
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    with tf.device("/cpu:1"):
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        h = tf.nn.relu(tf.matmul(x, w), name="h")
    with tf.device("/cpu:0"):
        y = tf.reduce_sum(h, name="y")
        with tf.control_dependencies([h.op]):
            z = tf.identity(y, name="z")
    return x, w, h, y, z


def test_graph_nodes_are_grouped_and_coloured_by_device():
    x, w, h, y, z = _model()
    digraph = draw.draw_graph(tf.get_default_graph())
    assert isinstance(digraph, graphviz.Digraph)
    nodes, _ = _parse(digraph.source)
    clusters = _clusters(digraph.source)
    assert set(clusters) == {"CPU:0", "CPU:1", draw.NO_DEVICE}
    assert "CPU_1/h" in clusters["CPU:1"] and "CPU_0/y" in clusters["CPU:0"]
    assert clusters[draw.NO_DEVICE] == ["(no device)/x"]  # x has no tf.device request
    colour = {label: {nodes[n]["fillcolor"] for n in ids} for label, ids in clusters.items()}
    assert all(len(c) == 1 for c in colour.values()), "one colour per device"
    assert len({c.pop() for c in colour.values()}) == 3, "devices have different colours"
    assert nodes["CPU_1/h"]["label"] == r"h\nRelu"
    assert "CPU:0" in nodes["legend"]["label"] and "CPU:1" in nodes["legend"]["label"]


def test_a_device_keeps_its_colour_from_picture_to_picture():
    _model()
    with tf.device("/cpu:1"):
        tf.constant(1.0, name="alone")
    full, _ = _parse(draw.to_dot(tf.get_default_graph()))
    graph = tf.Graph()
    with graph.as_default(), tf.device("/cpu:1"):
        tf.constant(1.0, name="alone")
    only_cpu1, _ = _parse(draw.to_dot(graph))
    assert full["CPU_1/alone"]["fillcolor"] == only_cpu1["CPU_1/alone"]["fillcolor"]


def test_data_edges_carry_dtype_and_shape_control_edges_are_dashed():
    _model()
    _, edges = _parse(draw.to_dot(tf.get_default_graph()))
    by_ends = {(t, h): a for t, h, a in edges}
    assert by_ends[("CPU_1/MatMul", "CPU_1/h")]["label"] == "float32 (4, 2)"
    assert by_ends[("(no device)/x", "CPU_1/MatMul")]["label"] == "float32 (4, 3)"
    assert by_ends[("CPU_1/w", "CPU_1/w/read")]["label"] == "float32_ref (3, 2)"
    control = by_ends[("CPU_1/h", "CPU_0/z")]
    assert control["style"] == "dashed" and "label" not in control
    assert all(a.get("style") != "dashed" for (t, h), a in by_ends.items()
               if (t, h) != ("CPU_1/h", "CPU_0/z"))
    _, unlabelled = _parse(draw.to_dot(tf.get_default_graph(), show_shapes=False))
    assert all(not a.get("label") for _, _, a in unlabelled)


def test_a_placement_dict_decides_the_colours():
    a = tf.constant(1.0, name="a")
    b = tf.add(a, 2.0, name="b")
    placement = {a.op: CPU1, "b": CPU0}  # ops or names -> device names
    clusters = _clusters(draw.to_dot(tf.get_default_graph(), placement))
    assert clusters["CPU:1"] == ["CPU_1/a"]
    assert clusters["CPU:0"] == ["CPU_0/b"]
    assert clusters[draw.NO_DEVICE] == ["(no device)/b/y"]  # not in the placement
    del b


def test_partitions_show_send_recv_pairs_across_devices():
    x, w, h, y, z = _model()
    with tf.Session(config=TWO_CPUS) as sess:
        parts = sess.partition_graphs(z, {x: np.ones((4, 3), np.float32)})
    source = draw.to_dot(parts)
    nodes, edges = _parse(source)
    clusters = _clusters(source)
    assert set(clusters) == {"CPU:0", "CPU:1"}
    # the same op name (the fed x's placeholder) may live in two partitions: ids differ
    assert "CPU_1/_arg_x_0" in nodes
    sends = {n for n, a in nodes.items() if a.get("shape") == "house"}
    recvs = {n for n, a in nodes.items() if a.get("shape") == "invhouse"}
    pairs = [(t, hd, a) for t, hd, a in edges if a.get("style") == "dotted"]
    assert len(pairs) == 2 == len(sends) == len(recvs)  # h's value and the control edge
    for tail, head, attrs in pairs:
        assert tail in sends and head in recvs
        assert tail.split("/")[0] != head.split("/")[0], "a pair joins two devices"
        assert attrs["color"] == draw.SEND_RECV_COLOR
        key = attrs["tooltip"].split(";")  # the rendezvous key
        assert [key[0], key[2]] == [CPU1, CPU0]
    labels = sorted(a["label"] for _, _, a in pairs)
    assert labels == ["^h", "h:0"]
    assert nodes["CPU_1/_send_h_0_to_CPU_0"]["label"] == r"_send_h_0_to_CPU_0\n_Send h:0 to CPU:0"


def test_wrong_arguments_are_explained():
    with pytest.raises(TypeError, match="partition_graphs"):
        draw.draw_graph([tf.constant(1.0)])
    graph = tf.get_default_graph()
    with pytest.raises(ValueError, match="placement"):
        draw.draw_graph({CPU0: graph}, placement={})


def test_rendering_without_dot_says_how_to_install_it(monkeypatch):
    tf.constant(1.0)
    monkeypatch.setattr(draw.shutil, "which", lambda name: None)
    with pytest.raises(draw.DotNotFoundError, match="apt-get install graphviz"):
        draw.to_svg(tf.get_default_graph())
    assert "digraph" in draw.to_dot(tf.get_default_graph())  # the source needs no dot


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="GRAPHVIZ `dot` IS NOT INSTALLED: the SVG rendering test did not run "
                           "(sudo apt-get install graphviz)")
def test_renders_svg_with_dot(tmp_path):
    x, w, h, y, z = _model()
    with tf.Session(config=TWO_CPUS) as sess:
        parts = sess.partition_graphs(z, {x: np.ones((4, 3), np.float32)})
    svg = draw.to_svg(parts, title="two devices")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "_send_h_0_to_CPU_0" in svg and "two devices" in svg
    path = draw.render(parts, str(tmp_path / "parts.svg"))
    assert (tmp_path / "parts.svg").read_text().count("<g id=\"node") == len(
        [op for g in parts.values() for op in g.get_operations()]) + 1  # + the legend
    assert path.endswith("parts.svg")
