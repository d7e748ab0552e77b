"""Pictures of graphs and their partitions: ops coloured by device, Send/Recv joined.

``draw_graph`` turns a :class:`~minitf.framework.graph.Graph` — or the
``{device name: partition Graph}`` dict that ``Session.partition_graphs``
returns — into a ``graphviz.Digraph``:

* every op is a node, labelled with its name and type, filled with the colour
  of its device; the ops of one device sit in one box (a *cluster*) labelled
  with the device's name, and a legend lists the devices and edge styles;
* a data edge runs from producer to consumer, labelled with the tensor's dtype
  and static shape (``float32 (4, 2)``); a control edge is dashed;
* in partitions, each ``_Send`` is joined to the ``_Recv`` with the same
  rendezvous key (``src_device;dst_device;tensor_name;0:0``) by a dotted red
  edge that crosses from one device's box to the other's — the edge the
  partitioner cut.

Example:
    >>> parts = sess.partition_graphs(y, {x: batch})
    >>> print(to_dot(parts))          # the DOT source: needs no Graphviz program
    >>> render(parts, "parts.svg")    # a picture: needs Graphviz's ``dot``

Building the picture needs only the pure-Python ``graphviz`` package
(``pip install minitf[viz]``); turning it into SVG or PNG needs Graphviz's
``dot`` program (``apt-get install graphviz``).  In Jupyter a returned Digraph
displays itself (with ``dot``).  TensorBoard's graph view is the TF1 tool this
stands in for.
"""

import shutil

from minitf.framework.device_spec import DeviceSpec
from minitf.framework.graph import Graph
from minitf.runtime.rendezvous import rendezvous_key

# ColorBrewer's "Set3": light colours that black text stays readable on.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
           "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9")
NO_DEVICE = "(no device)"
NO_DEVICE_COLOR = "#ffffff"
SEND_RECV_COLOR = "#d62728"

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
               colors=None, title=None, legend=True):
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
        legend: add a table of the device colours and edge styles.

    Returns:
        A ``graphviz.Digraph``; ``.source`` is its DOT text.

    Raises:
        TypeError: if the argument is neither a Graph nor a dict of Graphs.
        ValueError: if ``placement`` is given with partitions.
        ImportError: if the ``graphviz`` package is not installed.
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError(INSTALL_GRAPHVIZ_PACKAGE) from None
    groups = _groups(graph_or_partitions, placement)
    palette = _colours([device for device, _ in groups], colors or {})
    dot = graphviz.Digraph(name="minitf", graph_attr={
        "rankdir": rankdir, "fontname": "Helvetica", "fontsize": "11", "newrank": "true",
        "label": title or "", "labelloc": "t"})
    dot.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="10")
    dot.attr("edge", fontname="Helvetica", fontsize="9", color="#444444")
    node_ids = {}
    for number, (device, ops) in enumerate(groups):
        _draw_cluster(dot, number, device, ops, palette[device], node_ids)
    for _, ops in groups:
        for op in ops:
            _draw_inputs(dot, op, node_ids, show_shapes)
    _draw_send_recv_edges(dot, groups, node_ids)
    if legend:
        _draw_legend(dot, palette)
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


# ---- nodes and edges ----------------------------------------------------------------
def _node_id(device, op):
    """A DOT node id: unique across partitions (the same name may be on two devices).

    Graphviz reads ``:`` in an edge's end as a port, so device names lose theirs.
    """
    prefix = short_device_name(device).replace(":", "_").replace("/", "_")
    return "%s/%s" % (prefix, op.name)


def _node_label(op):
    if op.type in ("_Send", "_Recv"):
        direction = ("to " + short_device_name(op.get_attr("recv_device")) if op.type == "_Send"
                     else "from " + short_device_name(op.get_attr("send_device")))
        return "%s\\n%s %s %s" % (op.name, op.type, op.get_attr("tensor_name"), direction)
    return "%s\\n%s" % (op.name, op.type)


def _draw_cluster(dot, number, device, ops, colour, node_ids):
    """One box per device holding its ops, filled with a tint of the device's colour."""
    with dot.subgraph(name="cluster_%d" % number) as box:
        box.attr(label=short_device_name(device), tooltip=device, style="rounded,filled",
                 fillcolor=_tint(colour), color=colour, penwidth="2", fontsize="12")
        for op in ops:
            node_id = _node_id(device, op)
            node_ids[op] = node_id
            attrs = {"fillcolor": colour, "tooltip": "%s (%s) on %s" % (op.name, op.type, device)}
            if op.type == "_Send":
                attrs.update(shape="house", penwidth="2", color=SEND_RECV_COLOR)
            elif op.type == "_Recv":
                attrs.update(shape="invhouse", penwidth="2", color=SEND_RECV_COLOR)
            elif op.type in ("Placeholder", "VariableV2", "Const"):
                attrs.update(shape="ellipse", style="filled")
            box.node(node_id, _node_label(op), **attrs)


def _edge_label(tensor):
    index = ":%d " % tensor.value_index if len(tensor.op.outputs) > 1 else ""
    return "%s%s %s" % (index, tensor.dtype.name, tensor.shape)


def _draw_inputs(dot, op, node_ids, show_shapes):
    """Solid edges for ``op``'s data inputs, dashed ones for its control inputs."""
    for tensor in op.inputs:
        dot.edge(node_ids[tensor.op], node_ids[op],
                 label=_edge_label(tensor) if show_shapes else "", tooltip=tensor.name)
    for control in op.control_inputs:
        if control in node_ids:
            dot.edge(node_ids[control], node_ids[op], style="dashed", arrowhead="odot",
                     tooltip="^" + control.name)


def _draw_send_recv_edges(dot, groups, node_ids):
    """A dotted edge from each ``_Send`` to the ``_Recv`` with the same rendezvous key."""
    sends = {}
    recvs = []
    for _, ops in groups:
        for op in ops:
            if op.type == "_Send":
                sends[rendezvous_key(op)] = op
            elif op.type == "_Recv":
                recvs.append(op)
    for recv in recvs:
        key = rendezvous_key(recv)
        send = sends.get(key)
        if send is not None:
            dot.edge(node_ids[send], node_ids[recv], label=recv.get_attr("tensor_name"),
                     style="dotted", color=SEND_RECV_COLOR, fontcolor=SEND_RECV_COLOR,
                     penwidth="2", tooltip=key)


def _draw_legend(dot, palette):
    """A table: one swatch per device, then what each edge style means."""
    rows = ['<TR><TD BGCOLOR="%s" WIDTH="16"></TD><TD ALIGN="LEFT">%s</TD></TR>'
            % (colour, _html(short_device_name(device))) for device, colour in palette.items()]
    rows.append('<TR><TD>&#8212;</TD><TD ALIGN="LEFT">data: dtype (shape)</TD></TR>')
    rows.append('<TR><TD>- -</TD><TD ALIGN="LEFT">control dependency</TD></TR>')
    rows.append('<TR><TD><FONT COLOR="%s">&#183;&#183;&#183;</FONT></TD>'
                '<TD ALIGN="LEFT">_Send to _Recv (same rendezvous key)</TD></TR>' % SEND_RECV_COLOR)
    table = ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
             '<TR><TD COLSPAN="2"><B>devices</B></TD></TR>%s</TABLE>>' % "".join(rows))
    dot.node("legend", table, shape="plaintext", style="")


def _html(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
