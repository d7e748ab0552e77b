// Data movement: every reshaping op that moves elements is one strided copy.
//
// strided_gather: z[i] = x[base + off(i)], where off() unravels the flat
// output index i over `shape` and weighs each coordinate by the input
// stride `st` (in elements; 0 repeats, negative walks backwards).  With the
// right strides it is Transpose, Slice, StridedSlice, Tile (a dimension split
// in two, one of stride 0), Split, Unpack and BroadcastTo.
// strided_scatter writes the other way, z[base + off(i)] = x[i]: ConcatV2,
// Pack, Pad and StridedSliceGrad place a block inside a larger output.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

// The host pads the shape with 1s in front (s0 first); a 1 is never a real
// dimension after merging, so skipping it saves an integer division and a
// modulo, the dearest instructions here (a [128,256] + [256] bias add ran
// 30x slower dividing by all eight sizes).  The branch is the same for every
// work item.
#define STEP(k) if (shape.s##k != 1) { c = i % shape.s##k; i /= shape.s##k; \
                                       off += c * st.s##k; }

inline int strided_off(int i, const int8 shape, const int8 st) {
    int off = 0, c;
    STEP(7) STEP(6) STEP(5) STEP(4) STEP(3) STEP(2) STEP(1)
    return off + i * st.s0;
}

__kernel void strided_gather(__global T *z, __global const T *x, const int n, const int base,
                             const int8 shape, const int8 st) {
    const int i = get_global_id(0);
    if (i < n) z[i] = x[base + strided_off(i, shape, st)];
}

__kernel void strided_scatter(__global T *z, __global const T *x, const int n, const int base,
                              const int8 shape, const int8 st) {
    const int i = get_global_id(0);
    if (i < n) z[base + strided_off(i, shape, st)] = x[i];
}

// GatherV2 along an axis: x viewed as [outer, axis_size, inner], indices as
// [count]: z[o, j, k] = x[o, indices[j], k], or 0 for an index out of range
// (TF's GPU kernel also writes zeros there rather than failing).
__kernel void gather(__global T *z, __global const T *x, __global const int *indices,
                     const int outer, const int axis_size, const int count, const int inner) {
    const int i = get_global_id(0);
    if (i >= outer * count * inner) return;
    const int k = i % inner, j = (i / inner) % count, o = i / (inner * count);
    const int index = indices[j];
    z[i] = (index >= 0 && index < axis_size) ? x[(o * axis_size + index) * inner + k] : (T)0;
}

// OneHot with the new axis last: z[i, d] = indices[i] == d ? on : off.
__kernel void one_hot(__global T *z, __global const int *indices, __global const T *on,
                      __global const T *off, const int n, const int depth) {
    const int i = get_global_id(0);
    if (i < n * depth) z[i] = indices[i / depth] == i % depth ? on[0] : off[0];
}

// The element offset of the K coordinates at idx in a tensor whose first
// axes have sizes dims and strides st, or -1 if one is out of range.
inline long nd_offset(__global const int *idx, const int K, int8 dims, int8 st) {
    const int *d = (const int *)&dims, *s = (const int *)&st;
    long off = 0;
    for (int k = 0; k < K; k++) {
        const int c = idx[k];
        if (c < 0 || c >= d[k]) return -1;
        off += (long)c * s[k];
    }
    return off;
}

// GatherNd: z[j, :] = x[indices[j, :K], :] for output rows [count, inner], or
// zeros for coordinates out of range (TF's GPU kernel, like GatherV2's).
__kernel void gather_nd(__global T *z, __global const T *x, __global const int *indices,
                        const int count, const int inner, const int K, const int8 dims,
                        const int8 st) {
    const int i = get_global_id(0);
    if (i >= count * inner) return;
    const long off = nd_offset(indices + (long)(i / inner) * K, K, dims, st);
    z[i] = off >= 0 ? x[off + i % inner] : (T)0;
}

// UnsortedSegmentSum: one work item per element of data, viewed as
// [count, inner], adds it to z[segment_ids[j], k] with an atomic add (a
// compare-and-swap loop on the float's bits: OpenCL 1.2 has no float atomics).
// Ids outside [0, num_segments) are dropped, as TF's GPU kernel does.
// The order of the additions varies, so sums may differ in the last bits.
#if defined(IS_FLOAT) && defined(SEGMENT_SUM)
#ifdef IS_DOUBLE
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define BITS ulong
#define AS_BITS as_ulong
#define AS_T as_double
#define CMPXCHG atom_cmpxchg
#else
#define BITS uint
#define AS_BITS as_uint
#define AS_T as_float
#define CMPXCHG atomic_cmpxchg
#endif

inline void atomic_add_t(volatile __global T *address, const T value) {
    BITS old = AS_BITS(*address), assumed;
    do {
        assumed = old;
        old = CMPXCHG((volatile __global BITS *)address, assumed, AS_BITS(AS_T(assumed) + value));
    } while (old != assumed);
}

// ScatterNd: update row j (of [count, inner]) is added at the coordinates
// indices[j, :K] of z (dims and element strides of z's first K axes in
// `dims`/`st`); coordinates out of range are dropped, as on TF's GPU.
__kernel void scatter_nd(__global T *z, __global const T *updates, __global const int *indices,
                         const int count, const int inner, const int K, const int8 dims,
                         const int8 st) {
    const int i = get_global_id(0);
    if (i >= count * inner) return;
    const long off = nd_offset(indices + (long)(i / inner) * K, K, dims, st);
    if (off >= 0) atomic_add_t(z + off + i % inner, updates[i]);
}

__kernel void segment_sum(__global T *z, __global const T *x, __global const int *ids,
                          const int count, const int inner, const int num_segments) {
    const int i = get_global_id(0);
    if (i >= count * inner) return;
    const int id = ids[i / inner];
    if (id >= 0 && id < num_segments) atomic_add_t(z + (long)id * inner + i % inner, x[i]);
}
#endif

// MirrorPad along one axis of x seen as [outer, n, inner]: padded position p
// of [outer, before + n + after, inner] copies source row c, mirrored around
// the edge row (REFLECT, sym = 0) or including it (SYMMETRIC, sym = 1).
inline int mirror_source(const int p, const int n, const int before, const int sym) {
    const int q = p - before;
    if (q < 0) return -q - sym;
    if (q >= n) return 2 * n - 2 + sym - q;
    return q;
}

__kernel void mirror_pad_axis(__global T *z, __global const T *x, const int total,
                              const int n, const int inner, const int before,
                              const int after, const int sym) {
    const int i = get_global_id(0);
    if (i >= total) return;
    const int m = before + n + after;
    const int k = i % inner, p = (i / inner) % m, o = i / (inner * m);
    z[i] = x[((long)o * n + mirror_source(p, n, before, sym)) * inner + k];
}

// MirrorPadGrad along one axis: row c of [outer, n, inner] sums the rows of
// grad [outer, before + n + after, inner] that copied it — itself, and at
// most one mirror image in each padding (each padding is at most n rows).
__kernel void mirror_pad_grad_axis(__global T *z, __global const T *g, const int total,
                                   const int n, const int inner, const int before,
                                   const int after, const int sym) {
    const int i = get_global_id(0);
    if (i >= total) return;
    const int m = before + n + after;
    const int k = i % inner, c = (i / inner) % n, o = i / (inner * n);
    __global const T *row = g + (long)o * m * inner + k;
    T acc = row[(long)(before + c) * inner];
    const int left = before - c - sym;              // mirror_source(left) == c
    if (left >= 0 && left < before) acc += row[(long)left * inner];
    const int right = before + 2 * n - 2 + sym - c;
    if (right >= before + n && right < m) acc += row[(long)right * inner];
    z[i] = acc;
}
