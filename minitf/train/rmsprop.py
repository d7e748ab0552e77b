"""``tf.train.RMSPropOptimizer``: divide by a running RMS of the gradient (Hinton).

Slots per variable: ``rms`` (starts at ONE, ``<var>/RMSProp``), ``mg`` when
centered (zeros) and ``momentum`` (zeros).  One op per variable and step,
``ApplyRMSProp``::

    ms   = ms + (grad**2 - ms) * (1 - decay)
    mom  = mom * momentum + lr * grad / sqrt(ms + epsilon)
    var -= mom

or, with ``centered=True``, ``ApplyCenteredRMSProp``, which also tracks the
mean gradient and normalizes by the estimated variance::

    mg   = mg + (grad - mg) * (1 - decay)
    mom  = mom * momentum + lr * grad / sqrt(ms - mg**2 + epsilon)

A sparse gradient updates only the rows it names (``SparseApplyRMSProp``,
``SparseApplyCenteredRMSProp``): elsewhere ``ms`` does not decay and the
momentum does not carry the variable on.

Mirrors ``tensorflow/python/training/rmsprop.py``.
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    """RMSProp (``tf.train.RMSPropOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        decay: the discount of the running mean square (TF's ``rho``).
        momentum: the momentum of the step (0: none).
        epsilon: added inside the square root.
        use_locking: passed to the update ops.
        centered: normalize by the variance rather than the second moment.
        name: the name scope of the update ops and the slots' suffix.
    """

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered
        self._learning_rate_tensor = self._decay_tensor = None
        self._momentum_tensor = self._epsilon_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._constant_slot(v, 1.0, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._decay_tensor = self._hyper_tensor(self._decay, "decay")
        self._momentum_tensor = self._hyper_tensor(self._momentum, "momentum")
        self._epsilon_tensor = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        hyper = [cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                          self._momentum_tensor, self._epsilon_tensor)]
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *hyper, grad,
                use_locking=self._use_locking).op
        return training_ops.apply_rms_prop(var, rms, mom, *hyper, grad,
                                           use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        hyper = [cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                          self._momentum_tensor, self._epsilon_tensor)]
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.sparse_apply_centered_rms_prop(
                var, self.get_slot(var, "mg"), rms, mom, *hyper, grad.values, grad.indices,
                use_locking=self._use_locking)
        return training_ops.sparse_apply_rms_prop(var, rms, mom, *hyper, grad.values,
                                                  grad.indices, use_locking=self._use_locking)


__all__ = ["RMSPropOptimizer"]
