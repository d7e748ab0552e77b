"""Choosing a canned estimator's optimizer by name, instance or factory.

``DNNClassifier(optimizer="Adagrad")`` names an optimizer class; the
estimator then builds it with its own default learning rate (0.05 for DNNs,
0.2 for linear models, as in TF1).  An optimizer instance is used as is; a
function is called in the estimator's graph to make one, which is how a
learning-rate schedule reads that graph's global step::

    optimizer=lambda: tf.train.AdamOptimizer(
        tf.train.exponential_decay(0.01, tf.train.get_global_step(), 1000, 0.9))

Mirrors ``tensorflow_estimator/python/estimator/canned/optimizers.py``.
"""

from minitf.train.adagrad import AdagradOptimizer
from minitf.train.adam import AdamOptimizer
from minitf.train.ftrl import FtrlOptimizer
from minitf.train.gradient_descent import GradientDescentOptimizer
from minitf.train.optimizer import Optimizer
from minitf.train.rmsprop import RMSPropOptimizer

_OPTIMIZER_CLS_NAMES = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}


def get_optimizer_instance(opt, learning_rate=None):
    """The optimizer ``opt`` names, is, or makes.

    Args:
        opt: a name in ``("Adagrad", "Adam", "Ftrl", "RMSProp", "SGD")``, a
            ``tf.train.Optimizer``, or a function returning one.
        learning_rate: the learning rate when ``opt`` is a name.

    Returns:
        A ``tf.train.Optimizer``.

    Raises:
        ValueError: for an unknown name, a name without ``learning_rate``, or
            something that is not an optimizer.
    """
    if isinstance(opt, str):
        if opt not in _OPTIMIZER_CLS_NAMES:
            raise ValueError("Unsupported optimizer name: %s. Supported names are: %s"
                             % (opt, tuple(sorted(_OPTIMIZER_CLS_NAMES))))
        if not learning_rate:
            raise ValueError("learning_rate must be specified when opt is string.")
        return _OPTIMIZER_CLS_NAMES[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError("The given object is not an Optimizer instance. Given: %s" % (opt,))
    return opt
