// Convolution and pooling on NHWC tensors.
//
// Conv2D is im2col + matmul: im2col writes one row [KH * KW * C] per output
// pixel (zeros where a window hangs over the padding), and the matmul kernel
// multiplies the rows by the filter seen as [KH * KW * C, O].  The gradients
// reuse both: the filter gradient is im2col^T x dY, the input gradient is
// dY x filter^T followed by col2im, which sums every window entry back onto
// the input pixel it was read from.
//
// The backward kernels *gather*: one work item per input pixel loops over
// the (at most KH x KW) windows that read it, so no two items write the same
// address and no atomics are needed.  A window tap (di, dj) of output pixel
// (i, j) reads padded row i * sh + di * dh, i.e. input row h when
// h + top - di * dh is a multiple of sh, at i = (h + top - di * dh) / sh.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void im2col(__global T *cols, __global const T *x, const int B, const int H,
                     const int W, const int C, const int OH, const int OW, const int KH,
                     const int KW, const int sh, const int sw, const int dh, const int dw,
                     const int top, const int left) {
    const int idx = get_global_id(0);
    const int width = KH * KW * C;
    if (idx >= B * OH * OW * width) return;
    const int col = idx % width, pixel = idx / width;
    const int c = col % C, dj = (col / C) % KW, di = col / (C * KW);
    const int j = pixel % OW, i = (pixel / OW) % OH, b = pixel / (OW * OH);
    const int h = i * sh + di * dh - top, w = j * sw + dj * dw - left;
    cols[idx] = (h >= 0 && h < H && w >= 0 && w < W) ? x[((b * H + h) * W + w) * C + c] : 0;
}

__kernel void col2im(__global T *dx, __global const T *cols, const int B, const int H,
                     const int W, const int C, const int OH, const int OW, const int KH,
                     const int KW, const int sh, const int sw, const int dh, const int dw,
                     const int top, const int left) {
    const int idx = get_global_id(0);
    if (idx >= B * H * W * C) return;
    const int c = idx % C, w = (idx / C) % W, h = (idx / (C * W)) % H, b = idx / (C * W * H);
    T acc = 0;
    for (int di = 0; di < KH; di++) {
        const int hi = h + top - di * dh;
        if (hi < 0 || hi % sh) continue;
        const int i = hi / sh;
        if (i >= OH) continue;
        for (int dj = 0; dj < KW; dj++) {
            const int wj = w + left - dj * dw;
            if (wj < 0 || wj % sw) continue;
            const int j = wj / sw;
            if (j >= OW) continue;
            acc += cols[((b * OH + i) * OW + j) * (KH * KW * C) + (di * KW + dj) * C + c];
        }
    }
    dx[idx] = acc;
}

// ---- pooling (no dilation) ---------------------------------------------------------
#define OUT_INDEX                                                                     \
    const int idx = get_global_id(0);                                                 \
    if (idx >= B * OH * OW * C) return;                                               \
    const int c = idx % C, j = (idx / C) % OW, i = (idx / (C * OW)) % OH,            \
              b = idx / (C * OW * OH);                                                \
    const int h0 = i * sh - top, w0 = j * sw - left;

#define POOL_ARGS const int B, const int H, const int W, const int C, const int OH,   \
    const int OW, const int KH, const int KW, const int sh, const int sw,             \
    const int top, const int left

// The first maximum of each window in row-major order (NaN counts as the
// maximum), as the flat tap index di * KW + dj; padding never wins.
inline int window_argmax(__global const T *x, const int b, const int c, const int h0,
                         const int w0, POOL_ARGS) {
    T best = 0;
    int where = -1;
    for (int di = 0; di < KH; di++) {
        const int h = h0 + di;
        if (h < 0 || h >= H) continue;
        for (int dj = 0; dj < KW; dj++) {
            const int w = w0 + dj;
            if (w < 0 || w >= W) continue;
            const T v = x[((b * H + h) * W + w) * C + c];
            if (where < 0 || (best == best && (v > best || v != v))) {
                best = v;
                where = di * KW + dj;
            }
        }
    }
    return where;
}

__kernel void max_pool(__global T *z, __global const T *x, POOL_ARGS) {
    OUT_INDEX
    const int where = window_argmax(x, b, c, h0, w0, B, H, W, C, OH, OW, KH, KW, sh, sw,
                                    top, left);
    z[idx] = where < 0 ? -INFINITY
        : x[((b * H + h0 + where / KW) * W + w0 + where % KW) * C + c];
}

__kernel void max_pool_argmax(__global int *z, __global const T *x, POOL_ARGS) {
    OUT_INDEX
    z[idx] = window_argmax(x, b, c, h0, w0, B, H, W, C, OH, OW, KH, KW, sh, sw, top, left);
}

// dx[b, h, w, c] = sum of grad over the windows whose maximum is (h, w).
__kernel void max_pool_grad(__global T *dx, __global const int *winners,
                            __global const T *grad, POOL_ARGS) {
    const int idx = get_global_id(0);
    if (idx >= B * H * W * C) return;
    const int c = idx % C, w = (idx / C) % W, h = (idx / (C * W)) % H, b = idx / (C * W * H);
    T acc = 0;
    for (int di = 0; di < KH; di++) {
        const int hi = h + top - di;
        if (hi < 0 || hi % sh) continue;
        const int i = hi / sh;
        if (i >= OH) continue;
        for (int dj = 0; dj < KW; dj++) {
            const int wj = w + left - dj;
            if (wj < 0 || wj % sw) continue;
            const int j = wj / sw;
            if (j >= OW) continue;
            const int o = ((b * OH + i) * OW + j) * C + c;
            if (winners[o] == di * KW + dj) acc += grad[o];
        }
    }
    dx[idx] = acc;
}

// How many real (unpadded) input pixels window (i, j) covers.
inline int window_count(const int i, const int j, POOL_ARGS) {
    const int h0 = i * sh - top, w0 = j * sw - left;
    const int rows = min(H, h0 + KH) - max(0, h0), columns = min(W, w0 + KW) - max(0, w0);
    return rows * columns;
}

__kernel void avg_pool(__global T *z, __global const T *x, POOL_ARGS) {
    OUT_INDEX
    T acc = 0;
    for (int h = max(0, h0); h < min(H, h0 + KH); h++)
        for (int w = max(0, w0); w < min(W, w0 + KW); w++)
            acc += x[((b * H + h) * W + w) * C + c];
    z[idx] = acc / window_count(i, j, B, H, W, C, OH, OW, KH, KW, sh, sw, top, left);
}

__kernel void avg_pool_grad(__global T *dx, __global const T *grad, POOL_ARGS) {
    const int idx = get_global_id(0);
    if (idx >= B * H * W * C) return;
    const int c = idx % C, w = (idx / C) % W, h = (idx / (C * W)) % H, b = idx / (C * W * H);
    T acc = 0;
    for (int di = 0; di < KH; di++) {
        const int hi = h + top - di;
        if (hi < 0 || hi % sh) continue;
        const int i = hi / sh;
        if (i >= OH) continue;
        for (int dj = 0; dj < KW; dj++) {
            const int wj = w + left - dj;
            if (wj < 0 || wj % sw) continue;
            const int j = wj / sw;
            if (j >= OW) continue;
            acc += grad[((b * OH + i) * OW + j) * C + c]
                / window_count(i, j, B, H, W, C, OH, OW, KH, KW, sh, sw, top, left);
        }
    }
    dx[idx] = acc;
}
