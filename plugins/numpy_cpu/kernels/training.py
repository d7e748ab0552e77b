"""CPU kernels of the optimizers' ``Apply*`` ops: one fused update per variable.

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


@kernel("ApplyMomentum")
def apply_momentum(ctx, var_ref, accum_ref, lr, grad, momentum, use_locking, use_nesterov):
    var, accum = _buffer(var_ref), _buffer(accum_ref)
    _check_shapes(ctx, var, accum=accum, grad=grad)
    np.multiply(accum, momentum, out=accum)
    np.add(accum, grad, out=accum)
    if use_nesterov:
        np.subtract(var, lr * grad + (lr * momentum) * accum, out=var)
    else:
        np.subtract(var, lr * accum, out=var)
    return var_ref


@kernel("ApplyAdagrad")
def apply_adagrad(ctx, var_ref, accum_ref, lr, grad, use_locking):
    var, accum = _buffer(var_ref), _buffer(accum_ref)
    _check_shapes(ctx, var, accum=accum, grad=grad)
    accum += np.square(grad)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.subtract(var, lr * grad / np.sqrt(accum), out=var)
    return var_ref


@kernel("ApplyAdagradDA")
def apply_adagrad_da(ctx, var_ref, g_acc_ref, gg_acc_ref, grad, lr, l1, l2, global_step,
                     use_locking):
    var, g_acc, gg_acc = _buffer(var_ref), _buffer(g_acc_ref), _buffer(gg_acc_ref)
    _check_shapes(ctx, var, gradient_accumulator=g_acc, gradient_squared_accumulator=gg_acc,
                  grad=grad)
    global_step = var.dtype.type(global_step)  # TF casts it to the variable's dtype
    g_acc += grad
    gg_acc += np.square(grad)
    denominator = l2 * global_step * lr + np.sqrt(gg_acc)
    if l1 > 0:
        shrunk = np.maximum(np.abs(g_acc) - l1 * global_step, 0)
        np.divide(-lr * np.sign(g_acc) * shrunk, denominator, out=var)
    else:
        np.divide(-lr * g_acc, denominator, out=var)
    return var_ref


@kernel("ApplyAdadelta")
def apply_adadelta(ctx, var_ref, accum_ref, accum_update_ref, lr, rho, epsilon, grad,
                   use_locking):
    var, accum, accum_update = _buffer(var_ref), _buffer(accum_ref), _buffer(accum_update_ref)
    _check_shapes(ctx, var, accum=accum, accum_update=accum_update, grad=grad)
    accum *= rho
    accum += np.square(grad) * (1 - rho)
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    np.subtract(var, lr * update, out=var)
    accum_update *= rho
    accum_update += np.square(update) * (1 - rho)
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
    ms += (np.square(grad) - ms) * (1 - rho)
    mom *= momentum
    mom += lr * grad / np.sqrt(ms + epsilon)
    var -= mom
    return var_ref


@kernel("ApplyCenteredRMSProp")
def apply_centered_rms_prop(ctx, var_ref, mg_ref, ms_ref, mom_ref, lr, rho, momentum, epsilon,
                            grad, use_locking):
    var, mg, ms, mom = _buffer(var_ref), _buffer(mg_ref), _buffer(ms_ref), _buffer(mom_ref)
    _check_shapes(ctx, var, mg=mg, ms=ms, mom=mom, grad=grad)
    ms += (np.square(grad) - ms) * (1 - rho)
    mg += (grad - mg) * (1 - rho)
    mom *= momentum
    mom += lr * grad / np.sqrt(ms - np.square(mg) + epsilon)
    var -= mom
    return var_ref


def _ftrl_update(var, accum, linear, grad, grad_for_linear, lr, l1, l2, lr_power):
    """FTRL-Proximal, shared by ``ApplyFtrl`` and ``ApplyFtrlV2`` (training_ops.cc)."""
    new_accum = accum + np.square(grad)
    linear += grad_for_linear - (new_accum ** -lr_power - accum ** -lr_power) / lr * var
    quadratic = new_accum ** -lr_power / lr + 2 * l2
    pre_shrink = (np.sign(linear) * l1 - linear) / quadratic
    np.copyto(var, np.where(np.abs(linear) > l1, pre_shrink, 0))
    accum[...] = new_accum


@kernel("ApplyFtrl")
def apply_ftrl(ctx, var_ref, accum_ref, linear_ref, grad, lr, l1, l2, lr_power, use_locking):
    var, accum, linear = _buffer(var_ref), _buffer(accum_ref), _buffer(linear_ref)
    _check_shapes(ctx, var, accum=accum, linear=linear, grad=grad)
    _ftrl_update(var, accum, linear, grad, grad, lr, l1, l2, lr_power)
    return var_ref


@kernel("ApplyFtrlV2")
def apply_ftrl_v2(ctx, var_ref, accum_ref, linear_ref, grad, lr, l1, l2, l2_shrinkage, lr_power,
                  use_locking):
    var, accum, linear = _buffer(var_ref), _buffer(accum_ref), _buffer(linear_ref)
    _check_shapes(ctx, var, accum=accum, linear=linear, grad=grad)
    _ftrl_update(var, accum, linear, grad, grad + 2 * l2_shrinkage * var, lr, l1, l2, lr_power)
    return var_ref
