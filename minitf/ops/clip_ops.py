"""Clipping by norm: ``clip_by_norm``, ``global_norm``, ``clip_by_global_norm``.

Gradient clipping sits between the two halves of an optimizer step
(``compute_gradients`` and ``apply_gradients``); the usual pattern is::

    grads, variables = zip(*opt.compute_gradients(loss))
    grads, norm = tf.clip_by_global_norm(grads, 5.0)
    train_op = opt.apply_gradients(zip(grads, variables))

These are composites of existing ops (``L2Loss``, ``Sqrt``, ``Minimum``,
``Mul``...), built in TF's name scopes; they add no op types.

A gradient may be an ``IndexedSlices`` (the rows an embedding lookup read).
The norms are taken over its ``values`` — the rows as they are, a repeated
index counted once per row, as TF does — and the clipped result is again an
``IndexedSlices`` with the same indices: clipping never densifies.
(``clip_by_value`` is elementwise and lives in :mod:`minitf.ops.math_ops`.)

Mirrors ``tensorflow/python/ops/clip_ops.py``.
"""

import collections.abc

from minitf.framework import dtypes
from minitf.framework.indexed_slices import IndexedSlices
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops, constant_op, joining_ops, math_ops, softmax_ops
from minitf.ops import reduction_ops, select_ops, unary_ops
from minitf.ops.math_util import op_scope


def _check_sequence(t_list):
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError("`t_list` should be a sequence of tensors. Received %s."
                        % type(t_list))
    return list(t_list)


def _values(t, name):
    """``t`` as a Tensor; the values of an IndexedSlices."""
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(t, values):
    """``values`` in the place of ``t``'s: an IndexedSlices with ``t``'s rows if
    ``t`` is one, else ``values`` itself."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def _convert_list(t_list):
    """Converts the non-None members (named ``t_0``, ``t_1``... as in TF)."""
    return [None if t is None else _values(t, "t_%d" % i) for i, t in enumerate(t_list)]


def global_norm(t_list, name=None):
    """``sqrt(sum(l2norm(t)**2 for t in t_list))``, skipping None (``tf.global_norm``).

    Args:
        t_list: a sequence of Tensors or IndexedSlices (or None).
        name: the op name (default ``global_norm``).

    Returns:
        A scalar Tensor, computed as ``sqrt(2 * sum(L2Loss(t)))``.

    Raises:
        TypeError: if ``t_list`` is not a sequence.
    """
    t_list = _check_sequence(t_list)
    with op_scope(name, "global_norm", t_list):
        values = [v for v in _convert_list(t_list) if v is not None]
        half_squared_norms = [softmax_ops.l2_loss(v) for v in values]
        half_squared_norm = reduction_ops.reduce_sum(joining_ops.stack(half_squared_norms))
        two = constant_op.constant(2.0, dtype=half_squared_norm.dtype)
        return unary_ops.sqrt(half_squared_norm * two, name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales all of ``t_list`` by one factor so that their global norm is at most ``clip_norm``.

    Each ``t`` becomes ``t * clip_norm / max(global_norm, clip_norm)``: nothing
    changes when the global norm is already small enough, and the direction of
    the whole update is kept (Pascanu et al., 2012).  If the norm is inf or
    NaN every output is NaN, as in TF.

    Args:
        t_list: a sequence of Tensors or IndexedSlices (None entries stay None).
        clip_norm: a positive scalar.
        use_norm: a precomputed global norm (default: :func:`global_norm`).
        name: the name scope (default ``clip_by_global_norm``).

    Returns:
        ``(clipped list, global norm)``; an IndexedSlices is clipped to one.

    Raises:
        TypeError: if ``t_list`` is not a sequence.

    Example:
        >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)
        >>> sess.run(clipped)      # the norm was 5
        [array([0.6], dtype=float32), array([0.8], dtype=float32)]
    """
    t_list = _check_sequence(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    with op_scope(name, "clip_by_global_norm", t_list + [clip_norm]) as scope:
        one = constant_op.constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm, one / clip_norm)
        # A no-op for a finite norm; makes the scale NaN for an inf or NaN norm.
        scale = scale_for_finite + (use_norm - use_norm)
        clipped = []
        for i, v in enumerate(_convert_list(t_list)):
            if v is None:
                clipped.append(None)
                continue
            with v.graph.colocate_with(v.op):
                clipped.append(_like(t_list[i], array_ops.identity(
                    v * unary_ops.cast(scale, v.dtype), name="%s_%d" % (scope, i))))
    return clipped, use_norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescales ``t`` so that its L2 norm (over ``axes``) is at most ``clip_norm``.

    Mirrors ``tf.clip_by_norm``: ``t * clip_norm / max(l2norm(t), clip_norm)``;
    a zero ``t`` stays zero (and has a finite gradient, thanks to TF's
    two-``where`` trick).  An IndexedSlices is clipped by the norm of its
    values and returned as one.

    Raises:
        ValueError: if ``clip_norm`` would broadcast ``t`` to another shape.
    """
    with op_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        l2sum_safe = select_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = select_ops.where(pred, unary_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values.shape.assert_is_compatible_with(intermediate.shape)
        return _like(t, array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm),
                                           name=scope))


def clip_by_average_norm(t, clip_norm, name=None):
    """Clips ``t`` so that its L2 norm divided by its size is at most ``clip_norm``.

    ``t * clip_norm * min(size(t) / l2norm(t), 1 / clip_norm)``
    (``tf.clip_by_average_norm``).
    """
    with op_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n_element = unary_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = unary_ops.rsqrt(reduction_ops.reduce_sum(t * t))
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element,
                                             constant_op.constant(1.0) / clip_norm),
            name=scope)


__all__ = ["clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "global_norm"]
