"""``tf.train.AdagradOptimizer``: per-coordinate learning rates from summed squares.

Each variable gets one slot, ``accumulator`` (``<var>/Adagrad``), starting at
``initial_accumulator_value``; one ``ApplyAdagrad`` op per step::

    accum += grad ** 2
    var   -= lr * grad / sqrt(accum)

Coordinates that have seen large gradients take smaller steps (Duchi et al.,
2011).  A sparse gradient updates the rows it names (``SparseApplyAdagrad``),
after the rows of a repeated index are summed.

Mirrors ``tensorflow/python/training/adagrad.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    """Adagrad (``tf.train.AdagradOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        initial_accumulator_value: the accumulators' start value; must be positive.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.

    Raises:
        ValueError: if ``initial_accumulator_value`` is not positive.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._constant_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast(self._learning_rate_tensor, var.dtype.base_dtype), grad,
            use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_adagrad(
            var, self.get_slot(var, "accumulator"),
            cast(self._learning_rate_tensor, var.dtype.base_dtype), grad.values, grad.indices,
            use_locking=self._use_locking)


__all__ = ["AdagradOptimizer"]
