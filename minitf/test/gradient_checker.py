"""Numerical gradient checking: analytic Jacobians against central differences.

For ``y = f(x)`` the Jacobian ``J[i, j] = d y_j / d x_i`` is computed twice:

* *theoretically*, by running the graph that :func:`tf.gradients` built once
  per element j of y, with ``grad_ys`` one-hot at j;
* *numerically*, by perturbing each element i of x by ``±delta`` and taking
  ``(y(x + delta) - y(x - delta)) / (2 delta)``, differences taken in float64.

The two agree (to a tolerance set by the dtype's precision) exactly when the
gradient functions are right.  Mirrors ``tf.test.compute_gradient`` (TF1's
``gradient_checker.py``) and adds :func:`check_gradients`, whose failure
message says where and by how much the two differ.
"""

import numpy as np

from minitf.autodiff.gradients import gradients
from minitf.framework import dtypes
from minitf.framework.default_session import get_default_session
from minitf.framework.indexed_slices import IndexedSlicesValue
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
    """
    if isinstance(x, (list, tuple)):
        init_values = x_init_value or [None] * len(x)
        return [compute_gradient(xi, si, y, y_shape, vi, delta, init_targets, extra_feed_dict,
                                 session) for xi, si, vi in zip(x, x_shape, init_values)]
    session = _session(session)
    if init_targets:
        session.run(init_targets)
    y_shape = tuple(y_shape)
    x_shape = tuple(x_shape)
    dy = array_ops.placeholder(y.dtype.base_dtype, shape=y_shape, name="grad_y")
    (dx,) = gradients(y, [x], grad_ys=[dy])
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
            and in x), the analytic and numeric values, and the tolerance.
    """
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    x_values = list(x_values) if isinstance(x_values, (list, tuple)) and len(xs) > 1 else [x_values]
    if not y.shape.is_fully_defined():
        raise ValueError("check_gradients needs y with a fully defined shape, got %s" % y.shape)
    y_shape = tuple(y.shape.as_list())
    for i, (x, value) in enumerate(zip(xs, x_values)):
        value = np.asarray(value, dtype=x.dtype.base_dtype.as_numpy_dtype)
        d, a, r = _TOLERANCES[x.dtype.base_dtype]
        d, a, r = delta or d, a if atol is None else atol, r if rtol is None else rtol
        others = {xo: np.asarray(vo) for xo, vo in zip(xs, x_values) if xo is not x}
        feed = {**(extra_feed_dict or {}), **others}
        theoretical, numerical = compute_gradient(x, value.shape, y, y_shape, value, d,
                                                  extra_feed_dict=feed, session=session)
        _assert_close(theoretical, numerical, a, r, x, value.shape, y, y_shape)


def _assert_close(theoretical, numerical, atol, rtol, x, x_shape, y, y_shape):
    tolerance = atol + rtol * np.abs(numerical)
    excess = np.abs(theoretical - numerical) - tolerance
    if excess.size == 0 or np.max(excess) <= 0:
        return
    i, j = np.unravel_index(np.argmax(excess), excess.shape)
    x_index = [int(k) for k in np.unravel_index(i, x_shape)] if x_shape else []
    y_index = [int(k) for k in np.unravel_index(j, y_shape)] if y_shape else []
    raise AssertionError(
        "Gradient check failed for input '%s' (shape %s) of '%s': the worst element is "
        "d %s%s / d %s%s: analytic %.6g vs numeric %.6g (|difference| %.3g > tolerance %.3g = "
        "atol %g + rtol %g * |numeric|)"
        % (x.name, tuple(x_shape), y.name, y.name, y_index, x.name, x_index,
           theoretical[i, j], numerical[i, j], abs(theoretical[i, j] - numerical[i, j]),
           tolerance[i, j], atol, rtol))
