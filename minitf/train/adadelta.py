"""``tf.train.AdadeltaOptimizer``: step sizes from running averages (Zeiler, 2012).

Two zero slots per variable, ``accum`` (running mean of ``grad**2``) and
``accum_update`` (running mean of ``update**2``); one ``ApplyAdadelta`` op
per step::

    accum        = rho * accum + (1 - rho) * grad ** 2
    update       = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
    var         -= lr * update
    accum_update = rho * accum_update + (1 - rho) * update ** 2

A sparse gradient updates the rows it names (``SparseApplyAdadelta``).

Mirrors ``tensorflow/python/training/adadelta.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    """Adadelta (``tf.train.AdadeltaOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable (the paper uses 1.0).
        rho: the decay rate of the running averages.
        epsilon: keeps the square roots away from zero.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.
    """

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon
        self._lr_t = self._rho_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = self._hyper_tensor(self._lr, "lr")
        self._rho_t = self._hyper_tensor(self._rho, "rho")
        self._epsilon_t = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.apply_adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            cast(self._lr_t, dtype), cast(self._rho_t, dtype), cast(self._epsilon_t, dtype),
            grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.sparse_apply_adadelta(
            var, self.get_slot(var, "accum"), self.get_slot(var, "accum_update"),
            cast(self._lr_t, dtype), cast(self._rho_t, dtype), cast(self._epsilon_t, dtype),
            grad.values, grad.indices, use_locking=self._use_locking)


__all__ = ["AdadeltaOptimizer"]
