"""The optimizers' update ops: ``ApplyGradientDescent``, ``ApplyAdam``, ...

In TF1 an optimizer step is not a chain of small arithmetic ops: each
variable's whole update (``m``, ``v`` and ``var`` for Adam) is ONE fused op
whose kernel writes through the references of the variable and of its slots.
Every ``Apply*`` op here takes those references (inputs marked ``ref_inputs``),
the hyper-parameters as scalar tensors (so a learning rate may be a
placeholder or a decayed tensor) and the gradient, and outputs the variable's
reference, as TF does.  The update formulas live in the kernels
(``plugins/numpy_cpu/kernels/training.py``) and are written out in
``docs/concepts/optimizers.rst``.

The ops are stateful and have no gradient.  Shapes are checked when the op is
built: the hyper-parameters must be scalars, the slots and the gradient must
have the variable's shape (TF's ``ApplyGradientDescent`` shape function).

Mirrors ``tensorflow/core/ops/training_ops.cc`` and the generated
``gen_training_ops`` wrappers that ``tensorflow/python/training/*.py`` call.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _ref_of_var(op):
    return [op.inputs[0].dtype]


def _apply_op(name, inputs, scalars, extra_attrs=(), untyped=(), doc=""):
    """Declares an ``Apply*`` op.

    Args:
        name: the op type.
        inputs: input names in TF's order; ``var`` first.
        scalars: the inputs that must be scalars; the others (``var``, the
            slots and ``grad``) must all have one shape.
        extra_attrs: attrs besides ``use_locking`` (``use_nesterov``).
        untyped: inputs that need not share the variable's dtype (AdagradDA's
            int64 ``global_step``).
        doc: the one-line summary.
    """
    tensors = [i for i, n in enumerate(inputs) if n not in scalars]
    scalar_ids = [i for i, n in enumerate(inputs) if n in scalars]

    def shape_fn(op):
        for i in scalar_ids:
            try:
                op.inputs[i].shape.with_rank(0)
            except ValueError:
                raise ValueError("Shape must be rank 0 but is rank %s for '%s' (op: '%s'), "
                                 "input '%s' with shape %s." % (op.inputs[i].shape.ndims, op.name,
                                                                op.type, inputs[i],
                                                                op.inputs[i].shape)) from None
        shape = TensorShape(None)
        for i in tensors:
            try:
                shape = shape.merge_with(op.inputs[i].shape)
            except ValueError:
                raise ValueError("Shapes must be equal for '%s' (op: '%s'): input '%s' has shape "
                                 "%s, expected %s." % (op.name, op.type, inputs[i],
                                                       op.inputs[i].shape, shape)) from None
        return [shape]

    attrs = {"use_locking": False}
    attrs.update({attr: False for attr in extra_attrs})
    ref_inputs = tuple(i for i, n in enumerate(inputs) if n in _SLOT_NAMES)
    op_def = define_op(
        name, stacklevel=2, inputs=tuple(inputs), outputs=("out",), attrs=attrs,
        shape_fn=shape_fn, dtype_fn=_ref_of_var, type_constraint=dtypes.FLOATING,
        same_dtype_inputs=tuple(n for n in inputs if n not in untyped), stateful=True,
        ref_inputs=ref_inputs, doc=doc)
    not_differentiable(name)
    return op_def


# The inputs that are references: the variable and its slots.
_SLOT_NAMES = ("var", "accum", "accum_update", "m", "v", "ms", "mg", "mom", "linear",
               "gradient_accumulator", "gradient_squared_accumulator")

_gradient_descent = _apply_op(
    "ApplyGradientDescent", ("var", "alpha", "delta"), scalars=("alpha",),
    doc="var -= alpha * delta.")
_momentum = _apply_op(
    "ApplyMomentum", ("var", "accum", "lr", "grad", "momentum"), scalars=("lr", "momentum"),
    extra_attrs=("use_nesterov",),
    doc="accum = accum * momentum + grad; var -= lr * accum (Nesterov: see docs).")
_adagrad = _apply_op(
    "ApplyAdagrad", ("var", "accum", "lr", "grad"), scalars=("lr",),
    doc="accum += grad^2; var -= lr * grad / sqrt(accum).")
_adagrad_da = _apply_op(
    "ApplyAdagradDA",
    ("var", "gradient_accumulator", "gradient_squared_accumulator", "grad", "lr", "l1", "l2",
     "global_step"),
    scalars=("lr", "l1", "l2", "global_step"), untyped=("global_step",),
    doc="Adagrad dual averaging: var recomputed from the accumulated gradients.")
_adadelta = _apply_op(
    "ApplyAdadelta", ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad"),
    scalars=("lr", "rho", "epsilon"), doc="Adadelta: var -= lr * update.")
_adam = _apply_op(
    "ApplyAdam",
    ("var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
    scalars=("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"),
    extra_attrs=("use_nesterov",), doc="Adam: var -= lr_t * m / (sqrt(v) + epsilon).")
_rms_prop = _apply_op(
    "ApplyRMSProp", ("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"),
    scalars=("lr", "rho", "momentum", "epsilon"),
    doc="RMSProp: mom = mom * momentum + lr * grad / sqrt(ms + epsilon); var -= mom.")
_centered_rms_prop = _apply_op(
    "ApplyCenteredRMSProp",
    ("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"),
    scalars=("lr", "rho", "momentum", "epsilon"),
    doc="Centered RMSProp: normalizes by the estimated variance ms - mg^2.")
_ftrl = _apply_op(
    "ApplyFtrl", ("var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"),
    scalars=("lr", "l1", "l2", "lr_power"), doc="FTRL-Proximal.")
_ftrl_v2 = _apply_op(
    "ApplyFtrlV2",
    ("var", "accum", "linear", "grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"),
    scalars=("lr", "l1", "l2", "l2_shrinkage", "lr_power"),
    doc="FTRL-Proximal with an L2 shrinkage of the gradient.")


def _ref(x):
    """A Variable's reference tensor (``x`` itself when it is a tensor)."""
    return x._ref() if hasattr(x, "_ref") else x


def _apply(op_def, inputs, name, **attrs):
    """Adds ``op_def``; the variable and slot arguments may be Variables."""
    names = op_def.inputs
    inputs = [_ref(x) if i in op_def.ref_inputs else x for i, x in enumerate(inputs)]
    for i in op_def.ref_inputs:
        if not inputs[i].dtype.is_ref:
            raise TypeError("'%s' needs a variable reference for input '%s', got %r."
                            % (op_def.name, names[i], inputs[i]))
    return apply_op(op_def, inputs, attrs=attrs, name=name or op_def.name)


def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """``var -= alpha * delta``; returns ``var``'s reference."""
    return _apply(_gradient_descent, [var, alpha, delta], name, use_locking=use_locking)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """The momentum update (``tf.train.MomentumOptimizer``); returns ``var``'s reference."""
    return _apply(_momentum, [var, accum, lr, grad, momentum], name, use_locking=use_locking,
                  use_nesterov=use_nesterov)


def apply_adagrad(var, accum, lr, grad, use_locking=False, name=None):
    """The Adagrad update; returns ``var``'s reference."""
    return _apply(_adagrad, [var, accum, lr, grad], name, use_locking=use_locking)


def apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
                     global_step, use_locking=False, name=None):
    """The Adagrad dual-averaging update; returns ``var``'s reference."""
    return _apply(_adagrad_da, [var, gradient_accumulator, gradient_squared_accumulator, grad, lr,
                                l1, l2, global_step], name, use_locking=use_locking)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False,
                   name=None):
    """The Adadelta update; returns ``var``'s reference."""
    return _apply(_adadelta, [var, accum, accum_update, lr, rho, epsilon, grad], name,
                  use_locking=use_locking)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """The Adam update; returns ``var``'s reference.

    ``beta1_power``/``beta2_power`` are ``beta^t`` *values*: the optimizer
    multiplies its two accumulators by ``beta`` after all updates ran.
    """
    return _apply(_adam, [var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad],
                  name, use_locking=use_locking, use_nesterov=use_nesterov)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False, name=None):
    """The RMSProp update; returns ``var``'s reference."""
    return _apply(_rms_prop, [var, ms, mom, lr, rho, momentum, epsilon, grad], name,
                  use_locking=use_locking)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking=False, name=None):
    """The centered RMSProp update; returns ``var``'s reference."""
    return _apply(_centered_rms_prop, [var, mg, ms, mom, lr, rho, momentum, epsilon, grad], name,
                  use_locking=use_locking)


def apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, use_locking=False, name=None):
    """The FTRL-Proximal update; returns ``var``'s reference."""
    return _apply(_ftrl, [var, accum, linear, grad, lr, l1, l2, lr_power], name,
                  use_locking=use_locking)


def apply_ftrl_v2(var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power,
                  use_locking=False, name=None):
    """FTRL-Proximal with L2 shrinkage; returns ``var``'s reference."""
    return _apply(_ftrl_v2, [var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power], name,
                  use_locking=use_locking)
