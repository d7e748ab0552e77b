"""The global step: the graph's count of training steps taken.

TF1 programs keep one scalar ``int64`` variable named ``global_step`` in the
``GraphKeys.GLOBAL_STEP`` collection.  ``optimizer.minimize(loss,
global_step=...)`` adds 1 to it after every update, learning-rate schedules
(:mod:`minitf.train.learning_rate_decay`) read it, and Estimators and
checkpoints number their work by it.

Example:
    >>> step = tf.train.get_or_create_global_step()
    >>> step.name
    'global_step:0'

Mirrors ``tensorflow/python/training/training_util.py``.
"""

from minitf.framework import dtypes
from minitf.framework import graph as graph_lib
from minitf.framework.graph import GraphKeys
from minitf.framework.tensor import Tensor
from minitf.ops import init_ops
from minitf.ops import variable_scope
from minitf.ops.variables import Variable


def global_step(sess, global_step_tensor):
    """The value of ``global_step_tensor`` in ``sess``, as a Python int (``tf.train.global_step``).

    Args:
        sess: a Session.
        global_step_tensor: the global step Variable or Tensor (or its name).
    """
    return int(sess.run(global_step_tensor))


def get_global_step(graph=None):
    """The global step of ``graph`` (default graph), or None (``tf.train.get_global_step``).

    It is the one member of ``GraphKeys.GLOBAL_STEP``, else the tensor named
    ``global_step:0``.

    Raises:
        TypeError: if the found tensor is not an integer scalar.
    """
    graph = graph or graph_lib.get_default_graph()
    candidates = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(candidates) > 1:
        return None  # TF logs "Multiple tensors in global_step collection." and gives up
    if candidates:
        step = candidates[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Creates the global step variable of ``graph`` (``tf.train.create_global_step``).

    It is ``tf.get_variable("global_step", [], tf.int64, zeros)``, not
    trainable, in ``GLOBAL_VARIABLES`` and ``GLOBAL_STEP``.

    Raises:
        ValueError: if the graph already has a global step.
    """
    graph = graph or graph_lib.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step of ``graph``, created if missing (``tf.train.get_or_create_global_step``)."""
    graph = graph or graph_lib.get_default_graph()
    step = get_global_step(graph)
    return create_global_step(graph) if step is None else step


def assert_global_step(global_step_tensor):
    """Checks that ``global_step_tensor`` can serve as a global step.

    Raises:
        TypeError: if it is not a Variable or Tensor, not an integer, or not a scalar.
    """
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError('Existing "global_step" must be a Variable or Tensor: %s.'
                        % global_step_tensor)
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError('Existing "global_step" does not have integer type: %s'
                        % global_step_tensor.dtype)
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError('Existing "global_step" is not scalar: %s' % shape)
