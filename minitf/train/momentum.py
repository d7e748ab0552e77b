"""``tf.train.MomentumOptimizer``: gradient descent with a velocity.

Each variable gets one slot, ``accumulation`` (named ``<var>/Momentum``),
and one ``ApplyMomentum`` op per step::

    accum = accum * momentum + grad
    var  -= lr * accum                              # classical momentum
    var  -= lr * grad + lr * momentum * accum       # use_nesterov=True

A sparse gradient updates the rows it names with ``SparseApplyMomentum``:
the other rows keep their velocity (it does not decay) and do not move.

Mirrors ``tensorflow/python/training/momentum.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    """Momentum (``tf.train.MomentumOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        momentum: a float, Tensor or callable (0.9 is usual).
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.
        use_nesterov: use Nesterov's accelerated gradient (Sutskever et al., 2013).

    Example:
        >>> opt = tf.train.MomentumOptimizer(0.01, momentum=0.9, use_nesterov=True)
        >>> opt.get_slot_names()   # after minimize
        ['momentum']
    """

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov
        self._learning_rate_tensor = None
        self._momentum_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._hyper_tensor(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.apply_momentum(
            var, self.get_slot(var, "momentum"), cast(self._learning_rate_tensor, dtype), grad,
            cast(self._momentum_tensor, dtype), use_locking=self._use_locking,
            use_nesterov=self._use_nesterov).op

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.sparse_apply_momentum(
            var, self.get_slot(var, "momentum"), cast(self._learning_rate_tensor, dtype),
            grad.values, grad.indices, cast(self._momentum_tensor, dtype),
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op


__all__ = ["MomentumOptimizer"]
