"""``tf.train.ProximalAdagradOptimizer``: Adagrad's step sizes, FOBOS's L1/L2.

One slot per variable, ``accumulator`` (``<var>/ProximalAdagrad``), starting
at ``initial_accumulator_value``; one ``ApplyProximalAdagrad`` op per step::

    accum += grad ** 2
    rate   = lr / sqrt(accum)                    # Adagrad's per-coordinate rate
    prox   = var - rate * grad
    var    = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)

(without the ``max`` when ``l1 == 0``): the proximal step of
:mod:`~minitf.train.proximal_gradient_descent`, with each coordinate's own
rate (Duchi et al., 2011).  A sparse gradient updates the rows it names
(``SparseApplyProximalAdagrad``), after the rows of a repeated index are
summed.

Mirrors ``tensorflow/python/training/proximal_adagrad.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class ProximalAdagradOptimizer(Optimizer):
    """Proximal Adagrad (``tf.train.ProximalAdagradOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        initial_accumulator_value: the accumulators' start value; must be positive.
        l1_regularization_strength: a float >= 0.
        l2_regularization_strength: a float >= 0.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.

    Raises:
        ValueError: if ``initial_accumulator_value`` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._hyper = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._constant_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._hyper = [
            self._hyper_tensor(self._learning_rate, "learning_rate"),
            self._hyper_tensor(self._l1_regularization_strength, "l1_regularization_strength"),
            self._hyper_tensor(self._l2_regularization_strength, "l2_regularization_strength")]

    def _hyper_as(self, var):
        return [cast(t, var.dtype.base_dtype) for t in self._hyper]

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyper_as(var), grad,
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_adagrad(
            var, self.get_slot(var, "accumulator"), *self._hyper_as(var), grad.values,
            grad.indices, use_locking=self._use_locking).op


__all__ = ["ProximalAdagradOptimizer"]
