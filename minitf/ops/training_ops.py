"""The optimizers' update ops: ``ApplyGradientDescent``, ``ApplyAdam``, ...

In TF1 an optimizer step is not a chain of small arithmetic ops: each
variable's whole update (``m``, ``v`` and ``var`` for Adam) is ONE fused op
whose kernel writes through the references of the variable and of its slots.
Every ``Apply*`` op here takes those references (inputs marked ``ref_inputs``),
the hyper-parameters as scalar tensors (so a learning rate may be a
placeholder or a decayed tensor) and the gradient, and outputs the variable's
reference, as TF does.

Each ``SparseApply*`` op is its ``Apply*`` op for an ``IndexedSlices``
gradient: ``grad`` holds rows and ``indices`` (int32/int64, one per row) says
which rows of the variable and of its slots they update.  The update of row
``indices[i]`` is the dense formula applied to that row with ``grad[i]``;
every other row, of the variable and of its slots, is left exactly as it
was.  The optimizers sum duplicate indices first (``Optimizer.
_apply_sparse_duplicate_indices``); given duplicates, the kernel applies the
rows one after another.  The update formulas live in the kernels
(``plugins/numpy_cpu/kernels/training.py``) and are written out in
``docs/concepts/optimizers.rst``.

The ops are stateful and have no gradient.  Shapes are checked when the op is
built: the hyper-parameters must be scalars, the slots and the gradient must
have the variable's shape (TF's ``ApplyGradientDescent`` shape function); a
sparse gradient must have one row per index and the variable's row shape
(TF's ``HandleGradAndIndicesInputs``).

Mirrors ``tensorflow/core/ops/training_ops.cc`` and the generated
``gen_training_ops`` wrappers that ``tensorflow/python/training/*.py`` call.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.array_util import check_dtype
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def _apply_op(name, inputs, scalars, extra_attrs=(), untyped=(), doc=""):
    """Declares an ``Apply*`` op, or a ``SparseApply*`` op if ``inputs`` has ``indices``.

    Args:
        name: the op type.
        inputs: input names in TF's order; ``var`` first.
        scalars: the inputs that must be scalars; the others (``var``, the
            slots and ``grad``) must all have one shape, except that a sparse
            ``grad`` has one row per index.
        extra_attrs: attrs besides ``use_locking`` (``use_nesterov``).
        untyped: inputs that need not share the variable's dtype (AdagradDA's
            int64 ``global_step``).
        doc: the one-line summary.
    """
    sparse = "indices" in inputs
    dense_inputs = [n for n in inputs if n not in scalars and n != "indices"
                    and not (sparse and n == "grad")]

    def shape_fn(op):
        shapes = dict(zip(inputs, (t.shape for t in op.inputs)))
        for n in scalars:
            _check_rank(op, n, shapes[n], 0)
        shape = TensorShape(None)
        for n in dense_inputs:
            shape = _merge(op, n, shapes[n], shape)
        if sparse:
            shape = _merge_sparse_grad(op, shapes["grad"], shapes["indices"], shape)
        return [shape]

    def dtype_fn(op):
        if sparse:
            check_dtype(op, inputs.index("indices"), "indices")
        return [op.inputs[0].dtype]

    attrs = {"use_locking": False}
    attrs.update({attr: False for attr in extra_attrs})
    ref_inputs = tuple(i for i, n in enumerate(inputs) if n in _SLOT_NAMES)
    op_def = define_op(
        name, stacklevel=2, inputs=tuple(inputs), outputs=("out",), attrs=attrs,
        shape_fn=shape_fn, dtype_fn=dtype_fn, type_constraint=dtypes.FLOATING,
        same_dtype_inputs=tuple(n for n in inputs if n not in untyped and n != "indices"),
        stateful=True, ref_inputs=ref_inputs, doc=doc)
    not_differentiable(name)
    return op_def


def _check_rank(op, input_name, shape, rank):
    try:
        shape.with_rank(rank)
    except ValueError:
        raise ValueError("Shape must be rank %d but is rank %s for '%s' (op: '%s'), input '%s' "
                         "with shape %s." % (rank, shape.ndims, op.name, op.type, input_name,
                                             shape)) from None


def _merge(op, input_name, shape, expected):
    try:
        return expected.merge_with(shape)
    except ValueError:
        raise ValueError("Shapes must be equal for '%s' (op: '%s'): input '%s' has shape %s, "
                         "expected %s." % (op.name, op.type, input_name, shape,
                                           expected)) from None


def _merge_sparse_grad(op, grad, indices, shape):
    """``indices`` is a vector with one entry per row of ``grad``; ``grad``'s
    rows have the shape of the variable's rows."""
    _check_rank(op, "indices", indices, 1)
    if grad.ndims is not None and grad.ndims > 0:
        rows, index_count = grad[0].value, indices[0].value
        if rows is not None and index_count is not None and rows != index_count:
            raise ValueError("Dimensions must be equal, but are %d and %d: grad needs one row "
                             "per index" % (index_count, rows))
        grad = TensorShape([None] + grad.as_list()[1:])
    elif grad.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0 (input 'grad')")
    return _merge(op, "grad", grad, shape)


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


_proximal_gradient_descent = _apply_op(
    "ApplyProximalGradientDescent", ("var", "alpha", "l1", "l2", "delta"),
    scalars=("alpha", "l1", "l2"),
    doc="FOBOS: var = prox(var - alpha * delta) with L1 shrinkage and L2 scaling.")
_proximal_adagrad = _apply_op(
    "ApplyProximalAdagrad", ("var", "accum", "lr", "l1", "l2", "grad"),
    scalars=("lr", "l1", "l2"),
    doc="FOBOS with Adagrad's learning rate lr / sqrt(accum).")

# ---- the SparseApply* ops: the same updates, of the rows named by indices only --------------
_sparse_proximal_gradient_descent = _apply_op(
    "SparseApplyProximalGradientDescent", ("var", "alpha", "l1", "l2", "grad", "indices"),
    scalars=("alpha", "l1", "l2"), doc="ApplyProximalGradientDescent of the rows at indices.")
_sparse_momentum = _apply_op(
    "SparseApplyMomentum", ("var", "accum", "lr", "grad", "indices", "momentum"),
    scalars=("lr", "momentum"), extra_attrs=("use_nesterov",),
    doc="ApplyMomentum of the rows at indices.")
_sparse_adagrad = _apply_op(
    "SparseApplyAdagrad", ("var", "accum", "lr", "grad", "indices"), scalars=("lr",),
    doc="ApplyAdagrad of the rows at indices.")
_sparse_proximal_adagrad = _apply_op(
    "SparseApplyProximalAdagrad", ("var", "accum", "lr", "l1", "l2", "grad", "indices"),
    scalars=("lr", "l1", "l2"), doc="ApplyProximalAdagrad of the rows at indices.")
_sparse_adagrad_da = _apply_op(
    "SparseApplyAdagradDA",
    ("var", "gradient_accumulator", "gradient_squared_accumulator", "grad", "indices", "lr",
     "l1", "l2", "global_step"),
    scalars=("lr", "l1", "l2", "global_step"), untyped=("global_step",),
    doc="ApplyAdagradDA of the rows at indices.")
_sparse_adadelta = _apply_op(
    "SparseApplyAdadelta",
    ("var", "accum", "accum_update", "lr", "rho", "epsilon", "grad", "indices"),
    scalars=("lr", "rho", "epsilon"), doc="ApplyAdadelta of the rows at indices.")
_sparse_rms_prop = _apply_op(
    "SparseApplyRMSProp",
    ("var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices"),
    scalars=("lr", "rho", "momentum", "epsilon"), doc="ApplyRMSProp of the rows at indices.")
_sparse_centered_rms_prop = _apply_op(
    "SparseApplyCenteredRMSProp",
    ("var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad", "indices"),
    scalars=("lr", "rho", "momentum", "epsilon"),
    doc="ApplyCenteredRMSProp of the rows at indices.")
_sparse_ftrl = _apply_op(
    "SparseApplyFtrl", ("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2", "lr_power"),
    scalars=("lr", "l1", "l2", "lr_power"), doc="ApplyFtrl of the rows at indices.")
_sparse_ftrl_v2 = _apply_op(
    "SparseApplyFtrlV2",
    ("var", "accum", "linear", "grad", "indices", "lr", "l1", "l2", "l2_shrinkage", "lr_power"),
    scalars=("lr", "l1", "l2", "l2_shrinkage", "lr_power"),
    doc="ApplyFtrlV2 of the rows at indices.")


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


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    """The proximal gradient descent (FOBOS) update; returns ``var``'s reference."""
    return _apply(_proximal_gradient_descent, [var, alpha, l1, l2, delta], name,
                  use_locking=use_locking)


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    """The proximal Adagrad update; returns ``var``'s reference."""
    return _apply(_proximal_adagrad, [var, accum, lr, l1, l2, grad], name,
                  use_locking=use_locking)


# ---- the sparse updates (TF's gen_training_ops.sparse_apply_*) -------------------------------
def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices, use_locking=False,
                                           name=None):
    """The proximal gradient descent update of the rows at ``indices``."""
    return _apply(_sparse_proximal_gradient_descent, [var, alpha, l1, l2, grad, indices], name,
                  use_locking=use_locking)


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False,
                          use_nesterov=False, name=None):
    """The momentum update of the rows at ``indices``."""
    return _apply(_sparse_momentum, [var, accum, lr, grad, indices, momentum], name,
                  use_locking=use_locking, use_nesterov=use_nesterov)


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, name=None):
    """The Adagrad update of the rows at ``indices``."""
    return _apply(_sparse_adagrad, [var, accum, lr, grad, indices], name, use_locking=use_locking)


def sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices, use_locking=False,
                                  name=None):
    """The proximal Adagrad update of the rows at ``indices``."""
    return _apply(_sparse_proximal_adagrad, [var, accum, lr, l1, l2, grad, indices], name,
                  use_locking=use_locking)


def sparse_apply_adagrad_da(var, gradient_accumulator, gradient_squared_accumulator, grad,
                            indices, lr, l1, l2, global_step, use_locking=False, name=None):
    """The Adagrad dual-averaging update of the rows at ``indices``."""
    return _apply(_sparse_adagrad_da, [var, gradient_accumulator, gradient_squared_accumulator,
                                       grad, indices, lr, l1, l2, global_step], name,
                  use_locking=use_locking)


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices,
                          use_locking=False, name=None):
    """The Adadelta update of the rows at ``indices``."""
    return _apply(_sparse_adadelta, [var, accum, accum_update, lr, rho, epsilon, grad, indices],
                  name, use_locking=use_locking)


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                          use_locking=False, name=None):
    """The RMSProp update of the rows at ``indices``."""
    return _apply(_sparse_rms_prop, [var, ms, mom, lr, rho, momentum, epsilon, grad, indices],
                  name, use_locking=use_locking)


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking=False, name=None):
    """The centered RMSProp update of the rows at ``indices``."""
    return _apply(_sparse_centered_rms_prop,
                  [var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices], name,
                  use_locking=use_locking)


def sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power, use_locking=False,
                      name=None):
    """The FTRL-Proximal update of the rows at ``indices``."""
    return _apply(_sparse_ftrl, [var, accum, linear, grad, indices, lr, l1, l2, lr_power], name,
                  use_locking=use_locking)


def sparse_apply_ftrl_v2(var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power,
                         use_locking=False, name=None):
    """FTRL-Proximal with L2 shrinkage, of the rows at ``indices``."""
    return _apply(_sparse_ftrl_v2,
                  [var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power], name,
                  use_locking=use_locking)
