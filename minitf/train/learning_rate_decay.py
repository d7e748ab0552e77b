"""Learning-rate schedules: tensors computed from the global step.

A schedule is not a callback: ``exponential_decay(0.1, global_step, ...)``
adds a few ops that compute the rate *from the global step*, and the
optimizer takes that tensor as its learning rate.  Every ``sess.run(train_op)``
evaluates it anew, and ``minimize(..., global_step=global_step)`` advances
the step after the update, so the schedule moves on by itself::

    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, step, decay_steps=1000, decay_rate=0.96,
                                    staircase=True)
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)

Every rate is computed in the dtype of ``learning_rate`` (float32 for a
Python float), the step being cast to it.

Mirrors ``tensorflow/python/training/learning_rate_decay.py`` (the TF1
functions, which TF 1.14+ implements in ``legacy_learning_rate_decay.py``).
"""

import math

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import comparison_ops, constant_op, math_ops, random_ops, select_ops, unary_ops
from minitf.ops.math_util import op_scope


def _check_step(global_step, schedule):
    if global_step is None:
        raise ValueError("global_step is required for %s." % schedule)


def _rate_and_step(learning_rate, global_step, decay_steps):
    """``learning_rate`` as a tensor, and ``global_step / decay_steps`` in its dtype."""
    learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
    dtype = learning_rate.dtype
    step = unary_ops.cast(global_step, dtype)
    return learning_rate, step / unary_ops.cast(decay_steps, dtype)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """``learning_rate * decay_rate ** (global_step / decay_steps)``.

    Mirrors ``tf.train.exponential_decay``.

    Args:
        learning_rate: the initial rate (a float or scalar Tensor).
        global_step: the step (an integer Variable or Tensor).
        decay_steps: how many steps multiply the rate by ``decay_rate``.
        decay_rate: the factor per ``decay_steps``.
        staircase: use ``floor(global_step / decay_steps)``: the rate drops in steps.
        name: the name of the result (default scope ``ExponentialDecay``).

    Raises:
        ValueError: if ``global_step`` is None.

    Example:
        >>> lr = tf.train.exponential_decay(0.1, step, 100, 0.5, staircase=True)
        >>> # 0.1 for steps 0..99, 0.05 for 100..199, ...
    """
    _check_step(global_step, "exponential_decay")
    with op_scope(name, "ExponentialDecay",
                  [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        learning_rate, p = _rate_and_step(learning_rate, global_step, decay_steps)
        if staircase:
            p = unary_ops.floor(p)
        decay_rate = unary_ops.cast(decay_rate, learning_rate.dtype)
        return math_ops.multiply(learning_rate, math_ops.pow(decay_rate, p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``.

    Mirrors ``tf.train.natural_exp_decay``; ``staircase`` floors
    ``global_step / decay_steps``, as in :func:`exponential_decay`.
    """
    _check_step(global_step, "natural_exp_decay")
    with op_scope(name, "NaturalExpDecay",
                  [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        learning_rate, p = _rate_and_step(learning_rate, global_step, decay_steps)
        if staircase:
            p = unary_ops.floor(p)
        decay_rate = unary_ops.cast(decay_rate, learning_rate.dtype)
        exponent = unary_ops.exp(math_ops.multiply(unary_ops.negative(decay_rate), p))
        return math_ops.multiply(learning_rate, exponent, name=scope)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``.

    Mirrors ``tf.train.inverse_time_decay``; ``staircase`` floors
    ``global_step / decay_steps``.
    """
    _check_step(global_step, "inverse_time_decay")
    with op_scope(name, "InverseTimeDecay",
                  [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        learning_rate, p = _rate_and_step(learning_rate, global_step, decay_steps)
        if staircase:
            p = unary_ops.floor(p)
        decay_rate = unary_ops.cast(decay_rate, learning_rate.dtype)
        denominator = 1 + decay_rate * p
        return math_ops.truediv(learning_rate, denominator, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0,
                     cycle=False, name=None):
    """From ``learning_rate`` down to ``end_learning_rate`` in ``decay_steps`` steps.

    Mirrors ``tf.train.polynomial_decay``.

    ``(learning_rate - end) * (1 - step / decay_steps) ** power + end``, with
    ``step = min(global_step, decay_steps)``; with ``cycle=True`` the
    ``decay_steps`` grow to the next multiple of the step instead, so the
    rate jumps back up and decays again.
    """
    _check_step(global_step, "polynomial_decay")
    with op_scope(name, "PolynomialDecay",
                  [learning_rate, global_step, decay_steps, end_learning_rate, power]) as scope:
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        end_learning_rate = unary_ops.cast(end_learning_rate, dtype)
        power = unary_ops.cast(power, dtype)
        step = unary_ops.cast(global_step, dtype)
        decay_steps = unary_ops.cast(decay_steps, dtype)
        if cycle:
            # The first cycle also covers step 0 (ceil(0) would give 0 steps).
            multiplier = select_ops.where(
                comparison_ops.equal(step, 0), constant_op.constant(1.0, dtype=dtype),
                unary_ops.ceil(step / decay_steps))
            decay_steps = decay_steps * multiplier
        else:
            step = math_ops.minimum(step, decay_steps)
        p = step / decay_steps
        return math_ops.add(
            math_ops.multiply(learning_rate - end_learning_rate, math_ops.pow(1 - p, power)),
            end_learning_rate, name=scope)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """Half a cosine from ``learning_rate`` down to ``alpha * learning_rate``.

    Mirrors ``tf.train.cosine_decay``.

    ``learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * s / decay_steps)) + alpha)``
    with ``s = min(global_step, decay_steps)`` (Loshchilov & Hutter, 2017).
    """
    _check_step(global_step, "cosine_decay")
    with op_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        decay_steps = unary_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(unary_ops.cast(global_step, dtype), decay_steps)
        completed_fraction = step / decay_steps
        cosine_decayed = 0.5 * (1.0 + unary_ops.cos(
            constant_op.constant(math.pi, dtype=dtype) * completed_fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return math_ops.multiply(learning_rate, decayed, name=scope)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter, 2017).

    Mirrors ``tf.train.cosine_decay_restarts``.

    The rate follows :func:`cosine_decay` over ``first_decay_steps`` steps,
    then restarts; period ``i`` lasts ``first_decay_steps * t_mul ** i`` steps
    and starts from ``learning_rate * m_mul ** i``.  With ``f = global_step /
    first_decay_steps`` the restart count is ``i = floor(f)`` when
    ``t_mul == 1``, else ``i = floor(log(1 - f * (1 - t_mul)) / log(t_mul))``,
    and the fraction of period ``i`` done is ``(f - (1 - t_mul**i) / (1 -
    t_mul)) / t_mul**i``.

    Args:
        learning_rate: the initial rate (a float or scalar Tensor).
        global_step: the step (an integer Variable or Tensor).
        first_decay_steps: the length of the first period.
        t_mul: a Python number: how much longer each period is than the last.
        m_mul: how much lower each period starts than the last.
        alpha: the floor of the rate, a fraction of ``learning_rate``.
        name: the name of the result (default scope ``SGDRDecay``).
    """
    _check_step(global_step, "cosine_decay_restarts")
    with op_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        learning_rate, fraction = _rate_and_step(learning_rate, global_step, first_decay_steps)
        dtype = learning_rate.dtype
        if t_mul == 1.0:
            i_restart = unary_ops.floor(fraction)
            fraction = fraction - i_restart
        else:
            t_mul = constant_op.constant(t_mul, dtype=dtype)
            i_restart = unary_ops.floor(unary_ops.log(1.0 - fraction * (1.0 - t_mul))
                                        / unary_ops.log(t_mul))
            steps_before = (1.0 - math_ops.pow(t_mul, i_restart)) / (1.0 - t_mul)
            fraction = (fraction - steps_before) / math_ops.pow(t_mul, i_restart)
        m_fac = math_ops.pow(unary_ops.cast(m_mul, dtype), i_restart)
        cosine_decayed = 0.5 * m_fac * (1.0 + unary_ops.cos(
            constant_op.constant(math.pi, dtype=dtype) * fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return math_ops.multiply(learning_rate, decayed, name=scope)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """A cosine times a line falling to zero (Bello et al., 2017, "Neural
    Optimizer Search with Reinforcement Learning").

    Mirrors ``tf.train.linear_cosine_decay``.

    With ``s = min(global_step, decay_steps)``::

        linear = (decay_steps - s) / decay_steps
        cosine = 0.5 * (1 + cos(pi * 2 * num_periods * s / decay_steps))
        rate = learning_rate * ((alpha + linear) * cosine + beta)
    """
    _check_step(global_step, "linear_cosine_decay")
    with op_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        decay_steps = unary_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(unary_ops.cast(global_step, dtype), decay_steps)
        linear_decayed = (decay_steps - step) / decay_steps
        fraction = 2.0 * num_periods * step / decay_steps
        cosine_decayed = 0.5 * (1.0 + unary_ops.cos(
            constant_op.constant(math.pi, dtype=dtype) * fraction))
        decayed = (alpha + linear_decayed) * cosine_decayed + beta
        return math_ops.multiply(learning_rate, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """:func:`linear_cosine_decay` with Gaussian noise on its linear part.

    Mirrors ``tf.train.noisy_linear_cosine_decay``.  The noise, drawn anew on
    every run, has variance ``initial_variance / (1 + s) ** variance_decay``
    with ``s = min(global_step, decay_steps)``::

        rate = learning_rate * ((alpha + linear + noise) * cosine + beta)
    """
    _check_step(global_step, "noisy_linear_cosine_decay")
    with op_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:
        learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = learning_rate.dtype
        decay_steps = unary_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(unary_ops.cast(global_step, dtype), decay_steps)
        linear_decayed = (decay_steps - step) / decay_steps
        variance = initial_variance / math_ops.pow(1.0 + step, variance_decay)
        noisy_linear_decayed = linear_decayed + random_ops.random_normal(
            [], stddev=unary_ops.sqrt(variance), dtype=dtype)
        fraction = 2.0 * num_periods * step / decay_steps
        cosine_decayed = 0.5 * (1.0 + unary_ops.cos(
            constant_op.constant(math.pi, dtype=dtype) * fraction))
        decayed = (alpha + noisy_linear_decayed) * cosine_decayed + beta
        return math_ops.multiply(learning_rate, decayed, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """``values[i]`` while ``boundaries[i-1] < x <= boundaries[i]``.

    Mirrors ``tf.train.piecewise_constant``.

    Example: ``boundaries=[100, 200]``, ``values=[1.0, 0.5, 0.1]`` gives 1.0
    up to step 100, 0.5 for steps 101..200, then 0.1.

    TF builds this with ``tf.case``; here it is a chain of ``Select`` ops,
    from the last interval back to the first — the same value, since the
    intervals do not overlap.

    Args:
        x: the step (an integer or float scalar Tensor or Variable).
        boundaries: increasing values of ``x``'s dtype (Python ints are
            promoted when ``x`` is int64).
        values: one more value than boundaries, all of one dtype.
        name: the name scope (default ``PiecewiseConstant``).

    Raises:
        ValueError: if the lengths do not match, a boundary's dtype differs
            from ``x``'s, or the values' dtypes differ.
    """
    if len(boundaries) != len(values) - 1:
        raise ValueError(
            "The length of boundaries should be 1 less than the length of values")
    with op_scope(name, "PiecewiseConstant", [x, boundaries, values]):
        x = convert_to_tensor(x)
        boundaries = [_boundary(b, x) for b in boundaries]
        values = [convert_to_tensor(v) for v in values]
        for v in values[1:]:
            if v.dtype.base_dtype != values[0].dtype.base_dtype:
                raise ValueError("Values must have elements all with the same dtype (%s vs %s)."
                                 % (values[0].dtype.base_dtype, v.dtype.base_dtype))
        result = values[-1]
        for boundary, value in reversed(list(zip(boundaries, values[:-1]))):
            result = select_ops.where(comparison_ops.less_equal(x, boundary), value, result)
        return result


def _boundary(b, x):
    """A boundary as a tensor of ``x``'s dtype (int32 promotes to int64, nothing else)."""
    b = convert_to_tensor(b)
    dtype = x.dtype.base_dtype
    if b.dtype.base_dtype != dtype:
        if b.dtype.base_dtype == dtypes.int32 and dtype == dtypes.int64:
            return unary_ops.cast(b, dtype)
        raise ValueError("Boundaries (%s) must have the same dtype as x (%s)."
                         % (b.dtype.base_dtype, dtype))
    return b


__all__ = ["cosine_decay", "exponential_decay", "inverse_time_decay", "natural_exp_decay",
           "piecewise_constant", "polynomial_decay"]
