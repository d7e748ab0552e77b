"""``tf.train.FtrlOptimizer``: FTRL-Proximal, the default of TF1's linear estimators.

"Follow the regularized leader" (McMahan et al., 2013) keeps, per
coordinate, the accumulated squared gradient ``accum`` (starts at
``initial_accumulator_value``, ``<var>/Ftrl``) and a ``linear`` term (zeros,
``<var>/Ftrl_1``), and recomputes the weight in closed form, giving exact
zeros under L1.  With ``p = -learning_rate_power`` (0.5 by default), one
``ApplyFtrl`` op per step::

    new_accum = accum + grad**2
    linear   += grad - (new_accum**p - accum**p) / lr * var
    quadratic = new_accum**p / lr + 2 * l2
    var       = (sign(linear) * l1 - linear) / quadratic  if |linear| > l1  else 0
    accum     = new_accum

With ``l2_shrinkage_regularization_strength > 0`` the op is ``ApplyFtrlV2``,
which adds ``2 * l2_shrinkage * var`` to the gradient in the ``linear`` update.
A sparse gradient recomputes only the rows it names (``SparseApplyFtrl``,
``SparseApplyFtrlV2``).

Mirrors ``tensorflow/python/training/ftrl.py`` (TF 1.15).
"""

from minitf.ops import training_ops
from minitf.ops.unary_ops import cast
from minitf.train.optimizer import Optimizer


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (``tf.train.FtrlOptimizer``).

    Args:
        learning_rate: a float or Tensor.
        learning_rate_power: <= 0; -0.5 is Adagrad-like decay.
        initial_accumulator_value: >= 0.
        l1_regularization_strength: >= 0.
        l2_regularization_strength: >= 0.
        use_locking: passed to the update ops.
        name: the name scope of the update ops and the slots' suffix.
        accum_name, linear_name: suffixes for the two slots (default: ``name``).
        l2_shrinkage_regularization_strength: >= 0; L2 on the weights that
            acts on the gradient (not the closed form).

    Raises:
        ValueError: for a value out of the ranges above.
    """

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0):
        super().__init__(use_locking, name)
        _check_range(initial_accumulator_value, "initial_accumulator_value", "positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero"
                             % learning_rate_power)
        _check_range(l1_regularization_strength, "l1_regularization_strength", "positive or zero")
        _check_range(l2_regularization_strength, "l2_regularization_strength", "positive or zero")
        _check_range(l2_shrinkage_regularization_strength, "l2_shrinkage_regularization_strength",
                     "positive or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name
        self._hyper = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._constant_slot(v, self._initial_accumulator_value, "accum",
                                self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._hyper = {
            "lr": self._hyper_tensor(self._learning_rate, "learning_rate"),
            "l1": self._hyper_tensor(self._l1_regularization_strength,
                                     "l1_regularization_strength"),
            "l2": self._hyper_tensor(self._l2_regularization_strength,
                                     "l2_regularization_strength"),
            "l2_shrinkage": self._hyper_tensor(self._l2_shrinkage_regularization_strength,
                                               "l2_shrinkage_regularization_strength"),
            "lr_power": self._hyper_tensor(self._learning_rate_power, "learning_rate_power"),
        }

    def _apply_dense(self, grad, var):
        h = {key: cast(t, var.dtype.base_dtype) for key, t in self._hyper.items()}
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        if self._l2_shrinkage_regularization_strength <= 0.0:
            return training_ops.apply_ftrl(var, accum, linear, grad, h["lr"], h["l1"], h["l2"],
                                           h["lr_power"], use_locking=self._use_locking)
        return training_ops.apply_ftrl_v2(var, accum, linear, grad, h["lr"], h["l1"], h["l2"],
                                          h["l2_shrinkage"], h["lr_power"],
                                          use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        h = {key: cast(t, var.dtype.base_dtype) for key, t in self._hyper.items()}
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        if self._l2_shrinkage_regularization_strength <= 0.0:
            return training_ops.sparse_apply_ftrl(
                var, accum, linear, grad.values, grad.indices, h["lr"], h["l1"], h["l2"],
                h["lr_power"], use_locking=self._use_locking)
        return training_ops.sparse_apply_ftrl_v2(
            var, accum, linear, grad.values, grad.indices, h["lr"], h["l1"], h["l2"],
            h["l2_shrinkage"], h["lr_power"], use_locking=self._use_locking)


def _check_range(value, name, what):
    if value < 0.0:
        raise ValueError("%s %f needs to be %s" % (name, value, what))


__all__ = ["FtrlOptimizer"]
