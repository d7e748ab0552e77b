"""``tf.train.GradientDescentOptimizer``: ``var -= learning_rate * grad``.

The simplest optimizer: no slots, one ``ApplyGradientDescent`` op per
variable.  A sparse gradient (``IndexedSlices``) is ``ScatterSub`` of
``learning_rate * grad.values`` at ``grad.indices``: only those rows move,
and a row named twice simply gets both steps, so no summing is needed.

The learning rate may be a Python number, a Tensor (a placeholder fed each
step, or a schedule from :mod:`minitf.train.learning_rate_decay`) or a
callable returning one.

Example:
    >>> train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

Mirrors ``tensorflow/python/training/gradient_descent.py``.
"""

from minitf.ops import scatter_ops, training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent (``tf.train.GradientDescentOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        use_locking: passed to the update ops.
        name: the name scope of the update ops.
    """

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var, cast(self._learning_rate_tensor, var.dtype.base_dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad, var):
        """``var[indices] -= lr * values``; repeated indices subtract twice, as they should."""
        delta = grad.values * cast(self._learning_rate_tensor, var.dtype.base_dtype)
        return scatter_ops.scatter_sub(var, grad.indices, delta,
                                       use_locking=self._use_locking).op


__all__ = ["GradientDescentOptimizer"]
