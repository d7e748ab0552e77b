"""``tf.train.Optimizer``: how a training step is added to the graph.

An optimizer builds no loop and runs nothing.  ``minimize(loss)`` adds ops:

1. :meth:`Optimizer.compute_gradients` calls ``tf.gradients`` to add the
   backward ops, giving one ``(gradient, variable)`` pair per variable;
2. :meth:`Optimizer.apply_gradients` creates each variable's *slots* (the
   optimizer's per-variable state, e.g. Adam's ``w/Adam`` and ``w/Adam_1``),
   converts the hyper-parameters to tensors (:meth:`_prepare`), adds one fused
   update op per variable (:meth:`_apply_dense`, e.g. ``ApplyAdam``), and
   groups them, with the ``global_step`` increment, into the one op that is
   returned: running it in a ``Session`` takes one training step.

Between the two halves the pairs are ordinary Python values, which is how
gradient clipping is done::

    grads, variables = zip(*opt.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = opt.apply_gradients(zip(grads, variables), global_step=step)

A gradient is a Tensor or, for a variable read by ``tf.gather`` or
``tf.nn.embedding_lookup``, an :class:`~minitf.framework.indexed_slices.IndexedSlices`
of the rows that were read.  :meth:`Optimizer.apply_gradients` sends a dense
gradient to :meth:`_apply_dense` and a sparse one to
:meth:`_apply_sparse_duplicate_indices`, which adds up the rows of repeated
indices (``tf.unique`` and ``tf.unsorted_segment_sum``) and hands the result
to :meth:`_apply_sparse` — typically one ``SparseApply*`` op, which updates
those rows of the variable and of its slots and no others.  Summing first
matters: Adagrad must add the *square of the sum* of a row's gradients to
its accumulator, not the sum of their squares.

A subclass overrides :meth:`_create_slots`, :meth:`_prepare`,
:meth:`_apply_dense`, :meth:`_apply_sparse` (or, when repeated indices need
no summing, :meth:`_apply_sparse_duplicate_indices`) and, when it has state
besides slots (Adam's ``beta1_power``), :meth:`_finish`.

Mirrors ``tensorflow/python/training/optimizer.py`` (graph mode, reference
variables) and ``slot_creator.py``.  minitf has no resource variables, so
there is no ``_resource_apply_dense``/``_resource_apply_sparse``.
"""

from minitf.autodiff import gradients as gradients_lib
from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys
from minitf.framework.indexed_slices import IndexedSlices, convert_to_tensor_or_indexed_slices
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, constant_op, control_flow_ops, gather_ops, state_ops
from minitf.ops import unique_ops, variable_scope
from minitf.ops.variables import Variable, trainable_variables


def _var_key(var):
    """The key of ``var`` in the slot dictionaries (TF's ``_var_key``)."""
    return var.op.graph, var.op.name


class Optimizer:
    """Base class of the optimizers (``tf.train.Optimizer``).

    Args:
        use_locking: passed to the update ops (accepted; minitf's kernels
            update each variable as one step anyway).
        name: the name scope of the update ops and the suffix of slot names.

    Raises:
        ValueError: if ``name`` is empty.
    """

    # How compute_gradients gates the gradients (TF's constants).
    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {_var_key(var): slot Variable}
        self._non_slot_dict = {}  # (name, graph) -> Variable

    def get_name(self):
        return self._name

    # ---- the public API -----------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """Adds the ops that take one step minimizing ``loss``; returns that op.

        Equivalent to :meth:`compute_gradients` then :meth:`apply_gradients`.

        Args:
            loss: the scalar Tensor to minimize (or a callable returning it).
            global_step: an integer Variable incremented by one after the update.
            var_list: the Variables to update (default: ``TRAINABLE_VARIABLES``).
            gate_gradients: ``GATE_NONE``, ``GATE_OP`` or ``GATE_GRAPH``.
            aggregation_method, colocate_gradients_with_ops: passed to ``tf.gradients``.
            name: the name of the returned op (default: the optimizer's name).
            grad_loss: the gradient to start from instead of ones.

        Returns:
            The Operation that updates the variables (and the global step).

        Raises:
            ValueError: if no variable receives a gradient from ``loss``.

        Example:
            >>> train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            >>> for _ in range(100):
            ...     sess.run(train)
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                "support gradients, between variables %s and loss %s."
                % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The gradients of ``loss`` for the variables in ``var_list``.

        Returns:
            A list of ``(gradient, variable)`` pairs; the gradient is None for
            a variable ``loss`` does not depend on.

        Raises:
            ValueError: if there are no variables, ``gate_gradients`` is
                unknown, or ``loss`` is not a floating tensor.
            TypeError: if ``var_list`` holds something other than Variables.
        """
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             "Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not %s" % gate_gradients)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        var_list = trainable_variables() if var_list is None else list(_flatten(var_list))
        for var in var_list:
            _check_variable(var)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients_lib.gradients(
            loss, var_list, grad_ys=grad_loss, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = control_flow_ops.tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Adds the ops that apply ``grads_and_vars``; returns the op running them all.

        Pairs whose gradient is None are skipped.  The returned op is added to
        ``GraphKeys.TRAIN_OP``.

        Args:
            grads_and_vars: ``(gradient, variable)`` pairs, e.g. from
                :meth:`compute_gradients` (any iterable, such as a ``zip``).
            global_step: an integer Variable incremented after the updates.
            name: the name of the returned op (default: the optimizer's name).

        Raises:
            ValueError: if there are no pairs, or every gradient is None.
            TypeError: if a gradient is not convertible to a Tensor.
        """
        grads_and_vars = [(self._convert_gradient(g), v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        for _, var in grads_and_vars:
            _check_variable(var)
        var_list = [v for g, v in grads_and_vars if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: %s."
                             % ([str(v) for _, v in grads_and_vars],))
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None):  # TF's init_scope: state is created once
                self._create_slots(var_list)
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                update_ops = []
                for grad, var in grads_and_vars:
                    if grad is not None:
                        with graph.name_scope("update_" + var.op.name), \
                                graph.colocate_with(var.op):
                            update_ops.append(self._update_op(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with graph.control_dependencies([self._finish(update_ops, "update")]), \
                            graph.colocate_with(global_step.op):
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope).op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    # ---- slots ------------------------------------------------------------------------------
    def get_slot_names(self):
        """The sorted names of the slots this optimizer creates (``["m", "v"]`` for Adam)."""
        return sorted(self._slots)

    def get_slot(self, var, name):
        """The slot Variable ``name`` of ``var``, or None."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def variables(self):
        """This optimizer's Variables in the default graph (slots and others), by name."""
        graph = graph_lib.get_default_graph()
        owned = [v for (_, g), v in self._non_slot_dict.items() if g is graph]
        for named_slots in self._slots.values():
            owned.extend(v for (g, _), v in named_slots.items() if g is graph)
        return sorted(owned, key=lambda v: v.name)

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _zeros_slot(self, var, slot_name, op_name):
        """Creates (once) a slot of zeros shaped like ``var``, named ``<var>/<op_name>``."""
        def zeros():
            if var.shape.is_fully_defined():
                return array_ops.zeros(var.shape, dtype=var.dtype.base_dtype)
            return array_ops.zeros_like(var.initialized_value())
        return self._get_or_make_slot(var, zeros, slot_name, op_name)

    def _constant_slot(self, var, value, slot_name, op_name):
        """Creates (once) a slot shaped like ``var`` filled with ``value``."""
        def filled():
            dtype = var.dtype.base_dtype
            shape = (var.shape.as_list() if var.shape.is_fully_defined()
                     else array_ops.shape(var.initialized_value()))
            return array_ops.fill(shape, constant_op.constant(value, dtype=dtype))
        return self._get_or_make_slot(var, filled, slot_name, op_name)

    def _get_or_make_slot(self, var, initial_value, slot_name, op_name):
        """Creates (once) the slot ``slot_name`` of ``var`` with ``initial_value``.

        The slot is a non-trainable global Variable named ``<var>/<op_name>``
        inside the current variable scope, made unique (Adam's two slots of
        ``w`` are ``w/Adam`` and ``w/Adam_1``), and placed with ``var``.
        ``initial_value`` may be a callable, run under ``<slot>/Initializer``.
        """
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            graph = var.graph
            # TF's slot_creator opens variable_scope(None, "<var>/<op_name>"): the
            # name is relative to the current variable scope, not the name scope.
            outer = variable_scope.get_variable_scope().name
            name = "%s%s/%s" % (outer + "/" if outer else "", var.op.name, op_name)
            with graph.as_default(), graph.name_scope(None), graph.colocate_with(var.op):
                named_slots[key] = Variable(initial_value, name=name, trainable=False)
        return named_slots[key]

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """Creates (once per graph) a Variable of the optimizer itself (``beta1_power``)."""
        graph = colocate_with.graph
        key = (name, graph)
        if key not in self._non_slot_dict:
            with graph.as_default(), graph.colocate_with(colocate_with.op):
                self._non_slot_dict[key] = Variable(initial_value, name=name, trainable=False)
        return self._non_slot_dict[key]

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or graph_lib.get_default_graph()))

    # ---- what subclasses override ---------------------------------------------------------
    def _create_slots(self, var_list):
        """Creates the slots of ``var_list`` (default: none)."""

    def _prepare(self):
        """Converts the hyper-parameters to tensors, inside the update's name scope."""

    def _apply_dense(self, grad, var):
        """Adds the update op of ``var`` for a dense ``grad``."""
        raise NotImplementedError()

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Adds the update op of ``var`` for an IndexedSlices ``grad`` whose
        indices may repeat.

        ``values=[1, 1], indices=[0, 0]`` means ``values=[2], indices=[0]``:
        the rows of each index are summed first, then :meth:`_apply_sparse`
        builds the update.  An optimizer whose update is right for repeated
        indices anyway (plain gradient descent's ``ScatterSub``) overrides
        this method instead, to skip the sum.
        """
        values, indices = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(values, indices, grad.dense_shape), var)

    def _apply_sparse(self, grad, var):
        """Adds the update op of ``var`` for an IndexedSlices ``grad`` with
        unique indices: only those rows of ``var`` (and of its slots) change."""
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        """Groups the update ops (subclasses add their own state's updates)."""
        return control_flow_ops.group(*update_ops, name=name_scope)

    # ---- helpers -----------------------------------------------------------------------------
    def _update_op(self, grad, var):
        """``_apply_dense``, then the variable's constraint if it has one; or,
        for IndexedSlices, ``_apply_sparse_duplicate_indices``.

        Raises:
            RuntimeError: for IndexedSlices and a variable with a constraint.
        """
        if isinstance(grad, IndexedSlices):
            if var.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            return self._apply_sparse_duplicate_indices(grad, var)
        update_op = self._apply_dense(grad, var)
        if var.constraint is None:
            return update_op
        with var.graph.control_dependencies([update_op]):
            # A fresh read, made inside the block so that it sees the update.
            return var.assign(var.constraint(var.read_value()))

    @staticmethod
    def _call_if_callable(param):
        """Hyper-parameters may be callables returning the value (TF's convention)."""
        return param() if callable(param) else param

    def _hyper_tensor(self, param, name):
        """A hyper-parameter (number, Tensor or callable) as a tensor named ``name``."""
        return convert_to_tensor(self._call_if_callable(param), name=name)

    @staticmethod
    def _convert_gradient(grad):
        if grad is None:
            return None
        try:
            return convert_to_tensor_or_indexed_slices(grad)
        except (TypeError, ValueError):
            raise TypeError("Gradient must be convertible to a Tensor or IndexedSlices, or "
                            "None: %s" % (grad,)) from None

    def _assert_valid_dtypes(self, tensors):
        """Raises ValueError unless every tensor is floating (what optimizers update)."""
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError("Invalid type %r for %s, expected: %s."
                                 % (dtype, t.name, [v for v in valid]))

    def _valid_dtypes(self):
        return {dtypes.float16, dtypes.float32, dtypes.float64}


def _deduplicate_indexed_slices(values, indices):
    """``(summed_values, unique_indices)``: the rows of ``values`` that share an
    index added up, one row per distinct index (TF's ``_deduplicate_indexed_slices``)."""
    unique_indices, new_index_positions = unique_ops.unique(indices)
    summed_values = gather_ops.unsorted_segment_sum(values, new_index_positions,
                                                    array_ops.shape(unique_indices)[0])
    return summed_values, unique_indices


def _flatten(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _check_variable(var):
    """Optimizers update Variables; anything else is TF's NotImplementedError."""
    if not isinstance(var, Variable):
        if isinstance(var, Tensor) and var.dtype.is_ref:
            raise NotImplementedError("Trying to optimize a reference tensor %s; pass the "
                                      "tf.Variable instead." % var)
        if isinstance(var, Tensor):
            raise NotImplementedError("Trying to update a Tensor ", var)
        raise NotImplementedError("Trying to optimize unsupported type ", var)


__all__ = ["Optimizer"]
