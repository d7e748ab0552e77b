"""Dataset functions: the Python callables of ``map`` and ``filter`` as graphs.

``dataset.map(lambda x: x * 2)`` does not call the lambda on data.  As in
TF, the function is *traced* once, when ``map`` is called: minitf creates a
separate :class:`~minitf.framework.graph.Graph`, adds one placeholder per
component of the input element (``args_0``, ``args_1``, ...), calls the
function on them (rebuilt into the element's structure) and records the
tensors it returns.  The result, a :class:`DatasetFunction`, knows its output
structure, dtypes and shapes at once, so the mapped dataset's
``output_types``/``output_shapes`` are known at graph-construction time.

The function graph is stored in the outer graph's *function library*
(``Graph._add_function``) under a unique name (``Dataset_map_<lambda>_3``);
the ``MapDataset`` op carries only that name as its ``f`` attr, a
:class:`~minitf.framework.attr_value.FunctionName`, so the op stays plain
data: a GraphDef writes the attr as TF's ``func`` (a ``NameAttrList``) and the
function as a ``FunctionDef`` in ``GraphDef.library``
(:mod:`~minitf.framework.function_def`).  An imported GraphDef or meta graph
thus rebuilds a working pipeline in another process: the first lookup of an
imported ``FunctionDef`` rebuilds its graph (:class:`ImportedFunction`).
``from_generator``'s Python generators cannot be serialized at all (in TF
neither): their attr is a plain string token, as TF's ``py_func`` token.

At run time the ``MapDataset`` kernel looks the function up, and its
dataset object :meth:`~DatasetFunction.instantiate`\\ s it on first use: a
private ``Session`` on the function graph, created once per iterator
initialization (kept across ``repeat`` epochs) and closed when the dataset
object is dropped.  Each element is then one
``session.run(outputs, {args_i: component_i})`` — the straight-line fast path
of the session, some microseconds of overhead per element.  (TF instead runs
the function through its function runtime, in-process, to the same effect.)

A function may use tensors of the outer graph (a constant, a placeholder, a
variable's value): the :class:`FuncGraph` *captures* each one as a
placeholder of the function graph, the dataset op takes the outer tensor as
an extra input, and its kernel feeds the value in — as TF does with its
``other_arguments``.  The value is read when the dataset op runs, i.e. when
the iterator is initialized.  Python and NumPy values simply become constants
of the function graph.

Mirrors ``StructuredFunctionWrapper`` in ``tensorflow/python/data/ops/dataset_ops.py``.
"""

import itertools
import threading
import weakref

from minitf.data import structure
from minitf.framework import dtypes as dtypes_lib
from minitf.framework import errors
from minitf.framework import function_def as function_def_lib
from minitf.framework import graph as graph_lib
from minitf.framework import graph_def as graph_def_lib
from minitf.framework import protos
from minitf.framework.attr_value import FunctionName
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops
from minitf.runtime.config import ConfigProto
from minitf.runtime.session import Session

_ids = itertools.count(1)
# graph -> {name: ImportedFunction}: the imported FunctionDefs already rebuilt.
_rebuilt = weakref.WeakKeyDictionary()
_rebuilt_lock = threading.Lock()


def add_to_library(graph, prefix, value):
    """Stores ``value`` in ``graph``'s function library; returns its unique name.

    The name of a traced :class:`DatasetFunction` is a ``FunctionName`` (a
    ``func`` attr in a GraphDef); that of a generator a plain string token.
    """
    name = "%s_%d" % (prefix, next(_ids))
    graph._add_function(name, value)
    return FunctionName(name) if isinstance(value, DatasetFunction) else name


def lookup(graph, name):
    """The library entry ``name`` of ``graph`` (called by the dataset kernels).

    An imported ``FunctionDef`` is rebuilt into an :class:`ImportedFunction`
    on its first lookup.

    Raises:
        NotFoundError: if the graph has no such function (e.g. a
            ``from_generator`` dataset in an imported graph).
    """
    graph = graph.copied_from or graph  # a step's or partition's copy of the user's graph
    function = graph._get_function(name)
    if function is None:
        message = ("Function '%s' is not in the function library of this graph (no imported "
                   "graph carries the Python generators of Dataset.from_generator)." % name)
        raise errors.NotFoundError(None, None, message)
    if not isinstance(function, protos.load("function_pb2").FunctionDef):
        return function  # traced in this process, or a generator
    with _rebuilt_lock:  # a FunctionDef of an imported GraphDef
        rebuilt = _rebuilt.setdefault(graph, {})
        if name not in rebuilt:
            rebuilt[name] = ImportedFunction(function, graph_def_lib.library(graph))
        return rebuilt[name]


class FuncGraph(graph_lib.Graph):
    """The graph a dataset function is traced into.

    Its ops may use tensors of ``outer_graph`` (the dataset's graph, or the
    graph of an enclosing function): each such tensor is *captured* once, as
    a placeholder of this graph (``captured_0`` ...), and becomes an extra
    input of the dataset op, whose kernel feeds its value to the placeholder
    (TF's ``FuncGraph.capture`` and the ops' ``other_arguments``).

    Attributes:
        captures: ``(outer tensor, placeholder)`` pairs, in capture order.
    """

    def __init__(self, outer_graph):
        super().__init__()
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed
        self.captures = []

    def _capture(self, tensor, op_type):
        if tensor.graph is not self.outer_graph:
            if self.outer_graph.outer_graph is None:  # not from any enclosing graph
                return super()._capture(tensor, op_type)
            tensor = self.outer_graph._capture(tensor, op_type)  # through the enclosing function
        for outer, placeholder in self.captures:
            if outer is tensor:
                return placeholder
        # Made at the top of this graph, outside the op being built and any control flow.
        with self.as_default(), self.control_dependencies(None), self.name_scope(""), \
                self.device(None):
            placeholder = array_ops.placeholder(tensor.dtype.base_dtype, tensor.shape,
                                                name="captured_%d" % len(self.captures))
        self.captures.append((tensor, placeholder))
        return placeholder


class DatasetFunction:
    """A Python function traced into its own graph.

    Args:
        fn: the Python callable.  A tuple element is passed as positional
            arguments (``fn(x, y)``), any other element as one argument.
        input_types, input_shapes: the structures of the element's dtypes and
            TensorShapes.
        what: the transformation, for names and messages (``"map"``).
        outer_graph: the graph of the dataset (default: the default graph).
        input_classes: the structure of the element's classes (``tf.Tensor``
            or ``tf.SparseTensor``; default: all dense).

    Attributes:
        graph: the function graph (a :class:`FuncGraph`).
        inputs: its placeholders, one per input component.
        outputs: its output tensors, one per output component.
        output_structure: the structure ``fn`` returned (lists become tuples).
        output_classes: its classes: ``SparseTensor`` where ``fn`` returned
            one (its output is then the variant form, ``SerializeSparse``).
        captured_inputs: the outer tensors ``fn`` uses; the dataset op takes
            them as extra inputs (``other_arguments``).

    Raises:
        ValueError: if ``fn`` uses tensors of an unrelated graph.
        TypeError: if ``fn`` returns something that is not convertible to tensors.
    """

    def __init__(self, fn, input_types, input_shapes, what="map", outer_graph=None,
                 input_classes=None):
        self.name = getattr(fn, "__name__", "fn")
        self.graph = FuncGraph(outer_graph or graph_lib.get_default_graph())
        if input_classes is None:
            input_classes = structure.dense_classes(input_types)
        flat_types = structure.flat_types(input_types, input_classes)
        flat_shapes = structure.flat_shapes(input_shapes, input_classes)
        with self.graph.as_default():
            self.inputs = [array_ops.placeholder(dtype, shape, name="args_%d" % i)
                           for i, (dtype, shape) in enumerate(zip(flat_types, flat_shapes))]
            args = structure.from_tensor_list(self.inputs, input_types, input_shapes,
                                              input_classes)
            result = fn(*args) if type(args) is tuple else fn(args)
            if isinstance(result, list):
                result = tuple(result)  # TF's rule: a returned list is a tuple of components
            # flat_map and interleave: the function returns a Dataset, whose variant
            # tensor is the output; at run time it evaluates to the dataset object.
            self.returned_dataset = result if hasattr(result, "_variant_tensor") else None
            if self.returned_dataset is not None:
                result = result._variant_tensor
            self.output_structure = result
            self.output_classes = structure.classes_of(result)
            self._sparse_outputs = [value for value in structure.flatten(result)
                                    if isinstance(value, SparseTensor)]
            self.outputs = [self._as_output(value, i, what)
                            for i, value in enumerate(structure.to_tensor_list(result))]
        self.captured_inputs = [outer for outer, _ in self.graph.captures]

    def _as_output(self, value, index, what):
        if isinstance(value, Tensor) and value.graph is not self.graph:
            return self.graph._capture(value, "Dataset.%s" % what)  # fn returned an outer tensor
        try:
            return convert_to_tensor(value, name="output_%d" % index)
        except (TypeError, ValueError) as e:
            raise TypeError("The function passed to Dataset.%s returned %r, which is not "
                            "convertible to a tensor: %s" % (what, value, e)) from None

    @property
    def output_types(self):
        """The dtypes of the returned components (of the values, for a SparseTensor)."""
        return structure.pack_sequence_as(self.output_structure,
                                          [t.dtype.base_dtype for t in self._returned()])

    @property
    def output_shapes(self):
        """The static shapes of the returned components (dense shapes, for a SparseTensor)."""
        return structure.pack_sequence_as(self.output_structure,
                                          [t.shape for t in self._returned()])

    def _returned(self):
        """Per component, the SparseTensor the function returned, else its output tensor."""
        sparse = iter(self._sparse_outputs)
        return [next(sparse) if cls is SparseTensor else output for output, cls in
                zip(self.outputs, structure.flatten(self.output_classes))]

    @property
    def arguments(self):
        """The function graph's placeholders as a call fills them: the inputs,
        then the captures (the dataset op's ``other_arguments``)."""
        return self.inputs + [placeholder for _, placeholder in self.graph.captures]

    def instantiate(self, captured_values=()):
        """A :class:`FunctionInstance`: this function ready to run on values,
        given the values of its captured tensors."""
        return FunctionInstance(self, captured_values)

    def to_function_def(self, name):
        """The function as TF's ``FunctionDef``, named ``name`` (its library name)."""
        return function_def_lib.function_def(name, self.graph, self.arguments, self.outputs)


class ImportedFunction:
    """A traced function rebuilt from its ``FunctionDef``, without the Python callable.

    Enough to run (``graph``, ``arguments``, ``outputs``, :meth:`instantiate`):
    the element structure lives on the Python ``Dataset`` objects, which an
    imported graph does not have.

    Args:
        definition: the ``FunctionDef``.
        library: the ``FunctionDef``\\ s of the functions it may call.
    """

    def __init__(self, definition, library=()):
        self.graph, self.arguments, self.outputs = function_def_lib.function_graph(
            definition, library)

    def instantiate(self, captured_values=()):
        return FunctionInstance(self, captured_values)


class FunctionInstance:
    """A traced function bound to a private Session on its graph.

    ``instance(components) -> output components`` runs one call.  Use it as a
    context manager (or call :meth:`close`) to free the session.

    Example:
        >>> with fn.instantiate() as call:
        ...     call([np.float32(2.0)])
        (np.float32(4.0),)
    """

    def __init__(self, function, captured_values=()):
        arguments = tuple(function.arguments)
        split = len(arguments) - len(captured_values)  # the captures come last
        self._inputs = arguments[:split]
        self._outputs = tuple(function.outputs)
        self._captured = dict(zip(arguments[split:], captured_values))
        # Function graphs run on the CPU, as tf.data functions do in TF.
        self._session = Session(graph=function.graph,
                                config=ConfigProto(device_count={"GPU": 0}))

    def __call__(self, components):
        feeds = dict(self._captured)
        feeds.update(zip(self._inputs, components))
        return self._session.run(self._outputs, feeds)

    def close(self):
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def is_bool_scalar(tensor):
    """True if ``tensor`` can be a filter predicate: a scalar bool."""
    return tensor.dtype.base_dtype == dtypes_lib.bool and tensor.shape.is_compatible_with([])
