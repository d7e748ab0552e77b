// The optimizers' fused updates: one work item per element updates the
// variable and its slots at once.  Hyper-parameters arrive as one-element
// device buffers (they are tensors: a placeholder or a decayed learning rate
// works) and are read by every item.  The formulas are TF's
// (tensorflow/core/kernels/training_ops.cc), as in the CPU kernels.
// Outputs are new buffers (new_*), so a value read earlier never changes.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void apply_gradient_descent(__global T *new_var, __global const T *var,
                                     __global const T *alpha, __global const T *delta,
                                     const int n) {
    const int i = get_global_id(0);
    if (i < n) new_var[i] = var[i] - alpha[0] * delta[i];
}

__kernel void apply_momentum(__global T *new_var, __global T *new_accum, __global const T *var,
                             __global const T *accum, __global const T *lr,
                             __global const T *grad, __global const T *momentum,
                             const int use_nesterov, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const T a = accum[i] * momentum[0] + grad[i];
    new_accum[i] = a;
    new_var[i] = use_nesterov ? var[i] - (grad[i] * lr[0] + a * momentum[0] * lr[0])
                              : var[i] - lr[0] * a;
}

__kernel void apply_adam(__global T *new_var, __global T *new_m, __global T *new_v,
                         __global const T *var, __global const T *m, __global const T *v,
                         __global const T *beta1_power, __global const T *beta2_power,
                         __global const T *lr, __global const T *beta1,
                         __global const T *beta2, __global const T *epsilon,
                         __global const T *grad, const int use_nesterov, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const T b1 = beta1[0], b2 = beta2[0], g = grad[i];
    const T alpha = lr[0] * sqrt(1 - beta2_power[0]) / (1 - beta1_power[0]);
    const T mi = m[i] + (g - m[i]) * (1 - b1);
    const T vi = v[i] + (g * g - v[i]) * (1 - b2);
    const T step = use_nesterov ? g * (1 - b1) + b1 * mi : mi;
    new_m[i] = mi;
    new_v[i] = vi;
    new_var[i] = var[i] - alpha * step / (sqrt(vi) + epsilon[0]);
}

__kernel void apply_adagrad(__global T *new_var, __global T *new_accum, __global const T *var,
                            __global const T *accum, __global const T *lr,
                            __global const T *grad, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const T a = accum[i] + grad[i] * grad[i];
    new_accum[i] = a;
    new_var[i] = var[i] - lr[0] * grad[i] / sqrt(a);
}

__kernel void apply_rms_prop(__global T *new_var, __global T *new_ms, __global T *new_mom,
                             __global const T *var, __global const T *ms,
                             __global const T *mom, __global const T *lr,
                             __global const T *rho, __global const T *momentum,
                             __global const T *epsilon, __global const T *grad, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const T g = grad[i];
    const T s = ms[i] + (g * g - ms[i]) * (1 - rho[0]);
    const T mo = mom[i] * momentum[0] + lr[0] * g / sqrt(s + epsilon[0]);
    new_ms[i] = s;
    new_mom[i] = mo;
    new_var[i] = var[i] - mo;
}
