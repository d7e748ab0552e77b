"""``tf.gradients``: reverse-mode autodiff that *builds ops* (TF paper §4.1).

Given tensors ``ys`` and ``xs``, :func:`gradients` adds to the graph the ops
that compute ``sum(dy/dx)`` for each x.  Nothing is evaluated: the result is
more graph, under a ``gradients/`` name scope, which ``Session.run`` executes
like anything else — and which can itself be differentiated.

The algorithm is TF's ``_GradientsHelper``:

1. Find the ops *between* xs and ys: reachable forward from the xs' ops and
   backward from the ys' ops.  Only they need gradients.
2. Give every such op a *pending count*: how many of its outputs' consumers
   are between ops.  An op is ready when all consumers have sent it their
   gradient contributions.
3. Seed each y with ``grad_ys`` (ones by default), then run a worklist: pop a
   ready op, sum the contributions for each of its outputs (``AddN``), call
   its registered gradient function to build the input gradients, hand those
   to the producing ops, and enqueue producers whose count reached zero.

Integer tensors carry no gradient, ``tf.stop_gradient`` and ``stop_gradients``
cut the flow, and an x not connected to any y gets None.

A gradient is a Tensor or, for the rows a ``tf.gather`` read, an
:class:`~minitf.framework.indexed_slices.IndexedSlices`: the ``Identity``
of a variable read passes it on unchanged, contributions that are all
slices are concatenated (:func:`_sum`), and an op whose gradient function
needs a dense tensor converts it.
"""

import collections
import contextlib
import enum

from minitf.autodiff.control_flow_state import maybe_create_control_flow_state
from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, joining_ops, math_ops, unary_ops
from minitf.ops import control_flow_context as cfc
from minitf.ops.control_flow_grad import zeros_like_switch_output
from minitf.ops.control_flow_primitives import is_loop_exit, is_loop_switch, is_switch
from minitf.registry import get_registry

_DIFFERENTIABLE = (dtypes.float16, dtypes.float32, dtypes.float64)


class UnconnectedGradients(enum.Enum):
    """What :func:`gradients` returns for an x not connected to the ys
    (``tf.UnconnectedGradients``): None, or zeros of x's shape."""
    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How contributions to one gradient are summed (``tf.AggregationMethod``).

    minitf always uses one ``AddN``; the names exist so TF1 code that picks a
    method runs unchanged.
    """
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def is_differentiable(tensor):
    """Whether gradients flow through ``tensor`` (floating dtypes only)."""
    return tensor.dtype.base_dtype in _DIFFERENTIABLE


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Builds the symbolic partial derivatives of ``sum(ys)`` with respect to ``xs``.

    Args:
        ys: a Tensor or list of Tensors to differentiate.
        xs: a Tensor, Variable, or list of them.
        grad_ys: optional list of upstream gradients, one per y, of y's shape
            (default: ones).
        name: the name scope of the gradient ops.
        colocate_gradients_with_ops, gate_gradients, aggregation_method:
            accepted for compatibility.
        stop_gradients: Tensors treated as constants.
        unconnected_gradients: ``UnconnectedGradients.NONE`` (or ``"none"``)
            gives None for an x not connected to the ys, ``ZERO`` (``"zero"``)
            gives ``zeros_like(x)``.

    Returns:
        One Tensor (or None when not connected) per x.

    Raises:
        TypeError: if an x or y is not a tensor-like value, or a grad_y
            Tensor's dtype is not its y's.
        ValueError: if the tensors come from different graphs, or a grad_y
            has the wrong shape.
        LookupError: if an op on the path has no registered gradient.

    Example:
        >>> x = tf.constant(3.0)
        >>> [dx] = tf.gradients(x * x, [x])   # gradients/mul_grad/..., gradients/AddN
        >>> sess.run(dx)
        6.0
    """
    del colocate_gradients_with_ops, gate_gradients, aggregation_method
    unconnected_gradients = UnconnectedGradients(
        getattr(unconnected_gradients, "value", unconnected_gradients))
    ys = _as_tensor_list(ys, "ys", as_ref=False)
    xs = _as_tensor_list(xs, "xs", as_ref=True)
    stop_tensors = _as_tensor_list([] if stop_gradients is None else stop_gradients,
                                   "stop_gradients", as_ref=False)
    graph = _common_graph(ys + xs + stop_tensors)
    grad_ys = [None] * len(ys) if grad_ys is None else list(_as_list(grad_ys))
    if len(grad_ys) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
    with graph.as_default(), graph.name_scope(name):
        grads = _gradients_helper(graph, ys, xs, grad_ys, stop_tensors)
        if unconnected_gradients is UnconnectedGradients.ZERO:
            grads = [array_ops.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
        return grads


def _gradients_helper(graph, ys, xs, grad_ys, stop_tensors):
    registry = get_registry()
    between = _ops_between([x.op for x in xs], [y.op for y in ys])
    # Loops on the path get a gradient loop each (control_flow_state.py); their
    # Exits all join ``between``, so every loop variable back-propagates.
    between_list = sorted(between, key=lambda o: o._id, reverse=True)
    loop_state = maybe_create_control_flow_state(between_list, between)
    pending = _pending_counts(between)
    stop_ops = {t.op for t in stop_tensors}
    grads = collections.defaultdict(list)  # Tensor -> gradient contributions
    for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
        seed = _default_grad_y(y, grad_y, i)
        if seed is not None:
            grads[y].append(seed)

    # The worklist: ops whose every between-consumer has sent its contribution.
    ready = collections.deque(op for op in _unique(y.op for y in ys) if pending[op] == 0)
    if loop_state is not None:
        for y in loop_state.process_unused_loop_exits(pending, {y.op for y in ys}):
            if is_differentiable(y):
                grads[y].append(loop_state.zeros_like_for_exit(y))
                ready.append(y.op)
    visited = set()
    while ready:
        op = ready.popleft()
        if op in visited and not is_loop_switch(op):  # a loop Switch is visited twice
            continue
        visited.add(op)
        with _grad_context(loop_state, op, before=True):
            out_grads = [_aggregate(grads, t) for t in op.outputs]
        if op in between and op not in stop_ops and any(g is not None for g in out_grads):
            with _grad_context(loop_state, op, before=False):
                in_grads = _call_gradient_function(registry, graph, op, out_grads, loop_state)
            for tensor, grad in zip(op.inputs, in_grads):
                if grad is not None and is_differentiable(tensor):
                    grads[tensor].append(grad)
        _update_pending_and_enqueue_ready(grads, op, ready, pending, loop_state)
    if loop_state is not None:
        loop_state.post_processing()
    return [_aggregate(grads, x) if is_differentiable(x) else None for x in xs]


def _grad_context(loop_state, op, before):
    """Inside a loop, gradient ops are built in its gradient loop's context."""
    if loop_state is None:
        return contextlib.nullcontext()
    return loop_state.grad_context_for(op, before)


def _update_pending_and_enqueue_ready(grads, op, ready, pending, loop_state):
    """Decrements the pending counts of ``op``'s producers; enqueues the ready ones.

    With loops (TF's ``_UpdatePendingAndEnqueueReady``): a loop Switch is
    ready at its first contribution too (from the Exit), and the Exits of one
    loop are processed together, once all are ready — those without a
    gradient get zeros if another Exit of the loop has one.
    """
    for tensor in op.inputs:
        producer = tensor.op
        pending[producer] -= 1
        is_ready = pending[producer] == 0
        if loop_state is not None and not is_ready:
            is_ready = pending[producer] > 0 and is_loop_switch(producer)
        if not is_ready:
            continue
        if loop_state is None or not is_loop_exit(producer):
            ready.append(producer)
            continue
        state = loop_state.get_grad_state(producer, before=False)
        state.deferred_exits.append(tensor)
        state.pending_exits_count -= 1
        if state.pending_exits_count > 0:
            continue
        has_grad = False
        for y in state.deferred_exits:
            if any(grads.get(t) for t in y.op.outputs):
                has_grad = True
                ready.append(y.op)
            else:
                state.unused_exits.append(y)
        for y in state.unused_exits:
            if has_grad and is_differentiable(y):
                grads[y].append(loop_state.zeros_like_for_exit(y))
            ready.append(y.op)


def _ops_between(from_ops, to_ops):
    """Ops reachable forward from ``from_ops`` and backward from ``to_ops``.

    The forward walk follows differentiable outputs only (TF's
    ``_MarkReachedOps``): a gradient never flows through a bool or int, and a
    loop's predicate must not wait for gradients it cannot receive.
    """
    reached = set()
    worklist = list(from_ops)
    while worklist:
        op = worklist.pop()
        if op in reached:
            continue
        reached.add(op)
        for output in op.outputs:
            if is_differentiable(output):
                worklist.extend(output.consumers())
    between = set()
    worklist = [op for op in to_ops if op in reached]
    while worklist:
        op = worklist.pop()
        if op in between:
            continue
        between.add(op)
        worklist.extend(t.op for t in op.inputs if t.op in reached)
    return between


def _pending_counts(between):
    """For each op, how many gradient contributions it waits for."""
    pending = collections.defaultdict(int)
    for op in between:
        for tensor in op.inputs:
            if tensor.op in between:
                pending[tensor.op] += 1
    return pending


def _call_gradient_function(registry, graph, op, out_grads, loop_state=None):
    """Builds ``op``'s input gradients with its registered gradient function."""
    op_type = op._attrs.get("_gradient_op_type", op.type)
    try:
        grad_fn = registry.gradient(op_type)
    except LookupError:
        raise LookupError("No gradient defined for operation '%s' (op type: %s)"
                          % (op.name, op.type)) from None
    if grad_fn is None:  # declared not differentiable
        return [None] * len(op.inputs)
    out_grads = [_zeros_for_missing(g, op, i, loop_state) for i, g in enumerate(out_grads)]
    with graph.name_scope(op.name + "_grad"):
        in_grads = grad_fn(op, *out_grads)
    in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(op.inputs):
        raise ValueError("Num gradients %d generated for op %s (op type: %s) do not match num "
                         "inputs %d" % (len(in_grads), op.name, op_type, len(op.inputs)))
    for tensor, grad in zip(op.inputs, in_grads):
        if isinstance(grad, Tensor) and is_differentiable(tensor):
            try:
                grad.set_shape(tensor.shape)
            except ValueError:
                raise ValueError("Incompatible shapes between op input and calculated input "
                                 "gradient. Forward operation: %s. Input index: %d. Original "
                                 "input shape: %s. Calculated input gradient shape: %s"
                                 % (op.name, op.inputs.index(tensor), tensor.shape,
                                    grad.shape)) from None
    return in_grads


def _zeros_for_missing(grad, op, index, loop_state=None):
    """A missing gradient of a differentiable output is zero; others stay None.

    Inside a loop the zeros are built in the gradient loop (none for a loop
    Switch: its back edge is closed later); for a cond Switch they are live
    only when that output is.
    """
    output = op.outputs[index]
    if grad is not None or not is_differentiable(output):
        return grad
    if loop_state is not None and cfc.while_context_of(op) is not None:
        return loop_state.zeros_like_in_loop(op, index)
    if is_switch(op):
        return zeros_like_switch_output(op, index)
    return array_ops.zeros_like(output)


def _aggregate(grads, tensor):
    """The sum of the gradient contributions to ``tensor``, or None.

    The sum replaces the contributions in ``grads``, so that a tensor that is
    both an x and the output of a visited op gets one sum, not two (TF's
    ``_AggregatedGrads`` does the same).
    """
    contributions = grads.get(tensor)
    if not contributions:
        return None
    if len(contributions) > 1:
        grads[tensor] = [_sum(contributions)]
    return grads[tensor][0]


def _sum(contributions):
    """Tensors add up in one ``AddN``; so does a mix of Tensors and
    IndexedSlices (the slices are densified).  Contributions that are all
    IndexedSlices stay sparse: their values and indices are concatenated,
    duplicated rows and all (TF's ``AggregateIndexedSlicesGradients``).
    """
    if any(isinstance(g, Tensor) for g in contributions):
        return math_ops.add_n(contributions)
    slices = _with_common_index_dtype(contributions)
    return IndexedSlices(joining_ops.concat([s.values for s in slices], 0),
                         joining_ops.concat([s.indices for s in slices], 0),
                         slices[0].dense_shape)


def _with_common_index_dtype(slices):
    """The slices, their int32 indices cast to int64 if any others are int64
    (TF's ``_as_indexed_slices_list``), so that the indices concatenate."""
    if all(s.indices.dtype == slices[0].indices.dtype for s in slices):
        return slices
    return [s if s.indices.dtype == dtypes.int64 else
            IndexedSlices(s.values, unary_ops.cast(s.indices, dtypes.int64), s.dense_shape)
            for s in slices]


def _default_grad_y(y, grad_y, index):
    """``grad_y`` checked against y's shape and dtype, or ones like y.

    An integer y without a ``grad_y`` seeds nothing: no gradient flows from
    it, so an x reached only through it gets None (as in TF, where the ones
    it is seeded with stop at the first integer tensor).
    """
    if grad_y is None:
        if not is_differentiable(y):
            return None
        one = convert_to_tensor(1, dtype=y.dtype.base_dtype, name="grad_ys_%d" % index)
        return array_ops.fill(array_ops.shape(y), one)
    if isinstance(grad_y, Tensor) and grad_y.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError("grad_ys[%d] has dtype %s but %s has dtype %s: a gradient has the "
                        "dtype of its tensor." % (index, grad_y.dtype.base_dtype.name, y.name,
                                                  y.dtype.base_dtype.name))
    grad_y = convert_to_tensor(grad_y, dtype=y.dtype.base_dtype, name="grad_ys_%d" % index)
    if not grad_y.shape.is_compatible_with(y.shape):
        raise ValueError("Incompatible shapes between grad_ys and ys: grad_ys[%d] has shape %s "
                         "but %s has shape %s" % (index, grad_y.shape, y.name, y.shape))
    return grad_y


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _as_tensor_list(values, what, as_ref):
    tensors = []
    for value in _as_list(values):
        if isinstance(value, Tensor):
            tensors.append(value)
        elif hasattr(value, "_as_graph_element") and hasattr(value, "dtype"):
            tensors.append(value._ref() if as_ref and hasattr(value, "_ref") else value.value())
        else:
            raise TypeError("%s must be Tensors or Variables, got %r of type %s"
                            % (what, value, type(value).__name__))
    return tensors


def _common_graph(tensors):
    graph = tensors[0].graph if tensors else get_default_graph()
    for t in tensors:
        if t.graph is not graph:
            raise ValueError("%s must be from the same graph as %s: tf.gradients needs ys, "
                             "xs and stop_gradients of one graph." % (t, tensors[0]))
    return graph


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
