"""``tf.Graph``: the container of operations, names, collections and context.

Building a TF1 program is phase 1: every op constructor calls
:meth:`Graph.create_op`, which names the op uniquely in the current name scope,
checks input dtypes against the op's declaration, attaches pending control
dependencies and device requests, and runs the op's shape function — so shape
and type mistakes surface *here*, before anything runs.

The graph is also where TF1 keeps its contextual state: the default-graph stack
(``as_default``), ``name_scope``, ``control_dependencies``, ``device``,
collections (``GLOBAL_VARIABLES`` ...), the graph-level random seed, and
``finalize`` which freezes it.

Mirrors ``tf.Graph`` in ``tensorflow/python/framework/ops.py``.
"""

import contextlib
import re
import threading

from minitf.framework import dtypes as dtypes_lib
from minitf.framework import op_attrs
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.registry import get_registry

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class GraphKeys:
    """Standard collection names (``tf.GraphKeys``)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    GLOBAL_STEP = "global_step"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    SAVERS = "savers"
    TRAIN_OP = "train_op"
    VARIABLES = GLOBAL_VARIABLES


class _ControlDependencies:
    """One ``control_dependencies`` block: its control ops and the ops made inside."""

    def __init__(self, control_ops):
        self.control_ops = control_ops
        self.created = set()


class Graph:
    """A TensorFlow computation, as a dataflow graph.

    Example:
        >>> g = tf.Graph()
        >>> with g.as_default():
        ...     c = tf.constant(30.0)
        >>> c.graph is g
        True
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._ops_by_name = {}
        self._ops = []
        self._names_in_use = {}
        self._name_stack = ""
        self._control_stack = []
        self._device_stack = []
        self._colocation_stack = []
        self._collections = {}
        self._finalized = False
        self._unfeedable = set()
        self._unfetchable = set()  # ops inside control flow (TF's prevent_fetching)
        self._gradient_override_map = {}
        self._seed = None
        self._version = 0
        self._control_flow_context = None  # see minitf.ops.control_flow_ops
        self._functions = {}  # the function library: name -> function (see _add_function)

    # ---- the default graph ---------------------------------------------------
    def as_default(self):
        """A context manager that makes this the default graph."""
        return _default_graph_stack.get_controller(self)

    # ---- ops -----------------------------------------------------------------
    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None,
                  attrs=None, op_def=None, compute_shapes=True):
        """Adds an op of ``op_type`` to the graph and returns it.

        Args:
            op_type: the registered op type, e.g. ``"Add"``.
            inputs: the input Tensors (a list input is passed as a nested list).
            dtypes: output dtypes; None lets the OpDef infer them.
            input_types: ignored (TF1 compatibility).
            name: the op's name, made unique in the current name scope; a name
                ending in ``/`` is used as is.
            attrs: attr values.
            op_def: the :class:`OpDef` (default: looked up by ``op_type``).
            compute_shapes: run the shape function.

        Raises:
            RuntimeError: if the graph is finalized.
            TypeError: if input dtypes or attrs violate the op's declaration
                (see :mod:`~minitf.framework.op_attrs`), or no kernel takes
                the input dtypes.
            ValueError: if shapes are incompatible, an input is from another
                graph, or an attr is out of its declared range.
        """
        del input_types
        self._check_not_finalized()
        registry = get_registry()
        op_def = op_def or registry.op_def(op_type)
        attrs = op_attrs.checked_attrs(op_def, dict(attrs or {}), (name or op_type).rstrip("/"))
        flat_inputs = self._check_inputs(op_type, op_def, inputs)
        name = self._op_name(name or op_type)
        with self._lock:
            control_inputs = self._control_inputs_for(flat_inputs)
            if op_type in self._gradient_override_map:
                attrs["_gradient_op_type"] = self._gradient_override_map[op_type]
            op = Operation(self, op_def, name, flat_inputs, attrs, (), control_inputs)
            _check_input_dtypes(op, op_def)
            out_dtypes = list(dtypes) if dtypes is not None else _infer_dtypes(op, op_def)
            op._outputs = [Tensor(op, i, dtypes_lib.as_dtype(d)) for i, d in enumerate(out_dtypes)]
            op_attrs.check_kernel_dtypes(op, registry)
            if compute_shapes and op_def.shape_fn is not None:
                _set_shapes(op, op_def)
            # Devices after shapes, as in TF: a device function may weigh the
            # op's outputs (GreedyLoadBalancingStrategy's byte_size_load_fn).
            self._apply_device_functions(op)
            self._add_op(op, flat_inputs)
            if self._control_flow_context is not None:
                # A cond or while_loop under construction adopts the op: values from
                # outside its context are routed in through Switch or Enter.
                op._control_flow_context = self._control_flow_context
                self._control_flow_context.add_op(op)
        return op

    def _get_control_flow_context(self):
        """The cond/while context ops are currently created in (None: top level)."""
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    # A function graph (tf.data's, minitf.data.function.FuncGraph) sets this: its
    # ops may use tensors of its outer graph, which _capture turns into inputs.
    outer_graph = None

    # A graph of copies (the runtime's step graph, a device's partition) sets
    # this to the user's graph its ops were copied from: what belongs to the
    # graph rather than to an op (the function library) is found there.
    copied_from = None

    def _capture(self, tensor, op_type):
        """An op input from another graph: an error, except in a function graph."""
        raise ValueError("Tensor %s must be from the same graph as the other inputs of '%s'."
                         % (tensor, op_type))

    def _check_inputs(self, op_type, op_def, inputs):
        flat = []
        for value in inputs:
            items = value if isinstance(value, (list, tuple)) else [value]
            for t in items:
                if not isinstance(t, Tensor):
                    raise TypeError("Input to op '%s' must be a Tensor, got %r" % (op_type, t))
                if t.graph is not self:
                    t = self._capture(t, op_type)
                flat.append(t)
        if op_def.list_input is not None:
            list_len = len(inputs[op_def.list_input]) if op_def.list_input < len(inputs) else 0
            expected = len(op_def.inputs) - 1 + list_len
        else:
            expected = len(op_def.inputs)
        if len(flat) != expected:
            raise ValueError("Op '%s' takes %d inputs (%s), got %d"
                             % (op_type, expected, ", ".join(op_def.inputs), len(flat)))
        return flat

    def _op_name(self, name):
        if name.endswith("/"):
            name = name[:-1]
            if name in self._ops_by_name:
                raise ValueError("Duplicate node name in graph: '%s'" % name)
            self._names_in_use.setdefault(name.lower(), 1)
            return name
        if not _VALID_OP_NAME.match(name):
            raise ValueError("'%s' is not a valid node name" % name)
        return self.unique_name(name)

    def _add_op(self, op, flat_inputs):
        op._id = len(self._ops)
        self._ops.append(op)
        self._ops_by_name[op.name] = op
        self._version += 1
        for i, t in enumerate(flat_inputs):
            t._consumers.append(op)
        for block in self._control_stack:
            block.created.add(op)
        for group, _ in self._colocation_stack:
            op._colocation_groups = list(group)

    def get_operations(self):
        """All ops, in creation order."""
        return list(self._ops)

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as TF's ``GraphDef`` protocol buffer (see :mod:`~minitf.framework.graph_def`).

        Args:
            from_version: not supported (must be None): the whole graph is returned.
            add_shapes: record each op's output shapes in an ``_output_shapes`` attr.
        """
        if from_version is not None:
            raise NotImplementedError("as_graph_def(from_version=...) is not supported by minitf")
        from minitf.framework.graph_def import as_graph_def
        return as_graph_def(self, add_shapes=add_shapes)

    # ---- the function library ------------------------------------------------
    def _add_function(self, name, function):
        """Adds ``function`` to this graph's function library under ``name``.

        The library holds what ops call by name: tf.data's traced functions
        (a ``MapDataset``'s ``f`` attr), the ``FunctionDef``\\ s of an imported
        GraphDef's ``library``, ``Dataset.from_generator``'s generators.
        Mirrors TF's ``Graph._add_function``.
        """
        with self._lock:
            self._functions[name] = function

    def _get_function(self, name):
        """The function ``name`` of this graph's library, or None."""
        return self._functions.get(name)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s." % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s." % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Returns the Tensor or Operation ``obj`` names or converts to.

        Raises:
            TypeError: if ``obj`` cannot name a graph element.
            ValueError: if it names one of another graph, or one that does not exist.
            KeyError: if a name refers to nothing in this graph.
        """
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, str):
            element = obj._as_graph_element()
            if element.graph is not self:
                raise ValueError("%s is not an element of this graph." % (element,))
            if isinstance(element, Tensor) and allow_tensor:
                return element
            if isinstance(element, Operation) and allow_operation:
                return element
            raise TypeError("Can not convert a %s into a %s." % (
                type(element).__name__, "Tensor" if allow_tensor else "Operation"))
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation)
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok)
        raise TypeError("Can not convert a %s into a %s." % (type(obj).__name__, kinds))

    def _element_by_name(self, name, allow_tensor, allow_operation):
        if ":" in name:
            if not allow_tensor:
                raise ValueError("Name '%s' appears to refer to a Tensor, not an Operation." % name)
            op_name, _, index = name.rpartition(":")
            try:
                index = int(index)
            except ValueError:
                raise ValueError("The name '%s' looks a like a Tensor name, but is not a valid "
                                 "one. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\"." % name) from None
            op = self._ops_by_name.get(op_name)
            if op is None:
                raise KeyError("The name '%s' refers to a Tensor which does not exist. The "
                               "operation, '%s', does not exist in the graph." % (name, op_name))
            if not 0 <= index < len(op.outputs):
                raise KeyError("The name '%s' refers to a Tensor which does not exist. The "
                               "operation, '%s', exists but only has %d outputs."
                               % (name, op_name, len(op.outputs)))
            return op.outputs[index]
        if not allow_operation:
            raise ValueError("The name '%s' refers to an Operation, not a Tensor. Tensor names "
                             "must be of the form \"<op_name>:<output_index>\"." % name)
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError("The name '%s' refers to an Operation not in the graph." % name)
        return op

    # ---- naming --------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        """``name`` prefixed by the current scope and suffixed ``_N`` to be unique.

        Example: ``Add``, then ``Add_1``, ``Add_2``; inside scope ``s``: ``s/Add``.
        """
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while key in self._names_in_use:
                key = "%s_%d" % (base, count)
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = "%s_%d" % (name, count - 1)
        return name

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a name scope; yields its full name with a trailing ``/``.

        ``name`` is made unique (``scope``, ``scope_1``); a name ending in
        ``/`` re-enters that exact scope; None or ``""`` returns to the top.
        """
        old = self._name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError("'%s' is not a valid scope name" % name)
            new = name[:-1]
        else:
            if not (_VALID_OP_NAME.match(name) if not old else _VALID_SCOPE_NAME.match(name)):
                raise ValueError("'%s' is not a valid scope name" % name)
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # ---- control dependencies --------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run only after ``control_inputs``.

        ``None`` clears the control dependencies *and* the control-flow
        context, as in TF: ops made inside (a variable and its initializer)
        live outside any ``tf.cond`` branch or ``tf.while_loop`` body.
        """
        if control_inputs is None:
            saved, self._control_stack = self._control_stack, []
            saved_context, self._control_flow_context = self._control_flow_context, None
            try:
                yield
            finally:
                self._control_stack = saved
                self._control_flow_context = saved_context
            return
        ops = []
        for c in control_inputs:
            element = self.as_graph_element(c)
            op = element.op if isinstance(element, Tensor) else element
            if op not in ops:
                ops.append(op)
        self._control_stack.append(_ControlDependencies(ops))
        try:
            yield
        finally:
            self._control_stack.pop()

    def _control_inputs_for(self, inputs):
        result = []
        input_ops = {t.op for t in inputs}
        for block in self._control_stack:
            if input_ops & block.created:
                continue  # already ordered after block.control_ops through that input
            for op in block.control_ops:
                if op not in result and op not in input_ops:
                    result.append(op)
        return result

    # ---- devices and colocation --------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Requests a device for the ops created inside (``tf.device``).

        ``device_name_or_function`` is a device string, a ``DeviceSpec``, None
        (no device: outer blocks stop applying) or a function of the
        ``Operation`` returning one (see :func:`~minitf.framework.device_spec.device_function`).
        """
        from minitf.framework.device_spec import device_function
        self._device_stack.append(device_function(device_name_or_function))
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_functions(self, op):
        """Sets ``op``'s device from the ``tf.device`` blocks, then its colocation.

        As TF's ``Graph._apply_device_functions``: the innermost block goes
        first and each outer one sees (in ``op.device``) what the inner ones
        chose; a ``tf.device(None)`` block stops the walk.  Then, as TF's
        ``_create_op_helper`` does, an op created under ``colocate_with(x)``
        takes ``x``'s device when ``x`` has one (the innermost such ``x``).
        """
        for fn in reversed(self._device_stack):
            if fn is None:
                break
            op._set_device(fn(op))
        for _, colocated in reversed(self._colocation_stack):
            if colocated is not None and colocated.device:
                op._set_device(colocated.device)
                break

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Places the ops created inside with ``op`` (``tf.colocate_with``).

        As in TF, the ``tf.device`` blocks around this one do not apply
        inside it: the ops created here take ``op``'s device instead, and a
        device function (``replica_device_setter``'s) is not consulted for
        them.  ``op=None`` clears the colocation constraints.
        """
        saved_devices, self._device_stack = self._device_stack, []
        saved = self._colocation_stack
        try:
            if op is None:
                self._colocation_stack = []
                yield
                return
            element = self.as_graph_element(op)
            op = element.op if isinstance(element, Tensor) else element
            if ignore_existing:
                self._colocation_stack = []
            self._colocation_stack = self._colocation_stack + [(op.colocation_groups(), op)]
            yield
        finally:
            self._colocation_stack = saved
            self._device_stack = saved_devices

    # ---- collections -------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """A copy of collection ``name``, filtered by ``scope`` (a regex on names)."""
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items
                if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self):
        """The names of the non-empty collections; private (non-string) keys are left out, as in TF."""
        return [k for k, v in self._collections.items() if v and isinstance(k, str)]

    def clear_collection(self, name):
        self._check_not_finalized()
        self._collections.pop(name, None)

    # ---- feeding, seeds, finalization ------------------------------------------------
    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def is_fetchable(self, tensor_or_op):
        op = tensor_or_op.op if hasattr(tensor_or_op, "value_index") else tensor_or_op
        return op not in self._unfetchable

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, seed):
        self._seed = seed

    @property
    def version(self):
        return self._version

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        """Makes the graph read-only: adding ops raises ``RuntimeError``."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Uses other gradient functions for ops created inside (by op type)."""
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    def __repr__(self):
        return "<minitf.Graph object at 0x%x>" % id(self)


def _check_input_dtypes(op, op_def):
    """Enforces the OpDef's dtype rules: TF never converts types silently.

    The typed inputs are those named in ``same_dtype_inputs`` (or just the
    first input); each must be allowed by ``type_constraint`` and all must
    share one dtype.
    """
    named = [(n.rstrip("*"), t) for n, t in zip(_input_names(op_def, len(op.inputs)), op.inputs)]
    typed = [(n, t) for n, t in named if n in op_def.same_dtype_inputs] or named[:1]
    if op_def.type_constraint is not None:
        for name, t in typed:
            if t.dtype.base_dtype not in op_def.type_constraint:
                raise TypeError(
                    "Value passed to parameter '%s' has DataType %s not in list of allowed "
                    "values: %s (op '%s' of type %s)"
                    % (name, t.dtype.base_dtype.name,
                       ", ".join(d.name for d in op_def.type_constraint), op.name, op_def.name))
    first_name, first = typed[0] if typed else (None, None)
    for name, t in typed[1:]:
        if t.dtype.base_dtype != first.dtype.base_dtype:
            raise TypeError(
                "Input '%s' of '%s' Op has type %s that does not match type %s of argument "
                "'%s'." % (name, op_def.name, t.dtype.base_dtype.name,
                           first.dtype.base_dtype.name, first_name))


def nest_list_input(op_def, flat_inputs):
    """Re-nests flat inputs so an op's list input (``values*``) is one Python list,
    the form ``create_op`` takes."""
    index = op_def.list_input
    if index is None:
        return list(flat_inputs)
    list_len = len(flat_inputs) - (len(op_def.inputs) - 1)
    return (list(flat_inputs[:index]) + [list(flat_inputs[index:index + list_len])]
            + list(flat_inputs[index + list_len:]))


def _input_names(op_def, count):
    """The declared input name of each flat input (list inputs repeat their name)."""
    names = list(op_def.inputs)
    if op_def.list_input is None:
        return names
    i = op_def.list_input
    repeat = count - (len(names) - 1)
    return names[:i] + [names[i]] * repeat + names[i + 1:]


def _infer_dtypes(op, op_def):
    if op_def.dtype_fn is not None:
        return op_def.dtype_fn(op)
    count = op_def.output_count(op._attrs)
    if count == 0:
        return []
    if op.inputs:
        return [op.inputs[0].dtype.base_dtype] * count
    return [dtypes_lib.as_dtype(op._attrs["dtype"])] * count


def _set_shapes(op, op_def):
    try:
        shapes = op_def.shape_fn(op)
    except ValueError as e:
        in_shapes = ", ".join("[%s]" % ",".join("?" if d is None else str(d) for d in t.shape.as_list())
                              if t.shape.ndims is not None else "?" for t in op.inputs)
        raise ValueError("%s for '%s' (op: '%s') with input shapes: %s."
                         % (str(e).rstrip("."), op.name, op.type, in_shapes)) from None
    for tensor, shape in zip(op._outputs, shapes):
        tensor._shape = tensor._shape.merge_with(shape)


class _DefaultGraphStack(threading.local):
    """The thread's stack of default graphs, with a global default at the bottom."""

    def __init__(self):
        super().__init__()
        self.stack = []

    @contextlib.contextmanager
    def get_controller(self, graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            if graph in self.stack:
                self.stack.remove(graph)


_default_graph_stack = _DefaultGraphStack()
_global_default_graph = None


def get_default_graph():
    """The innermost graph entered with ``as_default``, else the global default."""
    global _global_default_graph
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    """Replaces the global default graph with a new, empty one.

    Raises:
        AssertionError: if called inside a ``with graph.as_default():`` block.
    """
    global _global_default_graph
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _global_default_graph = Graph()
