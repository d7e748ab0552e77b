// Reductions along axes.  The host views the input as [outer, R, inner]
// with the R axis reduced (after a transpose if the reduced axes are not
// adjacent) and picks one of two shapes of work:
//   <op>_rows  inner == 1: one work-group of WG items per output row, each
//              item striding over the row, then a tree in local memory;
//   <op>_cols  inner > 1:  one work item per output, walking R with stride
//              inner (neighbouring items read neighbouring addresses).
// Sum takes a `scale` applied at the end (1 for Sum, 1/R for Mean).

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define WG 64

#define REDUCTION(NAME, IDENT, COMBINE, FINAL)                                        \
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))                              \
void NAME##_rows(__global T *z, __global const T *x, const int R, const T scale) {   \
    __local T part[WG];                                                               \
    const int row = get_group_id(0), l = get_local_id(0);                             \
    T acc = IDENT;                                                                    \
    for (int r = l; r < R; r += WG) { const T v = x[(long)row * R + r]; acc = COMBINE(acc, v); } \
    part[l] = acc;                                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                                     \
    for (int s = WG / 2; s > 0; s >>= 1) {                                            \
        if (l < s) { const T v = part[l + s]; part[l] = COMBINE(part[l], v); }        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                 \
    }                                                                                 \
    if (l == 0) { const T v = part[0]; z[row] = FINAL; }                              \
}                                                                                     \
__kernel void NAME##_cols(__global T *z, __global const T *x, const int outer,        \
                          const int R, const int inner, const T scale) {              \
    const int i = get_global_id(0);                                                   \
    if (i >= outer * inner) return;                                                   \
    const int o = i / inner, k = i % inner;                                           \
    __global const T *p = x + (long)o * R * inner + k;                                \
    T acc = IDENT;                                                                    \
    for (int r = 0; r < R; r++) { const T v = p[(long)r * inner]; acc = COMBINE(acc, v); } \
    { const T v = acc; z[i] = FINAL; }                                                \
}

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))

#ifdef IS_FLOAT
// NaN wins, as in NumPy.
#define MAX(a, b) (((a) > (b) || (a) != (a)) ? (a) : (b))
#define MIN(a, b) (((a) < (b) || (a) != (a)) ? (a) : (b))
REDUCTION(sum, (T)0, ADD, v * scale)
REDUCTION(prod, (T)1, MUL, v)
REDUCTION(max, (T)(-INFINITY), MAX, v)
REDUCTION(min, (T)(INFINITY), MIN, v)
#endif

#ifdef IS_BOOL
#define OR(a, b) ((a) || (b))
#define AND(a, b) ((a) && (b))
REDUCTION(any, (T)0, OR, v)
REDUCTION(all, (T)1, AND, v)
#endif

// ArgMax/ArgMin over R of [outer, R, inner]: the first extreme wins; a NaN
// counts as the extreme, as NumPy's argmax does.  Built with DST, the index type.
#if defined(IS_FLOAT) && defined(DST)
#define ARG_REDUCTION(NAME, BETTER)                                                   \
__kernel void NAME(__global DST *z, __global const T *x, const int outer, const int R, \
                   const int inner) {                                                 \
    const int i = get_global_id(0);                                                   \
    if (i >= outer * inner) return;                                                   \
    const int o = i / inner, k = i % inner;                                           \
    __global const T *p = x + (long)o * R * inner + k;                                \
    T best = p[0];                                                                    \
    int where = 0;                                                                    \
    for (int r = 1; r < R; r++) {                                                     \
        const T v = p[(long)r * inner];                                               \
        if (best == best && (v != v || BETTER)) { best = v; where = r; }              \
    }                                                                                 \
    z[i] = (DST)where;                                                                \
}
ARG_REDUCTION(arg_max, v > best)
ARG_REDUCTION(arg_min, v < best)
#endif

// Cumsum/Cumprod along R of [outer, R, inner]: one work item per (o, k)
// line walks it in order (forward or, with REVERSE set, backward), so the
// sums are accumulated in the CPU kernel's order.  EXCLUSIVE writes the
// running value before adding the element.
#ifndef IS_BOOL
#define SCAN(NAME, IDENTITY, OP)                                                      \
__kernel void NAME(__global T *z, __global const T *x, const int outer, const int R, \
                   const int inner, const int exclusive, const int reverse) {         \
    const int i = get_global_id(0);                                                   \
    if (i >= outer * inner) return;                                                   \
    const long base = (long)(i / inner) * R * inner + i % inner;                      \
    T acc = IDENTITY;                                                                 \
    for (int s = 0; s < R; s++) {                                                     \
        const long at = base + (long)(reverse ? R - 1 - s : s) * inner;               \
        const T v = x[at];                                                            \
        if (exclusive) { z[at] = acc; acc = OP(acc, v); }                             \
        else { acc = OP(acc, v); z[at] = acc; }                                       \
    }                                                                                 \
}
#define PLUS(a, b) ((a) + (b))
#define TIMES(a, b) ((a) * (b))
SCAN(cumsum, (T)0, PLUS)
SCAN(cumprod, (T)1, TIMES)
#endif

// TopKV2 over the last axis of [rows, n]: one work item per element counts
// the elements ranked before it — larger, or equal with a lower index; a NaN
// ranks after every number (the CPU kernel's stable sort of -x) — and, if its
// rank is below k, writes itself and its index at that rank.  O(n^2) per row,
// no sort and no synchronisation.
#ifndef IS_BOOL
#ifdef IS_FLOAT
#define NAN_(v) isnan(v)
#else
#define NAN_(v) 0
#endif
inline int ranks_before(const T a, const int i, const T b, const int j) {
    if (NAN_(b)) return !NAN_(a) || i < j;
    if (NAN_(a)) return 0;
    return a > b || (a == b && i < j);
}

__kernel void top_k(__global T *values, __global int *indices, __global const T *x,
                    const int rows, const int n, const int k) {
    const int g = get_global_id(0);
    if (g >= rows * n) return;
    const int row = g / n, j = g % n;
    __global const T *r = x + (long)row * n;
    const T b = r[j];
    int rank = 0;
    for (int i = 0; i < n && rank < k; i++) rank += ranks_before(r[i], i, b, j);
    if (rank < k) {
        values[(long)row * k + rank] = b;
        indices[(long)row * k + rank] = j;
    }
}
#endif
