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

#define STEP(k) c = i % shape.s##k; i /= shape.s##k; off += c * st.s##k;

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

__kernel void segment_sum(__global T *z, __global const T *x, __global const int *ids,
                          const int count, const int inner, const int num_segments) {
    const int i = get_global_id(0);
    if (i >= count * inner) return;
    const int id = ids[i / inner];
    if (id >= 0 && id < num_segments) atomic_add_t(z + (long)id * inner + i % inner, x[i]);
}
#endif
