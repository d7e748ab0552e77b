"""``tf.cond`` and ``tf.case``: data-dependent branching inside the graph.

``tf.cond(pred, true_fn, false_fn)`` builds both branches, once, when the
graph is built.  At run time only one runs::

            pred ──► Switch(pred, pred) ─► [1] Identity "switch_t"  (pivot of true_fn)
                                        └► [0] Identity "switch_f"  (pivot of false_fn)
      x ─► Switch(x, pred)[1] ─► true_fn's ops ──┐
      x ─► Switch(x, pred)[0] ─► false_fn's ops ─┴─► Merge ─► result

Every value a branch takes from outside goes through a ``Switch`` (added by
the branch's :class:`~minitf.ops.control_flow_context.CondContext`), so in
the untaken branch every op sees a *dead* input and does not run; ``Merge``
forwards the one live result.

Mirrors ``cond`` and ``case`` of TF's ``control_flow_ops.py`` (TF1, cond v1).
"""

import functools

from minitf.framework import dtypes
from minitf.framework.graph import get_default_graph
from minitf.framework.operation import Operation
from minitf.framework.tensor import Tensor
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import (array_ops, comparison_ops, joining_ops, logging_ops, reduction_ops,
                        unary_ops)
from minitf.ops import control_flow_context as cfc
from minitf.ops import control_flow_primitives as primitives
from minitf.ops.tensor_array_ops import TensorArray


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None):
    """Returns ``true_fn()`` if ``pred`` is true, else ``false_fn()`` (``tf.cond``).

    Both functions are called once, now, to build their branch; at run time
    only the ops of the taken branch run.

    Args:
        pred: a scalar bool Tensor.
        true_fn, false_fn: callables returning the same structure of tensors
            (or an Operation each: the result is then a bool tensor that is
            computed once the taken branch's Operation has run).
        strict: keep singleton lists/tuples as they are (TF1 unpacks them).
        name: the name scope (default ``cond``).

    Returns:
        The taken branch's results, in the structure the functions return.

    Raises:
        TypeError: if ``pred`` is not a bool tensor (a Python bool included),
            or a function is not callable.
        ValueError: if ``pred`` is not a scalar, or the branches return
            different structures or dtypes (the message shows both).

    Example:
        >>> x = tf.placeholder(tf.float32, [])
        >>> y = tf.cond(x > 0, lambda: x * 2.0, lambda: -x)
        >>> sess.run(y, {x: -3.0})
        3.0
    """
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    graph = pred.graph if isinstance(pred, Tensor) else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "cond"):
        pred = primitives.check_pred(pred, "cond")
        p_false, p_true = primitives.switch(pred, pred)
        pivot_true = array_ops.identity(p_true, name="switch_t")
        pivot_false = array_ops.identity(p_false, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")
        context_t = cfc.CondContext(pred, pivot_true, branch=1)
        with context_t.entered():
            original_t, result_t = _build_branch(context_t, true_fn)
        context_f = cfc.CondContext(pred, pivot_false, branch=0)
        with context_f.entered():
            original_f, result_f = _build_branch(context_f, false_fn)
        if not strict:
            original_t, result_t = _unpack_singleton(original_t), _unpack_singleton(result_t)
            original_f, result_f = _unpack_singleton(original_f), _unpack_singleton(result_f)
        _check_same_outputs(original_t, original_f, result_t, result_f)
        flat_t, flat_f = cfc.flatten(result_t), cfc.flatten(result_f)
        if not flat_t:
            return original_t
        merges = [primitives.merge([f, t])[0] for f, t in zip(flat_f, flat_t)]
        # A branch's Operation comes out as the Merge of the pivots it gates
        # (a bool tensor, as in TF1); a TensorArray is rebuilt around its flow.
        merges = [o._with_flow(m) if isinstance(o, TensorArray) else m
                  for m, o in zip(merges, cfc.flatten(original_t))]
        return cfc.pack_sequence_as(original_t, merges)


def _build_branch(context, fn):
    """Calls ``fn`` inside ``context``; returns its result and the routed-in outputs."""
    original = fn()
    if original is None:
        raise ValueError("A cond branch function returned None; it must return tensors or "
                         "an operation (%s)" % (fn,))
    return original, cfc.pack_sequence_as(
        original, [_branch_output(context, v) for v in cfc.flatten(original)])


def _branch_output(context, value):
    """A branch result as a tensor of the branch: an Operation becomes the pivot
    (gated on it), an outside tensor is switched in."""
    if isinstance(value, Operation):
        with context.graph.control_dependencies([value]):
            return array_ops.identity(context.pivot)
    if isinstance(value, TensorArray):
        value = value.flow
    value = convert_to_tensor(value)
    return context.add_value(value)


def _unpack_singleton(value):
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields") and len(value) == 1:
        return value[0]
    return value


def _check_same_outputs(original_t, original_f, result_t, result_f):
    if not cfc.same_structure(original_t, original_f):
        raise ValueError("true_fn and false_fn must return the same nested structure; "
                         "true_fn returned %s, false_fn returned %s" % (original_t, original_f))
    for t, f in zip(cfc.flatten(result_t), cfc.flatten(result_f)):
        if t.dtype.base_dtype != f.dtype.base_dtype:
            raise ValueError("Outputs of 'true_fn' and 'false_fn' must have the same type(s). "
                             "Received %s from 'true_fn' and %s from 'false_fn' (%s, %s)."
                             % (t.dtype.base_dtype.name, f.dtype.base_dtype.name, t.name, f.name))


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Runs the function of the first true predicate (``tf.case``).

    Built as nested ``cond``s: ``cond(p0, f0, lambda: cond(p1, f1, ... default))``.

    Args:
        pred_fn_pairs: a list of ``(pred, fn)`` pairs (or a dict, in key order).
        default: called when no predicate holds.  Without one, the last
            pair's fn is the default and at least one predicate must hold.
        exclusive: check at run time that at most one predicate holds.
        strict, name: as for :func:`cond`.

    Returns:
        The result of the chosen function.

    Raises:
        TypeError: if a pair is not ``(bool tensor, callable)``.
        ValueError: if there are neither pairs nor a default.
        minitf.errors.InvalidArgumentError: at run time, if ``exclusive`` and
            several predicates hold, or if there is no ``default`` and none holds.

    Mirrors ``case`` and ``_case_create_default_action`` of TF's
    ``control_flow_case.py``.
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple, got %r" % (pair,))
        pred, fn = pair
        if not isinstance(pred, Tensor) or pred.dtype.base_dtype != dtypes.bool:
            raise TypeError("pred must be a bool Tensor, got %r" % (pred,))
        if not callable(fn):
            raise TypeError("fn for pred %s must be callable." % pred.name)
    if not pairs:
        if default is None:
            raise ValueError("case needs at least one (pred, fn) pair or a default")
        return default()
    predicates = [pred for pred, _ in pairs]
    graph = predicates[0].graph
    with graph.as_default(), graph.name_scope(name):
        if default is None:
            pairs, default = pairs[:-1], _checked_default(predicates, pairs[-1])
        fn = default
        for pred, branch_fn in reversed(pairs):
            fn = functools.partial(cond, pred, branch_fn, fn, strict)
        if not exclusive:
            return fn()
        with graph.control_dependencies([_assert_at_most_n_true(
                predicates, 1, "Input error: exclusive=True")]):
            return fn()


def _checked_default(predicates, last_pair):
    """The last pair's fn as the default, asserting that its predicate holds
    (so that, when none holds, the run fails instead of silently taking it)."""
    pred, fn = last_pair

    def default():
        message = ["Input error: None of conditions evaluated as True:",
                   joining_ops.stack(predicates, name="preds_c")]
        with get_default_graph().control_dependencies(
                [logging_ops.Assert(pred, message, summarize=len(predicates))]):
            return _identity_of(fn())
    return default


def _identity_of(result):
    """``result`` with every tensor passed through an Identity (to carry control inputs)."""
    return cfc.pack_sequence_as(result, [
        array_ops.identity(v) if isinstance(v, Tensor) else v for v in cfc.flatten(result)])


def _assert_at_most_n_true(predicates, n, message):
    """An Assert that at most ``n`` of ``predicates`` are true (TF's helper of that name)."""
    preds = joining_ops.stack(predicates, name="preds_c")
    count = reduction_ops.reduce_sum(unary_ops.cast(preds, dtypes.int32), name="num_true_conds")
    names = ", ".join(p.name for p in predicates)
    return logging_ops.Assert(
        comparison_ops.less_equal(count, n),
        ["%s: more than %d conditions (%s) evaluated as True:" % (message, n, names), preds],
        summarize=len(predicates))


__all__ = ["cond", "case"]
