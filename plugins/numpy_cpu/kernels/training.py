"""CPU kernels of the optimizers' ``Apply*`` and ``SparseApply*`` ops.

Each kernel receives the :class:`~minitf.runtime.resources.Ref` of the
variable and of its slots, and the hyper-parameters and gradient as arrays.
It writes the new values INTO the existing buffers (``np.subtract(var, ...,
out=var)``), as TF's kernels do, so a training step allocates no new
parameter arrays.

Writing in place is only safe when nobody else holds the buffer: an array
the user fetched earlier (``w_then = sess.run(w)``) must not change under
their feet.  TF decides this with the buffer's reference count
(``forward_input_or_allocate_output``); :func:`_buffer` does the same with
Python's, copying the array first when anything besides the Ref holds it
(copy-on-write).

Each update is written once, as a formula that updates its arrays in place
(``_momentum(var, accum, grad, lr, momentum, use_nesterov)``).  The dense
kernel applies it to the whole variable; the sparse kernel to the rows that
``indices`` names (:func:`_apply_rows`), so that no other row of the
variable or of its slots changes.

The formulas are those of ``tensorflow/core/kernels/training_ops.cc``,
written for readability in ``docs/concepts/optimizers.rst``.
"""

import sys

import numpy as np

from minitf_numpy_cpu.kernels.forwarding import forwards_input, reusable
from minitf_numpy_cpu.kernels.table import kernel


class _Holder:
    __slots__ = ("value",)


def _unshared_refcount():
    """``sys.getrefcount`` of an array held by one attribute and one local name.

    Measured rather than hard-coded, since the count of the probe's own
    references differs between Python versions.
    """
    holder = _Holder()
    holder.value = np.zeros(1)
    value = holder.value
    return sys.getrefcount(value)


_UNSHARED = _unshared_refcount()


def _buffer(ref):
    """The array of ``ref``, safe to update in place (copied first if shared)."""
    value = ref.get()
    if (not isinstance(value, np.ndarray) or sys.getrefcount(value) > _UNSHARED
            or value.base is not None or not value.flags.writeable):
        value = np.array(value)
        ref.value = value
    return value


def _check_shapes(ctx, var, **tensors):
    """TF's run-time check that the slots and the gradient have ``var``'s shape."""
    for name, tensor in tensors.items():
        if np.shape(tensor) != var.shape:
            raise ctx.invalid_argument(
                "var and %s do not have the same shape%s %s"
                % (name, list(var.shape), list(np.shape(tensor))))


@kernel("ApplyGradientDescent")
@forwards_input(2)
def apply_gradient_descent(ctx, var_ref, alpha, delta, use_locking):
    var = _buffer(var_ref)
    _check_shapes(ctx, var, delta=delta)
    # alpha * delta is scaled in delta's buffer when the step is done with the
    # gradient (forwarding.py): no temporary the size of the variable.
    scaled = delta if reusable(ctx, delta, var.shape, var.dtype) else None
    np.subtract(var, np.multiply(alpha, delta, out=scaled), out=var)
    return var_ref


def _check_sparse(ctx, var, grad, indices, **slots):
    """TF's run-time checks of a ``SparseApply*`` op's shapes and indices."""
    _check_shapes(ctx, var, **slots)
    if np.ndim(indices) != 1:
        raise ctx.invalid_argument("indices must be one-dimensional")
    if var.ndim < 1:
        raise ctx.invalid_argument("var must be at least 1 dimensional")
    if np.shape(grad)[:1] != np.shape(indices):
        raise ctx.invalid_argument(
            "grad must be the same size as indices in the first dimension.")
    for d in range(1, var.ndim):
        if np.ndim(grad) != var.ndim or grad.shape[d] != var.shape[d]:
            raise ctx.invalid_argument("var and grad must match in dimension %d" % d)
    for i, index in enumerate(indices):
        if not 0 <= index < var.shape[0]:
            raise ctx.invalid_argument("Index %d at offset %d in indices is out of range"
                                       % (index, i))


def _apply_rows(ctx, update, grad, indices, var_ref, **slot_refs):
    """Applies ``update(var_rows, *slot_rows, grad_rows)`` to the rows at ``indices``.

    ``slot_refs`` are the references of the variable's slots, by their input
    names, in the order ``update`` takes them.  The rows are copied out,
    updated and written back; rows not named are never touched.  Unique
    indices are updated together; with duplicates each row is applied in
    turn, as TF's kernel loops over the indices.
    """
    var = _buffer(var_ref)
    slots = {name: _buffer(ref) for name, ref in slot_refs.items()}
    _check_sparse(ctx, var, grad, indices, **slots)
    arrays = [var] + list(slots.values())
    if len(np.unique(indices)) == len(indices):
        batches = [np.arange(len(indices))]
    else:
        batches = [[i] for i in range(len(indices))]
    for batch in batches:
        rows = indices[batch]
        views = [array[rows] for array in arrays]
        update(*views, grad[batch])
        for array, view in zip(arrays, views):
            array[rows] = view
    return var_ref


# ---- the formulas: each updates var and its slots in place -----------------------------------
def _momentum(var, accum, grad, lr, momentum, use_nesterov):
    np.multiply(accum, momentum, out=accum)
    np.add(accum, grad, out=accum)
    if use_nesterov:
        np.subtract(var, lr * grad + (lr * momentum) * accum, out=var)
    else:
        np.subtract(var, lr * accum, out=var)


def _adagrad(var, accum, grad, lr):
    accum += np.square(grad)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.subtract(var, lr * grad / np.sqrt(accum), out=var)


def _adagrad_da(var, g_acc, gg_acc, grad, lr, l1, l2, global_step):
    global_step = var.dtype.type(global_step)  # TF casts it to the variable's dtype
    g_acc += grad
    gg_acc += np.square(grad)
    denominator = l2 * global_step * lr + np.sqrt(gg_acc)
    if l1 > 0:
        shrunk = np.maximum(np.abs(g_acc) - l1 * global_step, 0)
        np.divide(-lr * np.sign(g_acc) * shrunk, denominator, out=var)
    else:
        np.divide(-lr * g_acc, denominator, out=var)


def _adadelta(var, accum, accum_update, grad, lr, rho, epsilon):
    accum *= rho
    accum += np.square(grad) * (1 - rho)
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    np.subtract(var, lr * update, out=var)
    accum_update *= rho
    accum_update += np.square(update) * (1 - rho)


def _rms_prop(var, ms, mom, grad, lr, rho, momentum, epsilon):
    ms += (np.square(grad) - ms) * (1 - rho)
    mom *= momentum
    mom += lr * grad / np.sqrt(ms + epsilon)
    var -= mom


def _centered_rms_prop(var, mg, ms, mom, grad, lr, rho, momentum, epsilon):
    ms += (np.square(grad) - ms) * (1 - rho)
    mg += (grad - mg) * (1 - rho)
    mom *= momentum
    mom += lr * grad / np.sqrt(ms - np.square(mg) + epsilon)
    var -= mom


def _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=0):
    """FTRL-Proximal; with ``l2_shrinkage`` (``ApplyFtrlV2``) the linear term
    sees the gradient plus ``2 * l2_shrinkage * var``."""
    grad_for_linear = grad + 2 * l2_shrinkage * var if l2_shrinkage else grad
    new_accum = accum + np.square(grad)
    linear += grad_for_linear - (new_accum ** -lr_power - accum ** -lr_power) / lr * var
    quadratic = new_accum ** -lr_power / lr + 2 * l2
    pre_shrink = (np.sign(linear) * l1 - linear) / quadratic
    np.copyto(var, np.where(np.abs(linear) > l1, pre_shrink, 0))
    accum[...] = new_accum


def _proximal_step(var, prox_var, lr, l1, l2):
    """FOBOS's proximal step: ``var = sign(v) * max(|v| - lr * l1, 0) / (1 + lr * l2)``
    for ``v = prox_var`` (the plain gradient step); the max only when ``l1 > 0``."""
    if l1 > 0:
        prox_var = np.sign(prox_var) * np.maximum(np.abs(prox_var) - lr * l1, 0)
    np.divide(prox_var, 1 + lr * l2, out=var)


def _proximal_gradient_descent(var, grad, alpha, l1, l2):
    _proximal_step(var, var - alpha * grad, alpha, l1, l2)


def _proximal_adagrad(var, accum, grad, lr, l1, l2):
    accum += np.square(grad)
    learning_rate = lr / np.sqrt(accum)
    _proximal_step(var, var - learning_rate * grad, learning_rate, l1, l2)


# ---- the dense kernels -----------------------------------------------------------------------
@kernel("ApplyMomentum")
def apply_momentum(ctx, var_ref, accum_ref, lr, grad, momentum, use_locking, use_nesterov):
    var, accum = _buffer(var_ref), _buffer(accum_ref)
    _check_shapes(ctx, var, accum=accum, grad=grad)
    _momentum(var, accum, grad, lr, momentum, use_nesterov)
    return var_ref


@kernel("ApplyAdagrad")
def apply_adagrad(ctx, var_ref, accum_ref, lr, grad, use_locking):
    var, accum = _buffer(var_ref), _buffer(accum_ref)
    _check_shapes(ctx, var, accum=accum, grad=grad)
    _adagrad(var, accum, grad, lr)
    return var_ref


@kernel("ApplyAdagradDA")
def apply_adagrad_da(ctx, var_ref, g_acc_ref, gg_acc_ref, grad, lr, l1, l2, global_step,
                     use_locking):
    var, g_acc, gg_acc = _buffer(var_ref), _buffer(g_acc_ref), _buffer(gg_acc_ref)
    _check_shapes(ctx, var, gradient_accumulator=g_acc, gradient_squared_accumulator=gg_acc,
                  grad=grad)
    _adagrad_da(var, g_acc, gg_acc, grad, lr, l1, l2, global_step)
    return var_ref


@kernel("ApplyAdadelta")
def apply_adadelta(ctx, var_ref, accum_ref, accum_update_ref, lr, rho, epsilon, grad,
                   use_locking):
    var, accum, accum_update = _buffer(var_ref), _buffer(accum_ref), _buffer(accum_update_ref)
    _check_shapes(ctx, var, accum=accum, accum_update=accum_update, grad=grad)
    _adadelta(var, accum, accum_update, grad, lr, rho, epsilon)
    return var_ref


@kernel("ApplyAdam")
def apply_adam(ctx, var_ref, m_ref, v_ref, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
               grad, use_locking, use_nesterov):
    var, m, v = _buffer(var_ref), _buffer(m_ref), _buffer(v_ref)
    _check_shapes(ctx, var, m=m, v=v, grad=grad)
    alpha = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m += (grad - m) * (1 - beta1)
    v += (np.square(grad) - v) * (1 - beta2)
    step = grad * (1 - beta1) + beta1 * m if use_nesterov else m
    np.subtract(var, alpha * step / (np.sqrt(v) + epsilon), out=var)
    return var_ref


@kernel("ApplyRMSProp")
def apply_rms_prop(ctx, var_ref, ms_ref, mom_ref, lr, rho, momentum, epsilon, grad, use_locking):
    var, ms, mom = _buffer(var_ref), _buffer(ms_ref), _buffer(mom_ref)
    _check_shapes(ctx, var, ms=ms, mom=mom, grad=grad)
    _rms_prop(var, ms, mom, grad, lr, rho, momentum, epsilon)
    return var_ref


@kernel("ApplyCenteredRMSProp")
def apply_centered_rms_prop(ctx, var_ref, mg_ref, ms_ref, mom_ref, lr, rho, momentum, epsilon,
                            grad, use_locking):
    var, mg, ms, mom = _buffer(var_ref), _buffer(mg_ref), _buffer(ms_ref), _buffer(mom_ref)
    _check_shapes(ctx, var, mg=mg, ms=ms, mom=mom, grad=grad)
    _centered_rms_prop(var, mg, ms, mom, grad, lr, rho, momentum, epsilon)
    return var_ref


@kernel("ApplyFtrl")
def apply_ftrl(ctx, var_ref, accum_ref, linear_ref, grad, lr, l1, l2, lr_power, use_locking):
    var, accum, linear = _buffer(var_ref), _buffer(accum_ref), _buffer(linear_ref)
    _check_shapes(ctx, var, accum=accum, linear=linear, grad=grad)
    _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power)
    return var_ref


@kernel("ApplyFtrlV2")
def apply_ftrl_v2(ctx, var_ref, accum_ref, linear_ref, grad, lr, l1, l2, l2_shrinkage, lr_power,
                  use_locking):
    var, accum, linear = _buffer(var_ref), _buffer(accum_ref), _buffer(linear_ref)
    _check_shapes(ctx, var, accum=accum, linear=linear, grad=grad)
    _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage)
    return var_ref


@kernel("ApplyProximalGradientDescent")
def apply_proximal_gradient_descent(ctx, var_ref, alpha, l1, l2, delta, use_locking):
    var = _buffer(var_ref)
    _check_shapes(ctx, var, delta=delta)
    _proximal_gradient_descent(var, delta, alpha, l1, l2)
    return var_ref


@kernel("ApplyProximalAdagrad")
def apply_proximal_adagrad(ctx, var_ref, accum_ref, lr, l1, l2, grad, use_locking):
    var, accum = _buffer(var_ref), _buffer(accum_ref)
    _check_shapes(ctx, var, accum=accum, grad=grad)
    _proximal_adagrad(var, accum, grad, lr, l1, l2)
    return var_ref


# ---- the sparse kernels: the same formulas, on the rows at indices ---------------------------
@kernel("SparseApplyProximalGradientDescent")
def sparse_apply_proximal_gradient_descent(ctx, var_ref, alpha, l1, l2, grad, indices,
                                           use_locking):
    return _apply_rows(ctx, lambda var, g: _proximal_gradient_descent(var, g, alpha, l1, l2),
                       grad, indices, var_ref)


@kernel("SparseApplyMomentum")
def sparse_apply_momentum(ctx, var_ref, accum_ref, lr, grad, indices, momentum, use_locking,
                          use_nesterov):
    return _apply_rows(
        ctx, lambda var, accum, g: _momentum(var, accum, g, lr, momentum, use_nesterov),
        grad, indices, var_ref, accum=accum_ref)


@kernel("SparseApplyAdagrad")
def sparse_apply_adagrad(ctx, var_ref, accum_ref, lr, grad, indices, use_locking):
    return _apply_rows(ctx, lambda var, accum, g: _adagrad(var, accum, g, lr),
                       grad, indices, var_ref, accum=accum_ref)


@kernel("SparseApplyProximalAdagrad")
def sparse_apply_proximal_adagrad(ctx, var_ref, accum_ref, lr, l1, l2, grad, indices,
                                  use_locking):
    return _apply_rows(ctx, lambda var, accum, g: _proximal_adagrad(var, accum, g, lr, l1, l2),
                       grad, indices, var_ref, accum=accum_ref)


@kernel("SparseApplyAdagradDA")
def sparse_apply_adagrad_da(ctx, var_ref, g_acc_ref, gg_acc_ref, grad, indices, lr, l1, l2,
                            global_step, use_locking):
    return _apply_rows(
        ctx, lambda var, g_acc, gg_acc, g: _adagrad_da(var, g_acc, gg_acc, g, lr, l1, l2,
                                                       global_step),
        grad, indices, var_ref, gradient_accumulator=g_acc_ref,
        gradient_squared_accumulator=gg_acc_ref)


@kernel("SparseApplyAdadelta")
def sparse_apply_adadelta(ctx, var_ref, accum_ref, accum_update_ref, lr, rho, epsilon, grad,
                          indices, use_locking):
    return _apply_rows(
        ctx, lambda var, accum, update, g: _adadelta(var, accum, update, g, lr, rho, epsilon),
        grad, indices, var_ref, accum=accum_ref, accum_update=accum_update_ref)


@kernel("SparseApplyRMSProp")
def sparse_apply_rms_prop(ctx, var_ref, ms_ref, mom_ref, lr, rho, momentum, epsilon, grad,
                          indices, use_locking):
    return _apply_rows(
        ctx, lambda var, ms, mom, g: _rms_prop(var, ms, mom, g, lr, rho, momentum, epsilon),
        grad, indices, var_ref, ms=ms_ref, mom=mom_ref)


@kernel("SparseApplyCenteredRMSProp")
def sparse_apply_centered_rms_prop(ctx, var_ref, mg_ref, ms_ref, mom_ref, lr, rho, momentum,
                                   epsilon, grad, indices, use_locking):
    return _apply_rows(
        ctx, lambda var, mg, ms, mom, g: _centered_rms_prop(var, mg, ms, mom, g, lr, rho,
                                                            momentum, epsilon),
        grad, indices, var_ref, mg=mg_ref, ms=ms_ref, mom=mom_ref)


@kernel("SparseApplyFtrl")
def sparse_apply_ftrl(ctx, var_ref, accum_ref, linear_ref, grad, indices, lr, l1, l2, lr_power,
                      use_locking):
    return _apply_rows(
        ctx, lambda var, accum, linear, g: _ftrl(var, accum, linear, g, lr, l1, l2, lr_power),
        grad, indices, var_ref, accum=accum_ref, linear=linear_ref)


@kernel("SparseApplyFtrlV2")
def sparse_apply_ftrl_v2(ctx, var_ref, accum_ref, linear_ref, grad, indices, lr, l1, l2,
                         l2_shrinkage, lr_power, use_locking):
    return _apply_rows(
        ctx, lambda var, accum, linear, g: _ftrl(var, accum, linear, g, lr, l1, l2, lr_power,
                                                 l2_shrinkage),
        grad, indices, var_ref, accum=accum_ref, linear=linear_ref)
