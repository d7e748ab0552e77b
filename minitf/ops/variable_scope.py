"""``tf.variable_scope`` and ``tf.get_variable``: variables shared by name.

``tf.Variable`` always creates a new variable.  Models that apply one layer
twice (a siamese tower, an RNN cell at every step) need the *same* variables
the second time.  TF1 solves this with a per-graph *variable store*, a dict
from full names to variables, and a stack of *variable scopes* that say how
to name, create and share them::

    def dense(x, units):
        w = tf.get_variable("weights", [x.shape[1], units])   # "<scope>/weights"
        return tf.matmul(x, w)

    with tf.variable_scope("layer1"):
        y1 = dense(x1, 10)                  # creates layer1/weights
    with tf.variable_scope("layer1", reuse=True):
        y2 = dense(x2, 10)                  # returns the same layer1/weights

The rules, all from TF1:

* ``get_variable(name)`` looks up ``<scope name>/<name>`` in the store.  When
  the scope does not reuse, an existing name is an error; when it reuses
  (``reuse=True``), a *missing* name is an error; ``reuse=tf.AUTO_REUSE``
  creates the variable the first time and returns it afterwards.
* A scope inherits reuse, initializer, regularizer, dtype and custom getter
  from the enclosing scope unless given its own.  Reuse cannot be switched off
  inside a reusing scope (``reuse=False`` means "inherit").
* Opening a variable scope also opens a *name scope* of the same name, so the
  ops built inside are named ``layer1/...``.  Name scopes are made unique
  (``layer1_1/``) but variable names are not: re-entering a scope shares
  variables while its ops get fresh names.
* Variable names ignore name scopes: ``tf.name_scope("a")`` does not prefix
  ``get_variable`` names (only ``variable_scope`` does).
* A new variable without an initializer gets the scope's initializer, else
  ``glorot_uniform_initializer`` for floats and zeros for other types.
* With a ``partitioner`` (given, or the scope's), ``get_variable`` returns a
  :class:`~minitf.ops.partitioned_variables.PartitionedVariable`: the
  variables ``<name>/part_0``, ``<name>/part_1`` ... are made one by one as
  above, each initialized with its slice of the full initial value.

The store and the current scope live in graph collections
(``("__variable_store",)`` and ``("__varscope",)``), so each graph has its
own and ``tf.reset_default_graph()`` forgets them.

Mirrors ``tensorflow/python/ops/variable_scope.py``.
"""

import contextlib
import copy
import enum
import functools
import inspect

from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_shape import as_shape
from minitf.ops import constant_op, init_ops, slicing_ops, variables
from minitf.ops.op_def_library import graph_of
from minitf.ops.partitioned_variables import (
    PartitionedVariable, PartitionInfo, SaveSliceInfo, call_partitioner, iter_slices,
    slice_axis_and_count)

_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


class _ReuseMode(enum.Enum):
    """Reuse modes beyond True/False."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE
"""``reuse=tf.AUTO_REUSE``: get_variable creates a variable if absent, else returns it."""


# ---- VariableScope: the settings a scope gives get_variable -------------------------------
class VariableScope:
    """The settings of one variable scope (``tf.VariableScope``), as yielded by
    ``with tf.variable_scope(...) as scope``.

    Attributes:
        name: the full name, the prefix of the scope's variables (``"conv1"``).
        original_name_scope: the name scope opened when the scope was first
            entered (``"conv1/"``); re-entering the scope object opens a new,
            uniquified one but keeps this.
        reuse: True, False or ``tf.AUTO_REUSE``.
        initializer: the default initializer of ``get_variable`` in this scope;
            ``regularizer``, ``dtype``, ``custom_getter``, ``caching_device``,
            ``partitioner``, ``use_resource`` and ``constraint`` are its other
            defaults.
    """

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._reuse = reuse
        self._name = name
        self._name_scope = name_scope
        self.initializer = initializer
        self.regularizer = regularizer
        self.caching_device = caching_device
        self.partitioner = partitioner
        self.custom_getter = custom_getter
        self.dtype = dtype
        self.use_resource = use_resource
        self.constraint = constraint

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    def reuse_variables(self):
        """From now on, ``get_variable`` in this scope returns existing variables."""
        self._reuse = True

    # TF1's setters, for code that configures a scope after opening it.
    def set_initializer(self, initializer):
        self.initializer = initializer

    def set_regularizer(self, regularizer):
        self.regularizer = regularizer

    def set_dtype(self, dtype):
        self.dtype = dtype

    def set_custom_getter(self, custom_getter):
        self.custom_getter = custom_getter

    def set_caching_device(self, caching_device):
        self.caching_device = caching_device

    def set_partitioner(self, partitioner):
        self.partitioner = partitioner

    def set_use_resource(self, use_resource):
        self.use_resource = use_resource

    def get_collection(self, name):
        """The items of collection ``name`` whose names lie inside this scope."""
        prefix = self._name + "/" if self._name else ""
        return graph_lib.get_default_graph().get_collection(name, prefix)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None):
        """``var_store.get_variable`` of ``<self.name>/<name>``, unset arguments
        taken from this scope.

        Raises:
            ValueError: if ``initializer`` is a value whose dtype is not ``dtype``.
        """
        if dtype is not None and initializer is not None and not callable(initializer):
            init_dtype = _value_dtype(initializer)
            if init_dtype != dtypes.as_dtype(dtype):
                raise ValueError("Initializer type '%s' and explicit dtype '%s' don't match."
                                 % (init_dtype, dtypes.as_dtype(dtype)))
        full_name = self._name + "/" + name if self._name else name
        graph = graph_lib.get_default_graph()
        with graph.name_scope(None):  # variable names ignore name scopes
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype or self.dtype,
                initializer=self.initializer if initializer is None else initializer,
                regularizer=regularizer or self.regularizer,
                reuse=self._reuse if reuse is None else reuse, trainable=trainable,
                collections=collections, caching_device=caching_device or self.caching_device,
                partitioner=partitioner or self.partitioner, validate_shape=validate_shape,
                use_resource=self.use_resource if use_resource is None else use_resource,
                custom_getter=custom_getter or self.custom_getter,
                constraint=constraint or self.constraint)

    def __repr__(self):
        return "<tf.VariableScope '%s' reuse=%s>" % (self._name, self._reuse)


def _value_dtype(value):
    """The dtype ``value`` (a Tensor or a Python/NumPy value) would convert to."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return value.dtype.base_dtype
    return dtypes.as_dtype(constant_op.to_numpy(value).dtype)


# ---- the variable store: name -> variable, per graph ------------------------------------
class _VariableStore:
    """The variables made by ``get_variable`` in one graph, by full name.

    ``_vars`` holds every single variable, the parts of partitioned ones
    included (``emb/part_0``); ``_partitioned_vars`` holds the
    :class:`PartitionedVariable` objects by their full name (``emb``).
    """

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None):
        """Returns variable ``name``, created or shared according to ``reuse``.

        A ``custom_getter(getter, name, *args, **kwargs)`` is called instead
        of the default logic, with that logic as ``getter``: it can wrap,
        rename or replace the variable (e.g. to keep float32 master weights).

        Raises:
            ValueError: when creating an existing variable without reuse,
                reusing a missing one, or sharing with another shape, dtype or
                partitioning.
        """
        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                      reuse=reuse, trainable=trainable, collections=collections,
                      caching_device=caching_device, partitioner=partitioner,
                      validate_shape=validate_shape, use_resource=use_resource,
                      constraint=constraint)
        if custom_getter is not None:
            return custom_getter(getter=self._true_getter, name=name, **kwargs)
        return self._true_getter(name, **kwargs)

    def _true_getter(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, constraint=None):
        """The default logic: a partitioned variable when there is a partitioner
        (a scalar, ``shape=[]``, is never partitioned) or when reusing one
        without it, else a single variable."""
        del use_resource  # minitf: one kind of variable
        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                      reuse=reuse, trainable=trainable, collections=collections,
                      caching_device=caching_device, validate_shape=validate_shape,
                      constraint=constraint)
        is_scalar = isinstance(shape, (list, tuple)) and not shape
        if partitioner is not None and not is_scalar:
            if not callable(partitioner):
                raise ValueError("Partitioner must be callable, but received: %s" % partitioner)
            return self._get_partitioned_variable(name, partitioner, **kwargs)
        if reuse is True and name in self._partitioned_vars:
            return self._get_partitioned_variable(name, None, **kwargs)
        if "%s/part_0" % name in self._vars:
            raise ValueError("No partitioner was provided, but a partitioned version of the "
                             "variable was found: %s/part_0. Perhaps a variable of the same "
                             "name was already created with partitioning?" % name)
        return self._get_single_variable(name, **kwargs)

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None,
                             regularizer=None, partition_info=None, reuse=None, trainable=None,
                             collections=None, caching_device=None, validate_shape=True,
                             constraint=None):
        """One ``tf.Variable`` (a whole variable or one part), created or shared.

        ``partition_info`` (a :class:`PartitionInfo`) goes to the initializer
        of a part.
        """
        if shape is not None and initializer is not None and not callable(initializer):
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype).base_dtype
        shape = as_shape(shape)
        if name in self._vars:
            return self._existing_variable(name, shape, dtype, reuse)
        if reuse is True:
            raise ValueError("Variable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                             "VarScope?" % name)
        initial_value, value_dtype = _initial_value(name, shape, dtype, initializer,
                                                    partition_info)
        var = variables.Variable(
            initial_value=initial_value, trainable=True if trainable is None else trainable,
            collections=collections, caching_device=caching_device, name=name,
            dtype=value_dtype, validate_shape=validate_shape, constraint=constraint)
        self._vars[name] = var
        if regularizer is not None:
            _add_regularization_loss(var, name, regularizer)
        return var

    def _existing_variable(self, name, shape, dtype, reuse):
        var = self._vars[name]
        if not reuse:
            file_name, line = var.op.traceback
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally defined "
                             "at:\n\n  File \"%s\", line %d" % (name, file_name, line))
        if not shape.is_compatible_with(var.get_shape()):
            raise ValueError("Trying to share variable %s, but specified shape %s and found "
                             "shape %s." % (name, shape, var.get_shape()))
        if not dtype.is_compatible_with(var.dtype):
            raise ValueError("Trying to share variable %s, but specified dtype %s and found "
                             "dtype %s." % (name, dtype.name, var.dtype.base_dtype.name))
        return var

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32,
                                  initializer=None, reuse=None, **part_kwargs):
        """The :class:`PartitionedVariable` ``name``, created or shared.

        A new one asks ``partitioner`` how to split ``shape``, then makes each
        part ``<name>/part_<i>`` with :meth:`_get_single_variable`: an
        initializer (or the default one) is called with the part's shape and
        a :class:`PartitionInfo`; a Tensor or value of the full shape is
        sliced, the part getting its slice.

        Raises:
            ValueError: if ``name`` is an unpartitioned variable; when sharing,
                for another shape, dtype or partitioning, or a missing variable
                with ``reuse=True``; when creating, for an existing one without
                reuse, or leftover parts of another partitioning.
        """
        if name in self._vars:
            raise ValueError("A partitioner was provided, but an unpartitioned version of the "
                             "variable was found: %s.  Perhaps a variable of the same name was "
                             "already created without partitioning?" % name)
        dtype = dtypes.as_dtype(dtype).base_dtype
        shape = as_shape(shape)
        if isinstance(initializer, Tensor):
            shape = shape.merge_with(initializer.get_shape())
            dtype = initializer.dtype.base_dtype
        partitions = None
        if not reuse or partitioner:
            partitions = call_partitioner(partitioner, shape, dtype)
        if name in self._partitioned_vars:
            return self._existing_partitioned_variable(name, shape, dtype, partitions, reuse)
        if reuse is True:
            raise ValueError("PartitionedVariable %s does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=False or "
                             "reuse=tf.AUTO_REUSE in VarScope?" % name)
        axis, num_slices = slice_axis_and_count(partitions)
        self._check_no_other_partitioning(name, num_slices)
        if not (initializer is None or callable(initializer) or isinstance(initializer, Tensor)):
            initializer = _full_initial_value(name, initializer, dtype, shape)
        parts = []
        for i, (offset, part_shape) in enumerate(iter_slices(shape.as_list(), num_slices, axis)):
            part_name = "%s/part_%d" % (name, i)
            init, init_shape = _part_initializer(part_name, initializer, offset, part_shape)
            var = self._get_single_variable(
                part_name, shape=init_shape, dtype=dtype, initializer=init, reuse=reuse,
                partition_info=PartitionInfo(full_shape=shape.as_list(), var_offset=offset),
                **part_kwargs)
            var._set_save_slice_info(SaveSliceInfo(name, shape.as_list(), offset, part_shape))
            parts.append(var)
        partitioned = PartitionedVariable(name, shape, dtype, parts, partitions)
        self._partitioned_vars[name] = partitioned
        return partitioned

    def _existing_partitioned_variable(self, name, shape, dtype, partitions, reuse):
        existing = self._partitioned_vars[name]
        if not reuse:
            raise ValueError("Partitioned variable with name %s already exists. Did you mean to "
                             "set reuse=True or reuse=tf.AUTO_REUSE in VarScope?" % name)
        if not shape.is_compatible_with(existing.get_shape()):
            raise ValueError("Trying to reuse partitioned variable %s, but specified shape %s "
                             "and found shape %s." % (name, shape, existing.get_shape()))
        if not dtype.is_compatible_with(existing.dtype):
            raise ValueError("Trying to reuse partitioned variable %s, but specified dtype %s "
                             "and found dtype %s." % (name, dtype.name, existing.dtype.name))
        if partitions is not None and existing._get_partitions() != partitions:
            raise ValueError("Trying to reuse partitioned variable %s, but specified partitions "
                             "%s and found partitions %s."
                             % (name, partitions, existing._get_partitions()))
        return existing

    def _check_no_other_partitioning(self, name, num_slices):
        """Parts left by another partitioning of ``name`` must not be mixed in."""
        if "%s/part_0" % name not in self._vars:
            return
        if "%s/part_%d" % (name, num_slices - 1) not in self._vars:
            raise ValueError("Partitioner returned a different partitioning than what was "
                             "already found.  Partitioner returned %d shards, and shard "
                             "%s/part_0 was found, but %s/part_%d was not."
                             % (num_slices, name, name, num_slices - 1))
        if "%s/part_%d" % (name, num_slices) in self._vars:
            raise ValueError("Partitioner returned a different partitioning than what was "
                             "already found.  Partitioner returned %d shards, and shard "
                             "%s/part_0 was found, but so was the extra shard %s/part_%d."
                             % (num_slices, name, name, num_slices))


def _full_initial_value(name, value, dtype, shape):
    """A Python/NumPy initial value of a partitioned variable as one constant
    (``<name>/PartitionedInitializer/Const``), which the parts slice.

    Raises:
        ValueError: if its shape is not the variable's.
    """
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name + "/PartitionedInitializer/"):
        value = constant_op.constant(value, dtype=dtype)
    shape.assert_is_compatible_with(value.get_shape())
    return value


def _part_initializer(part_name, initializer, offset, part_shape):
    """``(initializer, shape)`` of one part: an initializer is called with the
    part's shape; a full initial value (a Tensor) gives the part its slice."""
    if not isinstance(initializer, Tensor):
        return initializer, part_shape
    graph = initializer.graph
    with graph.name_scope(part_name + "/PartitionedInitializer"):
        return slicing_ops.slice(initializer, offset, part_shape), None


def _initial_value(name, shape, dtype, initializer, partition_info=None):
    """``(initial_value, dtype)`` for the ``tf.Variable`` behind a new variable.

    A value (list, ndarray, Tensor) or a no-argument function is used as is,
    and the variable takes its dtype (dtype None).  An initializer (an
    instance, or a class to instantiate) becomes a function calling it with the
    variable's shape and dtype, so its ops land in the ``Initializer`` name scope.
    """
    if initializer is not None and not callable(initializer):
        return initializer, None
    if initializer is None:
        if shape.ndims is None:
            raise ValueError("Variable %s did not get an initializer, so its `shape` argument "
                             "must be specified." % name)
        initializer = _default_initializer(dtype)
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape.is_fully_defined():
        return _bound_initializer(initializer, shape.as_list(), dtype, partition_info), dtype
    if _takes_no_arguments(initializer):
        return initializer, None
    raise ValueError("Shape of a new variable (%s) must be fully defined to call its "
                     "initializer, but instead was %s." % (name, shape))


def _bound_initializer(initializer, shape, dtype, partition_info):
    """``initializer`` as a no-argument function of the variable's shape and dtype.

    ``partition_info`` is passed only to an initializer that takes it, as TF
    checks the signature: ``def init(shape, dtype=None)`` works too.
    """
    if "partition_info" in _parameter_names(initializer):
        return lambda: initializer(shape, dtype=dtype, partition_info=partition_info)
    return lambda: initializer(shape, dtype=dtype)


def _parameter_names(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):  # some builtins have no signature
        return {}


def _default_initializer(dtype):
    """TF1's default: Glorot uniform for floats, zeros (False, "") for other types."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    return init_ops.zeros_initializer()


def _takes_no_arguments(fn):
    """Can ``fn`` be called without arguments (``lambda: tf.constant(...)``)?"""
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    return True


def _add_regularization_loss(var, name, regularizer):
    """Adds ``regularizer(var)`` (under ``<name>/Regularizer/``) to REGULARIZATION_LOSSES."""
    graph = var.graph
    with graph.control_dependencies(None), graph.colocate_with(var.op), \
            graph.name_scope(name + "/Regularizer/"):
        loss = regularizer(var)
    if loss is not None:
        graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)


def _get_default_variable_store():
    graph = graph_lib.get_default_graph()
    store = graph.get_collection(_VARSTORE_KEY)
    if store:
        return store[0]
    store = _VariableStore()
    graph.add_to_collection(_VARSTORE_KEY, store)
    return store


# ---- the scope stack -------------------------------------------------------------------------
class _VariableScopeStore:
    """The current variable scope of a graph, and how often each scope name was opened
    (to make ``default_name`` scopes unique: ``layer``, ``layer_1`` ...)."""

    def __init__(self):
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        """Forgets the counts of the sub-scopes of ``scope_name``: re-opening it
        later numbers its default-named sub-scopes from scratch again."""
        prefix = scope_name + "/"
        for name in self.variable_scopes_count:
            if name.startswith(prefix):
                self.variable_scopes_count[name] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)


def _get_variable_scope_store():
    graph = graph_lib.get_default_graph()
    store = graph.get_collection(_VARSCOPESTORE_KEY)
    if store:
        return store[0]
    store = _VariableScopeStore()
    graph.add_to_collection(_VARSCOPESTORE_KEY, store)
    return store


def get_variable_scope():
    """The current :class:`VariableScope` (``tf.get_variable_scope``)."""
    return _get_variable_scope_store().current_scope


def _get_unique_variable_scope(prefix):
    """``prefix``, or ``prefix_N`` if a scope of that name was already opened here."""
    store = _get_variable_scope_store()
    current = store.current_scope.name
    name = current + "/" + prefix if current else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count("%s_%d" % (name, idx)) > 0:
        idx += 1
    return "%s_%d" % (prefix, idx)


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    """Nests ``custom_getter`` around the enclosing scope's ``old_getter``."""
    if old_getter is None or custom_getter is None:
        return custom_getter or old_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)
    return wrapped_custom_getter


# ---- tf.variable_scope ----------------------------------------------------------------------
class variable_scope:  # noqa: N801 - TF's name for a context manager class
    """Opens a variable scope and a name scope (``tf.variable_scope``).

    Args:
        name_or_scope: a string (a sub-scope of the current one) or a
            :class:`VariableScope` to re-enter (its name is used as is,
            whatever the current scope).
        default_name: used, made unique (``layer``, ``layer_1``), when
            ``name_or_scope`` is None.
        values: tensors passed to the block (to pick their graph).
        initializer: the default initializer of ``get_variable`` inside; like
            ``regularizer``, ``dtype``, ``custom_getter``, ``caching_device``,
            ``partitioner``, ``use_resource`` and ``constraint``, it is
            inherited from the enclosing scope when None.
        reuse: True or ``tf.AUTO_REUSE`` to share variables; None or False to
            inherit the enclosing scope's reuse.
        auxiliary_name_scope: open a name scope too (default); with False the
            ops inside keep the current name scope.

    Yields:
        The new :class:`VariableScope`.

    Example:
        >>> with tf.variable_scope("conv1") as scope:
        ...     w = tf.get_variable("weights", [3, 3])
        ...     c = tf.constant(1.0, name="c")
        >>> w.name, c.name
        ('conv1/weights:0', 'conv1/c:0')
        >>> with tf.variable_scope(scope, reuse=True):
        ...     tf.get_variable("weights") is w
        True

    Raises:
        TypeError: if neither ``name_or_scope`` nor ``default_name`` is given,
            or ``name_or_scope`` is of another type.
        ValueError: for an invalid ``reuse``, or ``reuse=True`` with only a
            ``default_name``.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if reuse is False:
            reuse = None  # False cannot switch reuse off: it means "inherit"
        if reuse not in (True, None, AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError("The auxiliary_name_scope must be `True` or `False`, while get %r"
                            % (auxiliary_name_scope,))
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._reuse = reuse
        self._settings = dict(initializer=initializer, regularizer=regularizer,
                              caching_device=caching_device, partitioner=partitioner,
                              dtype=dtype, use_resource=use_resource, constraint=constraint)
        self._custom_getter = custom_getter
        self._auxiliary_name_scope = auxiliary_name_scope
        self._graph = graph_of(values or [])
        self._exit_stack = None

    def __enter__(self):
        if self._name_or_scope is None and self._reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(self._graph.as_default())
            name_scope = stack.enter_context(self._name_scope())
            scope = stack.enter_context(self._push_scope(name_scope))
        except BaseException:
            stack.close()
            raise
        self._exit_stack = stack
        return scope

    def __exit__(self, exc_type, exc_value, traceback):
        stack, self._exit_stack = self._exit_stack, None
        return stack.__exit__(exc_type, exc_value, traceback)

    def _name_scope(self):
        """The name scope to open: the scope's last name component, made unique."""
        graph = self._graph
        if not self._auxiliary_name_scope:
            current = graph.get_name_scope()
            return graph.name_scope(current + "/" if current else "")
        if isinstance(self._name_or_scope, VariableScope):
            name = self._name_or_scope.name.split("/")[-1]
        else:
            name = self._name_or_scope if self._name_or_scope is not None else self._default_name
        if not name:  # re-entering the root scope opens no name scope
            return contextlib.nullcontext(None)
        return graph.name_scope(name)

    @contextlib.contextmanager
    def _push_scope(self, name_scope):
        """Makes the new VariableScope current for the block, then restores the old one."""
        store = _get_variable_scope_store()
        old_scope = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            scope = self._reentered_scope(self._name_or_scope)
            saved_counts = copy.copy(store.variable_scopes_count)
        else:
            relative = self._name_or_scope
            if relative is None:
                relative = _get_unique_variable_scope(self._default_name)
            scope = self._sub_scope(old_scope, relative, name_scope)
        store.open_variable_scope(scope.name)
        store.current_scope = scope
        try:
            yield scope
        finally:
            if store.current_scope is not scope:
                raise RuntimeError("Improper nesting of variable_scope.")
            if isinstance(self._name_or_scope, VariableScope):
                store.variable_scopes_count = saved_counts
            else:
                store.close_variable_subscopes(scope.name)
            store.current_scope = old_scope

    def _sub_scope(self, parent, relative, name_scope):
        """A scope named ``<parent>/<relative>``, inheriting ``parent``'s settings."""
        name = parent.name + "/" + relative if parent.name else relative
        scope = VariableScope(
            self._reuse or parent.reuse, name=name, name_scope=name_scope or "",
            initializer=parent.initializer, regularizer=parent.regularizer,
            caching_device=parent.caching_device, partitioner=parent.partitioner,
            custom_getter=parent.custom_getter, dtype=parent.dtype,
            use_resource=parent.use_resource, constraint=parent.constraint)
        self._apply_settings(scope)
        return scope

    def _reentered_scope(self, original):
        """A copy of ``original`` (same name, same original name scope), with
        this call's settings applied.  Reuse comes from ``original``, not from
        the enclosing scope."""
        scope = VariableScope(
            self._reuse or original.reuse, name=original.name,
            name_scope=original.original_name_scope, initializer=original.initializer,
            regularizer=original.regularizer, caching_device=original.caching_device,
            partitioner=original.partitioner, custom_getter=original.custom_getter,
            dtype=original.dtype, use_resource=original.use_resource,
            constraint=original.constraint)
        self._apply_settings(scope)
        return scope

    def _apply_settings(self, scope):
        """Overrides the inherited settings with those given to this call."""
        for key, value in self._settings.items():
            if value is not None:
                setattr(scope, key, value)
        scope.custom_getter = _maybe_wrap_custom_getter(self._custom_getter, scope.custom_getter)


# ---- tf.get_variable --------------------------------------------------------------------------
def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets an existing variable or creates a new one (``tf.get_variable``).

    The variable is named ``<current variable scope>/<name>``; whether it is
    created or shared follows the scope's ``reuse`` (see the module docstring).

    Args:
        name: the name relative to the current variable scope.
        shape: the shape of a new variable (must be fully defined unless the
            initializer is a value or a no-argument function).
        dtype: the dtype (default: the scope's, float32).
        initializer: an initializer instance or class, a no-argument function,
            or an initial value (a Python/NumPy value or Tensor; then ``shape``
            must be None and the value's dtype is the variable's).  Default: the
            scope's initializer, else Glorot uniform (floats) or zeros.
        regularizer: ``fn(variable) -> scalar loss`` added to
            ``GraphKeys.REGULARIZATION_LOSSES``.
        trainable: add it to ``TRAINABLE_VARIABLES`` (default True).
        collections: collections to join (default ``[GLOBAL_VARIABLES]``).
        custom_getter: ``fn(getter, name, *args, **kwargs)`` called instead.
        constraint: a projection applied by optimizers after each update.
        partitioner: ``fn(shape, dtype) -> [shards per axis]`` (e.g.
            ``tf.fixed_size_partitioner(3)``; default: the scope's): split the
            variable along one axis and return a ``PartitionedVariable``
            whose parts are ``<name>/part_0`` ... (see
            :mod:`~minitf.ops.partitioned_variables`).
        caching_device: accepted for TF1 compatibility, like ``use_resource``,
            ``synchronization`` and ``aggregation``: minitf has one kind of
            variable.

    Example:
        >>> with tf.variable_scope("layer", initializer=tf.zeros_initializer()):
        ...     b = tf.get_variable("bias", [10])
        >>> b.name
        'layer/bias:0'

    Returns:
        A ``tf.Variable``, or a ``PartitionedVariable`` when partitioned.

    Raises:
        ValueError: see :meth:`_VariableStore.get_variable`, plus a missing
            shape, or a shape given with a value initializer (allowed, and
            required for a NumPy value, when partitioned).
    """
    del synchronization, aggregation
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
        use_resource=use_resource, custom_getter=custom_getter, constraint=constraint)


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """The parts of a new partitioned variable, as a list (``tf.create_partitioned_variables``).

    TF1's older interface, deprecated in favour of ``tf.get_variable(...,
    partitioner=...)``; TF keeps it in ``partitioned_variables.py``, minitf
    here, beside the store it calls.  It opens
    ``tf.variable_scope(name, "PartitionedVariable")`` and makes the
    partitioned variable named after that scope, split as ``slicing`` says.

    Args:
        shape: the full shape, a list of ints.
        slicing: the number of shards per dimension; only one may exceed 1.
        initializer: a Tensor (or value) of the full shape, sliced for each
            part, or an initializer called once per part with its shape.
        dtype: the parts' dtype (ignored for a Tensor initializer).
        trainable: add the parts to ``TRAINABLE_VARIABLES``.
        collections: the parts' collections (default ``[GLOBAL_VARIABLES]``).
        name: the full variable's name (default ``PartitionedVariable``, made unique).
        reuse: True to return existing parts, None to inherit the scope's.

    Returns:
        The parts, ordinary Variables.

    Raises:
        ValueError: if ``shape`` and ``slicing`` differ in length, ``shape`` is
            empty, or the scope has a custom getter.

    Example:
        >>> parts = tf.create_partitioned_variables([10, 4], [2, 1], tf.zeros_initializer())
        >>> [p.name for p in parts]
        ['PartitionedVariable/part_0:0', 'PartitionedVariable/part_1:0']
    """
    if len(shape) != len(slicing):
        raise ValueError("The 'shape' and 'slicing' of a partitioned Variable must have the "
                         "length: shape: %s, slicing: %s" % (shape, slicing))
    if len(shape) < 1:
        raise ValueError("A partitioned Variable must have rank at least 1: shape: %s" % shape)
    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        if scope.custom_getter is not None:
            raise ValueError("Private access to _get_partitioned_variable is not allowed when a "
                             "custom getter is set.  Current custom getter: %s.  It is likely "
                             "that you're using create_partitioned_variables.  If so, consider "
                             "instead using get_variable with a non-empty partitioner parameter "
                             "instead." % scope.custom_getter)
        with graph_lib.get_default_graph().name_scope(None):
            partitioned = _get_default_variable_store()._get_partitioned_variable(
                scope.name, lambda **unused: slicing, shape=shape, dtype=dtype,
                initializer=scope.initializer if initializer is None else initializer,
                regularizer=scope.regularizer, reuse=scope.reuse, trainable=trainable,
                collections=collections, caching_device=scope.caching_device,
                constraint=scope.constraint)
    return list(partitioned)
