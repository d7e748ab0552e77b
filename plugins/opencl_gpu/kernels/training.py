"""GPU kernels of the optimizers' update ops: ``ApplyGradientDescent``,
``ApplyMomentum``, ``ApplyAdam``, ``ApplyAdagrad``, ``ApplyRMSProp`` (source:
``opencl_kernels/training.cl``).

Each is one kernel launch per variable that reads the variable, its slots,
the gradient and the hyper-parameters (one-element device buffers) and
writes fresh buffers that then become the variable's and slots' values: the
update never waits for the host, and a value read earlier in the step is
never overwritten (the CPU kernels get the same guarantee by copy-on-write).
The other ``Apply*`` ops have no GPU kernel: under soft placement they run
on the CPU, next to a copy of their variable.
"""

from minitf_opencl_gpu.kernels.table import KERNELS, empty, i32, on_device, run


def _check_shapes(ctx, var, **tensors):
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(var.shape):
            raise ctx.invalid_argument("var and %s do not have the same shape%s %s"
                                       % (name, list(var.shape), list(tensor.shape)))


def _update(ctx, name, refs, scalars_before, grad, scalars_after=(), flags=()):
    """Runs kernel ``name``: new buffers for ``refs``' values, then stores them."""
    values = [on_device(ctx, r.get()) for r in refs]
    var = values[0]
    dtype = var.dtype
    grad = on_device(ctx, grad, dtype)
    _check_shapes(ctx, var, grad=grad, **{"slot%d" % i: v for i, v in enumerate(values[1:], 1)})
    outs = [empty(ctx, var.shape, dtype) for _ in refs]
    scalars_before = [on_device(ctx, s, dtype) for s in scalars_before]
    scalars_after = [on_device(ctx, s, dtype) for s in scalars_after]
    args = outs + values + scalars_before + [grad] + scalars_after
    run(ctx, "training", name, dtype, var.size, *args, *[i32(f) for f in flags], i32(var.size))
    for ref, out in zip(refs, outs):
        ref.value = out
    return refs[0]


def apply_gradient_descent(ctx, var_ref, alpha, delta, use_locking):
    return _update(ctx, "apply_gradient_descent", [var_ref], [alpha], delta)


def apply_momentum(ctx, var_ref, accum_ref, lr, grad, momentum, use_locking, use_nesterov):
    return _update(ctx, "apply_momentum", [var_ref, accum_ref], [lr], grad, [momentum],
                   flags=[use_nesterov])


def apply_adam(ctx, var_ref, m_ref, v_ref, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
               grad, use_locking, use_nesterov):
    return _update(ctx, "apply_adam", [var_ref, m_ref, v_ref],
                   [beta1_power, beta2_power, lr, beta1, beta2, epsilon], grad,
                   flags=[use_nesterov])


def apply_adagrad(ctx, var_ref, accum_ref, lr, grad, use_locking):
    return _update(ctx, "apply_adagrad", [var_ref, accum_ref], [lr], grad)


def apply_rms_prop(ctx, var_ref, ms_ref, mom_ref, lr, rho, momentum, epsilon, grad, use_locking):
    return _update(ctx, "apply_rms_prop", [var_ref, ms_ref, mom_ref], [lr, rho, momentum, epsilon],
                   grad)


# The references are never host arrays, so no host dispatch; hyper-parameters
# may be: they are uploaded (a few bytes).
for _op, _fn in (("ApplyGradientDescent", apply_gradient_descent),
                 ("ApplyMomentum", apply_momentum), ("ApplyAdam", apply_adam),
                 ("ApplyAdagrad", apply_adagrad), ("ApplyRMSProp", apply_rms_prop)):
    KERNELS.append((_op, _fn, ("float",)))
