// The GPU kernels of Swish and SwishGrad (float32), one work item per element.

float sigmoid_of(float v) { return 1.0f / (1.0f + exp(-v)); }

__kernel void swish(__global const float *x, __global float *y, const float beta, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        y[i] = x[i] * sigmoid_of(beta * x[i]);
    }
}

__kernel void swish_grad(__global const float *dy, __global const float *x, __global float *dx,
                         const float beta, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        float s = sigmoid_of(beta * x[i]);
        dx[i] = dy[i] * (s + beta * x[i] * s * (1.0f - s));
    }
}
