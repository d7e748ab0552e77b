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
"""

import collections

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, math_ops
from minitf.registry import get_registry

_DIFFERENTIABLE = (dtypes.float16, dtypes.float32, dtypes.float64)


def is_differentiable(tensor):
    """Whether gradients flow through ``tensor`` (floating dtypes only)."""
    return tensor.dtype.base_dtype in _DIFFERENTIABLE


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None):
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

    Returns:
        One Tensor (or None when not connected) per x.

    Raises:
        TypeError: if an x or y is not a tensor-like value.
        ValueError: if the tensors come from different graphs, or a grad_y
            has the wrong shape.
        LookupError: if an op on the path has no registered gradient.

    Example:
        >>> x = tf.constant(3.0)
        >>> [dx] = tf.gradients(x * x, [x])   # builds gradients/mul_grad/...
        >>> sess.run(dx)
        6.0
    """
    del colocate_gradients_with_ops, gate_gradients, aggregation_method
    ys = _as_tensor_list(ys, "ys", as_ref=False)
    xs = _as_tensor_list(xs, "xs", as_ref=True)
    stop_tensors = _as_tensor_list(stop_gradients or [], "stop_gradients", as_ref=False)
    graph = _common_graph(ys + xs + stop_tensors)
    grad_ys = [None] * len(ys) if grad_ys is None else list(_as_list(grad_ys))
    if len(grad_ys) != len(ys):
        raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
    with graph.as_default(), graph.name_scope(name):
        return _gradients_helper(graph, ys, xs, grad_ys, stop_tensors)


def _gradients_helper(graph, ys, xs, grad_ys, stop_tensors):
    registry = get_registry()
    between = _ops_between([x.op for x in xs], [y.op for y in ys])
    pending = _pending_counts(between)
    stop_ops = {t.op for t in stop_tensors}
    grads = collections.defaultdict(list)  # Tensor -> gradient contributions
    for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
        grads[y].append(_default_grad_y(y, grad_y, i))

    # The worklist: ops whose every between-consumer has sent its contribution.
    ready = collections.deque(op for op in _unique(y.op for y in ys) if pending[op] == 0)
    visited = set()
    while ready:
        op = ready.popleft()
        if op in visited:
            continue
        visited.add(op)
        out_grads = [_aggregate(grads.get(t), t) for t in op.outputs]
        if op in between and op not in stop_ops and any(g is not None for g in out_grads):
            in_grads = _call_gradient_function(registry, graph, op, out_grads)
            for tensor, grad in zip(op.inputs, in_grads):
                if grad is not None and is_differentiable(tensor):
                    grads[tensor].append(grad)
        for tensor in op.inputs:
            producer = tensor.op
            pending[producer] -= 1
            if pending[producer] == 0:
                ready.append(producer)
    return [_aggregate(grads.get(x), x) if is_differentiable(x) else None for x in xs]


def _ops_between(from_ops, to_ops):
    """Ops reachable forward from ``from_ops`` and backward from ``to_ops``."""
    reached = set()
    worklist = list(from_ops)
    while worklist:
        op = worklist.pop()
        if op in reached:
            continue
        reached.add(op)
        for output in op.outputs:
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


def _call_gradient_function(registry, graph, op, out_grads):
    """Builds ``op``'s input gradients with its registered gradient function."""
    op_type = op._attrs.get("_gradient_op_type", op.type)
    try:
        grad_fn = registry.gradient(op_type)
    except LookupError:
        raise LookupError("No gradient defined for operation '%s' (op type: %s)"
                          % (op.name, op_type)) from None
    if grad_fn is None:  # declared not differentiable
        return [None] * len(op.inputs)
    out_grads = [_zeros_for_missing(g, t) for g, t in zip(out_grads, op.outputs)]
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


def _zeros_for_missing(grad, output):
    """A missing gradient of a differentiable output is zero; others stay None."""
    if grad is None and is_differentiable(output):
        return array_ops.zeros_like(output)
    return grad


def _aggregate(contributions, tensor):
    """The sum of the gradient contributions to one tensor (``AddN``), or None."""
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    return math_ops.add_n(contributions)


def _default_grad_y(y, grad_y, index):
    """``grad_y`` checked against y's shape and dtype, or ones like y."""
    if grad_y is None:
        if not is_differentiable(y):
            raise TypeError("Gradients of %s tensors need explicit grad_ys: %s"
                            % (y.dtype.base_dtype.name, y.name))
        one = convert_to_tensor(1, dtype=y.dtype.base_dtype, name="grad_ys_%d" % index)
        return array_ops.fill(array_ops.shape(y), one)
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
            raise ValueError("Tensor %s is not from the same graph as %s: gradients need "
                             "ys and xs of one graph." % (t, tensors[0]))
    return graph


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
