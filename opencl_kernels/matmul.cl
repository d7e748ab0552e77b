// Matrix multiplication C = A B, for one matrix or a batch of them.
//
// matmul_blocked: register blocking.  Each work item computes a TM x 8 block
// of C, keeping it in TM vector registers (T8 = float8 / double8).  Per step
// k it loads one row-vector of 8 elements of B and TM scalars of A and does
// TM vector multiply-adds: TM * 8 * 2 flops for 8 + TM loads.  That ratio,
// not local memory, is what makes a CPU-like device (PoCL) fast; a GPU also
// benefits from the reuse.  It covers the largest block of C that is a
// multiple of TM x 8; matmul_edge computes the remaining strips one element
// per work item.
//
// Strides are in elements: A is read as A[m * sam + k * sak] (so a transposed
// A costs nothing), B as B[k * ldb + n] (a transposed B is copied first by the
// host, a cheap O(n^2) step), C as C[m * ldc + n].  Dimension 2 of the range
// is the batch; a batch stride of 0 broadcasts a matrix over the batch.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CAT(a, b) a##b
#define VEC(t, n) CAT(t, n)
#define T8 VEC(T, 8)
#ifndef TM
#define TM 8
#endif
#define KB 128
// mad() is defined for floating point only; integer products (int32/int64
// matmul, integer Conv2D) wrap around on overflow, as NumPy's and TF's do.
#ifdef IS_FLOAT
#define MAD(a, b, c) mad(a, b, c)
#else
#define MAD(a, b, c) ((a) * (b) + (c))
#endif

__kernel void matmul_blocked(__global T *C, __global const T *A, __global const T *B,
                             const int K, const int sam, const int sak, const int ldb,
                             const int ldc, const int bsa, const int bsb, const int bsc) {
    const int col = get_global_id(0) * 8;
    const int row = get_global_id(1) * TM;
    const int batch = get_global_id(2);
    __global const T *a = A + (long)batch * bsa + (long)row * sam;
    __global const T *b = B + (long)batch * bsb + col;
    __global T *c = C + (long)batch * bsc + (long)row * ldc + col;
    T8 acc[TM];
    for (int i = 0; i < TM; i++) acc[i] = (T8)(0);
    // K is walked in blocks with a barrier after each: the items of a
    // work-group then move through K together, so the block of A and B they
    // share stays in cache (PoCL runs a group's items one after the other
    // between barriers).  Without it, 2048^2 runs at less than half the speed.
    for (int k0 = 0; k0 < K; k0 += KB) {
        const int k1 = min(K, k0 + KB);
        for (int k = k0; k < k1; k++) {
            const T8 bv = vload8(0, b + (long)k * ldb);
            __global const T *ak = a + (long)k * sak;
            for (int i = 0; i < TM; i++) acc[i] = MAD((T8)(ak[i * sam]), bv, acc[i]);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    for (int i = 0; i < TM; i++) vstore8(acc[i], 0, c + (long)i * ldc);
}

// One element of C per work item, for the strips matmul_blocked leaves:
// rows [row0, M) x all columns, and rows [0, row0) x columns [col0, N).
__kernel void matmul_edge(__global T *C, __global const T *A, __global const T *B,
                          const int M, const int N, const int K, const int row0,
                          const int col0, const int sam, const int sak, const int ldb,
                          const int ldc, const int bsa, const int bsb, const int bsc) {
    const int i = get_global_id(0);
    const int batch = get_global_id(1);
    const int bottom = (M - row0) * N;           // the strip under the blocked region
    int m, n;
    if (i < bottom) { m = row0 + i / N; n = i % N; }
    else {
        const int j = i - bottom, width = N - col0;
        if (j >= row0 * width) return;
        m = j / width; n = col0 + j % width;
    }
    __global const T *a = A + (long)batch * bsa + (long)m * sam;
    __global const T *b = B + (long)batch * bsb + n;
    T acc = 0;
    for (int k = 0; k < K; k++) acc = MAD(a[(long)k * sak], b[(long)k * ldb], acc);
    C[(long)batch * bsc + (long)m * ldc + n] = acc;
}
