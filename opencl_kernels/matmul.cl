// Matrix multiplication C = op(A) op(B), for one matrix or a batch of them.
//
// Two algorithms, chosen per device (plugins/opencl_gpu/gemm_tuning.py):
//
// * gemm_tiled, for GPUs: a work group computes a TSM x TSN tile of C.  It
//   walks K in steps of TSK, copying a TSK x TSM tile of A and a TSK x TSN
//   tile of B into local memory (each element read from global memory once
//   per group, not once per item), and each work item accumulates a
//   WPTM x WPTN block of C in registers from those tiles.  Out-of-range
//   elements load as zero and are not stored, so any size works in one launch.
//
// * gemm_packed, for CPU devices (PoCL), where local memory is only emulated:
//   the operands are first copied into panels, as BLAS libraries do —
//   pack_a lays A out as [M/TM][K][TM], pack_b lays B out as [N/TN][K][TN],
//   zero padded — and each work item computes a TM x TN block of C with TM
//   vector registers of TN elements (TN = the device's preferred vector
//   width), reading both panels as contiguous streams.  The padding removes
//   every edge case from the inner loop.
//
// Strides are in elements, so a transposed operand costs nothing: element
// (m, k) of A is A[m * sam + k * sak], element (k, n) of B is
// B[k * sbk + n * sbn], element (m, n) of C is C[m * ldc + n].  Dimension 2
// of the range is the batch; a batch stride of 0 broadcasts a matrix over it.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CAT(a, b) a##b
#define VEC(t, n) CAT(t, n)
// mad() is defined for floating point only; integer products (int32/int64
// matmul, integer Conv2D) wrap around on overflow, as NumPy's and TF's do.
#ifdef IS_FLOAT
#define MAD(a, b, c) mad(a, b, c)
#else
#define MAD(a, b, c) ((a) * (b) + (c))
#endif

#ifdef TSM   // ---- gemm_tiled: local-memory tiles, register blocks -------------------------

#define RTSM (TSM / WPTM)   // work items of a group along M
#define RTSN (TSN / WPTN)   // work items of a group along N

// Copies rows [k0, k0 + TSK) x columns [off, off + TS) of a K x `extent`
// operand into tile[TSK][TS] (zero outside), the group's items sharing the
// work.  `kfast` says whether consecutive k are adjacent in memory; the items
// then walk k fastest, so neighbouring items read neighbouring addresses.
#define LOAD_TILE(tile, TS, src, s_k, s_x, extent, off, kfast)                           \
    for (int l = tid; l < TSK * TS; l += RTSM * RTSN) {                                    \
        const int kk = (kfast) ? l % TSK : l / TS;                                         \
        const int xx = (kfast) ? l / TSK : l % TS;                                         \
        const int gk = k0 + kk, gx = (off) + xx;                                           \
        tile[kk][xx] = (gk < K && gx < (extent)) ? src[(long)gk * (s_k) + (long)gx * (s_x)] \
                                                 : (T)(0);                                 \
    }

__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1)))
void gemm_tiled(__global T *C, __global const T *A, __global const T *B,
                const int M, const int N, const int K, const int sam, const int sak,
                const int sbk, const int sbn, const int ldc, const int bsa, const int bsb,
                const int bsc) {
    const int tn = get_local_id(0), tm = get_local_id(1), tid = tm * RTSN + tn;
    const int offn = get_group_id(0) * TSN, offm = get_group_id(1) * TSM;
    const int batch = get_global_id(2);
    __global const T *a = A + (long)batch * bsa;
    __global const T *b = B + (long)batch * bsb;
    __local T as[TSK][TSM];
    __local T bs[TSK][TSN];
    T acc[WPTM][WPTN];
    for (int i = 0; i < WPTM; i++)
        for (int j = 0; j < WPTN; j++) acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += TSK) {
        LOAD_TILE(as, TSM, a, sak, sam, M, offm, sak == 1)
        LOAD_TILE(bs, TSN, b, sbk, sbn, N, offn, sbk == 1)
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < TSK; kk++) {
            T breg[WPTN];
            for (int j = 0; j < WPTN; j++) breg[j] = bs[kk][tn + j * RTSN];
            for (int i = 0; i < WPTM; i++) {
                const T areg = as[kk][tm + i * RTSM];
                for (int j = 0; j < WPTN; j++) acc[i][j] = MAD(areg, breg[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global T *c = C + (long)batch * bsc;
    for (int i = 0; i < WPTM; i++) {
        const int m = offm + tm + i * RTSM;
        if (m >= M) break;
        for (int j = 0; j < WPTN; j++) {
            const int n = offn + tn + j * RTSN;
            if (n < N) c[(long)m * ldc + n] = acc[i][j];
        }
    }
}

#else        // ---- gemm_packed: panels in global memory, vector registers ------------------

#define TV VEC(T, TN)
#define VLOAD VEC(vload, TN)
#define VSTORE VEC(vstore, TN)
#ifndef KB
#define KB 128
#endif

// The packing kernels run one work item per row of a panel: item (k, block)
// writes the TM (or TN) elements of that block's row k.  Neighbouring items
// take neighbouring k, adjacent in memory for an untransposed A and a
// transposed B; an untransposed B's row is one vector load.

// Ap[batch][m / TM][k][m % TM] = A(m, k), 0 for m >= M.  Range: (K, Mp / TM, batches).
__kernel void pack_a(__global T *Ap, __global const T *A, const int M, const int K,
                     const int sam, const int sak, const int bsa) {
    const int k = get_global_id(0), mb = get_global_id(1), batch = get_global_id(2);
    __global T *row = Ap + ((long)batch * get_global_size(1) + mb) * K * TM + (long)k * TM;
    __global const T *a = A + (long)batch * bsa + (long)k * sak;
    for (int i = 0, m = mb * TM; i < TM; i++, m++) row[i] = m < M ? a[(long)m * sam] : (T)(0);
}

// Bp[batch][n / TN][k][n % TN] = B(k, n), 0 for n >= N.  Range: (K, Np / TN, batches).
__kernel void pack_b(__global T *Bp, __global const T *B, const int N, const int K,
                     const int sbn, const int sbk, const int bsb) {
    const int k = get_global_id(0), nb = get_global_id(1), batch = get_global_id(2);
    __global T *row = Bp + ((long)batch * get_global_size(1) + nb) * K * TN + (long)k * TN;
    __global const T *b = B + (long)batch * bsb + (long)k * sbk;
    const int n0 = nb * TN;
    if (sbn == 1 && n0 + TN <= N) {
        VSTORE(VLOAD(0, b + n0), 0, row);
        return;
    }
    for (int j = 0, n = n0; j < TN; j++, n++) row[j] = n < N ? b[(long)n * sbn] : (T)(0);
}

// One TM x TN block of C per work item, from panels made by pack_a / pack_b
// (bpa, bpb: their batch strides, 0 to broadcast).  Range: (Np / TN, Mp / TM, batches).
__kernel void gemm_packed(__global T *C, __global const T *Ap, __global const T *Bp,
                          const int M, const int N, const int K, const int ldc,
                          const long bpa, const long bpb, const int bsc) {
    const int nb = get_global_id(0), mb = get_global_id(1), batch = get_global_id(2);
    __global const T *a = Ap + batch * bpa + (long)mb * K * TM;
    __global const T *b = Bp + batch * bpb + (long)nb * K * TN;
    TV acc[TM];
    for (int i = 0; i < TM; i++) acc[i] = (TV)(0);
    // K is walked in blocks with a barrier after each: the items of a
    // work-group then move through K together, so the panels they share stay
    // in cache (PoCL runs a group's items one after the other between barriers).
    for (int k0 = 0; k0 < K; k0 += KB) {
        const int k1 = min(K, k0 + KB);
        for (int k = k0; k < k1; k++) {
            const TV bv = VLOAD(k, b);
            for (int i = 0; i < TM; i++) acc[i] = MAD((TV)(a[k * TM + i]), bv, acc[i]);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    const int row = mb * TM, col = nb * TN;
    __global T *c = C + (long)batch * bsc + (long)row * ldc + col;
    if (row + TM <= M && col + TN <= N) {
        for (int i = 0; i < TM; i++) VSTORE(acc[i], 0, c + (long)i * ldc);
        return;
    }
    for (int i = 0; i < TM && row + i < M; i++) {    // a block on the edge of C
        T values[TN];
        VSTORE(acc[i], 0, values);
        for (int j = 0; j < TN && col + j < N; j++) c[(long)i * ldc + j] = values[j];
    }
}

#endif
