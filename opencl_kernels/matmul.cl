// Matrix multiplication C = op(A) op(B), for one matrix or a batch of them.
//
// Two algorithms, chosen per device and shape (plugins/opencl_gpu/gemm_tuning.py):
//
// * gemm_tiled, for GPUs: a work group computes a TSM x TSN tile of C.  It
//   walks K in steps of TSK, copying a TSK x TSM tile of A and a TSK x TSN
//   tile of B into local memory (each element read from global memory once
//   per group, not once per item), and each work item accumulates a
//   WPTM x WPTN block of C in registers from those tiles.  Out-of-range
//   elements load as zero and are not stored, so any size works in one launch.
//
// * gemm_packed, for CPU devices (PoCL), where local memory is only emulated:
//   each work item computes a TM x (NV * TN) block of C in TM * NV vector
//   registers of TN elements (TN = the device's preferred vector width),
//   one fused multiply-add per register per step through K.  An operand is
//   read in place when the blocks divide it; otherwise it is first copied
//   into zero-padded panels, as BLAS libraries do — pack_a lays A out as
//   [M/TM][K][TM], pack_b lays B out as [N/TNB][K][TNB] — so the inner loop
//   has no edge cases.
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
#if defined(IS_FLOAT) && defined(USE_FMA)
#define FMA(a, b, c) fma(a, b, c)
#else
#define FMA(a, b, c) MAD(a, b, c)
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
#ifndef NV
#define NV 1
#endif
// PoCL leaves loops over a block rolled unless told, and then keeps the
// accumulators in memory; and it compiles mad() into a multiply and an add,
// so fma() is used where the device fuses them (USE_FMA, from CL_FP_FMA).
#define UNROLL _Pragma("unroll")
#define TNB (TN * NV)   // columns of C per work item: NV vectors of TN

// pack_a and pack_b run one work item per row of a panel: item (k, block)
// writes the TM (or TNB) elements of that block's row k.  They serve operands
// whose elements are adjacent along M or N (a transposed A, an untransposed
// B, whose row is NV vector loads); pack_*_along_k below serve the others.

// Ap[batch][m / TM][k][m % TM] = A(m, k), 0 for m >= M.  Range: (K, Mp / TM, batches).
__kernel void pack_a(__global T *Ap, __global const T *A, const int M, const int K,
                     const int sam, const int sak, const int bsa) {
    const int k = get_global_id(0), mb = get_global_id(1), batch = get_global_id(2);
    __global T *row = Ap + ((long)batch * get_global_size(1) + mb) * K * TM + (long)k * TM;
    __global const T *a = A + (long)batch * bsa + (long)k * sak;
    for (int i = 0, m = mb * TM; i < TM; i++, m++) row[i] = m < M ? a[(long)m * sam] : (T)(0);
}

// Bp[batch][n / TNB][k][n % TNB] = B(k, n), 0 for n >= N.  Range: (K, Np / TNB, batches).
__kernel void pack_b(__global T *Bp, __global const T *B, const int N, const int K,
                     const int sbn, const int sbk, const int bsb) {
    const int k = get_global_id(0), nb = get_global_id(1), batch = get_global_id(2);
    __global T *row = Bp + ((long)batch * get_global_size(1) + nb) * K * TNB + (long)k * TNB;
    __global const T *b = B + (long)batch * bsb + (long)k * sbk;
    const int n0 = nb * TNB;
    if (sbn == 1 && n0 + TNB <= N) {
        for (int v = 0; v < NV; v++) VSTORE(VLOAD(0, b + n0 + v * TN), 0, row + v * TN);
        return;
    }
    for (int j = 0, n = n0; j < TNB; j++, n++) row[j] = n < N ? b[(long)n * sbn] : (T)(0);
}

// The same panels from an operand whose elements are adjacent along k (an
// untransposed A, a transposed B).  Reading one element per row and k, as
// pack_a / pack_b do, would walk `width` rows a power-of-two stride apart,
// which share a handful of cache sets and evict each other; here item
// (chunk, block) reads TN consecutive k of each of the block's `width` rows as
// one vector (a whole cache line) and writes them into the panel's rows
// k .. k + TN.  Range: (ceil(K / TN), blocks, batches).
inline void pack_along_k(__global T *panel, __global const T *x, const int extent, const int K,
                         const int s_x, const int width) {
    const int k0 = get_global_id(0) * TN, x0 = get_global_id(1) * width;
    for (int j = 0; j < width; j++) {
        const int at = x0 + j;
        if (at < extent && k0 + TN <= K) {
            T values[TN];
            VSTORE(VLOAD(0, x + (long)at * s_x + k0), 0, values);
            for (int t = 0; t < TN; t++) panel[(long)(k0 + t) * width + j] = values[t];
        } else {
            for (int k = k0; k < K && k < k0 + TN; k++)
                panel[(long)k * width + j] = at < extent ? x[(long)at * s_x + k] : (T)(0);
        }
    }
}

__kernel void pack_a_along_k(__global T *Ap, __global const T *A, const int M, const int K,
                             const int sam, const int bsa) {
    const int mb = get_global_id(1), batch = get_global_id(2);
    pack_along_k(Ap + ((long)batch * get_global_size(1) + mb) * K * TM, A + (long)batch * bsa,
                 M, K, sam, TM);
}

__kernel void pack_b_along_k(__global T *Bp, __global const T *B, const int N, const int K,
                             const int sbn, const int bsb) {
    const int nb = get_global_id(1), batch = get_global_id(2);
    pack_along_k(Bp + ((long)batch * get_global_size(1) + nb) * K * TNB, B + (long)batch * bsb,
                 N, K, sbn, TNB);
}

// One TM x TNB block of C per work item.  Each operand is read either from
// a panel made by pack_a / pack_b or, when its blocks need no padding, in
// place: element (i, k) of the item's block of A is a[i * sai + k * sak],
// row k of its block of B is b[k * sbk ...] (contiguous: NV vector loads),
// where a and b start `a_block` / `b_block` elements apart from one block to
// the next and bpa / bpb apart from one batch to the next (0 broadcasts).
// Range: (Np / TNB, Mp / TM, batches).
__kernel void gemm_packed(__global T *C, __global const T *A, __global const T *B,
                          const int M, const int N, const int K, const int ldc,
                          const long bpa, const long bpb, const int bsc,
                          const long a_block, const int sai, const int sak,
                          const long b_block, const int sbk) {
    const int nb = get_global_id(0), mb = get_global_id(1), batch = get_global_id(2);
    __global const T *a = A + batch * bpa + mb * a_block;
    __global const T *b = B + batch * bpb + nb * b_block;
    TV acc[TM][NV];
    UNROLL for (int i = 0; i < TM; i++)
        UNROLL for (int v = 0; v < NV; v++) acc[i][v] = (TV)(0);
#ifdef KB
    // K in blocks of KB with a barrier after each: the items of a work group
    // (which PoCL runs one after the other between barriers) then move
    // through K together, and the B rows they share stay in cache.
    for (int k0 = 0; k0 < K; k0 += KB) {
        const int k1 = min(K, k0 + KB);
#else
    {
        const int k0 = 0, k1 = K;
#endif
        for (int k = k0; k < k1; k++) {
            TV bv[NV];
            UNROLL for (int v = 0; v < NV; v++) bv[v] = VLOAD(0, b + k * sbk + v * TN);
            UNROLL for (int i = 0; i < TM; i++) {
                const TV av = (TV)(a[k * sak + i * sai]);
                UNROLL for (int v = 0; v < NV; v++) acc[i][v] = FMA(av, bv[v], acc[i][v]);
            }
        }
#ifdef KB
        barrier(CLK_GLOBAL_MEM_FENCE);
#endif
    }
    const int row = mb * TM, col = nb * TNB;
    __global T *c = C + (long)batch * bsc + (long)row * ldc + col;
    if (row + TM <= M && col + TNB <= N) {
        UNROLL for (int i = 0; i < TM; i++)
            UNROLL for (int v = 0; v < NV; v++) VSTORE(acc[i][v], 0, c + (long)i * ldc + v * TN);
        return;
    }
    for (int i = 0; i < TM && row + i < M; i++) {    // a block on the edge of C
        for (int v = 0; v < NV; v++) {
            T values[TN];
            VSTORE(acc[i][v], 0, values);
            for (int j = 0; j < TN && col + v * TN + j < N; j++)
                c[(long)i * ldc + v * TN + j] = values[j];
        }
    }
}

#endif
