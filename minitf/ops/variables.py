"""``tf.Variable``: state that persists across ``Session.run`` calls.

Creating ``tf.Variable(initial_value, name="v")`` adds three ops, as in TF1:

* ``v`` (``VariableV2``) — the storage; its output ``v:0`` is a reference;
* ``v/Assign`` — writes the initial value (``v.initializer``);
* ``v/read`` (``Identity``) — the value other ops consume (``v.value()``).

The variable joins the ``GLOBAL_VARIABLES`` collection (and
``TRAINABLE_VARIABLES`` when trainable), which is how
``global_variables_initializer`` and the optimizers find it.  A Variable can be
used wherever a Tensor is expected: it converts to its ``read`` tensor.

Mirrors ``RefVariable`` in ``tensorflow/python/ops/variables.py``.
"""

from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.default_session import get_default_session
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import (
    convert_to_tensor, register_tensor_conversion_function)
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import array_ops, control_flow_ops, state_ops
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


class Variable:
    """A variable (``tf.Variable``).

    Args:
        initial_value: a Tensor, Python/NumPy value, or a callable returning one
            (called inside the ``Initializer`` name scope).
        trainable: add it to ``TRAINABLE_VARIABLES`` (what optimizers update).
        collections: collections to join (default ``[GLOBAL_VARIABLES]``).
        validate_shape: require assigned values to keep the initial shape.
        name: the op name (default ``Variable``), made unique.
        dtype: convert the initial value to this dtype.

    Example:
        >>> w = tf.Variable(tf.zeros([2]), name="w")
        >>> w
        <tf.Variable 'w:0' shape=(2,) dtype=float32_ref>
    """

    # Above NumPy arrays, so ``array * variable`` builds an op (as for Tensor).
    __array_priority__ = 100

    # Set on the parts of a partitioned variable: a
    # :class:`~minitf.ops.partitioned_variables.SaveSliceInfo` saying where the
    # part sits in the full variable (what ``tf.train.Saver`` saves).
    _save_slice_info = None

    def __init__(self, initial_value=None, trainable=True, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None,
                 expected_shape=None, import_scope=None, constraint=None, use_resource=None,
                 shape=None, **unused):
        del caching_device, variable_def, expected_shape, import_scope, use_resource, unused
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = graph_lib.get_default_graph()
        if isinstance(initial_value, Tensor):
            graph = initial_value.graph
        self._constraint = constraint
        self._trainable = trainable
        with graph.as_default(), graph.control_dependencies(None), \
                graph.name_scope(name or "Variable") as scope:
            if callable(initial_value):
                with graph.name_scope("Initializer"), graph.device(None):
                    self._initial_value = convert_to_tensor(
                        initial_value(), name="initial_value", dtype=dtype)
            else:
                self._initial_value = convert_to_tensor(initial_value, name="initial_value",
                                                        dtype=dtype)
            var_shape = self._initial_value.shape if validate_shape else unknown_shape()
            if shape is not None:
                var_shape = TensorShape(shape)
            self._variable = state_ops.variable_op(var_shape, self._initial_value.dtype.base_dtype,
                                                   name=scope)
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, self._initial_value, validate_shape=validate_shape,
                    name="Assign").op
            with graph.colocate_with(self._variable.op):
                self._snapshot = array_ops.identity(self._variable, name="read")
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph.add_to_collections(collections, self)

    # ---- identity ----------------------------------------------------------------
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self):
        return self._variable.device

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    # ---- values --------------------------------------------------------------------
    @property
    def initializer(self):
        """The op that assigns the initial value."""
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def value(self):
        """The tensor holding the variable's value (``v/read:0``)."""
        return self._snapshot

    def read_value(self):
        """A fresh read of the value (an ``Identity`` of the reference)."""
        return array_ops.identity(self._variable, name="read")

    def _value_in_context(self):
        """The value as ops being built here should read it.

        In TF1, ``v/read`` shares the variable's buffer, so an op created
        under ``tf.control_dependencies([tf.assign(v, 5)])`` that reads ``v``
        sees 5.  minitf's reads are copies, so under control dependencies
        the read is made afresh: it then runs after those control inputs.
        """
        if self._variable.graph._control_inputs_for([self._variable]):
            return self.read_value()
        return self._snapshot

    def _ref(self):
        """The reference tensor ``v:0`` that assignments write through."""
        return self._variable

    def _as_graph_element(self):
        return self._variable

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    def initialized_value(self):
        """The value, guaranteed to be computed after this variable is initialized."""
        with self.graph.as_default(), self.graph.control_dependencies(None):
            return _initialized_value(self)

    def eval(self, session=None):
        """The variable's value in ``session`` (default: the default session)."""
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        """Assigns ``value`` in ``session`` without adding ops to the graph."""
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initial_value: value})

    # ---- assignments ---------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        """``self = value``; returns the reference (or the op when ``read_value=False``)."""
        out = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        out = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def count_up_to(self, limit):
        """``tf.count_up_to(self, limit)``: the value before incrementing, until ``limit``."""
        return state_ops.count_up_to(self._variable, limit)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)

    def __hash__(self):
        return id(self)

    def __bool__(self):
        return True  # as TF1's RefVariable: ``if v:`` tests existence, not value

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")


def _overload_operator(operator):
    def method(self, *args):
        return getattr(Tensor, operator)(self._value_in_context(), *args)
    method.__name__ = operator
    setattr(Variable, operator, method)


for _operator in Tensor.OVERLOADABLE_OPERATORS:
    _overload_operator(_operator)


def _variable_conversion(value, dtype=None, name=None, as_ref=False):
    del dtype, name
    return value._ref() if as_ref else value._value_in_context()


register_tensor_conversion_function(Variable, _variable_conversion, priority=10)


def _initialized_value(var):
    """``var.value()`` guarded to run after its initializer (TF's initialized_value)."""
    with var.graph.control_dependencies([var.initializer]):
        return array_ops.identity(var._ref(), name="initialized_value")


# ---- collections and initializers -------------------------------------------------------
def global_variables(scope=None):
    """Variables in ``GLOBAL_VARIABLES`` (``tf.global_variables``)."""
    return graph_lib.get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def local_variables(scope=None):
    return graph_lib.get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    """Variables in ``TRAINABLE_VARIABLES`` (``tf.trainable_variables``)."""
    return graph_lib.get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None):
    return graph_lib.get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op running the initializers of ``var_list`` (``tf.variables_initializer``)."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def global_variables_initializer():
    """An op (``init``) initializing every global variable."""
    return variables_initializer(global_variables())


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_1")


def initialize_all_variables():
    """Deprecated alias of :func:`global_variables_initializer`."""
    return global_variables_initializer()


_is_initialized = define_op(
    "IsVariableInitialized", inputs=("ref",), outputs=("is_initialized",),
    shape_fn=lambda op: [TensorShape([])], dtype_fn=lambda op: [dtypes.bool],
    ref_inputs=(0,), doc="True once the variable has a value.")
not_differentiable("IsVariableInitialized")


def is_variable_initialized(variable):
    """A bool tensor: has ``variable`` been initialized? (``tf.is_variable_initialized``)"""
    return apply_op(_is_initialized, [variable._ref()], name="IsVariableInitialized")

