// Cast from T to DST (-D DST=float).  C conversions truncate floats toward
// zero and wrap integers, as TF's Cast does; a cast to bool tests x != 0.
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void cast(__global DST *z, __global const T *x, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
#ifdef DST_BOOL
    z[i] = x[i] != 0;
#else
    z[i] = (DST)x[i];
#endif
}
