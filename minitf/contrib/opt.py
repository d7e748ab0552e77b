"""``tf.contrib.opt``: ``LazyAdamOptimizer``, Adam for large embedding tables.

TF1's :class:`~minitf.train.AdamOptimizer` applies a sparse gradient (the
``IndexedSlices`` of an ``embedding_lookup``) to *every* row: ``m`` and
``v`` decay everywhere and each row takes a step on its momentum, so a
100,000-word table costs a dense update per batch.  The lazy variant
updates only the rows the gradient names — their ``m``, ``v`` and value::

    m[rows]   = beta1 * m[rows] + (1 - beta1) * grad
    v[rows]   = beta2 * v[rows] + (1 - beta2) * grad**2
    var[rows] -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m[rows] / (sqrt(v[rows]) + epsilon)

(repeated rows of the gradient are added up first, as for every optimizer).
Rows not looked up keep their moments and value, which is not Adam's
mathematics but trains embeddings well and much faster.  Dense gradients
get plain Adam.

Mirrors ``tensorflow/contrib/opt/python/training/lazy_adam_optimizer.py``.
"""

from minitf.contrib.framework import missing
from minitf.ops import control_flow_ops, gather_ops, scatter_ops
from minitf.ops.unary_ops import cast, sqrt, square
from minitf.train.adam import AdamOptimizer


class LazyAdamOptimizer(AdamOptimizer):
    """Adam that updates only the rows a sparse gradient names
    (``tf.contrib.opt.LazyAdamOptimizer``; same arguments and slots as
    ``tf.train.AdamOptimizer``)."""

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = (cast(p, dtype) for p in self._get_beta_accumulators(var.graph))
        lr_t, beta1_t, beta2_t, epsilon_t = (
            cast(t, dtype) for t in (self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        lr = lr_t * sqrt(1 - beta2_power) / (1 - beta1_power)
        rows = grad.indices
        m = self.get_slot(var, "m")
        m_t = scatter_ops.scatter_update(
            m, rows, beta1_t * gather_ops.gather(m, rows) + (1 - beta1_t) * grad.values,
            use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_t = scatter_ops.scatter_update(
            v, rows, beta2_t * gather_ops.gather(v, rows) + (1 - beta2_t) * square(grad.values),
            use_locking=self._use_locking)
        m_rows = gather_ops.gather(m_t, rows)
        v_rows = gather_ops.gather(v_t, rows)
        var_update = scatter_ops.scatter_sub(var, rows, lr * m_rows / (sqrt(v_rows) + epsilon_t),
                                             use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)


def __getattr__(name):
    raise missing("tf.contrib.opt", name)


__all__ = ["LazyAdamOptimizer"]
