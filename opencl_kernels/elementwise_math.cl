// The helpers that the expression templates of kernels/elementwise.py call,
// written for one element type T (-D T=float, with IS_FLOAT, IS_INT or IS_BOOL).
//
// A helper's name carries its element type: TYPED(floor_mod) is floor_mod_float
// where T is float.  A generated fused kernel (kernels/fusion.py) mixes element
// types, so it includes this text once per type it uses, and the helpers of
// each type live side by side; the unfused elementwise program includes it once.

#ifndef ELEMENTWISE_MATH_ONCE
#define ELEMENTWISE_MATH_ONCE
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define SELU_ALPHA 1.6732632423543772848170429916717
#define SELU_SCALE 1.0507009873554804934193349852946
#define TYPED_PASTE(name, type) name##_##type
#define TYPED_EXPAND(name, type) TYPED_PASTE(name, type)
#define TYPED(name) TYPED_EXPAND(name, T)

// Broadcasting: the offset in an input of flat output index i, from the
// output's shape and the input's strides per output dimension (0 where it is
// broadcast), both padded to 8 dimensions by the host.
// The host pads the shape with 1s in front (s0 first); a 1 is never a real
// dimension after merging, so skipping it saves an integer division and a
// modulo, the dearest instructions here (a [128,256] + [256] bias add ran
// 30x slower dividing by all eight sizes).  The branch is the same for every
// work item.
#define STEP(k) if (shape.s##k != 1) { c = i % shape.s##k; i /= shape.s##k; \
                                       off += c * st.s##k; }

inline int bcast_off(int i, const int8 shape, const int8 st) {
    int off = 0, c;
    STEP(7) STEP(6) STEP(5) STEP(4) STEP(3) STEP(2) STEP(1)
    return off + i * st.s0;
}
#endif

#ifdef IS_INT
// a ** b by squaring; a negative exponent truncates 1 / a ** |b| toward zero
// (TF's CPU kernel rejects it; a device kernel cannot raise).
inline T TYPED(int_pow)(T a, T b) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    T result = 1;
    while (b) {
        if (b & 1) result *= a;
        a *= a;
        b >>= 1;
    }
    return result;
}
#endif

#ifdef IS_FLOAT
inline T TYPED(floor_mod)(T a, T b) {   // NumPy's mod: the result takes b's sign
    T r = fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}

inline T TYPED(stable_sigmoid)(T a) {   // exp only of -|a|: never overflows
    T e = exp(-fabs(a));
    return a >= 0 ? 1 / (1 + e) : e / (1 + e);
}
#endif
