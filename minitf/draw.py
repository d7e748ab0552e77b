"""Pictures of graphs and their partitions: devices, pruning, gradients, loops.

``draw_graph`` turns a :class:`~minitf.framework.graph.Graph` — or the
``{device name: partition Graph}`` dict that ``Session.partition_graphs``
returns — into a ``graphviz.Digraph``:

* every op is a node, labelled with its name and type, filled with the colour
  of its device; with more than one device, the ops of each sit in one box (a
  *cluster*) labelled with the device's name, and a legend lists the devices
  and edge styles (one device needs neither; ops placed nowhere get no device
  swatches);
* a data edge runs from producer to consumer, labelled with the tensor's dtype
  and static shape (``float32 (4, 2)``); a control edge is dashed;
* ``fetches`` (and ``feed_dict``) draw one ``Session.run`` call: the ops that
  pruning leaves out are grey, a fed tensor's edge is blue — the picture of
  TF's ``PruneForTargets``;
* the ops of a *boxed name scope* — by default ``gradients/``, what
  ``tf.gradients`` built — sit in a coloured box below the forward ops;
* each ``tf.cond`` branch and each ``tf.while_loop`` frame is a box of its
  own: a cond's ``Switch`` and ``Merge`` stand outside its branches, a loop's
  ``Enter``/``Merge``/``Switch``/``NextIteration``/``Exit`` ring inside its frame;
* in partitions, each ``_Send`` is joined to the ``_Recv`` with the same
  rendezvous key (``src_device;dst_device;tensor_name;0:0``) by a dotted red
  edge that crosses from one device's box to the other's — the edge the
  partitioner cut.

Example:
    >>> parts = sess.partition_graphs(y, {x: batch})
    >>> print(to_dot(parts))          # the DOT source: needs no Graphviz program
    >>> render(parts, "parts.svg")    # a picture: needs Graphviz's ``dot``
    >>> render(graph, "run.svg", fetches=y, feed_dict={x: batch})   # what runs

Building the picture needs only the pure-Python ``graphviz`` package
(``pip install minitf[viz]``); turning it into SVG or PNG needs Graphviz's
``dot`` program (``apt-get install graphviz``).  In Jupyter a returned Digraph
displays itself (with ``dot``).  TensorBoard's graph view is the TF1 tool this
stands in for.
"""

import itertools
import re
import shutil

from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph
from minitf.framework.operation import Operation
from minitf.runtime.planning.subgraph import prune
from minitf.runtime.rendezvous import rendezvous_key

# ColorBrewer's "Set3": light colours that black text stays readable on.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
           "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9")
NO_DEVICE = "(no device)"
NO_DEVICE_COLOR = "#ffffff"
SEND_RECV_COLOR = "#d62728"
# Ops a Session.run call prunes: drawn, but faded.
SKIPPED_FILL, SKIPPED_TEXT, SKIPPED_LINE = "#f2f2f2", "#a0a0a0", "#c8c8c8"
FEED_COLOR = "#1f77b4"
# The boxes that are not devices: (border, fill).
SCOPE_COLORS = ("#e6550d", "#fff1e3")    # a boxed name scope: gradients/
WHILE_COLORS = ("#3182bd", "#eef5fb")    # a while loop's frame
COND_COLORS = ("#31a354", "#eff8ec")     # a cond branch

INSTALL_DOT = (
    "Rendering a picture needs Graphviz's `dot` program, which is not on PATH. Install it "
    "with `sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) "
    "or `conda install graphviz`. Without it, `minitf.draw.to_dot(...)` still gives the DOT "
    "source, which https://dreampuf.github.io/GraphvizOnline or any Graphviz viewer renders.")
INSTALL_GRAPHVIZ_PACKAGE = (
    "Drawing graphs needs the Python package `graphviz`: `pip install 'minitf[viz]'` "
    "(or `pip install graphviz`).")


class DotNotFoundError(RuntimeError):
    """Raised when a picture is rendered but Graphviz's ``dot`` program is missing."""


def dot_available():
    """True when Graphviz's ``dot`` program is on PATH (needed to render, not to draw)."""
    return shutil.which("dot") is not None


def require_dot():
    """Raises :class:`DotNotFoundError`, saying how to install Graphviz, if ``dot`` is missing."""
    if not dot_available():
        raise DotNotFoundError(INSTALL_DOT)


def draw_graph(graph_or_partitions, placement=None, show_shapes=True, rankdir="TB",
               colors=None, title=None, legend=None, fetches=None, feed_dict=None,
               boxed_scopes=("gradients",), frames=True):
    """Draws a graph, or a session's partitions, as a ``graphviz.Digraph``.

    Args:
        graph_or_partitions: a Graph, or the ``{device name: Graph}`` dict of
            ``Session.partition_graphs`` (each partition drawn in its device's box).
        placement: for a Graph, an optional dict from Operation (or op name) to
            the Device (or device name) it was placed on; ops missing from it
            are drawn as ``(no device)``.  Without it, ops are grouped by their
            requested device, ``op.device``.
        show_shapes: label data edges with dtype and shape.
        rankdir: Graphviz's layout direction, ``"TB"`` (top to bottom) or ``"LR"``.
        colors: optional ``{device name: colour}`` overriding the palette.
        title: a caption for the picture.
        legend: add a table of the device colours and edge styles; ``None``
            (the default) adds it when the picture has more than one device.
        fetches: for a Graph, a Tensor, Operation or name — or a list of them —
            to draw the ``Session.run(fetches, feed_dict)`` call: the ops it
            does not run are grey, the fetched ones have a thick border.
        feed_dict: with ``fetches``, the fed tensors (a dict's keys, or a list;
            tensors or names): their edges are blue, and what only they
            needed is grey.
        boxed_scopes: top-level name scopes whose ops get a box of their own,
            below the other ops (``gradients`` also boxes ``gradients_1``, ...).
        frames: box each ``tf.cond`` branch and each ``tf.while_loop`` frame.

    Returns:
        A ``graphviz.Digraph``; ``.source`` is its DOT text.

    Raises:
        TypeError: if the argument is neither a Graph nor a dict of Graphs.
        ValueError: if ``placement`` or ``fetches`` is given with partitions.
        ImportError: if the ``graphviz`` package is not installed.
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError(INSTALL_GRAPHVIZ_PACKAGE) from None
    groups = _groups(graph_or_partitions, placement)
    running, fetched, fed = _what_runs(graph_or_partitions, fetches, feed_dict)
    dot = graphviz.Digraph(name="minitf", graph_attr={
        "rankdir": rankdir, "fontname": "Helvetica", "fontsize": "11", "newrank": "true",
        "nodesep": "0.45", "ranksep": "0.45",
        "label": title or "", "labelloc": "t"})
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="10")
    dot.attr("edge", fontname="Helvetica", fontsize="9", color="#444444")
    picture = _Picture(dot, _colours([device for device, _ in groups], colors or {}),
                       running, fetched, fed, show_shapes, tuple(boxed_scopes))
    picture.draw_boxes(groups, device_boxes=len(groups) > 1, frames=frames)
    picture.draw_edges()
    picture.draw_send_recv_edges()
    picture.put_boxed_scopes_below()
    if legend or (legend is None and len(groups) > 1):
        picture.draw_legend()
    return dot


def to_dot(graph_or_partitions, placement=None, **options):
    """The DOT source of :func:`draw_graph`'s picture (no Graphviz program needed)."""
    return draw_graph(graph_or_partitions, placement, **options).source


def to_svg(graph_or_partitions, placement=None, **options):
    """The picture as SVG text.  Raises :class:`DotNotFoundError` without ``dot``."""
    require_dot()
    return draw_graph(graph_or_partitions, placement, **options).pipe(format="svg").decode()


def render(graph_or_partitions, path, placement=None, format=None, **options):
    """Writes the picture to ``path`` (format from its suffix: svg, png, pdf).

    Returns:
        ``path``.

    Raises:
        DotNotFoundError: if Graphviz's ``dot`` program is missing.
    """
    require_dot()
    fmt = format or str(path).rsplit(".", 1)[-1].lower()
    data = draw_graph(graph_or_partitions, placement, **options).pipe(format=fmt)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---- what to draw -------------------------------------------------------------------
def _groups(graph_or_partitions, placement):
    """``[(device name, [ops])]``: the boxes of the picture, devices sorted."""
    if isinstance(graph_or_partitions, Graph):
        by_device = {}
        for op in graph_or_partitions.get_operations():
            by_device.setdefault(_device_of(op, placement), []).append(op)
    elif isinstance(graph_or_partitions, dict) and all(
            isinstance(g, Graph) for g in graph_or_partitions.values()):
        if placement is not None:
            raise ValueError("Partitions are already placed (one Graph per device); "
                             "pass `placement` only with a single Graph.")
        by_device = {device: g.get_operations() for device, g in graph_or_partitions.items()}
    else:
        raise TypeError("draw_graph() takes a tf.Graph or the {device: Graph} dict of "
                        "Session.partition_graphs(), got %s" % type(graph_or_partitions).__name__)
    return sorted(by_device.items(), key=lambda item: _device_sort_key(item[0]))


def _device_of(op, placement):
    if placement is None:
        return op.device or NO_DEVICE
    device = placement.get(op, placement.get(op.name))
    if device is None:
        return NO_DEVICE
    return device if isinstance(device, str) else device.name


def _device_sort_key(device):
    if device == NO_DEVICE:
        return (1, "", "", -1, "")
    try:
        spec = DeviceSpec.from_string(device)
    except ValueError:
        return (0, device, "", -1, "")
    index = -1 if spec.device_index is None else spec.device_index
    return (0, spec.job or "", spec.device_type or "", index, device)


def short_device_name(device):
    """``CPU:1`` for ``/job:localhost/replica:0/task:0/device:CPU:1``; other names unchanged."""
    if device == NO_DEVICE:
        return device
    try:
        spec = DeviceSpec.from_string(device)
    except ValueError:
        return device
    local = spec.job in (None, "localhost") and spec.replica in (None, 0) and spec.task in (None, 0)
    if not local or spec.device_type is None:
        return device
    return "%s:%s" % (spec.device_type, "*" if spec.device_index is None else spec.device_index)


def _colours(devices, overrides):
    """A colour per device, the same in every picture: CPU:1 is always the same colour.

    The colour comes from the device's type and index; a device whose colour is
    already taken in this picture (an unusual name, or many devices) gets the
    next free one.
    """
    palette = {}
    for device in devices:
        if device == NO_DEVICE:
            palette[device] = overrides.get(device, NO_DEVICE_COLOR)
            continue
        start = _palette_index(device)
        used = set(palette.values())
        choices = [PALETTE[(start + k) % len(PALETTE)] for k in range(len(PALETTE))]
        free = [c for c in choices if c not in used] or choices
        palette[device] = overrides.get(device, free[0])
    return palette


def _palette_index(device):
    try:
        spec = DeviceSpec.from_string(device)
    except ValueError:
        return sum(map(ord, device))
    offset = {"CPU": 0, "GPU": 6}.get(spec.device_type, sum(map(ord, spec.device_type or "")))
    return offset + (spec.device_index or 0)


def _tint(colour, amount=0.75):
    """``colour`` mixed with white (the background of a device's box)."""
    if not (colour.startswith("#") and len(colour) == 7):
        return "#f7f7f7"
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join("%02x" % round(c + (255 - c) * amount) for c in rgb)


def _what_runs(graph_or_partitions, fetches, feed_dict):
    """``(ops run or None for all, ops fetched, tensors fed)``: pruning as ``Session.run`` does."""
    if fetches is None:
        if feed_dict:
            raise ValueError("feed_dict is drawn with the fetches it feeds: pass `fetches` too.")
        return None, frozenset(), frozenset()
    if not isinstance(graph_or_partitions, Graph):
        raise ValueError("Partitions hold only what a step runs; pass `fetches` with a Graph.")
    graph = graph_or_partitions
    if not isinstance(fetches, (list, tuple)):
        fetches = [fetches]
    elements = [graph.as_graph_element(f) for f in fetches]
    tensors = [e for e in elements if not isinstance(e, Operation)]
    targets = [e for e in elements if isinstance(e, Operation)]
    fed = frozenset(graph.as_graph_element(k, allow_operation=False) for k in (feed_dict or ()))
    fetched = frozenset(t.op for t in tensors if t not in fed) | frozenset(targets)
    return prune(tensors, targets, fed), fetched, fed


# ---- boxes: devices, boxed scopes, control-flow frames -------------------------------
def boxed_scope(op_name, scopes):
    """The top-level scope of ``op_name`` if it is one of ``scopes`` (or ``scope_N``), else None."""
    top = op_name.split("/", 1)[0]
    if "/" in op_name and any(re.fullmatch(re.escape(s) + r"(_\d+)?", top) for s in scopes):
        return top
    return None


def _contexts(op):
    """The cond branches and while loops around ``op``, outermost first."""
    chain = []
    context = getattr(op, "_control_flow_context", None)
    while context is not None:
        chain.append(context)
        context = context.outer_context
    return chain[::-1]


def _box_style(key):
    """The attributes of one box, from its key ``(kind, what)``."""
    kind, what = key
    if kind == "scope":
        border, fill = SCOPE_COLORS
        return dict(label=what + "/", tooltip="the ops of name scope %s/" % what,
                    color=border, fontcolor=border, fillcolor=fill)
    if kind == "frame" and hasattr(what, "branch"):       # a CondContext
        border, fill = COND_COLORS
        branch = "true" if what.branch else "false"
        cond = what.pivot.op.name.rsplit("/", 1)[0]
        return dict(label="%s: %s branch" % (cond, branch), color=border, fontcolor=border,
                    fillcolor=fill, tooltip="ops run only when %s is %s" % (what.pred.name, branch))
    border, fill = WHILE_COLORS                           # a WhileContext: its frame
    return dict(label="while frame %s" % what.name, color=border, fontcolor=border,
                fillcolor=fill, tooltip="ops that run once per iteration of %s" % what.name)


class _Picture:
    """One picture being drawn: the DOT graph and what its nodes and edges need to know.

    Args:
        dot: the ``graphviz.Digraph`` drawn into.
        palette: device name -> fill colour.
        running: the ops the drawn ``Session.run`` call runs, or None (all).
        fetched: the ops it fetches (or runs as targets).
        fed: the tensors it feeds.
        show_shapes: label data edges with dtype and shape.
        boxed_scopes: the top-level name scopes boxed on their own.
    """

    def __init__(self, dot, palette, running, fetched, fed, show_shapes, boxed_scopes):
        self.dot = dot
        self.palette = palette
        self.running = running
        self.fetched = fetched
        self.fed = fed
        self.show_shapes = show_shapes
        self.boxed_scopes = boxed_scopes
        self.node_ids = {}          # Operation -> its DOT node id
        self.has_control_edges = False
        self.has_send_recv = False
        self._numbers = itertools.count()

    def runs(self, op):
        return self.running is None or op in self.running

    # ---- nodes, in nested boxes --------------------------------------------------------
    def draw_boxes(self, groups, device_boxes, frames):
        """Puts every op in its boxes: device (when several), boxed scope, then frames.

        Each op gets a *path* of box keys, outermost first; ops with the same
        path prefix share those boxes, so the boxes nest as a tree.
        """
        tree = {"ops": [], "boxes": {}}
        for device, ops in groups:
            for op in ops:
                path = [("device", device)] if device_boxes else []
                scope = boxed_scope(op.name, self.boxed_scopes)
                if scope is not None:
                    path.append(("scope", scope))
                if frames:
                    path.extend(("frame", context) for context in _contexts(op))
                node = tree
                for key in path:
                    node = node["boxes"].setdefault(key, {"ops": [], "boxes": {}})
                node["ops"].append((device, op, scope))
        self._draw_contents(self.dot, tree)

    def _draw_contents(self, parent, node):
        for device, op, scope in node["ops"]:
            self._draw_node(parent, device, op, scope)
        for key, child in node["boxes"].items():
            with parent.subgraph(name="cluster_%d" % next(self._numbers)) as box:
                if key[0] == "device":
                    colour = self.palette[key[1]]
                    box.attr(label=short_device_name(key[1]), tooltip=key[1], color=colour,
                             fillcolor=_tint(colour), fontsize="12")
                else:
                    box.attr(fontsize="11", **_box_style(key))
                box.attr(style="rounded,filled", penwidth="2")
                self._draw_contents(box, child)

    def _draw_node(self, box, device, op, scope):
        node_id = _node_id(device, op)
        self.node_ids[op] = node_id
        attrs = {"fillcolor": self.palette[device],
                 "tooltip": "%s (%s) on %s" % (op.name, op.type, device)}
        if op.type == "_Send":
            attrs.update(shape="house", penwidth="2", color=SEND_RECV_COLOR, margin="0.04")
        elif op.type == "_Recv":
            attrs.update(shape="invhouse", penwidth="2", color=SEND_RECV_COLOR, margin="0.04")
        elif op.type in ("Placeholder", "VariableV2", "Const"):
            attrs.update(shape="ellipse", style="filled")
        if not self.runs(op):
            attrs.update(fillcolor=SKIPPED_FILL, fontcolor=SKIPPED_TEXT, color=SKIPPED_LINE)
            attrs["tooltip"] += " - pruned: this run does not need it"
        elif op in self.fetched:
            attrs.update(penwidth="3")
            attrs["tooltip"] += " - fetched"
        box.node(node_id, _node_label(op, scope), **attrs)

    # ---- edges ---------------------------------------------------------------------------
    def draw_edges(self):
        """Solid edges for each op's data inputs, dashed ones for its control inputs."""
        for op, node_id in self.node_ids.items():
            for tensor in op.inputs:
                self.dot.edge(self.node_ids[tensor.op], node_id, **self._data_edge(tensor, op))
            for control in op.control_inputs:
                if control in self.node_ids:
                    self.has_control_edges = True
                    attrs = dict(style="dashed", arrowhead="odot", tooltip="^" + control.name)
                    if not self.runs(op):
                        attrs.update(color=SKIPPED_LINE)
                    self.dot.edge(self.node_ids[control], node_id, **attrs)

    def _data_edge(self, tensor, consumer):
        """A data edge's attributes.

        A ``NextIteration`` feeding a ``Merge`` closes a loop's ring: its edge
        points back up and does not rank the layout (``constraint=false``), so
        the ring reads Enter, Merge, Switch, body, NextIteration, and back.
        """
        attrs = dict(label=_edge_label(tensor, self.show_shapes), tooltip=tensor.name)
        if tensor.op.type == "NextIteration":
            attrs.update(constraint="false", color=WHILE_COLORS[0], penwidth="2")
        if not self.runs(consumer):
            attrs.update(color=SKIPPED_LINE, fontcolor=SKIPPED_TEXT)
        elif tensor in self.fed:
            attrs.update(label=("fed " + attrs["label"]).strip(), color=FEED_COLOR, fontcolor=FEED_COLOR,
                         penwidth="2", tooltip=tensor.name + " (fed)")
        return attrs

    def draw_send_recv_edges(self):
        """A dotted edge from each ``_Send`` to the ``_Recv`` with the same rendezvous key.

        It has no label: both ends already name the tensor, and long labels on
        edges that cross the picture would cover other edges.
        """
        sends = {rendezvous_key(op): op for op in self.node_ids if op.type == "_Send"}
        for recv in [op for op in self.node_ids if op.type == "_Recv"]:
            key = rendezvous_key(recv)
            send = sends.get(key)
            if send is not None:
                self.has_send_recv = True
                self.dot.edge(self.node_ids[send], self.node_ids[recv], style="dotted",
                              color=SEND_RECV_COLOR, penwidth="2", tooltip=key)

    def put_boxed_scopes_below(self):
        """Ranks the boxed scopes' ops below the forward ops they differentiate.

        Invisible edges run from every *forward* op that feeds no other forward
        op to one invisible point, and from it to each boxed op without a boxed
        input.  Forward means: outside the boxed scopes and not computed from
        them (an optimizer's update reads the gradients, so it stays below).
        """
        boxed = {op for op in self.node_ids if boxed_scope(op.name, self.boxed_scopes)}
        if not boxed:
            return
        consumers = {op: [] for op in self.node_ids}
        for op in self.node_ids:
            for producer in [t.op for t in op.inputs] + list(op.control_inputs):
                if producer in consumers:
                    consumers[producer].append(op)
        after, worklist = set(), [c for op in boxed for c in consumers[op]]
        while worklist:
            op = worklist.pop()
            if op not in after and op not in boxed:
                after.add(op)
                worklist.extend(consumers[op])
        forward = {op for op in self.node_ids if op not in boxed and op not in after}
        # (lists in drawing order: the same DOT text, so the same layout, every time)
        last = [op for op in self.node_ids
                if op in forward and not any(c in forward for c in consumers[op])]
        first = [op for op in self.node_ids if op in boxed and not any(
            p in boxed for p in [t.op for t in op.inputs] + list(op.control_inputs))]
        if not last:
            return
        self.dot.node("order", "", shape="point", style="invis", width="0")
        for op in last:
            self.dot.edge(self.node_ids[op], "order", style="invis")
        for op in first:
            self.dot.edge("order", self.node_ids[op], style="invis")

    # ---- the legend ----------------------------------------------------------------------
    def draw_legend(self):
        """A table: one swatch per device, then what each style in the picture means.

        A picture of ops placed nowhere (``(no device)`` only) has no devices
        to explain: its legend lists the styles alone, under "legend".
        """
        devices = [device for device in self.palette if device != NO_DEVICE]
        rows = ['<TR><TD BGCOLOR="%s" WIDTH="16"></TD><TD ALIGN="LEFT">%s</TD></TR>'
                % (colour, _html(short_device_name(device)))
                for device, colour in self.palette.items() if devices]
        rows.append('<TR><TD>&#8212;</TD><TD ALIGN="LEFT">%s</TD></TR>'
                    % ("data: dtype (shape)" if self.show_shapes else "data"))
        if self.has_control_edges:
            rows.append('<TR><TD>- -</TD><TD ALIGN="LEFT">control dependency</TD></TR>')
        if self.has_send_recv:
            rows.append('<TR><TD><FONT COLOR="%s">&#183;&#183;&#183;</FONT></TD><TD ALIGN="LEFT">'
                        '_Send to _Recv (same rendezvous key)</TD></TR>' % SEND_RECV_COLOR)
        if self.running is not None:
            rows.append('<TR><TD BGCOLOR="%s"></TD><TD ALIGN="LEFT"><FONT COLOR="%s">pruned: '
                        'not run</FONT></TD></TR>' % (SKIPPED_FILL, SKIPPED_TEXT))
        if self.fed:
            rows.append('<TR><TD><FONT COLOR="%s">&#8212;</FONT></TD><TD ALIGN="LEFT">fed tensor'
                        '</TD></TR>' % FEED_COLOR)
        table = ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
                 '<TR><TD COLSPAN="2"><B>%s</B></TD></TR>%s</TABLE>>'
                 % ("devices" if devices else "legend", "".join(rows)))
        self.dot.node("legend", table, shape="plaintext", style="")
        # Below the picture, not beside it (pages are narrow): an invisible edge
        # from every op that nothing in the picture consumes.
        consumed = {t.op for op in self.node_ids for t in op.inputs}
        consumed.update(c for op in self.node_ids for c in op.control_inputs)
        for op, node_id in self.node_ids.items():
            if op not in consumed and op.type != "_Send":
                self.dot.edge(node_id, "legend", style="invis")


def _node_id(device, op):
    """A DOT node id: unique across partitions (the same name may be on two devices).

    Graphviz reads ``:`` in an edge's end as a port, so device names lose theirs.
    """
    prefix = short_device_name(device).replace(":", "_").replace("/", "_")
    return "%s/%s" % (prefix, op.name)


def _node_label(op, scope=None):
    """Name and type; a boxed scope's ops drop the scope, which their box names.

    A ``_Send``/``_Recv`` says which tensor it moves and where: its own name
    (``_send_h_0_to_CPU_0``) says the same, longer, and is in the tooltip.
    """
    if op.type in ("_Send", "_Recv"):
        direction = ("to " + short_device_name(op.get_attr("recv_device")) if op.type == "_Send"
                     else "from " + short_device_name(op.get_attr("send_device")))
        return "%s\\n%s\\n%s" % (op.type, op.get_attr("tensor_name"), direction)
    name = op.name[len(scope) + 1:] if scope else op.name
    return "%s\\n%s" % (name, op.type)


def _edge_label(tensor, show_shapes=True):
    """``float32 (4, 2)``; an op with several outputs adds the index (``:1 bool ()``),
    even without shapes: a Switch's ``:1`` is its true side."""
    index = ":%d" % tensor.value_index if len(tensor.op.outputs) > 1 else ""
    if not show_shapes:
        return index
    return ("%s %s %s" % (index, tensor.dtype.name, tensor.shape)).strip()


def _html(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
