"""Dataset functions: the Python callables of ``map`` and ``filter`` as graphs.

``dataset.map(lambda x: x * 2)`` does not call the lambda on data.  As in
TF, the function is *traced* once, when ``map`` is called: minitf creates a
separate :class:`~minitf.framework.graph.Graph`, adds one placeholder per
component of the input element (``args_0``, ``args_1``, ...), calls the
function on them (rebuilt into the element's structure) and records the
tensors it returns.  The result, a :class:`DatasetFunction`, knows its output
structure, dtypes and shapes at once, so the mapped dataset's
``output_types``/``output_shapes`` are known at graph-construction time.

The function graph is stored in the outer graph's *function library* under
a unique name (``Dataset_map_<lambda>_3``); the ``MapDataset`` op carries only
that name as its ``f`` attr, so the op stays plain data (a GraphDef records
the name, as TF's ``NameAttrList`` does).  A meta graph carries the traced
functions along (:func:`library_records`, TF's ``GraphDef.library``), so
``tf.train.import_meta_graph`` rebuilds a working pipeline in another
process; a bare GraphDef does not.  ``from_generator``'s Python generators
cannot be serialized at all (in TF neither).

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
from minitf.framework import graph as graph_lib
from minitf.framework import graph_def as graph_def_lib
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops
from minitf.runtime.config import ConfigProto
from minitf.runtime.session import Session

# graph -> {name: DatasetFunction or generator}: each graph's function library.
_libraries = weakref.WeakKeyDictionary()
_library_lock = threading.Lock()
_ids = itertools.count(1)


def add_to_library(graph, prefix, value):
    """Stores ``value`` in ``graph``'s function library; returns its unique name."""
    name = "%s_%d" % (prefix, next(_ids))
    with _library_lock:
        _libraries.setdefault(graph, {})[name] = value
    return name


def lookup(graph, name):
    """The library entry ``name`` of ``graph`` (called by the dataset kernels).

    Raises:
        NotFoundError: if the graph has no such function (e.g. an imported
            GraphDef, or a ``from_generator`` dataset in an imported meta graph).
    """
    graph = graph.copied_from or graph  # a step's or partition's copy of the user's graph
    try:
        return _libraries[graph][name]
    except KeyError:
        message = ("Function '%s' is not in the function library of this graph (a graph "
                   "imported from a bare GraphDef carries no functions, and no imported graph "
                   "carries the Python generators of Dataset.from_generator)." % name)
        raise errors.NotFoundError(None, None, message) from None


def library_records(graph):
    """The traced functions of ``graph``'s library as JSON-compatible records,
    ``{name: {"graph_def": ..., "inputs": [...], "outputs": [...]}}``, for a
    meta graph.  Generators are Python objects and are left out."""
    with _library_lock:
        entries = dict(_libraries.get(graph, {}))
    return {name: entry.to_record() for name, entry in sorted(entries.items())
            if isinstance(entry, (DatasetFunction, ImportedFunction))}


def add_library_records(graph, records):
    """Adds functions rebuilt from :func:`library_records` to ``graph``'s library,
    under their recorded names (the ops' ``f`` attrs).  A name already there is kept."""
    for name, record in records.items():
        function = ImportedFunction(record)
        with _library_lock:
            _libraries.setdefault(graph, {}).setdefault(name, function)


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

    Attributes:
        graph: the function graph (a :class:`FuncGraph`).
        inputs: its placeholders, one per input component.
        outputs: its output tensors, one per output component.
        output_structure: the structure ``fn`` returned (lists become tuples).
        captured_inputs: the outer tensors ``fn`` uses; the dataset op takes
            them as extra inputs (``other_arguments``).

    Raises:
        ValueError: if ``fn`` uses tensors of an unrelated graph.
        TypeError: if ``fn`` returns something that is not convertible to tensors.
    """

    def __init__(self, fn, input_types, input_shapes, what="map", outer_graph=None):
        self.name = getattr(fn, "__name__", "fn")
        self.graph = FuncGraph(outer_graph or graph_lib.get_default_graph())
        flat_types = structure.flatten(input_types)
        flat_shapes = structure.flatten(input_shapes)
        with self.graph.as_default():
            self.inputs = [array_ops.placeholder(dtype, shape, name="args_%d" % i)
                           for i, (dtype, shape) in enumerate(zip(flat_types, flat_shapes))]
            args = structure.pack_sequence_as(input_types, self.inputs)
            result = fn(*args) if type(args) is tuple else fn(args)
            if isinstance(result, list):
                result = tuple(result)  # TF's rule: a returned list is a tuple of components
            # flat_map and interleave: the function returns a Dataset, whose variant
            # tensor is the output; at run time it evaluates to the dataset object.
            self.returned_dataset = result if hasattr(result, "_variant_tensor") else None
            if self.returned_dataset is not None:
                result = result._variant_tensor
            self.output_structure = result
            self.outputs = [self._as_output(value, i, what)
                            for i, value in enumerate(structure.flatten(result))]
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
        return structure.pack_sequence_as(self.output_structure,
                                          [t.dtype.base_dtype for t in self.outputs])

    @property
    def output_shapes(self):
        return structure.pack_sequence_as(self.output_structure, [t.shape for t in self.outputs])

    @property
    def capture_placeholders(self):
        return [placeholder for _, placeholder in self.graph.captures]

    def instantiate(self, captured_values=()):
        """A :class:`FunctionInstance`: this function ready to run on values,
        given the values of its captured tensors."""
        return FunctionInstance(self, captured_values)

    def to_record(self):
        """The function graph and its input and output names (TF's ``FunctionDef``)."""
        return {"graph_def": self.graph.as_graph_def(),
                "inputs": [t.name for t in self.inputs],
                "outputs": [t.name for t in self.outputs],
                "captures": [t.name for t in self.capture_placeholders],
                "library": library_records(self.graph)}  # functions used inside (flat_map)


class ImportedFunction:
    """A traced function rebuilt from its record, without the Python callable.

    Enough to run (``graph``, ``inputs``, ``outputs``, :meth:`instantiate`):
    the element structure lives on the Python ``Dataset`` objects, which an
    imported graph does not have.
    """

    def __init__(self, record):
        self.graph = graph_lib.Graph()
        graph_def_lib.import_graph_def(record["graph_def"], name="", graph=self.graph)
        add_library_records(self.graph, record.get("library", {}))
        self.inputs = [self.graph.as_graph_element(name) for name in record["inputs"]]
        self.outputs = [self.graph.as_graph_element(name) for name in record["outputs"]]
        self.capture_placeholders = [self.graph.as_graph_element(name)
                                     for name in record.get("captures", [])]
        self._record = record

    def instantiate(self, captured_values=()):
        return FunctionInstance(self, captured_values)

    def to_record(self):
        return self._record


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
        self._inputs = tuple(function.inputs)
        self._outputs = tuple(function.outputs)
        self._captured = dict(zip(function.capture_placeholders, captured_values))
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
