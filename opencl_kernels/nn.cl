// Softmax, log-softmax and the softmax cross-entropies, one work item per
// row of a [rows, cols] matrix.  Each subtracts the row's maximum before
// exponentiating, so no exp overflows and the largest term is exactly 1.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef LABEL
#define LABEL int
#endif

inline T row_max(__global const T *x, const int cols) {
    T m = -INFINITY;
    for (int j = 0; j < cols; j++) m = fmax(m, x[j]);
    return m;
}

inline T row_log_sum_exp(__global const T *x, const int cols, const T m) {
    T s = 0;
    for (int j = 0; j < cols; j++) s += exp(x[j] - m);
    return log(s);
}

__kernel void softmax(__global T *z, __global const T *x, const int rows, const int cols) {
    const int r = get_global_id(0);
    if (r >= rows) return;
    x += (long)r * cols; z += (long)r * cols;
    const T m = row_max(x, cols);
    T s = 0;
    for (int j = 0; j < cols; j++) { z[j] = exp(x[j] - m); s += z[j]; }
    for (int j = 0; j < cols; j++) z[j] /= s;
}

__kernel void log_softmax(__global T *z, __global const T *x, const int rows, const int cols) {
    const int r = get_global_id(0);
    if (r >= rows) return;
    x += (long)r * cols; z += (long)r * cols;
    const T m = row_max(x, cols);
    const T lse = row_log_sum_exp(x, cols, m);
    for (int j = 0; j < cols; j++) z[j] = x[j] - m - lse;
}

// loss[r] = -sum_j labels[r, j] * log_softmax(x)[r, j];  backprop = softmax(x) - labels.
__kernel void softmax_xent(__global T *loss, __global T *backprop, __global const T *x,
                           __global const T *labels, const int rows, const int cols) {
    const int r = get_global_id(0);
    if (r >= rows) return;
    x += (long)r * cols; labels += (long)r * cols; backprop += (long)r * cols;
    const T m = row_max(x, cols);
    const T lse = row_log_sum_exp(x, cols, m);
    T l = 0;
    for (int j = 0; j < cols; j++) {
        const T log_p = x[j] - m - lse;
        l -= labels[j] * log_p;
        backprop[j] = exp(log_p) - labels[j];
    }
    loss[r] = l;
}

// The sparse form with one class index per row.  A label outside [0, cols)
// gives NaN loss and gradient for its row, as TF's GPU kernel does (the CPU
// kernel raises InvalidArgumentError; a device cannot raise mid-queue).
__kernel void sparse_softmax_xent(__global T *loss, __global T *backprop, __global const T *x,
                                  __global const LABEL *labels, const int rows,
                                  const int cols) {
    const int r = get_global_id(0);
    if (r >= rows) return;
    x += (long)r * cols; backprop += (long)r * cols;
    const LABEL label = labels[r];
    if (label < 0 || label >= cols) {
        loss[r] = NAN;
        for (int j = 0; j < cols; j++) backprop[j] = NAN;
        return;
    }
    const T m = row_max(x, cols);
    const T lse = row_log_sum_exp(x, cols, m);
    for (int j = 0; j < cols; j++) backprop[j] = exp(x[j] - m - lse) - (j == label ? 1 : 0);
    loss[r] = -(x[label] - m - lse);
}
