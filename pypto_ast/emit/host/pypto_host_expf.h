// pypto_host_expf.h -- host (CPU) only: the runtime's float Exp on four vectors of 8 floats side by
// side, one definition for the two places that run it: the Exp call (runtime/fastfloat.h's
// ExpF32, whose scalar ExpF is the same sequence one float at a time) and the fused runs
// (pypto_host_fuse.h), so that a fused Exp and the call it replaces give the same bits by
// construction.  Every a * b + c of the reduction and the polynomial is fmaf lane by lane, which
// g++ turns into one vfmadd where the caller's ISA has FMA (x86-64-v3 and v4; the fused region
// targets avx2,fma) and into libm's exact fmaf where not.  Included by kernel TUs through
// kernel_operator.h and by the runtime; nothing here may depend on either.
#ifndef PYPTO_HOST_EXPF_H
#define PYPTO_HOST_EXPF_H

#include <cstdint>

namespace pypto_host {
namespace expf {
typedef float VF8 __attribute__((vector_size(32)));
typedef int32_t VI8 __attribute__((vector_size(32)));
// (Vectors pass by reference or pointer: by value they would change the ABI between ISAs.)
__attribute__((always_inline)) inline void FmaV(VF8& r, const VF8& a, const VF8& b, const VF8& c)
{
    for (int i = 0; i < 8; ++i) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
}
__attribute__((always_inline)) inline void Exp4x8(VF8* v)
{
    const VF8 one = VF8{} + 1.0f;
    VF8 x[4], t[4], n[4], p[4];
    for (int j = 0; j < 4; ++j) {
        x[j] = v[j] < 89.0f ? v[j] : 89.0f;  // as ExpF: a NaN becomes 89, replaced at the end
        x[j] = x[j] > -104.0f ? x[j] : -104.0f;
    }
    for (int j = 0; j < 4; ++j) FmaV(t[j], x[j], one * 1.44269504088896341f, one * 12582912.0f);
    for (int j = 0; j < 4; ++j) n[j] = t[j] - 12582912.0f;
    for (int j = 0; j < 4; ++j) FmaV(x[j], -n[j], one * 0.693359375f, x[j]);
    for (int j = 0; j < 4; ++j) FmaV(x[j], -n[j], one * -2.12194440e-4f, x[j]);
    for (int j = 0; j < 4; ++j) FmaV(p[j], x[j], one * 1.9875691500e-4f, one * 1.3981999507e-3f);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one * 8.3334519073e-3f);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one * 4.1665795894e-2f);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one * 1.6666665459e-1f);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one * 5.0000001201e-1f);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one);
    for (int j = 0; j < 4; ++j) FmaV(p[j], p[j], x[j], one);
    for (int j = 0; j < 4; ++j) {
        const VI8 ni = (VI8)t[j] - 0x4B400000;  // the bits of t, as ExpF's BitCast
        const VI8 n1 = ni >> 1;
        const VF8 r = (p[j] * (VF8)((n1 + 127) << 23)) * (VF8)((ni - n1 + 127) << 23);
        v[j] = v[j] != v[j] ? (VF8)((VI8)v[j] | 0x00400000) : r;
    }
}
}  // namespace expf
}  // namespace pypto_host

#endif  // PYPTO_HOST_EXPF_H
