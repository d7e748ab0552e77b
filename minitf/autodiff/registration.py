"""User-level gradient registration: ``tf.RegisterGradient`` and ``tf.NotDifferentiable``.

A user script registers a gradient with these, at run time, into the one
registry that holds every gradient — the core's (declared next to each op with
``@gradient``, see :mod:`minitf.ops.op_def_library`) and the plugins' (the
``minitf_register_gradients`` hook).  The registry records where each was
defined and refuses a second registration of a name, naming both sites.
Combined with ``Graph.gradient_override_map`` this is TF1's way to give an op
a custom gradient::

    @tf.RegisterGradient("ClippedIdentity")
    def _clipped(op, grad):
        return [tf.clip_by_value(grad, -1.0, 1.0)]

    with g.gradient_override_map({"Identity": "ClippedIdentity"}):
        y = tf.identity(x)
"""

import sys

from minitf.registry import get_registry


class RegisterGradient:
    """Decorator registering a gradient function under ``op_type``.

    Raises:
        KeyError: if a gradient is already registered under that name, naming
            where both were defined.
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        get_registry().register_gradient(self._op_type, fn)
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TF's name
    """Declares ``op_type`` not differentiable: its inputs get no gradient.

    Raises:
        KeyError: if ``op_type`` already has a gradient, naming both sites.
    """
    caller = sys._getframe(1)
    site = "%s:%d" % (caller.f_code.co_filename, caller.f_lineno)
    get_registry().register_gradient(op_type, None, site=site)


no_gradient = NotDifferentiable
