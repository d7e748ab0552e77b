// Elementwise kernels: unary math, binary math with NumPy broadcasting,
// comparisons, select, fill.  Built once per element type T (-D T=float), as
// the program "elementwise_ops" of kernels/elementwise.py: elementwise_math.cl,
// then this file, then the generated UNARY/BINARY lines of every op.
//
// Broadcasting: the host collapses the output shape to at most 8 dimensions
// and passes, per input, the strides (in elements) of each output dimension
// in that input, 0 where the input is broadcast.  bcast_off() (in
// elementwise_math.cl) turns a flat output index into the input's offset.  Inputs of the output's own shape
// (_same), of one element (_sa / _sb) or repeated along leading axes only, as
// a bias row is (_ra / _rb over a 2-D range [m, rows]: element (row, col)
// reads [col] of the row, no division per element), take cheaper kernels.
//
// Unary kernels and _same, the memory-bound cases of large tensors, give each
// work item four neighbouring elements: one vload4/vstore4 moves 16 bytes of
// float32, and a quarter as many work items cost the runtime less (on PoCL
// this doubles the bandwidth of an add).  The host launches ceil(n / 4) work
// items; the last one takes the tail of n % 4 elements one at a time.  The
// math stays written once, for one element, in the NAME##_op functions.

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
                        __global const T *y, const int m) {                        \
    const int col = get_global_id(0), i = get_global_id(1) * m + col;             \
    z[i] = NAME##_op(x[i], y[col]);                                                \
}                                                                                  \
__kernel void NAME##_ra(__global OUT *z, __global const T *x,                      \
                        __global const T *y, const int m) {                        \
    const int col = get_global_id(0), i = get_global_id(1) * m + col;             \
    z[i] = NAME##_op(x[col], y[i]);                                                \
}                                                                                  \
__kernel void NAME##_bcast(__global OUT *z, __global const T *x,                   \
                           __global const T *y, const int n, const int8 shape,     \
                           const int8 sx, const int8 sy) {                         \
    const int i = get_global_id(0);                                                \
    if (i >= n) return;                                                            \
    z[i] = NAME##_op(x[bcast_off(i, shape, sx)], y[bcast_off(i, shape, sy)]);      \
}

// ---- the ops -----------------------------------------------------------------------
// The UNARY(...) and BINARY(...) lines that make the kernels of each op are
// generated from the table of expression templates in kernels/elementwise.py
// (EXPRESSIONS) and appended to this text, after the helpers of
// elementwise_math.cl: the same templates make the fused kernels of
// kernels/fusion.py, so an op is written in C exactly once.

#ifdef IS_FLOAT
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
