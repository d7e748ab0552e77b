"""Pictures of graphs and partitions (``minitf.draw``), checked on their DOT source.

Only the SVG test needs Graphviz's ``dot`` program; everything else reads the
DOT text, which the pure-Python ``graphviz`` package writes.
"""

import collections
import html
import importlib.util
import pathlib
import re
import shutil

import numpy as np
import pytest

import minitf as tf

graphviz = pytest.importorskip("graphviz", reason="the `graphviz` Python package is missing: "
                               "pip install -e '.[test]' (or '.[viz]')")
from minitf import draw  # noqa: E402 - after the importorskip above

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
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
    """``{cluster label: [node ids]}``: each box's nodes, those of the boxes inside it too."""
    return {label: ids for label, ids, _ in _boxes(source)}


def _boxes(source):
    """``[(label, [node ids], label of the enclosing box or None)]`` of the nested clusters."""
    boxes, stack = [], []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith("subgraph cluster_"):
            stack.append([None, [], stack[-1][0] if stack else None])
            boxes.append(stack[-1])
        elif stack and stripped == "}":
            stack.pop()
        elif stack and " label=" in line and "[" not in line.split("label=")[0]:
            stack[-1][0] = re.search(r' label="([^"]*)"', line).group(1)
        elif stack:
            match = _STATEMENT.match(line)
            if match and match.group(2) is None:
                for box in stack:
                    box[1].append(match.group(1).strip('"'))
    return [tuple(box) for box in boxes]


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
    # the pair's edge has no label: both ends name the tensor, and the key is the tooltip
    assert all("label" not in a for _, _, a in pairs)
    assert sorted(a["tooltip"].split(";")[3] for _, _, a in pairs) == ["^h", "h:0"]
    assert nodes["CPU_1/_send_h_0_to_CPU_0"]["label"] == r"_Send\nh:0\nto CPU:0"
    assert nodes["CPU_0/_recv_h_0_to_CPU_0"]["label"] == r"_Recv\nh:0\nfrom CPU:1"
    assert "_send_h_0_to_CPU_0" in nodes["CPU_1/_send_h_0_to_CPU_0"]["tooltip"]


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


# ---- one Session.run call: what pruning skips -----------------------------------------
def _pruning_graph():
    """The graph of notebook 01: total = a + b, hidden = total + 1, and an unrelated branch."""
    a = tf.placeholder(tf.float32, shape=[], name="a")
    b = tf.constant(2.0, name="b")
    total = tf.add(a, b, name="total")
    hidden = tf.add(total, 1.0, name="hidden")
    unrelated = tf.placeholder(tf.float32, name="unrelated")
    tf.add(unrelated, 100.0, name="scaled")
    return total, hidden


def test_ops_a_run_does_not_need_are_grey_and_fed_edges_blue():
    total, hidden = _pruning_graph()
    source = draw.to_dot(tf.get_default_graph(), fetches=hidden, feed_dict={total: 41.0})
    nodes, edges = _parse(source)
    grey = {n.split("/", 1)[1] for n, a in nodes.items() if a["fillcolor"] == draw.SKIPPED_FILL}
    # total is fed: a, b and total itself do not run; nor does the unrelated branch
    assert grey == {"a", "b", "total", "unrelated", "scaled", "scaled/y"}
    assert nodes["(no device)/hidden"]["penwidth"] == "3", "the fetch is drawn thick"
    assert "penwidth" not in nodes["(no device)/hidden/y"]
    by_ends = {(t.split("/", 1)[1], h.split("/", 1)[1]): a for t, h, a in edges}
    fed = by_ends[("total", "hidden")]
    assert fed["color"] == draw.FEED_COLOR and fed["label"] == "fed float32 ()"
    assert by_ends[("a", "total")]["color"] == draw.SKIPPED_LINE   # into an op that is skipped
    assert by_ends[("hidden/y", "hidden")].get("color") is None    # an edge the run uses
    assert "legend" not in nodes, "one device: no legend"


def test_fetches_may_be_names_lists_and_target_ops():
    total, hidden = _pruning_graph()
    graph = tf.get_default_graph()

    def grey(**run):
        nodes, _ = _parse(draw.to_dot(graph, **run))
        return {n.split("/", 1)[1] for n, a in nodes.items() if a["fillcolor"] == draw.SKIPPED_FILL}

    assert grey(fetches="hidden:0", feed_dict=["total:0"]) == grey(
        fetches=hidden, feed_dict={total: 1.0})
    assert grey(fetches=[hidden.op]) == {"unrelated", "scaled", "scaled/y"}
    assert grey(fetches=["scaled", total]) == {"hidden", "hidden/y"}
    nodes, _ = _parse(draw.to_dot(graph, fetches=hidden, legend=True))
    assert "pruned" in nodes["legend"]["label"]


def test_pruning_pictures_need_a_graph_and_fetches():
    total, hidden = _pruning_graph()
    with pytest.raises(ValueError, match="fetches"):
        draw.draw_graph(tf.get_default_graph(), feed_dict={total: 1.0})
    with pytest.raises(ValueError, match="Graph"):
        draw.draw_graph({CPU0: tf.get_default_graph()}, fetches=hidden)
    with pytest.raises(KeyError):
        draw.draw_graph(tf.get_default_graph(), fetches="no_such_op:0")


# ---- devices: a box and a legend only when there is more than one -------------------
def test_one_device_has_neither_box_nor_legend():
    with tf.device("/cpu:0"):
        tf.add(tf.constant(1.0, name="a"), 2.0, name="b")
    source = draw.to_dot(tf.get_default_graph())
    nodes, _ = _parse(source)
    assert "subgraph" not in source and "legend" not in nodes
    assert nodes["CPU_0/b"]["fillcolor"] == draw.PALETTE[0], "still the colour of CPU:0"
    nodes, _ = _parse(draw.to_dot(tf.get_default_graph(), legend=True))
    assert "CPU:0" in nodes["legend"]["label"]
    assert "control dependency" not in nodes["legend"]["label"], "only styles it shows"
    _model()                                    # now three devices
    nodes, _ = _parse(draw.to_dot(tf.get_default_graph()))
    assert "legend" in nodes
    nodes, _ = _parse(draw.to_dot(tf.get_default_graph(), legend=False))
    assert "legend" not in nodes


# ---- gradients/: a box of its own, below the forward ops -----------------------------
def _gradients_graph():
    """Notebook 02's function, its gradient, and an update that reads the gradient."""
    x = tf.placeholder(tf.float64, shape=[3], name="x")
    w = tf.Variable(np.array([1.0, -2.0, 0.5]), name="w")
    y = tf.reduce_sum(tf.tanh(x * w), name="y")
    dy_dx, dy_dw = tf.gradients(y, [x, w])
    tf.assign_sub(w, 0.1 * dy_dw, name="update")
    return y, dy_dx


def test_the_gradients_scope_is_a_box_below_the_forward_ops():
    _gradients_graph()
    graph = tf.get_default_graph()
    source = draw.to_dot(graph)
    nodes, edges = _parse(source)
    boxes = _boxes(source)
    assert [label for label, _, _ in boxes] == ["gradients/"]
    inside = set(boxes[0][1])
    assert inside == {"(no device)/" + op.name for op in graph.get_operations()
                      if op.name.startswith("gradients/")}
    # inside the box, names drop the prefix that the box's label gives
    assert nodes["(no device)/gradients/Tanh_grad/TanhGrad"]["label"] == r"Tanh_grad/TanhGrad\nTanhGrad"
    # invisible edges: the forward ops' last ones -> "order" -> the box's first ones
    into = {t for t, h, a in edges if h == "order"}
    out_of = {h for t, h, a in edges if t == "order"}
    assert all(a["style"] == "invis" for t, h, a in edges if "order" in (t, h))
    assert "(no device)/y" in into and not into & inside
    assert out_of <= inside and "(no device)/gradients/grad_ys_0" in out_of
    # the update reads the gradient: it is drawn after it, not ranked above it
    assert not any(name.startswith("(no device)/update") for name in into | out_of)
    assert "legend" not in nodes


def test_a_second_gradients_call_gets_its_own_box_and_boxes_can_be_turned_off():
    y, dy_dx = _gradients_graph()
    tf.gradients(tf.reduce_sum(dy_dx), [dy_dx])
    labels = [label for label, _, _ in _boxes(draw.to_dot(tf.get_default_graph()))]
    assert labels == ["gradients/", "gradients_1/"]
    source = draw.to_dot(tf.get_default_graph(), boxed_scopes=())
    assert "subgraph" not in source and '"order"' not in source
    assert draw.boxed_scope("gradients_12/Fill", ["gradients"]) == "gradients_12"
    assert draw.boxed_scope("gradients", ["gradients"]) is None        # an op, not a scope
    assert draw.boxed_scope("my_gradients/Fill", ["gradients"]) is None


# ---- control flow: cond branches and while frames are boxes ---------------------------
def test_a_cond_draws_its_branches_in_boxes_between_switch_and_merge():
    x = tf.placeholder(tf.float32, [], name="x")
    tf.cond(x > 0, lambda: tf.square(x, name="square"), lambda: tf.negative(x, name="neg"),
            name="cond")
    source = draw.to_dot(tf.get_default_graph(), show_shapes=False)
    clusters = _clusters(source)
    assert set(clusters) == {"cond: true branch", "cond: false branch"}
    assert set(clusters["cond: true branch"]) == {"(no device)/cond/square",
                                                  "(no device)/cond/square/Switch"}
    assert set(clusters["cond: false branch"]) == {"(no device)/cond/neg",
                                                   "(no device)/cond/neg/Switch"}
    _, edges = _parse(source)
    by_ends = {(t, h): a for t, h, a in edges}
    # without shapes a Switch's edges still say which output: :1 is the true side
    assert by_ends[("(no device)/cond/square/Switch", "(no device)/cond/square")]["label"] == ":1"
    assert by_ends[("(no device)/cond/neg/Switch", "(no device)/cond/neg")]["label"] == ":0"
    assert by_ends[("(no device)/x", "(no device)/Greater")]["label"] == ""


def test_a_while_loop_draws_its_ring_inside_its_frame():
    n = tf.placeholder(tf.int32, [], name="n")
    tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * i),
                  (tf.constant(0), tf.constant(0)), name="loop")
    graph = tf.get_default_graph()
    source = draw.to_dot(graph)
    clusters = _clusters(source)
    assert list(clusters) == ["while frame loop/while_context"]
    frame = set(clusters["while frame loop/while_context"])
    assert frame == {"(no device)/" + op.name for op in graph.get_operations()
                     if op.name.startswith("loop/")}
    ring = {op.type for op in graph.get_operations() if "(no device)/" + op.name in frame}
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "LoopCond"} <= ring
    assert "(no device)/n" not in frame
    _, edges = _parse(source)
    back = [(t, h, a) for t, h, a in edges if "NextIteration" in t]
    assert len(back) == 2
    for tail, head, attrs in back:      # the edge closing the ring does not rank the layout
        assert head.startswith("(no device)/loop/Merge") and attrs["constraint"] == "false"
    enter_to_merge = {(t, h): a for t, h, a in edges}[
        ("(no device)/loop/Enter", "(no device)/loop/Merge")]
    assert "constraint" not in enter_to_merge


def test_frames_nest_and_can_be_turned_off():
    x = tf.placeholder(tf.float32, [], name="x")

    def body(i, v):
        return i + 1, tf.cond(v > 10.0, lambda: v, lambda: v * 2.0, name="inner")
    tf.while_loop(lambda i, v: i < 3, body, (0, x), name="outer")
    boxes = _boxes(draw.to_dot(tf.get_default_graph()))
    parents = {label: parent for label, _, parent in boxes}
    assert parents == {"while frame outer/while_context": None,
                       "outer/inner: true branch": "while frame outer/while_context",
                       "outer/inner: false branch": "while frame outer/while_context"}
    assert "subgraph" not in draw.to_dot(tf.get_default_graph(), frames=False)


def test_boxes_nest_inside_device_boxes():
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = tf.square(x, name="y")
    with tf.device("/cpu:0"):
        tf.gradients(y, [x])
    boxes = _boxes(draw.to_dot(tf.get_default_graph()))
    assert ("gradients/", "CPU:0") in {(label, parent) for label, _, parent in boxes}


# ---- the docs' pictures ---------------------------------------------------------------
def _make_pictures():
    """docs/make_pictures.py, the script drawing the docs' pictures, as a module."""
    spec = importlib.util.spec_from_file_location("make_pictures", DOCS / "make_pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _svg_contents(svg):
    """``(node titles, number of edges, text lines)`` of an SVG that ``dot`` wrote."""
    titles = re.findall(r'class="node">\s*<title>(.*?)</title>', svg)
    texts = re.findall(r"<text[^>]*>(.*?)</text>", svg)
    return ({html.unescape(t) for t in titles}, svg.count('class="edge"'),
            collections.Counter(html.unescape(t) for t in texts))


@pytest.mark.parametrize("name", sorted(_make_pictures().DRAWINGS))
def test_the_docs_pictures_are_what_minitf_draws_today(name):
    """A checked-in SVG must show the nodes, edges and labels its program draws now.

    Compared without Graphviz: node ids, edge count and label text, not pixels.
    """
    path = DOCS / "pictures" / (name + ".svg")
    assert path.exists(), "run python docs/make_pictures.py"
    source = _make_pictures().DRAWINGS[name]().source
    nodes, edges = _parse(source)
    visible = {n for n, a in nodes.items() if a.get("style") != "invis"}
    titles, edge_count, texts = _svg_contents(path.read_text())
    stale = "docs/pictures/%s.svg is out of date: run python docs/make_pictures.py" % name
    assert titles == visible, stale
    assert edge_count == len([e for e in edges if e[2].get("style") != "invis"]), stale
    lines = [line for a in nodes.values() if not a.get("label", "").startswith("<")
             for line in a.get("label", "").split(r"\n")]
    lines += [a["label"] for _, _, a in edges if a.get("label")]
    lines += [label for label, _, _ in _boxes(source)]
    wanted = collections.Counter(line for line in lines if line)
    assert not wanted - texts, stale + " (labels differ: %s)" % sorted(wanted - texts)
