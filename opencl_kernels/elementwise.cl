// Elementwise kernels: unary math, binary math with NumPy broadcasting,
// comparisons, select, fill.  Built once per element type T (-D T=float).
//
// Broadcasting: the host collapses the output shape to at most 8 dimensions
// and passes, per input, the strides (in elements) of each output dimension
// in that input, 0 where the input is broadcast.  bcast_off() turns a flat
// output index into the input's offset.  Inputs of the output's own shape
// (_same), of one element (_sa / _sb) or repeated along leading axes only, as
// a bias row is (_ra / _rb: element i reads [i % m]), take cheaper kernels.
//
// Unary kernels and _same, the memory-bound cases of large tensors, give each
// work item four neighbouring elements: one vload4/vstore4 moves 16 bytes of
// float32, and a quarter as many work items cost the runtime less (on PoCL
// this doubles the bandwidth of an add).  The host launches ceil(n / 4) work
// items; the last one takes the tail of n % 4 elements one at a time.  The
// math stays written once, for one element, in the NAME##_op functions.

#ifdef IS_FLOAT
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif

// The host pads the shape with 1s in front (s0 first); a 1 is never a real
// dimension after merging, so skipping it saves an integer division and a
// modulo, the dearest instructions here (a [128,256] + [256] bias add ran
// 30x slower dividing by all eight sizes).  The branch is the same for every
// work item.
#define STEP(k) if (shape.s##k != 1) { c = i % shape.s##k; i /= shape.s##k; \
                                       off += c * st.s##k; }

inline int bcast_off(int i, const int8 shape, const int8 st) {
    int off = 0, c;
    STEP(7) STEP(6) STEP(5) STEP(4) STEP(3) STEP(2) STEP(1)
    return off + i * st.s0;
}

// VEC4(float) is float4; the indirection lets T expand before the pasting.
#define PASTE4(t) t##4
#define VEC4(t) PASTE4(t)

#define UNARY(NAME, OUT, EXPR)                                                     \
inline OUT NAME##_op(const T a) { return (OUT)(EXPR); }                            \
__kernel void NAME(__global OUT *z, __global const T *x, const int n) {            \
    const int i = 4 * get_global_id(0);                                            \
    if (i + 4 <= n) {                                                              \
        const VEC4(T) a = vload4(0, x + i);                                        \
        vstore4((VEC4(OUT))(NAME##_op(a.s0), NAME##_op(a.s1),                      \
                            NAME##_op(a.s2), NAME##_op(a.s3)), 0, z + i);          \
    } else {                                                                       \
        for (int j = i; j < n; ++j) z[j] = NAME##_op(x[j]);                        \
    }                                                                              \
}

#define BINARY(NAME, OUT, EXPR)                                                    \
inline OUT NAME##_op(const T a, const T b) { return (OUT)(EXPR); }                 \
__kernel void NAME##_same(__global OUT *z, __global const T *x,                    \
                          __global const T *y, const int n) {                      \
    const int i = 4 * get_global_id(0);                                            \
    if (i + 4 <= n) {                                                              \
        const VEC4(T) a = vload4(0, x + i), b = vload4(0, y + i);                  \
        vstore4((VEC4(OUT))(NAME##_op(a.s0, b.s0), NAME##_op(a.s1, b.s1),          \
                            NAME##_op(a.s2, b.s2), NAME##_op(a.s3, b.s3)),         \
                0, z + i);                                                         \
    } else {                                                                       \
        for (int j = i; j < n; ++j) z[j] = NAME##_op(x[j], y[j]);                  \
    }                                                                              \
}                                                                                  \
__kernel void NAME##_sb(__global OUT *z, __global const T *x,                      \
                        __global const T *y, const int n) {                        \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[i], y[0]);                                                  \
}                                                                                  \
__kernel void NAME##_sa(__global OUT *z, __global const T *x,                      \
                        __global const T *y, const int n) {                        \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[0], y[i]);                                                  \
}                                                                                  \
__kernel void NAME##_rb(__global OUT *z, __global const T *x,                      \
                        __global const T *y, const int n, const int m) {           \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[i], y[i % m]);                                              \
}                                                                                  \
__kernel void NAME##_ra(__global OUT *z, __global const T *x,                      \
                        __global const T *y, const int n, const int m) {           \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[i % m], y[i]);                                              \
}                                                                                  \
__kernel void NAME##_bcast(__global OUT *z, __global const T *x,                   \
                           __global const T *y, const int n, const int8 shape,     \
                           const int8 sx, const int8 sy) {                         \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[bcast_off(i, shape, sx)], y[bcast_off(i, shape, sy)]);      \
}

// ---- every numeric type -------------------------------------------------------------
#ifndef IS_BOOL
BINARY(add, T, a + b)
BINARY(sub, T, a - b)
BINARY(mul, T, a * b)
BINARY(squared_difference, T, (a - b) * (a - b))
UNARY(neg, T, -a)
UNARY(square, T, a * a)
UNARY(sign_, T, a > 0 ? (T)1 : (a < 0 ? (T)-1 : a))
BINARY(less, uchar, a < b)
BINARY(less_equal, uchar, a <= b)
BINARY(greater, uchar, a > b)
BINARY(greater_equal, uchar, a >= b)
#endif
BINARY(equal, uchar, a == b)
BINARY(not_equal, uchar, a != b)

// ---- integers -----------------------------------------------------------------------
#ifdef IS_INT
// a ** b by squaring; a negative exponent truncates 1 / a ** |b| toward zero
// (TF's CPU kernel rejects it; a device kernel cannot raise).
inline T int_pow(T a, T b) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    T result = 1;
    while (b) {
        if (b & 1) result *= a;
        a *= a;
        b >>= 1;
    }
    return result;
}

BINARY(maximum, T, a > b ? a : b)
BINARY(minimum, T, a < b ? a : b)
BINARY(pow_, T, int_pow(a, b))
UNARY(abs_, T, a < 0 ? -a : a)
UNARY(relu, T, a < 0 ? 0 : a)
UNARY(relu6, T, a < 0 ? 0 : (a > 6 ? 6 : a))
#endif

// ---- bool ---------------------------------------------------------------------------
#ifdef IS_BOOL
BINARY(logical_and, uchar, a && b)
BINARY(logical_or, uchar, a || b)
UNARY(logical_not, uchar, !a)
#endif

// ---- floating point -----------------------------------------------------------------
#ifdef IS_FLOAT
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946

inline T floor_mod(T a, T b) {          // NumPy's mod: the result takes b's sign
    T r = fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}

inline T stable_sigmoid(T a) {          // exp only of -|a|: never overflows
    T e = exp(-fabs(a));
    return a >= 0 ? 1 / (1 + e) : e / (1 + e);
}

BINARY(real_div, T, a / b)
// NaN wins, as in NumPy (a != a is true only for NaN).
BINARY(maximum, T, (a > b || a != a) ? a : b)
BINARY(minimum, T, (a < b || a != a) ? a : b)
BINARY(pow_, T, pow(a, b))
BINARY(floor_div, T, floor(a / b))
BINARY(floor_mod, T, floor_mod(a, b))
// Fused gradients; a and b are the op's two inputs in TF's order.
BINARY(relu_grad, T, b > 0 ? a : 0)
BINARY(relu6_grad, T, (b > 0 && b < 6) ? a : 0)
BINARY(elu_grad, T, b < 0 ? a * (b + 1) : a)
BINARY(selu_grad, T, b < 0 ? a * (b + SELU_SCALE * SELU_ALPHA) : a * SELU_SCALE)
BINARY(softplus_grad, T, a * stable_sigmoid(b))
BINARY(softsign_grad, T, a / ((1 + fabs(b)) * (1 + fabs(b))))
BINARY(sigmoid_grad, T, b * a * (1 - a))
BINARY(tanh_grad, T, b * (1 - a * a))
BINARY(sqrt_grad, T, b * 0.5 / a)
BINARY(rsqrt_grad, T, b * -0.5 * a * a * a)
BINARY(reciprocal_grad, T, -b * a * a)
BINARY(sigmoid_xent, T, (a > 0 ? a : 0) - a * b + log1p(exp(-fabs(a))))

UNARY(abs_, T, fabs(a))
UNARY(sqrt_, T, sqrt(a))
UNARY(rsqrt_, T, 1 / sqrt(a))
UNARY(reciprocal, T, 1 / a)
UNARY(exp_, T, exp(a))
UNARY(expm1_, T, expm1(a))
UNARY(log_, T, log(a))
UNARY(log1p_, T, log1p(a))
UNARY(sin_, T, sin(a))
UNARY(cos_, T, cos(a))
UNARY(tan_, T, tan(a))
UNARY(tanh_, T, tanh(a))
UNARY(sigmoid, T, stable_sigmoid(a))
UNARY(floor_, T, floor(a))
UNARY(ceil_, T, ceil(a))
UNARY(round_, T, rint(a))               // half to even, like TF
UNARY(relu, T, a < 0 ? 0 : a)           // NaN stays NaN, as np.maximum(x, 0)
UNARY(relu6, T, a < 0 ? 0 : (a > 6 ? 6 : a))
UNARY(elu, T, a > 0 ? a : expm1(a))
UNARY(selu, T, SELU_SCALE * (a > 0 ? a : SELU_ALPHA * expm1(a)))
UNARY(softplus, T, (a > 0 ? a : 0) + log1p(exp(-fabs(a))))
UNARY(softsign, T, a / (1 + fabs(a)))
UNARY(is_nan, uchar, isnan(a))
UNARY(is_inf, uchar, isinf(a))
UNARY(is_finite, uchar, isfinite(a))

__kernel void leaky_relu(__global T *z, __global const T *x, const T alpha, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = x[i] > 0 ? x[i] : x[i] * alpha;
}

__kernel void leaky_relu_grad(__global T *z, __global const T *g, __global const T *x,
                              const T alpha, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = x[i] > 0 ? g[i] : g[i] * alpha;
}
#endif

// ---- select, fill, scale --------------------------------------------------------------
__kernel void select_bcast(__global T *z, __global const uchar *c, __global const T *x,
                           __global const T *y, const int n, const int8 shape,
                           const int8 sc, const int8 sx, const int8 sy) {
    const int i = get_global_id(0);
    if (i >= n) return;
    z[i] = c[bcast_off(i, shape, sc)] ? x[bcast_off(i, shape, sx)] : y[bcast_off(i, shape, sy)];
}

__kernel void fill_from(__global T *z, __global const T *value, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = value[0];
}

__kernel void fill_value(__global T *z, const T value, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = value;
}
