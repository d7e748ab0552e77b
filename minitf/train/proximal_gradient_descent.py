"""``tf.train.ProximalGradientDescentOptimizer``: gradient descent with L1/L2 by FOBOS.

A plain gradient step followed by the *proximal* step of the regularizer
``l1 * |w| + l2 / 2 * w**2`` (forward-backward splitting, Duchi & Singer,
2009), in one ``ApplyProximalGradientDescent`` op per variable::

    prox = var - lr * grad
    var  = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)

(without the ``max`` when ``l1 == 0``).  The L1 part sets a weight whose
step lands within ``lr * l1`` of zero to exactly zero: the model becomes
sparse, which adding ``l1 * |w|`` to the loss never does.  No slots.

A sparse gradient (``IndexedSlices``) applies the same to the rows it names
(``SparseApplyProximalGradientDescent``); other rows are not shrunk.

Mirrors ``tensorflow/python/training/proximal_gradient_descent.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class ProximalGradientDescentOptimizer(Optimizer):
    """Proximal gradient descent (``tf.train.ProximalGradientDescentOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        l1_regularization_strength: a float >= 0.
        l2_regularization_strength: a float >= 0.
        use_locking: passed to the update ops.
        name: the name scope of the update ops.

    Example:
        >>> opt = tf.train.ProximalGradientDescentOptimizer(
        ...     0.1, l1_regularization_strength=0.01)
        >>> train = opt.minimize(loss)     # small weights become exactly 0
    """

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._hyper = None

    def _prepare(self):
        self._hyper = [
            self._hyper_tensor(self._learning_rate, "learning_rate"),
            self._hyper_tensor(self._l1_regularization_strength, "l1_regularization_strength"),
            self._hyper_tensor(self._l2_regularization_strength, "l2_regularization_strength")]

    def _hyper_as(self, var):
        return [cast(t, var.dtype.base_dtype) for t in self._hyper]

    def _apply_dense(self, grad, var):
        return training_ops.apply_proximal_gradient_descent(
            var, *self._hyper_as(var), grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        return training_ops.sparse_apply_proximal_gradient_descent(
            var, *self._hyper_as(var), grad.values, grad.indices,
            use_locking=self._use_locking).op


__all__ = ["ProximalGradientDescentOptimizer"]
