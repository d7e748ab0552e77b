"""Numerical gradient checking: analytic Jacobians against central differences.

For ``y = f(x)`` the Jacobian ``J[i, j] = d y_j / d x_i`` is computed twice:

* *theoretically*, by running the graph that :func:`tf.gradients` built once
  per element j of y, with ``grad_ys`` one-hot at j;
* *numerically*, by perturbing each element i of x by ``±delta`` and taking
  ``(y(x + delta) - y(x - delta)) / (2 delta)``, differences taken in float64.

The two agree (to a tolerance set by the dtype's precision) exactly when the
gradient functions are right.  Mirrors ``tf.test.compute_gradient`` (TF1's
``gradient_checker.py``) and adds :func:`check_gradients`, whose failure
message says where and by how much the two differ — and, when the whole
analytic Jacobian is the numeric one times a constant (a factor 2 forgotten, a
sign flipped), says that too — and :func:`gradgradcheck`, the same check one
order up (``torch.autograd.gradgradcheck``): the gradient *of the gradient*.

The checker's own frames carry ``__tracebackhide__``, so that pytest shows a
failure at the student's call, not inside this module.
"""

import re


import numpy as np

from minitf.autodiff.gradients import gradients
from minitf.framework import dtypes
from minitf.framework.default_session import get_default_session
from minitf.framework.indexed_slices import IndexedSlicesValue
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops

# (delta, atol, rtol) per dtype: float32 central differences lose ~4 digits.
_TOLERANCES = {dtypes.float16: (1e-2, 5e-2, 5e-2), dtypes.float32: (1e-3, 1e-2, 1e-2),
               dtypes.float64: (1e-6, 1e-6, 1e-6)}


def _session(session):
    session = session or get_default_session()
    if session is None:
        raise ValueError("Gradient checks run in a session: pass session= or call them inside "
                         "`with tf.Session():`.")
    return session


def _theoretical_jacobian(session, x, x_value, y, y_shape, dx, dy, feed):
    x_size = int(np.prod(x_value.shape))
    y_size = int(np.prod(y_shape))
    jacobian = np.zeros((x_size, y_size))
    if dx is None:
        return jacobian
    dy_value = np.zeros(y_shape, dtype=dy.dtype.as_numpy_dtype)
    for j in range(y_size):
        dy_value.flat[j] = 1
        grad = session.run(dx, {**feed, x: x_value, dy: dy_value})
        jacobian[:, j] = _dense(grad, x_value.shape).ravel()
        dy_value.flat[j] = 0
    return jacobian


def _dense(grad, shape):
    """A fetched gradient as a float64 array; the rows of an
    ``IndexedSlicesValue`` (a gather's gradient) added up, as TF's checker does."""
    if not isinstance(grad, IndexedSlicesValue):
        return np.asarray(grad, dtype=np.float64)
    dense = np.zeros(shape)
    np.add.at(dense, grad.indices, grad.values)
    return dense


def _numerical_jacobian(session, x, x_value, y, y_shape, delta, feed):
    x_size = int(np.prod(x_value.shape))
    jacobian = np.zeros((x_size, int(np.prod(y_shape))))
    for i in range(x_size):
        probe = np.array(x_value, dtype=np.float64)
        probe.flat[i] += delta
        y_plus = session.run(y, {**feed, x: probe.astype(x_value.dtype)})
        probe.flat[i] -= 2 * delta
        y_minus = session.run(y, {**feed, x: probe.astype(x_value.dtype)})
        diff = np.asarray(y_plus, np.float64) - np.asarray(y_minus, np.float64)
        jacobian[i, :] = diff.ravel() / (2 * delta)
    return jacobian


def _initial_value(x, x_shape, x_init_value):
    np_dtype = x.dtype.base_dtype.as_numpy_dtype
    if x_init_value is not None:
        value = np.asarray(x_init_value, dtype=np_dtype)
        if value.shape != tuple(x_shape):
            raise ValueError("x_init_value has shape %s, expected %s" % (value.shape, x_shape))
        return value
    return np.random.default_rng(0).random(x_shape).astype(np_dtype)


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                     init_targets=None, extra_feed_dict=None, session=None):
    """The theoretical and numerical Jacobians of ``y`` with respect to ``x``.

    Args:
        x: a Tensor, or a list of Tensors.
        x_shape: its shape (a list of shapes for a list of x).
        y: the Tensor to differentiate.
        y_shape: y's shape.
        x_init_value: where to evaluate (default: uniform [0, 1)).
        delta: the finite-difference step.
        init_targets: ops to run first (e.g. variable initializers).
        extra_feed_dict: more feeds (other placeholders).
        session: default: the default session.

    Returns:
        ``(jacobian_theoretical, jacobian_numerical)``, each of shape
        ``(x_size, y_size)``; a list of such pairs when ``x`` is a list.

    Raises:
        AssertionError: if a gradient function on the way returned a gradient
            whose dtype is not its input's (naming that op).
    """
    if isinstance(x, (list, tuple)):
        init_values = x_init_value or [None] * len(x)
        return [compute_gradient(xi, si, y, y_shape, vi, delta, init_targets, extra_feed_dict,
                                 session) for xi, si, vi in zip(x, x_shape, init_values)]
    __tracebackhide__ = True
    session = _session(session)
    if init_targets:
        session.run(init_targets)
    y_shape = tuple(y_shape)
    x_shape = tuple(x_shape)
    dy = array_ops.placeholder(y.dtype.base_dtype, shape=y_shape, name="grad_y")
    (dx,) = _gradients_of_checked_dtypes(y, [x], dy)
    x_value = _initial_value(x, x_shape, x_init_value)
    feed = dict(extra_feed_dict or {})
    theoretical = _theoretical_jacobian(session, x, x_value, y, y_shape, dx, dy, feed)
    numerical = _numerical_jacobian(session, x, x_value, y, y_shape, delta, feed)
    return theoretical, numerical


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None, session=None):
    """The largest absolute difference between the two Jacobians (over all x)."""
    results = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                               extra_feed_dict, session)
    if not isinstance(results, list):
        results = [results]
    return max((np.max(np.abs(t - n)) if t.size else 0.0) for t, n in results)


def check_gradients(y, xs, x_values, delta=None, atol=None, rtol=None, extra_feed_dict=None,
                    session=None):
    """Asserts that the gradients of ``y`` match central differences at ``x_values``.

    Args:
        y: the Tensor whose gradient is checked.
        xs: a Tensor or list of Tensors (typically placeholders) it depends on.
        x_values: the point to check at, one array per x.
        delta, atol, rtol: step and tolerances (defaults by dtype: float64 is
            checked tightly, float32 loosely).
        extra_feed_dict: feeds for other placeholders.
        session: default: the default session.

    Raises:
        AssertionError: naming the input, the worst element (its index in y
            and in x), the analytic and numeric values, and the tolerance;
            with a hint when analytic = c × numeric everywhere.  Also when a
            gradient function returned a gradient of another dtype than its
            input's, naming that op.
    """
    __tracebackhide__ = True
    _check(y, xs, x_values, delta, atol, rtol, extra_feed_dict, session, "Gradient check")


def gradgradcheck(y, xs, x_values, grad_y_value=None, delta=None, atol=None, rtol=None,
                  extra_feed_dict=None, session=None):
    """Asserts that the *second* derivatives of ``y`` match central differences.

    ``torch.autograd.gradgradcheck`` for graphs: the first-order gradients
    ``g = tf.gradients(y, xs, grad_ys=v)`` are themselves functions of the xs
    and of the upstream gradient ``v``, built of ops whose own gradient
    functions may be wrong.  Each g is checked with :func:`check_gradients`
    with respect to every x and to v: its analytic Jacobian comes from the
    gradients of the gradient ops, its numeric one from differences of g.

    Args:
        y: the Tensor whose gradient's gradient is checked.
        xs, x_values: as for :func:`check_gradients`.
        grad_y_value: the upstream gradient v to check at (default: a fixed
            random array of y's shape, so that no term cancels by symmetry).
        delta, atol, rtol, extra_feed_dict, session: as for :func:`check_gradients`.

    Raises:
        AssertionError: as :func:`check_gradients`, the message beginning
            "Second-order gradient check (of d y:0 / d x:0) failed": it names
            the first-order gradient whose derivative is wrong.
    """
    __tracebackhide__ = True
    xs, x_values = _as_lists(xs, x_values)
    if not y.shape.is_fully_defined():
        raise ValueError("gradgradcheck needs y with a fully defined shape, got %s" % y.shape)
    np_dtype = y.dtype.base_dtype.as_numpy_dtype
    if grad_y_value is None:
        grad_y_value = np.random.default_rng(1).uniform(0.5, 1.5, y.shape.as_list())
    grad_y = array_ops.placeholder(y.dtype.base_dtype, shape=y.shape, name="gradgradcheck_v")
    first = _gradients_of_checked_dtypes(y, xs, grad_y)
    points = x_values + [np.asarray(grad_y_value, np_dtype)]
    for x, grad in zip(xs, first):
        if grad is None:
            continue
        grad = convert_to_tensor(grad)  # a gather's IndexedSlices, as the dense gradient
        what = "Second-order gradient check (of d %s / d %s)" % (y.name, x.name)
        _check(grad, xs + [grad_y], points, delta, atol, rtol, extra_feed_dict, session, what)


def _as_lists(xs, x_values):
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    several = isinstance(x_values, (list, tuple)) and len(xs) > 1
    return xs, list(x_values) if several else [x_values]


def _check(y, xs, x_values, delta, atol, rtol, extra_feed_dict, session, what):
    __tracebackhide__ = True
    xs, x_values = _as_lists(xs, x_values)
    if not y.shape.is_fully_defined():
        raise ValueError("check_gradients needs y with a fully defined shape, got %s" % y.shape)
    y_shape = tuple(y.shape.as_list())
    for x, value in zip(xs, x_values):
        value = np.asarray(value, dtype=x.dtype.base_dtype.as_numpy_dtype)
        d, a, r = _TOLERANCES[x.dtype.base_dtype]
        d, a, r = delta or d, a if atol is None else atol, r if rtol is None else rtol
        others = {xo: np.asarray(vo) for xo, vo in zip(xs, x_values) if xo is not x}
        feed = {**(extra_feed_dict or {}), **others}
        theoretical, numerical = compute_gradient(x, value.shape, y, y_shape, value, d,
                                                  extra_feed_dict=feed, session=session)
        _assert_close(theoretical, numerical, a, r, x, value.shape, y, y_shape, what)


# ---- a gradient of the wrong dtype ----------------------------------------------------------
def _gradients_of_checked_dtypes(y, xs, grad_y=None):
    """``tf.gradients(y, xs, grad_ys=[grad_y])``, asserting every gradient function
    returned gradients of its inputs' dtypes.

    ``tf.gradients`` (like TF1's) does not check the dtypes a gradient function
    returns: a float32 gradient for a float64 input surfaces later as a
    ``TypeError`` of some other op, or as a gradient of the wrong dtype.  Here
    the gradient ops are searched for the function that returned it.
    """
    __tracebackhide__ = True
    graph = y.graph
    before = len(graph.get_operations())
    try:
        grads = gradients(y, xs, grad_ys=None if grad_y is None else [grad_y])
    except TypeError as error:
        _assert_gradient_dtypes(graph.get_operations()[before:], graph, cause=error)
        raise
    new_ops = graph.get_operations()[before:]
    for x, grad in zip(xs, grads):
        if grad is not None and grad.dtype.base_dtype != x.dtype.base_dtype:
            _assert_gradient_dtypes(new_ops, graph)
            raise AssertionError("Gradient check failed for input '%s': its gradient %s has "
                                 "dtype %s, not %s" % (x.name, grad.name, grad.dtype.name,
                                                       x.dtype.base_dtype.name))
    return grads


_GRAD_SCOPE = re.compile(r"^gradients(?:_\d+)?/(.+)_grad/")


def _assert_gradient_dtypes(new_ops, graph, cause=None):
    """Raises an AssertionError naming the op whose gradient function returned a
    floating tensor of a dtype none of its inputs has.

    What a gradient function returned are the floating tensors of its name
    scope (``gradients/<op>_grad/``) that nothing in that scope consumes.
    """
    __tracebackhide__ = True
    by_scope = {}
    for op in new_ops:
        match = _GRAD_SCOPE.match(op.name)
        if match:
            by_scope.setdefault(match.group(1), []).append(op)
    for forward_name, ops in by_scope.items():
        try:
            forward = graph.get_operation_by_name(forward_name)
        except (KeyError, ValueError):
            continue
        wanted = {t.dtype.base_dtype for t in forward.inputs if t.dtype.base_dtype in _TOLERANCES}
        consumed = {t for op in ops for t in op.inputs}
        returned = [t for op in ops for t in op.outputs if t not in consumed]
        for tensor in returned:
            dtype = tensor.dtype.base_dtype
            if dtype in _TOLERANCES and wanted and dtype not in wanted:
                gradient = forward._attrs.get("_gradient_op_type", forward.type)
                raise AssertionError(
                    "The gradient function of op '%s' (type %s, gradient '%s') returned %s "
                    "of dtype %s for inputs of dtype %s: a gradient has its input's dtype"
                    % (forward.name, forward.type, gradient, tensor.name, dtype.name,
                       ", ".join(sorted(d.name for d in wanted)))) from cause


# ---- the failure message --------------------------------------------------------------------
def _assert_close(theoretical, numerical, atol, rtol, x, x_shape, y, y_shape,
                  what="Gradient check"):
    __tracebackhide__ = True
    tolerance = atol + rtol * np.abs(numerical)
    excess = np.abs(theoretical - numerical) - tolerance
    if excess.size == 0 or np.max(excess) <= 0:
        return
    i, j = np.unravel_index(np.argmax(excess), excess.shape)
    x_index = [int(k) for k in np.unravel_index(i, x_shape)] if x_shape else []
    y_index = [int(k) for k in np.unravel_index(j, y_shape)] if y_shape else []
    message = (
        "%s failed for input '%s' (shape %s) of '%s': the worst element is "
        "d %s%s / d %s%s: analytic %.6g vs numeric %.6g (|difference| %.3g > tolerance %.3g = "
        "atol %g + rtol %g * |numeric|)"
        % (what, x.name, tuple(x_shape), y.name, y.name, y_index, x.name, x_index,
           theoretical[i, j], numerical[i, j], abs(theoretical[i, j] - numerical[i, j]),
           tolerance[i, j], atol, rtol))
    hint = ratio_hint(theoretical, numerical, atol, rtol)
    raise AssertionError(message + ("\nhint: " + hint if hint else ""))


def ratio_hint(theoretical, numerical, atol, rtol):
    """A hint when ``theoretical == c * numerical`` everywhere, else None.

    The commonest wrong gradients are right but for a constant: a factor
    forgotten (``x`` for ``2x``: c = 0.5), a sign flipped (c = -1), or no
    gradient at all (c = 0).  c is the median ratio over the elements where
    the numeric derivative is clearly non-zero; it explains the Jacobian when
    every element, zeros included, is within tolerance of ``c * numeric``.
    """
    significant = np.abs(numerical) > atol + rtol * np.abs(numerical)
    if not np.any(significant):
        return None
    c = float(np.median(theoretical[significant] / numerical[significant]))
    tolerance = (atol + rtol * np.abs(numerical)) * max(1.0, abs(c))
    if np.any(np.abs(theoretical - c * numerical) > tolerance) or abs(c - 1) <= rtol:
        return None
    if abs(c) <= rtol:
        return "analytic = 0 everywhere: no gradient reaches this input"
    if abs(c + 1) <= rtol:
        return "analytic = -1 × numeric everywhere: the sign is flipped"
    where = "a constant factor (and the sign) is off" if c < 0 else "a constant factor is off"
    return "analytic = %.2f × numeric everywhere: %s" % (c, where)
