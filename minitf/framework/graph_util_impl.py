"""``tf.graph_util``: GraphDef surgery — cut a graph down, freeze its variables.

A trained model is a graph plus a checkpoint.  For serving it is often shipped
as one *frozen* GraphDef instead: only the ops the outputs need, every
variable replaced by a ``Const`` holding its trained value::

    frozen = tf.graph_util.convert_variables_to_constants(
        sess, sess.graph.as_graph_def(), ["probs"])
    tf.train.write_graph(frozen, "/tmp/model", "frozen.pb", as_text=False)

    # elsewhere (minitf or TensorFlow), without the training code or a checkpoint:
    graph_def = tf.GraphDef.FromString(open("/tmp/model/frozen.pb", "rb").read())
    probs, = tf.import_graph_def(graph_def, return_elements=["probs:0"], name="")

Three steps, each a function here, all working on ``GraphDef`` messages:

* :func:`extract_sub_graph` keeps the nodes the outputs reach, following
  inputs (data and control) and ``_class`` colocation, in their order;
* :func:`convert_variables_to_constants` runs the variables in the session
  and writes each as a ``Const``: a ``VariableV2`` (its ``read`` Identity
  stays, now reading the constant), or a resource ``VarHandleOp`` (its
  ``ReadVariableOp``\\ s become ``Identity``\\ s, as TF does);
* :func:`remove_training_nodes` drops ``CheckNumerics`` and splices out
  ``Identity``/``StopGradient`` nodes no control edge depends on.

Mirrors ``tensorflow/python/framework/graph_util_impl.py`` and TF1's
``convert_variables_to_constants``; the errors are TF's (an output name that
is not a node: ``AssertionError: probs is not in graph``).
"""

import copy
import logging
import re

from minitf.framework import dtypes
from minitf.framework import protos
from minitf.framework import tensor_util

_logger = logging.getLogger("minitf.graph_util")

#: Ops that hold or change variables (``must_run_on_cpu(pin_variables_on_cpu=True)``).
_VARIABLE_OPS = frozenset({"Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd",
                           "ScatterSub", "ScatterUpdate", "TruncatedNormal", "Variable",
                           "VariableV2"})


def _node_name(name):
    """``"x"`` for ``"x"``, ``"x:1"`` and ``"^x"``."""
    return name[1:] if name.startswith("^") else name.split(":")[0]


def _colocated_names(node):
    """The nodes ``node`` is colocated with (its ``_class`` attr: ``loc:@w``)."""
    if "_class" not in node.attr:
        return []
    names = (s.decode("utf-8") for s in node.attr["_class"].list.s)
    return [name[len("loc:@"):] if name.startswith("loc:@") else name for name in names]


# ---- extract_sub_graph ---------------------------------------------------------------------------
def extract_sub_graph(graph_def, dest_nodes):
    """The part of ``graph_def`` that ``dest_nodes`` depend on
    (``tf.graph_util.extract_sub_graph``).

    Args:
        graph_def: a ``GraphDef``.
        dest_nodes: node names (not tensor names: ``"probs"``, not ``"probs:0"``).

    Returns:
        A new ``GraphDef`` with those nodes and every node they reach through
        inputs, control inputs and colocation, in ``graph_def``'s order, with
        its ``library`` and ``versions``.

    Raises:
        TypeError: if ``graph_def`` is not a ``GraphDef`` or ``dest_nodes`` is a string.
        AssertionError: if a name in ``dest_nodes`` is not a node of ``graph_def``.
    """
    graph_def_class = protos.load("graph_pb2").GraphDef
    if not isinstance(graph_def, graph_def_class):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto, but got type %s."
                        % type(graph_def))
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be an iterable of strings, but got type %s."
                        % type(dest_nodes))
    nodes = {_node_name(node.name): node for node in graph_def.node}
    for name in dest_nodes:
        if name not in nodes:  # TF's assert, kept under python -O
            raise AssertionError("%s is not in graph" % name)
    keep = _reachable(dest_nodes, nodes)
    out = graph_def_class()
    out.node.extend(copy.deepcopy(node) for name, node in nodes.items() if name in keep)
    out.library.CopyFrom(graph_def.library)
    out.versions.CopyFrom(graph_def.versions)
    return out


def _reachable(dest_nodes, nodes):
    """The names of ``dest_nodes`` and of every node they depend on (breadth first)."""
    keep, pending = set(), list(dest_nodes)
    while pending:
        name = pending.pop(0)
        if name in keep:
            continue
        keep.add(name)
        if name in nodes:
            node = nodes[name]
            pending.extend(_node_name(i) for i in node.input)
            pending.extend(_colocated_names(node))
    return keep


# ---- convert_variables_to_constants ------------------------------------------------------------
def convert_variables_to_constants(sess, input_graph_def, output_node_names,
                                   variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """``input_graph_def`` cut to ``output_node_names``, its variables made constants
    with their values in ``sess`` (``tf.graph_util.convert_variables_to_constants``).

    Example:
        >>> frozen = tf.graph_util.convert_variables_to_constants(
        ...     sess, sess.graph.as_graph_def(), ["probs"])
        >>> [(node.name, node.op) for node in frozen.node if node.name.startswith("w")]
        [('w', 'Const'), ('w/read', 'Identity')]

    Args:
        sess: the session whose variable values are frozen (only its ``run``
            is used: the values of ``"w:0"``, or ``"w/Read/ReadVariableOp:0"``
            for a resource variable).
        input_graph_def: the graph, a ``GraphDef`` (``sess.graph.as_graph_def()``).
        output_node_names: the names of the nodes the frozen graph computes.
        variable_names_whitelist: freeze only these variables (node names).
        variable_names_blacklist: leave these variables as they are.

    Returns:
        The frozen ``GraphDef``: the nodes ``output_node_names`` need, each
        variable a ``Const`` of its dtype and value, ``ReadVariableOp``\\ s
        ``Identity``\\ s.

    Raises:
        AssertionError: if an output name is not a node of the graph.
        ValueError: if a ``ReadVariableOp`` does not read a ``VarHandleOp``.
    """
    inference_graph = extract_sub_graph(input_graph_def, output_node_names)
    nodes = {node.name: node for node in inference_graph.node}

    def frozen(name):
        return ((variable_names_whitelist is None or name in variable_names_whitelist)
                and (variable_names_blacklist is None or name not in variable_names_blacklist))

    variables = [node for node in inference_graph.node
                 if node.op in ("Variable", "VariableV2", "VarHandleOp") and frozen(node.name)]
    fetches = [node.name + ("/Read/ReadVariableOp:0" if node.op == "VarHandleOp" else ":0")
               for node in variables]
    values = dict(zip((node.name for node in variables), sess.run(fetches) if fetches else []))
    _logger.info("Froze %d variables.", len(values))
    resource_identities = _resource_identities(inference_graph, nodes)

    output_graph_def = protos.load("graph_pb2").GraphDef()
    for node in inference_graph.node:
        if node.name in values:
            output_graph_def.node.add().CopyFrom(
                _const_node(node.name, node.attr["dtype"], values[node.name]))
        elif node.name in resource_identities:
            identity = output_graph_def.node.add()
            identity.CopyFrom(node)
            identity.attr["T"].CopyFrom(resource_identities[node.name])
        elif node.op == "ReadVariableOp":
            output_graph_def.node.add().CopyFrom(_identity_of_read(node))
        else:
            output_graph_def.node.add().CopyFrom(node)
    output_graph_def.library.CopyFrom(inference_graph.library)
    output_graph_def.versions.CopyFrom(inference_graph.versions)
    _logger.info("Converted %d variables to const ops.", len(values))
    return output_graph_def


def _resource_identities(graph_def, nodes):
    """The Identity nodes between a ``ReadVariableOp`` and its ``VarHandleOp``,
    each with the dtype (an ``AttrValue``) it will pass on once the handle is a Const.

    Raises:
        ValueError: if a ``ReadVariableOp`` does not lead back to a ``VarHandleOp``.
    """
    found = {}
    for node in graph_def.node:
        if node.op != "ReadVariableOp":
            continue
        source = _node_name(node.input[0])
        while nodes[source].op == "Identity":
            found[source] = node.attr["dtype"]
            source = _node_name(nodes[source].input[0])
        if nodes[source].op != "VarHandleOp":
            raise ValueError("Cannot find the variable that is an input to the ReadVariableOp.")
    return found


def _const_node(name, dtype, value):
    """A ``Const`` NodeDef named ``name`` holding ``value`` (``dtype``: an ``AttrValue``)."""
    node = protos.load("node_def_pb2").NodeDef(name=name, op="Const")
    node.attr["dtype"].CopyFrom(dtype)
    node.attr["value"].tensor.CopyFrom(
        tensor_util.make_tensor_proto(value, dtype=dtypes.as_dtype(dtype.type)))
    return node


def _identity_of_read(read):
    """The ``Identity`` that replaces a ``ReadVariableOp`` once its variable is a Const."""
    node = protos.load("node_def_pb2").NodeDef(name=read.name, op="Identity")
    node.input.append(read.input[0])
    node.attr["T"].CopyFrom(read.attr["dtype"])
    if "_class" in read.attr:
        node.attr["_class"].CopyFrom(read.attr["_class"])
    return node


# ---- remove_training_nodes -----------------------------------------------------------------------
def remove_training_nodes(input_graph, protected_nodes=None):
    """``input_graph`` without the nodes only training needs
    (``tf.graph_util.remove_training_nodes``).

    ``CheckNumerics`` nodes are removed; ``Identity`` and ``StopGradient``
    nodes are spliced out (their consumers read their input directly), unless
    they take or give a control edge, are colocated with, or are protected.

    Args:
        input_graph: a ``GraphDef``.
        protected_nodes: names of nodes to keep whatever their op.

    Returns:
        A new ``GraphDef`` (nodes only: no ``library`` or ``versions``, as TF).
    """
    protected = set(protected_nodes or ())
    removed = {node.name for node in input_graph.node
               if node.op == "CheckNumerics" and node.name not in protected}
    kept = [_without_inputs(node, removed) for node in input_graph.node
            if node.name not in removed]

    control_inputs, with_control_inputs, colocated = set(), set(), set()
    for node in kept:
        for name in node.input:
            if name.startswith("^"):
                control_inputs.add(name[1:])
                with_control_inputs.add(node.name)
        colocated.update(_colocated_names(node))
    spliced = {node.name: node.input[0] for node in kept
               if node.op in ("Identity", "StopGradient") and node.name not in protected
               and node.name not in colocated | with_control_inputs | control_inputs}

    output_graph = protos.load("graph_pb2").GraphDef()
    for node in kept:
        if node.name in spliced:
            continue
        copy_ = output_graph.node.add()
        copy_.CopyFrom(node)
        del copy_.input[:]
        copy_.input.extend(_spliced_input(name, spliced) for name in node.input)
    return output_graph


def _without_inputs(node, removed):
    """A copy of ``node`` without its inputs (data or control) from ``removed`` nodes."""
    copy_ = protos.load("node_def_pb2").NodeDef()
    copy_.CopyFrom(node)
    del copy_.input[:]
    copy_.input.extend(name for name in node.input if re.sub(r"^\^", "", name) not in removed)
    return copy_


def _spliced_input(name, spliced):
    """The input that ``name`` stands for once the spliced nodes are gone."""
    while re.sub(r"^\^", "", name) in spliced:
        name = spliced[re.sub(r"^\^", "", name)]
    return name


# ---- small helpers -------------------------------------------------------------------------------
def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """True for a node TF's GPU kernels cannot run (``tf.graph_util.must_run_on_cpu``):
    an ``int32`` or ``string`` ``Const``, an ``int32`` ``Cast`` or
    ``DynamicStitch``, and with ``pin_variables_on_cpu`` the variable ops.

    Args:
        node: an Operation or a ``NodeDef``.
        pin_variables_on_cpu: also pin the ops that hold or change variables.
    """
    node_def = node.node_def if hasattr(node, "node_def") else node
    if not isinstance(node_def, protos.load("node_def_pb2").NodeDef):  # TF's assert
        raise AssertionError("must_run_on_cpu expects an Operation or a NodeDef, got %s"
                             % type(node).__name__)
    if pin_variables_on_cpu and node_def.op in _VARIABLE_OPS:
        return True
    int32, string = dtypes.int32.as_datatype_enum, dtypes.string.as_datatype_enum
    if node_def.op == "Const":
        return node_def.attr["dtype"].type in (int32, string)
    if node_def.op in ("DynamicStitch", "ParallelDynamicStitch"):
        return node_def.attr["T"].type == int32
    if node_def.op == "Cast":
        return node_def.attr["SrcT"].type == int32
    return False


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of the tensor a NodeDef input names (``"x"`` is ``"x:0"``)."""
    name = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(name).get_shape()
