// Counter-based random numbers: element i of draw number `step` of an op is
// a pure function of (key, step, i), so no state lives on the device and
// every work item draws independently (the idea of Philox in TF's GPU
// kernels; here the mixing function is SplitMix64, Steele et al. 2014).
// `key` comes from the op's seed and seed2; the host advances `step` on
// every run, so successive runs draw new numbers and a seeded program
// always draws the same sequence.

#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

inline ulong mix64(ulong z) {
    z += 0x9E3779B97F4A7C15UL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return z ^ (z >> 31);
}

// A uniform in (0, 1]: 24 random bits (53 for double), never 0 so log() is finite.
inline T uniform_open(const ulong key, const ulong step, const ulong i, const uint stream) {
    const ulong bits = mix64(key ^ mix64(step * 0x100000000UL + stream) ^ mix64(i));
#ifdef IS_DOUBLE
    return ((T)(bits >> 11) + 1) * (T)(1.0 / 9007199254740992.0);
#else
    return ((T)(uint)(bits >> 40) + 1) * (T)(1.0f / 16777216.0f);
#endif
}

// Box-Muller: two uniforms give one standard normal.
inline T normal(const ulong key, const ulong step, const ulong i, const uint stream) {
    const T u1 = uniform_open(key, step, i, 2 * stream);
    const T u2 = uniform_open(key, step, i, 2 * stream + 1);
    return sqrt(-2 * log(u1)) * cos((T)6.283185307179586 * u2);
}

__kernel void random_uniform(__global T *z, const ulong key, const ulong step, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = 1 - uniform_open(key, step, i, 0);     // [0, 1), as TF
}

__kernel void random_normal(__global T *z, const ulong key, const ulong step, const int n) {
    const int i = get_global_id(0);
    if (i < n) z[i] = normal(key, step, i, 0);
}

// Draws again (from further streams) until |z| <= 2, as TF's truncated normal.
__kernel void truncated_normal(__global T *z, const ulong key, const ulong step, const int n) {
    const int i = get_global_id(0);
    if (i >= n) return;
    T v = normal(key, step, i, 0);
    for (uint stream = 1; fabs(v) > 2 && stream < 64; stream++) v = normal(key, step, i, stream);
    z[i] = fabs(v) > 2 ? 0 : v;
}
