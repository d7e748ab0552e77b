"""``tf.while_loop``: a loop that runs inside the graph, its trip count decided at run time.

``while_loop(cond, body, loop_vars)`` calls ``cond`` and ``body`` once each,
to build this graph per loop variable (TF paper §4.4; Yu et al. 2018 §4.1)::

    x ─► Enter ─► Merge ─┬───────────────► Switch ─[0]─► Exit ─► result
                  ▲      └─► cond ─► LoopCond ─┘ [1]
                  │                              ▼
                  └──── NextIteration ◄─ body ◄─ Identity

``Enter`` puts the initial value into the loop's frame; ``Merge`` takes it in
iteration 0 and the ``NextIteration`` value afterwards; ``LoopCond`` steers
every ``Switch``: while it holds the body gets the value (output 1), and when
it fails the value leaves through ``Exit`` (output 0).  Values the body uses
from outside the loop are routed in by the loop's
:class:`~minitf.ops.control_flow_context.WhileContext` as constant
``Enter``s.  The executor (:mod:`minitf.runtime.executors.control_flow`) tags
every value with its iteration, so up to ``parallel_iterations`` iterations
overlap.

Mirrors ``while_loop`` and ``WhileContext._BuildLoop`` of TF's
``control_flow_ops.py`` (TF1, while v1).
"""

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import as_shape
from minitf.ops import array_ops, comparison_ops
from minitf.ops import control_flow_context as cfc
from minitf.ops import control_flow_primitives as primitives
from minitf.ops.tensor_array_ops import TensorArray


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats ``body`` while ``cond`` is true (``tf.while_loop``).

    Args:
        cond: ``cond(*loop_vars) -> scalar bool Tensor``.
        body: ``body(*loop_vars) -> loop_vars`` (same structure, dtypes and,
            unless ``shape_invariants`` relaxes them, shapes).
        loop_vars: a tensor, or a (nested) list/tuple/dict of tensors.
        shape_invariants: per loop variable, the shape it keeps across
            iterations (e.g. ``tf.TensorShape([None, 3])`` for a growing one).
        parallel_iterations: how many iterations may run at the same time.
        back_prop: whether ``tf.gradients`` may differentiate through the loop.
        swap_memory: accepted for compatibility.
        name: the name scope (default ``while``).
        maximum_iterations: stop after this many iterations even if ``cond``
            still holds.
        return_same_structure: return a one-variable list as a list.

    Returns:
        The loop variables after the last iteration.  As in TF1, a single
        loop variable passed in a list is returned unwrapped.

    Raises:
        TypeError: if cond or body is not callable, the body changes a
            variable's dtype, or cond returns a non-boolean.
        ValueError: if ``loop_vars`` is empty, the body returns another
            structure, a variable's shape changes without a shape invariant
            allowing it, or cond returns a bool tensor that is not a scalar.

    Example:
        >>> i = tf.constant(0)
        >>> r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
        >>> sess.run(r)
        10
    """
    del swap_memory
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if loop_vars is None or (cfc.is_sequence(loop_vars) and not cfc.flatten(loop_vars)):
        raise ValueError("No loop variables provided")
    graph = _graph_of(loop_vars)
    with graph.as_default(), graph.name_scope(name or "while") as scope:
        original_vars = loop_vars
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants = _with_maximum_iterations(
                cond, body, loop_vars, shape_invariants, maximum_iterations)
        flat = [_as_flow(v) for v in cfc.flatten(loop_vars)]
        invariants = _shape_invariants(loop_vars, flat, shape_invariants)
        context = cfc.WhileContext(scope + "while_context", parallel_iterations, back_prop)
        result = _build_loop(context, cond, body, loop_vars, flat, invariants)
        if maximum_iterations is not None:
            result = result[1]
    if (not return_same_structure and isinstance(original_vars, (list, tuple))
            and not hasattr(original_vars, "_fields") and len(original_vars) == 1):
        return result[0]
    return result


def _graph_of(loop_vars):
    for value in cfc.flatten(loop_vars):
        if isinstance(value, Tensor):
            return value.graph
    return get_default_graph()


def _shape_invariants(loop_vars, flat, shape_invariants):
    """The shape each flat loop variable keeps (default: its initial shape).

    Raises:
        ValueError: if an invariant does not fit the variable's initial shape.
    """
    if shape_invariants is None:
        return [t.shape for t in flat]
    invariants = [as_shape(s) for s in _flatten_up_to(loop_vars, shape_invariants)]
    for tensor, invariant in zip(flat, invariants):
        if not invariant.is_compatible_with(tensor.shape):
            raise ValueError("The shape invariant specified for %s is not compatible with the "
                             "initial shape of the loop variable. It enters the loop with shape "
                             "%s, but the specified shape invariant is %s."
                             % (tensor.name, tensor.shape, invariant))
    return invariants


def _flatten_up_to(structure, values):
    """The entries of ``values`` at the leaves of ``structure`` (a leaf of values may be a list)."""
    if not cfc.is_sequence(structure):
        return [values]
    if isinstance(structure, dict):
        return [v for k in sorted(structure) for v in _flatten_up_to(structure[k], values[k])]
    if not isinstance(values, (list, tuple)) or len(values) != len(structure):
        raise ValueError("shape_invariants must have the structure of loop_vars: %s vs %s"
                         % (values, structure))
    return [v for s, x in zip(structure, values) for v in _flatten_up_to(s, x)]


def _build_loop(context, cond, body, loop_vars, flat, invariants):
    """Adds the Enter/Merge/Switch/Exit/NextIteration wiring (TF's ``_BuildLoop``)."""
    with context.entered():
        with context.plumbing():
            enters = [primitives.enter(x, context.name, is_constant=False,
                                       parallel_iterations=context.parallel_iterations,
                                       name="Enter") for x in flat]
        for enter, invariant in zip(enters, invariants):
            enter.op._control_flow_context = context
            context.prevent_access(enter.op)
            enter._shape = invariant  # the loop variable may be any value of this shape
        context.loop_enters = enters
        context.mark_values(enters)
        merges = [primitives.merge([x, x], name="Merge")[0] for x in enters]
        context.pivot_for_pred = merges[0]
        predicate = cond(*_as_args(loop_vars, merges))
        predicate = convert_to_tensor(predicate)
        if predicate.dtype.base_dtype != dtypes.bool:
            raise TypeError("Input 'input' of 'LoopCond' Op has type %s that does not match "
                            "expected type of bool: cond of a while_loop must return a scalar "
                            "bool tensor, got %s" % (predicate.dtype.base_dtype.name, predicate))
        if predicate.shape.ndims not in (None, 0):
            raise ValueError("cond of a while_loop must return a scalar bool tensor, got %s"
                             % (predicate,))
        context.pivot = primitives.loop_cond(predicate, name="LoopCond")
        switches = [primitives.switch(m, context.pivot, name="Switch") for m in merges]
        body_vars = [array_ops.identity(s[1], name="Identity") for s in switches]
        context.pivot_for_body = body_vars[0]
        results = body(*_as_args(loop_vars, body_vars))
        if not cfc.is_sequence(loop_vars) and isinstance(results, (list, tuple)) \
                and len(results) == 1:
            results = results[0]
        if _is_plain_sequence(loop_vars) and len(loop_vars) == 1 and not (
                _is_plain_sequence(results) and len(results) == 1):
            results = [results]  # body(x) may return x' for loop_vars=[x], as in TF1
        if not cfc.same_structure(_loose(loop_vars), _loose(results)):
            raise ValueError("The two structures don't have the same nested structure: the "
                             "loop variables are %s but body returned %s" % (loop_vars, results))
        flat_results = [context.add_value(_as_flow(r)) for r in cfc.flatten(results)]
        _check_loop_results(flat, flat_results, invariants)
        for merge, value in zip(merges, flat_results):
            primitives.add_next_and_back_edge(merge, value, name="NextIteration")
        exits = [primitives.exit(s[0], name="Exit") for s in switches]
    context.loop_exits = exits
    for exit_tensor, invariant in zip(exits, invariants):
        exit_tensor._shape = invariant
    exits = _from_flows(loop_vars, exits)
    if not cfc.is_sequence(loop_vars):
        return exits[0]
    # Packed like the body's result, as TF1's BuildLoop does: a body returning
    # a tuple for loop_vars given as a list yields a tuple.
    return cfc.pack_sequence_as(results if cfc.is_sequence(results) else loop_vars, exits)


def _is_plain_sequence(value):
    return isinstance(value, (list, tuple)) and not hasattr(value, "_fields")


def _loose(structure):
    """Lists and tuples compared alike (TF1 lets a body return a list for a tuple)."""
    if isinstance(structure, dict):
        return {k: _loose(v) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        return [_loose(v) for v in structure]
    if hasattr(structure, "_fields"):
        return type(structure)(*[_loose(v) for v in structure])
    return 0


def _as_flow(value):
    """A loop variable as a tensor: a TensorArray travels as its flow."""
    if isinstance(value, TensorArray):
        return value.flow
    return convert_to_tensor(value)


def _from_flows(loop_vars, flat):
    """The flat tensors, with TensorArray loop variables rebuilt around their flows."""
    return [v._with_flow(t) if isinstance(v, TensorArray) else t
            for v, t in zip(cfc.flatten(loop_vars), flat)]


def _as_args(loop_vars, flat):
    """The loop variables, in their structure, as positional arguments of cond/body.

    A list, tuple or namedtuple gives one argument per entry (TF1 calls
    ``body(*loop_vars)``); a dict is passed whole.
    """
    flat = _from_flows(loop_vars, flat)
    if not cfc.is_sequence(loop_vars):
        return [flat[0]]
    packed = cfc.pack_sequence_as(loop_vars, flat)
    if isinstance(loop_vars, dict):
        return [packed]
    return list(packed)


def _check_loop_results(inputs, results, invariants):
    for x, r, invariant in zip(inputs, results, invariants):
        if x.dtype.base_dtype != r.dtype.base_dtype:
            raise TypeError("Loop variable %s enters the loop as %s, but the body returns %s "
                            "(%s)" % (x.name, x.dtype.base_dtype.name, r.dtype.base_dtype.name,
                                      r.name))
        if not invariant.is_compatible_with(r.shape) or (
                invariant.ndims is not None and r.shape.ndims is None):
            raise ValueError(
                "Input tensor '%s' enters the loop with shape %s, but has shape %s after one "
                "iteration. To allow the shape to vary across iterations, use the "
                "`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
                % (x.name, invariant, r.shape))
        if invariant.ndims is not None and r.shape.ndims is not None and any(
                a is not None and b is None for a, b in zip(invariant.as_list(),
                                                            r.shape.as_list())):
            raise ValueError(
                "Input tensor '%s' enters the loop with shape %s, but has shape %s after one "
                "iteration. To allow the shape to vary across iterations, use the "
                "`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
                % (x.name, invariant, r.shape))


def _with_maximum_iterations(cond, body, loop_vars, shape_invariants, maximum_iterations):
    """cond, body, loop_vars and invariants with an extra counter that stops the loop
    after ``maximum_iterations`` (TF1 does the same)."""
    maximum = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if maximum.shape.ndims not in (None, 0):
        raise ValueError("maximum_iterations must be a scalar, got shape %s" % maximum.shape)
    counter = array_ops.zeros([], dtype=maximum.dtype, name="iteration_counter")
    single = not cfc.is_sequence(loop_vars)
    count = len(cfc.flatten(loop_vars))

    def counted_cond(i, lv):
        return comparison_ops.logical_and(i < maximum, cond(*_as_args(loop_vars, cfc.flatten(lv))))

    def counted_body(i, lv):
        out = body(*_as_args(loop_vars, cfc.flatten(lv)))
        if single and isinstance(out, (list, tuple)) and len(out) == 1:
            out = out[0]
        if not single and count == 1 and not cfc.is_sequence(out):
            out = [out]
        return i + 1, out

    invariants = None if shape_invariants is None else (as_shape([]), shape_invariants)
    return counted_cond, counted_body, (counter, loop_vars), invariants


__all__ = ["while_loop"]
