"""``tf.train.AdamOptimizer``: momentum plus per-coordinate scaling (Kingma & Ba, 2015).

Two zero slots per variable, ``m`` (``<var>/Adam``) and ``v``
(``<var>/Adam_1``), and two variables of the optimizer itself,
``beta1_power`` and ``beta2_power``, holding ``beta1**t`` and ``beta2**t``.
Step ``t`` runs one ``ApplyAdam`` op per variable::

    lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)
    m    = m + (grad - m) * (1 - beta1)
    v    = v + (grad**2 - v) * (1 - beta2)
    var -= lr_t * m / (sqrt(v) + epsilon)

and then, once every variable is updated, :meth:`AdamOptimizer._finish`
multiplies ``beta1_power`` by ``beta1`` and ``beta2_power`` by ``beta2``.
(``epsilon`` is added to ``sqrt(v)`` *after* the bias correction was folded
into ``lr_t``: the paper's "epsilon hat".)

A sparse gradient is *not* a row-only update in TF1's Adam: ``m`` and ``v``
decay in every row (``m = beta1 * m``), the gradient's rows are added with
``ScatterAdd``, and every row of the variable takes the step ``lr_t * m /
(sqrt(v) + epsilon)`` — so rows not looked up keep moving on their momentum.
(``tf.contrib.opt.LazyAdamOptimizer``, :mod:`minitf.contrib.opt`, touches
only the named rows.)

Mirrors ``tensorflow/python/training/adam.py``.
"""

from minitf.ops import control_flow_ops, scatter_ops, state_ops, training_ops
from minitf.ops.unary_ops import sqrt
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    """Adam (``tf.train.AdamOptimizer``).

    Args:
        learning_rate: a float, Tensor or callable.
        beta1: the decay of the first-moment estimate ``m``.
        beta2: the decay of the second-moment estimate ``v``.
        epsilon: added to ``sqrt(v)``.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.

    Example:
        >>> train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        >>> [v.name for v in opt.variables()]     # for variable w
        ['beta1_power:0', 'beta2_power:0', 'w/Adam:0', 'w/Adam_1:0']
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _get_beta_accumulators(self, graph=None):
        return (self._get_non_slot_variable("beta1_power", graph),
                self._get_non_slot_variable("beta2_power", graph))

    def _create_slots(self, var_list):
        # The powers live beside the (alphabetically) first variable, as in TF.
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = self._hyper_tensor(self._lr, "learning_rate")
        self._beta1_t = self._hyper_tensor(self._beta1, "beta1")
        self._beta2_t = self._hyper_tensor(self._beta2, "beta2")
        self._epsilon_t = self._hyper_tensor(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators(var.graph)
        return training_ops.apply_adam(
            var, self.get_slot(var, "m"), self.get_slot(var, "v"), cast(beta1_power, dtype),
            cast(beta2_power, dtype), cast(self._lr_t, dtype), cast(self._beta1_t, dtype),
            cast(self._beta2_t, dtype), cast(self._epsilon_t, dtype), grad,
            use_locking=self._use_locking).op

    def _apply_sparse(self, grad, var):
        """TF's ``_apply_sparse_shared``: dense decay of ``m`` and ``v``, a
        ``ScatterAdd`` of the gradient's rows into them, a dense step of ``var``."""
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = (cast(p, dtype) for p in self._get_beta_accumulators(var.graph))
        lr_t, beta1_t, beta2_t, epsilon_t = (
            cast(t, dtype) for t in (self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        lr = lr_t * sqrt(1 - beta2_power) / (1 - beta1_power)
        graph = var.graph
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = scatter_ops.scatter_add(m, grad.indices, grad.values * (1 - beta1_t),
                                          use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = scatter_ops.scatter_add(v, grad.indices,
                                          (grad.values * grad.values) * (1 - beta2_t),
                                          use_locking=self._use_locking)
        var_update = state_ops.assign_sub(var, lr * m_t / (sqrt(v_t) + epsilon_t),
                                          use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops, name_scope):
        """After all updates: ``beta1_power *= beta1``, ``beta2_power *= beta2``."""
        beta1_power, beta2_power = self._get_beta_accumulators()
        graph = beta1_power.graph
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                              use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(beta2_power * self._beta2_t,
                                              use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)


__all__ = ["AdamOptimizer"]
