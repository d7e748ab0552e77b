"""User-level gradient registration: ``tf.RegisterGradient`` and ``tf.NotDifferentiable``.

Plugins register gradients through the ``minitf_register_gradients`` hook; a
user script does it with these, at run time, into the same registry.  Combined
with ``Graph.gradient_override_map`` this is TF1's way to give an op a custom
gradient::

    @tf.RegisterGradient("ClippedIdentity")
    def _clipped(op, grad):
        return [tf.clip_by_value(grad, -1.0, 1.0)]

    with g.gradient_override_map({"Identity": "ClippedIdentity"}):
        y = tf.identity(x)
"""

from minitf.registry import get_registry


class RegisterGradient:
    """Decorator registering a gradient function under ``op_type``.

    Raises:
        KeyError: if a gradient is already registered under that name.
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        # Report where the gradient function is defined, not this wrapper.
        code = getattr(fn, "__code__", None)
        site = None if code is None else "%s:%d" % (code.co_filename, code.co_firstlineno)
        get_registry().register_gradient(self._op_type, fn, site=site)
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TF's name
    """Declares ``op_type`` not differentiable: its inputs get no gradient."""
    get_registry().register_gradient(op_type, None)


no_gradient = NotDifferentiable
