"""FunctionDef: a function graph as TF writes it in a GraphDef's library, and back.

``dataset.map(fn)`` traces ``fn`` into a graph of its own (see
:mod:`minitf.data.function`) and stores it in the dataset graph's function
library; the ``MapDataset`` op names it in its ``f`` attr.  A GraphDef
carries the library along as TF does, one ``FunctionDef`` per function::

    signature {                          # an OpDef: the function's name and types
      name: "Dataset_map_double_3"
      input_arg { name: "args_0" type: DT_INT64 }       # one per argument placeholder
      output_arg { name: "output_0" type: DT_INT64 }
    }
    node_def { name: "mul" op: "Mul" input: "args_0" input: "mul/y:output:0" }
    node_def { name: "mul/y" op: "Const" ... }
    ret { key: "output_0" value: "mul:output:0" }
    arg_attr { key: 0 value { attr { key: "_output_shapes"
                                     value { list { shape { } } } } } }

``node_def`` holds every op of the function graph but the argument
placeholders.  An input names an argument (``"args_0"``), or an op's output
as ``"op:output_name:index"`` — TF's form: the output's name in the op's
declaration, and its index within that name (``"split:output:1"``); a
control input stays ``"^op"``.  ``ret`` maps each output to the tensor it
returns, and ``arg_attr`` keeps each argument's static shape, as TF's
``function_def_to_graph`` reads it.

:func:`function_def` writes one; :func:`function_graph` rebuilds the graph,
its argument placeholders and its outputs with
:func:`~minitf.framework.graph_def.import_graph_def`.

Mirrors ``tensorflow/core/framework/function.proto``,
``tensorflow/python/framework/graph_to_function_def.py`` and
``function_def_to_graph.py``.
"""

from minitf.framework import attr_value as attr_value_lib
from minitf.framework import graph_def as graph_def_lib
from minitf.framework import protos
from minitf.framework.graph import Graph
from minitf.framework.tensor_shape import TensorShape
from minitf.registry import get_registry

#: The attr of ``arg_attr`` that holds an argument's shape (TF's name).
SHAPES_ATTR = "_output_shapes"


def function_def(name, graph, arguments, outputs):
    """The ``FunctionDef`` of the function graph ``graph``.

    Args:
        name: the function's name in the library (what ``func`` attrs name).
        graph: the function graph.
        arguments: its argument placeholders (Tensors of ``graph``), in order.
        outputs: the Tensors it returns, in order.
    """
    definition = protos.load("function_pb2").FunctionDef()
    definition.signature.name = name
    argument_ops = {t.op for t in arguments}
    for i, tensor in enumerate(arguments):
        definition.signature.input_arg.add(name=tensor.op.name,
                                           type=tensor.dtype.base_dtype.as_datatype_enum)
        definition.arg_attr[i].attr[SHAPES_ATTR].CopyFrom(
            attr_value_lib.attr_value([tensor.shape]))
    for op in graph.get_operations():
        if op in argument_ops:
            continue
        node = definition.node_def.add()
        node.CopyFrom(graph_def_lib.node_def(op))
        del node.input[:]
        node.input.extend(_reference(t, argument_ops) for t in op.inputs)
        node.input.extend("^" + c.name for c in op.control_inputs)
    for i, tensor in enumerate(outputs):
        output_name = "output_%d" % i
        definition.signature.output_arg.add(name=output_name,
                                            type=tensor.dtype.base_dtype.as_datatype_enum)
        definition.ret[output_name] = _reference(tensor, argument_ops)
    return definition


def _reference(tensor, argument_ops):
    """How a FunctionDef names ``tensor``: an argument's name, or ``op:output_name:index``."""
    op = tensor.op
    if op in argument_ops:
        return op.name
    names = op.op_def.outputs
    if len(op.outputs) == len(names):  # one output per declared name
        return "%s:%s:%d" % (op.name, names[tensor.value_index], 0)
    return "%s:%s:%d" % (op.name, names[0], tensor.value_index)  # a list output (Split)


def function_graph(definition, library=()):
    """Rebuilds a function from its ``FunctionDef``.

    Args:
        definition: the ``FunctionDef``.
        library: the other ``FunctionDef``\\ s of the GraphDef it came from;
            they join the new graph's library (functions it calls).

    Returns:
        ``(graph, arguments, outputs)``: a new Graph, its argument placeholders
        and its output Tensors, in the signature's order.
    """
    graph_def = protos.load("graph_pb2").GraphDef()
    for i, arg in enumerate(definition.signature.input_arg):
        placeholder = graph_def.node.add(name=arg.name, op="Placeholder")
        placeholder.attr["dtype"].type = arg.type
        shape = _argument_shape(definition, i)
        placeholder.attr["shape"].CopyFrom(attr_value_lib.attr_value(shape))
    resolve = _InputNames(definition)
    for node in definition.node_def:
        copy = graph_def.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(resolve(name) for name in node.input)
    graph = Graph()
    graph_def_lib.import_graph_def(graph_def, name="", graph=graph)
    for function in library:
        graph._add_function(function.signature.name, function)
    arguments = [graph.get_tensor_by_name(arg.name + ":0")
                 for arg in definition.signature.input_arg]
    returned = (resolve(definition.ret[arg.name]) for arg in definition.signature.output_arg)
    outputs = [graph.get_tensor_by_name(name if ":" in name else name + ":0")  # an argument
               for name in returned]
    return graph, arguments, outputs


def _argument_shape(definition, index):
    """The static shape ``arg_attr`` records for argument ``index`` (unknown if none)."""
    if index in definition.arg_attr and SHAPES_ATTR in definition.arg_attr[index].attr:
        return attr_value_lib.python_value(definition.arg_attr[index].attr[SHAPES_ATTR])[0]
    return TensorShape(None)


class _InputNames:
    """Turns a FunctionDef's input names into a GraphDef's: ``op:output_name:index``
    becomes ``op:flat_index`` (from the op's declared output names)."""

    def __init__(self, definition):
        self._arguments = {arg.name for arg in definition.signature.input_arg}
        self._op_types = {node.name: node.op for node in definition.node_def}
        self._registry = get_registry()

    def __call__(self, name):
        if name.startswith("^") or name in self._arguments:
            return name
        op_name, output_name, index = name.rsplit(":", 2)
        names = list(self._registry.op_def(self._op_types[op_name]).outputs)
        return "%s:%d" % (op_name, names.index(output_name) + int(index))
