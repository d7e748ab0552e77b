"""GraphDef: a graph as TF's protocol buffer, to save, send to another process, and rebuild.

``graph.as_graph_def()`` returns TF's ``GraphDef`` message: one ``NodeDef``
per op — its name, type, inputs (``"x"``, ``"x:1"``, ``"^ctrl"`` for a
control input), requested device and attrs (each an ``AttrValue``, see
:mod:`~minitf.framework.attr_value`) — the ``versions`` of the format, and in
``library`` the functions the ops call (tf.data's traced ``map`` functions,
see :mod:`~minitf.framework.function_def`)::

    node { name: "x" op: "Placeholder"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } dim { size: 2 } } } } }
    node { name: "y" op: "MatMul" input: "x" input: "w/read"
           attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "transpose_a" value { b: false } } ... }
    versions { producer: 27 }

The bytes (``graph_def.SerializeToString()``) are TF's, so TensorBoard and
TensorFlow read them; they are what crosses to device processes and to other
tasks, and what ``.meta`` files and event files hold.  ``text_format`` prints
and parses the text form above (``tf.train.write_graph(..., as_text=True)``).

:func:`import_graph_def` rebuilds ops from a GraphDef through the ordinary
``Graph.create_op``, so imported graphs get shape inference and validation
like built ones.  An attr a NodeDef leaves out (a GraphDef written with
``strip_default_attrs``, or by hand) gets its default from the op's
declaration, as TF's importer fills defaults from the ``OpDef``.

TensorFlow reads what minitf writes and the other way round
(:mod:`~minitf.framework.tf_op_defs` holds TF's own OpDefs): a NodeDef
carries the type attrs TF's OpDef derives from the inputs (``T``, ``Tidx``,
``N``...), each attr of the kind TF declares; the import accepts the attrs
TF writes that minitf's op has no use for — private ones (``_output_shapes``,
``_class``), type attrs, hints (``use_cudnn_on_gpu``), attrs at TF's default
(``data_format: "NHWC"``, ``explicit_paddings: []``) — and refuses, with
TF's ``ValueError``, an attr minitf does not implement at another value
(``data_format: "NCHW"``); an op type minitf does not have is TF's
``NotFoundError``.

A GraphDef may come from a file anybody wrote, so the import checks what it
builds, and refuses with a ``ValueError`` naming the node (the class TF's
importer raises) what would otherwise surface later as a wrong value or a
raw ``KeyError``/``IndexError``: an input ``"x:99"`` past the outputs of
``x`` (or ``"x:abc"``), a ``Const`` whose value does not decode to its
``dtype`` and shape (TF notices only when the op runs: "Cannot parse tensor
from proto"), a type attr (``T``) that disagrees with the inputs.  Importing
never runs code; *running* an imported graph does what its ops do — its
``SaveV2``/``RestoreV2``/``WriteFile``/``ReadFile`` ops read and write the
files they name, as in TF (see ``docs/reliability.rst``).

Mirrors TF's ``graph.proto``/``node_def.proto``, ``Graph.as_graph_def`` and
``tf.import_graph_def`` (``tensorflow/python/framework/importer.py``).
"""

import collections
import contextlib

import numpy as np

from minitf.framework import attr_value as attr_value_lib
from minitf.framework import dtypes
from minitf.framework import errors
from minitf.framework import graph as graph_lib
from minitf.framework import protos
from minitf.framework import tf_op_defs
from minitf.framework.tensor import Tensor
from minitf.registry import get_registry

#: ``versions.producer`` of the GraphDefs minitf writes: a TF1-era version.  TF
#: reads graphs of producers before 22 in old ways (a scalar ``Placeholder``
#: shape of theirs means "unknown shape"), so not 1.
GRAPH_DEF_VERSION = 27


# ---- export -----------------------------------------------------------------------------------
def node_def(op):
    """The ``NodeDef`` of one Operation (``op.node_def``).

    Its attrs are the op's, plus the type attrs TF's OpDef derives from the
    inputs (``T``...), each of the kind TF declares (see
    :mod:`~minitf.framework.tf_op_defs`), so TensorFlow imports it.

    Raises:
        TypeError: if one of the op's attrs has no ``AttrValue`` form.
    """
    node = protos.load("node_def_pb2").NodeDef(name=op.name, op=op.type, device=op.device)
    node.input.extend(_input_name(t) for t in op.inputs)
    node.input.extend("^" + c.name for c in op.control_inputs)
    attrs = tf_op_defs.inferred_attrs(op)
    attrs.update(op._attrs)
    for key, value in sorted(attrs.items()):
        try:
            node.attr[key].CopyFrom(
                attr_value_lib.attr_value(tf_op_defs.coerced(op.type, key, value)))
        except TypeError as error:
            raise TypeError("Op '%s' (%s, created at %s), attr '%s': %s"
                            % (op.name, op.type, op.creation_site, key, error)) from None
    return node


def _input_name(tensor):
    return tensor.op.name if tensor.value_index == 0 else tensor.name


def as_graph_def(graph, add_shapes=False):
    """The ``GraphDef`` of ``graph`` (``Graph.as_graph_def``).

    Args:
        graph: the graph.
        add_shapes: also record each op's output shapes in its
            ``_output_shapes`` attr (what TensorBoard shows on the edges).
    """
    graph_def = protos.load("graph_pb2").GraphDef()
    graph_def.versions.producer = GRAPH_DEF_VERSION
    for op in graph.get_operations():
        node = graph_def.node.add()
        node.CopyFrom(node_def(op))
        if add_shapes and op.outputs:
            node.attr["_output_shapes"].CopyFrom(
                attr_value_lib.attr_value([t.shape for t in op.outputs]))
    functions = library(graph)
    if functions:
        graph_def.library.function.extend(functions)
    return graph_def


def library(graph):
    """The ``FunctionDef`` of every function ``graph``'s ops call, and of those they call.

    A graph's function library (``graph._functions``) holds traced functions,
    which write their ``FunctionDef`` (``to_function_def(name)``); imported
    ones, which are a ``FunctionDef``; and Python objects with no GraphDef
    form (``Dataset.from_generator``'s generators), which are left out, as TF
    leaves out ``py_func``'s Python functions.
    """
    function_def_class = protos.load("function_pb2").FunctionDef
    definitions, seen = [], set()
    pending = [graph]  # the graphs whose libraries are still to visit
    while pending:
        for name, function in sorted(pending.pop()._functions.items()):
            if name in seen:
                continue
            seen.add(name)
            if isinstance(function, function_def_class):
                definitions.append(function)
            elif hasattr(function, "to_function_def"):
                definitions.append(function.to_function_def(name))
            if getattr(function, "graph", None) is not None:
                pending.append(function.graph)  # the functions it calls in turn
    return definitions


# ---- import -----------------------------------------------------------------------------------
def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None, graph=None):
    """Adds the ops of ``graph_def`` to a graph (``tf.import_graph_def``).

    Example:
        >>> graph_def = tf.get_default_graph().as_graph_def()
        >>> with tf.Graph().as_default():
        ...     y, = tf.import_graph_def(graph_def, return_elements=["y:0"])
        >>> y.name
        'import/y:0'

    Args:
        graph_def: a ``GraphDef``.
        input_map: maps tensor names in ``graph_def`` (``"x:0"``, or ``"x"``
            for its first output) to Tensors of the target graph that replace them.
        return_elements: names of ops (``"op"``) or tensors (``"op:0"``) to return.
        name: a prefix for imported names (default ``"import"``); ``""`` for none.
        op_dict, producer_op_list: accepted for TF1 compatibility; minitf's ops
            come from the registry, and their defaults fill omitted attrs.
        graph: the target graph (default: the default graph).

    Returns:
        The Operations and Tensors named by ``return_elements``, or None.

    Raises:
        TypeError: if ``graph_def`` is not a ``GraphDef`` or ``input_map``
            maps to something that is not a Tensor.
        ValueError: if an input refers to a node that is not in ``graph_def``,
            an ``input_map`` key or a return element names nothing in it, or
            a node sets an attr minitf's op does not implement to a value
            other than TF's default.
        tf.errors.NotFoundError: if a node's op type is not one minitf has.
    """
    del op_dict, producer_op_list
    if not isinstance(graph_def, protos.load("graph_pb2").GraphDef):
        raise TypeError("graph_def must be a GraphDef proto, got %s." % type(graph_def).__name__)
    graph = graph or graph_lib.get_default_graph()
    input_map = _checked_input_map(input_map, graph_def)
    _check_input_names(graph_def.node)
    created = {}
    back_edges = []  # a while loop's Merge input from its NextIteration, wired at the end
    scope_name = "import" if name is None else name
    with graph.name_scope(scope_name) if scope_name else contextlib.nullcontext("") as scope:
        prefix = scope or ""
        for node in _topological(graph_def.node):
            op = _create_op(graph, node, prefix, created, input_map, back_edges)
            created[node.name] = op
        for op_name, index, producer, output in back_edges:
            created[op_name]._update_input(
                index, _output(_created(created, producer, op_name), output, op_name))
    for definition in graph_def.library.function:
        if graph._get_function(definition.signature.name) is None:
            graph._add_function(definition.signature.name, definition)
    if return_elements is None:
        return None
    return [_element(created, e) for e in return_elements]


def _checked_input_map(input_map, graph_def):
    """``input_map`` keyed ``"op:index"``, its keys checked against ``graph_def``'s nodes."""
    checked = {}
    for key, tensor in (input_map or {}).items():
        if not isinstance(tensor, Tensor):
            raise TypeError("input_map values must be Tensors, got %r for %r" % (tensor, key))
        op_name, index = _split_input(key)
        checked["%s:%d" % (op_name, index or 0)] = tensor
    names = {node.name for node in graph_def.node}
    missing = sorted(key for key in checked if _split_input(key)[0] not in names)
    if missing:
        raise ValueError("Attempted to map inputs that were not found in graph_def: [%s]"
                         % ", ".join(missing))
    return checked


def _create_op(graph, node, prefix, created, input_map, back_edges):
    """The op of one NodeDef, its attrs completed with the op's declared defaults."""
    op_def = _op_def(node)
    if node.op == "Const":
        _check_const(node)
    inputs, control = _resolve_inputs(node, op_def, created, input_map, back_edges)
    attrs = _defaults(node.op, op_def)
    attrs.update((key, attr_value_lib.python_value(value)) for key, value in node.attr.items())
    op = graph.create_op(node.op, inputs, name=prefix + node.name + "/", attrs=attrs)
    _check_type_attrs(node, op)
    op._control_inputs.extend(c for c in control if c not in op._control_inputs)
    if node.device:
        op._set_device(node.device)
    return op


def _op_def(node):
    """minitf's OpDef of ``node``'s op, checked to honour every attr ``node`` sets."""
    registry = get_registry()
    if not registry.has_op(node.op):
        raise errors.NotFoundError(
            node, None, "Op type not registered '%s' in binary running on minitf (node '%s'). "
            "minitf implements the ops of `python -m minitf plugins`." % (node.op, node.name))
    op_def = registry.op_def(node.op)
    unsupported = tf_op_defs.unsupported_attr(node, op_def.attrs)
    if unsupported is not None:
        name, default = unsupported
        raise ValueError(
            "Node '%s' (op: '%s') sets attr '%s' to %s, which minitf's %s does not "
            "implement%s." % (node.name, node.op, name, _short(node.attr[name]), node.op,
                              "" if default is None else
                              " (it computes TF's default, %s)" % _short(default)))
    return op_def


def _check_const(node):
    """Refuses a ``Const`` whose ``value`` is not a tensor of its ``dtype`` attr
    that decodes to the shape it declares."""
    for key, kind in (("value", "tensor"), ("dtype", "type")):
        if node.attr[key].WhichOneof("value") != kind if key in node.attr else True:
            raise ValueError("Node '%s' (op: 'Const') has no attr '%s' of type %s"
                             % (node.name, key, kind))
    tensor, dtype_enum = node.attr["value"].tensor, node.attr["dtype"].type
    try:
        dtype = dtypes.as_dtype(dtype_enum)
    except TypeError as e:
        raise ValueError("Node '%s' (op: 'Const'): %s" % (node.name, e)) from None
    if tensor.dtype != dtype_enum:
        raise ValueError("Node '%s' (op: 'Const'): type mismatch between value (%s) and dtype "
                         "(%s)" % (node.name, _type_name(tensor.dtype), dtype.name))
    dims = [d.size for d in tensor.tensor_shape.dim]
    if tensor.tensor_shape.unknown_rank or any(d < 0 for d in dims):
        raise ValueError("Node '%s' (op: 'Const'): the value's shape %s is not fully defined"
                         % (node.name, dims))
    count = 1
    for dim in dims:
        count *= dim
    if tensor.tensor_content:
        expected = count * np.dtype(dtype.as_numpy_dtype).itemsize
        if len(tensor.tensor_content) != expected:
            raise ValueError("Node '%s' (op: 'Const'): cannot parse tensor from proto: %d bytes "
                             "of tensor_content for shape %s of %s, expected %d"
                             % (node.name, len(tensor.tensor_content), dims, dtype.name,
                                expected))
    elif _value_count(tensor) > count:
        raise ValueError("Node '%s' (op: 'Const'): cannot parse tensor from proto: %d values "
                         "for shape %s" % (node.name, _value_count(tensor), dims))
    try:
        attr_value_lib.python_value(node.attr["value"])
    except (TypeError, ValueError) as e:
        raise ValueError("Node '%s' (op: 'Const'): cannot parse tensor from proto (%s)"
                         % (node.name, e)) from None


def _value_count(tensor):
    """How many values the typed value field of a TensorProto holds (fewer
    than the shape's elements is TF's short form: the last one repeats)."""
    return max((len(value) for field, value in tensor.ListFields()
                if field.name.endswith("_val")), default=0)  # float_val, int_val ...


def _type_name(enum):
    try:
        return dtypes.as_dtype(enum).name
    except TypeError:
        return "DataType %d" % enum


def _check_type_attrs(node, op):
    """Refuses type and length attrs (``T``, ``N``...) that the node sets to
    something else than its inputs and outputs make them (TF's importer
    checks this: "Input 0 of node y was passed float ... expected int32")."""
    for key, inferred in tf_op_defs.inferred_attrs(op).items():
        if key not in node.attr:
            continue
        given = attr_value_lib.python_value(node.attr[key])
        if _attr_key(given) != _attr_key(inferred):
            raise ValueError("Node '%s' (op: '%s') sets attr '%s' to %s, but its inputs and "
                             "outputs make it %s" % (node.name, node.op, key,
                                                     _attr_key(given), _attr_key(inferred)))


def _attr_key(value):
    """An attr value made comparable: DTypes as their base names."""
    if isinstance(value, (list, tuple)):
        return [_attr_key(v) for v in value]
    if isinstance(value, dtypes.DType):
        return value.base_dtype.name
    return value


def _short(attr):
    """An AttrValue in one line of text format: ``s: "NCHW"``."""
    from google.protobuf import text_format  # loaded on first use, as the protos
    return text_format.MessageToString(attr, as_one_line=True)


def _defaults(op_type, op_def):
    """The values of the attrs a NodeDef leaves out: minitf's declared defaults, and
    TF's where minitf declares none (a ``Placeholder``'s ``shape``: unknown)."""
    defaults = {}
    for key, default in op_def.attrs.items():
        if default is None:
            default = tf_op_defs.default(op_type, key)
        if default is not None:
            defaults[key] = default
    return defaults


def _split_input(name):
    """``("x", 1)`` for ``"x:1"``, ``("x", 0)`` for ``"x"``, ``("x", None)`` for ``"^x"``.

    Raises:
        ValueError: for an output index that is not a non-negative int (``"x:abc"``).
    """
    if name.startswith("^"):
        return name[1:], None
    op_name, _, index = name.partition(":")
    if index and not (index.isdigit() and index.isascii()):
        raise ValueError("Unknown input node '%s': the output index is not a number" % name)
    return op_name, int(index or 0)


def _check_input_names(nodes):
    """Refuses, naming the node, an input whose output index is not a number."""
    for node in nodes:
        for name in node.input:
            try:
                _split_input(name)
            except ValueError as e:
                raise ValueError("Node '%s': %s" % (node.name, e)) from None


def _output(op, index, consumer):
    """``op.outputs[index]``, or TF's ``ValueError`` when ``op`` has no such output."""
    if index >= len(op.outputs):
        raise ValueError("Node '%s': Connecting to invalid output %d of source node %s which "
                         "has %d outputs." % (consumer, index, op.name, len(op.outputs)))
    return op.outputs[index]


def _resolve_inputs(node, op_def, created, input_map, back_edges):
    data, control, late = [], [], []
    for name in node.input:
        op_name, index = _split_input(name)
        if index is None:
            control.append(_created(created, op_name, node.name))
            continue
        key = "%s:%d" % (op_name, index)
        if key not in input_map and op_name not in created and node.op == "Merge":
            late.append((len(data), op_name, index))  # a loop's back edge
            data.append(None)
            continue
        data.append(input_map[key] if key in input_map else
                    _output(_created(created, op_name, node.name), index, node.name))
    for position, op_name, index in late:
        data[position] = next((d for d in data if d is not None), None)
        if data[position] is None:
            raise ValueError("Node '%s' has no input defined before it" % node.name)
        back_edges.append((node.name, position, op_name, index))
    return graph_lib.nest_list_input(op_def, data), control


def _created(created, op_name, consumer):
    if op_name not in created:
        raise ValueError("Node '%s' has an input from '%s', which is not in the graph_def."
                         % (consumer, op_name))
    return created[op_name]


def _topological(nodes):
    """The NodeDefs ordered so that every input is defined before it is used.

    Nodes already in such an order (as ``as_graph_def`` writes them) keep it
    — the runtime relies on partitions keeping their schedule; others are
    sorted with Kahn's algorithm: a node is ready once all the nodes it takes
    inputs from are placed.
    """
    # The input of a Merge from a NextIteration is a loop's back edge, no ordering constraint.
    next_iterations = {n.name for n in nodes if n.op == "NextIteration"}
    names = {n.name for n in nodes}

    def producers(node):
        found = {_split_input(i)[0] for i in node.input} & names
        return found - next_iterations if node.op == "Merge" else found

    seen = set()
    for node in nodes:
        if not producers(node) <= seen:
            break
        seen.add(node.name)
    else:
        return list(nodes)
    pending = {}
    consumers = collections.defaultdict(list)
    for node in nodes:
        pending[node.name] = len(producers(node))
        for producer in producers(node):
            consumers[producer].append(node)
    ready = collections.deque(n for n in nodes if pending[n.name] == 0)
    order = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for consumer in consumers[node.name]:
            pending[consumer.name] -= 1
            if pending[consumer.name] == 0:
                ready.append(consumer)
    if len(order) != len(nodes):
        raise ValueError("GraphDef contains a cycle")
    return order


def _element(created, name):
    op_name, index = _split_input(name) if ":" in name else (name, None)
    if op_name not in created:
        raise ValueError("Requested return_element %r not found in graph_def." % name)
    if index is None:
        return created[op_name]
    if index >= len(created[op_name].outputs):
        raise ValueError("Requested return_element %r not found in graph_def: node %s has %d "
                         "outputs." % (name, op_name, len(created[op_name].outputs)))
    return created[op_name].outputs[index]
