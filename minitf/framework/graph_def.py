"""GraphDef: a graph as plain data, to save, send to another process, and rebuild.

``graph.as_graph_def()`` turns every op into a record — name, type, inputs
(``"x"``, ``"x:1"``, ``"^ctrl"``), device and attrs — and
:func:`import_graph_def` rebuilds ops from such records through the ordinary
``Graph.create_op``, so imported graphs get shape inference and validation
like built ones.  The encoding is JSON-compatible (arrays as base64 of their
raw bytes with dtype and shape): no pickle, so a GraphDef can safely cross a
process boundary or be read from a file.

Mirrors TF's ``GraphDef`` protocol buffer and ``tf.import_graph_def``.
"""

import base64
import collections
import contextlib
import json

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework.tensor_shape import TensorShape

GRAPH_DEF_VERSION = 1


def encode_attr(value):
    """One attr value as a JSON-compatible, type-tagged dict."""
    if isinstance(value, dtypes_lib.DType):
        return {"type": value.name}
    if isinstance(value, TensorShape):
        return {"shape": None if value.ndims is None else value.as_list()}
    if isinstance(value, np.ndarray):
        return {"tensor": encode_array(value)}
    if isinstance(value, (bool, np.bool_)):
        return {"b": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"i": int(value)}
    if isinstance(value, (float, np.floating)):
        return {"f": float(value)}
    if isinstance(value, str):
        return {"s": value}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_attr(v) for v in value]}
    if value is None:
        return {"none": True}
    raise TypeError("Cannot serialize attr value %r of type %s" % (value, type(value).__name__))


def decode_attr(record):
    """The inverse of :func:`encode_attr`."""
    (kind, value), = record.items()
    if kind == "type":
        return dtypes_lib.as_dtype(value)
    if kind == "shape":
        return TensorShape(value)
    if kind == "tensor":
        return decode_array(value)
    if kind == "list":
        return [decode_attr(v) for v in value]
    if kind == "none":
        return None
    return value


def encode_array(array):
    """A NumPy array as ``{"dtype", "shape", "data"}`` (raw bytes, base64)."""
    array = np.asarray(array)
    if array.dtype.kind == "O":
        return {"dtype": "string", "shape": list(array.shape),
                "strings": [_as_bytes(v).decode("latin-1") for v in array.reshape(-1)]}
    contiguous = np.require(array, requirements="C")
    return {"dtype": contiguous.dtype.str, "shape": list(contiguous.shape),
            "data": base64.b64encode(contiguous.tobytes()).decode("ascii")}


def decode_array(record):
    if record["dtype"] == "string":
        strings = [s.encode("latin-1") for s in record["strings"]]  # tf.string holds bytes
        return np.array(strings, dtype=object).reshape(record["shape"])
    data = base64.b64decode(record["data"])
    array = np.frombuffer(data, dtype=np.dtype(record["dtype"])).reshape(record["shape"]).copy()
    array.flags.writeable = False
    return array


def _as_bytes(value):
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def node_record(op):
    """The GraphDef record of one Operation."""
    node_def = op.node_def
    return {"name": node_def.name, "op": node_def.op, "input": node_def.input,
            "device": node_def.device,
            "attr": {k: encode_attr(v) for k, v in sorted(node_def.attr.items())}}


def as_graph_def(graph, ops=None):
    """The GraphDef dict of ``graph`` (or of just ``ops``, in graph order)."""
    ops = graph.get_operations() if ops is None else sorted(ops, key=lambda o: o._id)
    return {"versions": {"producer": GRAPH_DEF_VERSION}, "node": [node_record(op) for op in ops]}


def to_json(graph_def):
    return json.dumps(graph_def, separators=(",", ":"))


def from_json(text):
    return json.loads(text)


def import_graph_def(graph_def, input_map=None, return_elements=None, name="import",
                     graph=None):
    """Adds the ops of ``graph_def`` to ``graph`` (default: the default graph).

    Args:
        graph_def: a GraphDef dict (or its JSON text).
        input_map: maps tensor names in ``graph_def`` (``"x:0"``) to Tensors
            of the target graph that replace them.
        return_elements: names of ops (``"op"``) or tensors (``"op:0"``) to return.
        name: a prefix for imported names (``"import/..."``); ``""`` for none.
        graph: the target graph.

    Returns:
        The requested elements, or None.

    Raises:
        ValueError: if an input refers to a node that is not in ``graph_def``.
    """
    from minitf.framework import graph as graph_lib
    if isinstance(graph_def, (str, bytes)):
        graph_def = from_json(graph_def)
    graph = graph or graph_lib.get_default_graph()
    input_map = dict(input_map or {})
    created = {}
    back_edges = []  # a while loop's Merge input from its NextIteration, wired at the end
    with graph.name_scope(name) if name else contextlib.nullcontext("") as scope:
        prefix = scope or ""
        for record in _topological(graph_def["node"]):
            inputs, control = _resolve_inputs(record, created, input_map, back_edges)
            attrs = {k: decode_attr(v) for k, v in record["attr"].items()}
            op = graph.create_op(record["op"], inputs, name=prefix + record["name"] + "/",
                                 attrs=attrs)
            op._control_inputs.extend(c for c in control if c not in op._control_inputs)
            if record.get("device"):
                op._set_device(record["device"])
            created[record["name"]] = op
        for op_name, index, producer, output in back_edges:
            created[op_name]._update_input(index, _created(created, producer, {"name": op_name})
                                           .outputs[output])
    if return_elements is None:
        return None
    return [_element(created, e) for e in return_elements]


def _split_input(name):
    if name.startswith("^"):
        return name[1:], None
    op_name, _, index = name.partition(":")
    return op_name, int(index or 0)


def _resolve_inputs(record, created, input_map, back_edges):
    from minitf.framework.graph import nest_list_input
    from minitf.registry import get_registry
    data, control, late = [], [], []
    for name in record["input"]:
        op_name, index = _split_input(name)
        if index is None:
            control.append(_created(created, op_name, record))
            continue
        key = "%s:%d" % (op_name, index)
        if key not in input_map and op_name not in created and record["op"] == "Merge":
            late.append((len(data), op_name, index))  # a loop's back edge
            data.append(None)
            continue
        data.append(input_map[key] if key in input_map else
                    _created(created, op_name, record).outputs[index])
    for position, op_name, index in late:
        data[position] = next((d for d in data if d is not None), None)
        if data[position] is None:
            raise ValueError("Node '%s' has no input defined before it" % record["name"])
        back_edges.append((record["name"], position, op_name, index))
    return nest_list_input(get_registry().op_def(record["op"]), data), control


def _created(created, op_name, record):
    if op_name not in created:
        raise ValueError("Node '%s' has an input from '%s', which is not in the graph_def."
                         % (record["name"], op_name))
    return created[op_name]


def _topological(records):
    """Records ordered so that every input is defined before it is used.

    Records already in such an order (as ``as_graph_def`` writes them) keep
    it — the runtime relies on partitions keeping their schedule; others are
    sorted with Kahn's algorithm.
    """
    # The input of a Merge from a NextIteration is a loop's back edge, no ordering constraint.
    next_iterations = {r["name"] for r in records if r["op"] == "NextIteration"}
    names = {r["name"] for r in records}
    seen = set()
    for record in records:
        if any(_split_input(i)[0] not in seen for i in record["input"]
               if _split_input(i)[0] in names
               and not (record["op"] == "Merge" and _split_input(i)[0] in next_iterations)):
            break
        seen.add(record["name"])
    else:
        return list(records)
    pending = {}
    consumers = collections.defaultdict(list)
    for record in records:
        producers = {_split_input(i)[0] for i in record["input"]} & names
        if record["op"] == "Merge":
            producers -= next_iterations
        pending[record["name"]] = len(producers)
        for producer in producers:
            consumers[producer].append(record)
    ready = collections.deque(r for r in records if pending[r["name"]] == 0)
    order = []
    while ready:
        record = ready.popleft()
        order.append(record)
        for consumer in consumers[record["name"]]:
            pending[consumer["name"]] -= 1
            if pending[consumer["name"]] == 0:
                ready.append(consumer)
    if len(order) != len(records):
        raise ValueError("GraphDef contains a cycle")
    return order


def _element(created, name):
    op_name, index = _split_input(name) if ":" in name else (name, None)
    if op_name not in created:
        raise ValueError("Requested return_element %r not found in graph_def." % name)
    return created[op_name] if index is None else created[op_name].outputs[index]
