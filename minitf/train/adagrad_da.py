"""``tf.train.AdagradDAOptimizer``: Adagrad dual averaging, for sparse linear models.

Instead of stepping from the current value, dual averaging recomputes the
variable from the *sums* of all gradients seen so far (Duchi et al., 2011),
which with ``l1_regularization_strength`` gives exact zeros.  Two slots per
variable, ``gradient_accumulator`` (zeros) and
``gradient_squared_accumulator`` (``initial_gradient_squared_accumulator_value``);
one ``ApplyAdagradDA`` op per step, with ``t = global_step + 1``::

    g_acc  += grad
    gg_acc += grad ** 2
    var = -lr * sign(g_acc) * max(|g_acc| - l1 * t, 0) / (l2 * t * lr + sqrt(gg_acc))

(with ``l1 = 0`` the numerator is simply ``-lr * g_acc``).  The optimizer
reads the global step but, as in TF, only ``minimize(..., global_step=...)``
increments it.  A sparse gradient recomputes only the rows it names
(``SparseApplyAdagradDA``).

Mirrors ``tensorflow/python/training/adagrad_da.py``.
"""

from minitf.ops import array_ops, training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (``tf.train.AdagradDAOptimizer``).

    Args:
        learning_rate: a float or Tensor.
        global_step: the int64 global step Variable (the step count ``t``).
        initial_gradient_squared_accumulator_value: must be positive.
        l1_regularization_strength: a float >= 0.
        l2_regularization_strength: a float >= 0.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.

    Raises:
        ValueError: if the initial accumulator value is not positive.
    """

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: %s"
                             % initial_gradient_squared_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value)
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._learning_rate_tensor = None
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._constant_slot(v, 0.0, "gradient_accumulator", self._name)
            self._constant_slot(v, self._initial_gradient_squared_accumulator_value,
                                "gradient_squared_accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._global_step_on_worker = array_ops.identity(self._global_step) + 1

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.apply_adagrad_da(
            var, self.get_slot(var, "gradient_accumulator"),
            self.get_slot(var, "gradient_squared_accumulator"), grad,
            cast(self._learning_rate_tensor, dtype),
            cast(self._l1_regularization_strength, dtype),
            cast(self._l2_regularization_strength, dtype),
            array_ops.identity(self._global_step_on_worker), use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        return training_ops.sparse_apply_adagrad_da(
            var, self.get_slot(var, "gradient_accumulator"),
            self.get_slot(var, "gradient_squared_accumulator"), grad.values, grad.indices,
            cast(self._learning_rate_tensor, dtype),
            cast(self._l1_regularization_strength, dtype),
            cast(self._l2_regularization_strength, dtype),
            array_ops.identity(self._global_step_on_worker), use_locking=self._use_locking)


__all__ = ["AdagradDAOptimizer"]
