// runtime/fastfloat.h -- the vectorised float/half loops that the vector ops share (count
// forms, Cast float<->half, float reductions): included by runtime/elementwise.cpp and
// runtime/reduce.cpp only, each getting its own (internal) copy of what it uses.
#ifndef PYPTO_HOST_RUNTIME_FASTFLOAT_H
#define PYPTO_HOST_RUNTIME_FASTFLOAT_H

#include "runtime/internal.h"
#include "pypto_host_expf.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace AscendC {
namespace detail {
namespace {

// ---- Fast elementwise loops (float and half) -------------------------------------------
// Operands are checked once per call by the callers.  Data moves through typed stack chunks
// (memcpy in and out: no aliasing assumptions, and dst may be the very same buffer as a
// source, which the overlap rule allows), and the per-chunk loops are plain float loops that
// g++ vectorises.  half is widened to float exactly and rounded once back to half.
constexpr int64_t kChunk = 512;  // elements per stack chunk
// The chunk loops are compiled three times on x86-64 g++, for AVX-512 (x86-64-v4), AVX2 with
// FMA (x86-64-v3) and the baseline ISA, and picked at load time (target_clones: the build stays
// portable).  No contraction: the runtime is built with -ffp-contract=off so that no a * b + c
// becomes an FMA by the compiler's choice (an FMA rounds once, and would change the bits between
// clones).  Where an algorithm wants one it says so (ExpF's __builtin_fmaf): an instruction on
// x86-64-v3 and v4, libm's exact fmaf on the baseline, the same bits on every clone.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
#define PYPTO_HOST_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PYPTO_HOST_SIMD
#endif
template <typename T> constexpr bool IsFastFloat() { return std::is_same<T, float>::value || std::is_same<T, half>::value; }

// Exact binary16 -> binary32 (all halves are floats).  Branch-free, vectorisable.  Not inlined
// (nor FloatToHalf): every half op calls them once per chunk, and one copy of each keeps the
// runtime's build short.
PYPTO_HOST_SIMD __attribute__((noinline)) void HalfToFloat(float* out, const uint16_t* in, int64_t n)
{
    uint32_t nb[kChunk], db[kChunk];
    for (int64_t k = 0; k < n; ++k) {
        const uint32_t w = static_cast<uint32_t>(in[k]) << 16, two = w + w;
        nb[k] = (two >> 4) + (0xE0u << 23);       // normal numbers, scaled by 2^112 below
        db[k] = (two >> 17) | (126u << 23);       // subnormals: 0.5 + m * 2^-24, minus 0.5 below
    }
    float nf[kChunk], df[kChunk];
    std::memcpy(nf, nb, static_cast<size_t>(n) * 4);
    std::memcpy(df, db, static_cast<size_t>(n) * 4);
    for (int64_t k = 0; k < n; ++k) { nf[k] *= 0x1.0p-112f; df[k] -= 0.5f; }
    std::memcpy(nb, nf, static_cast<size_t>(n) * 4);
    std::memcpy(db, df, static_cast<size_t>(n) * 4);
    for (int64_t k = 0; k < n; ++k) {
        const uint32_t w = static_cast<uint32_t>(in[k]) << 16, two = w + w;
        nb[k] = (w & 0x80000000u) | (two < (1u << 27) ? db[k] : nb[k]);
    }
    std::memcpy(out, nb, static_cast<size_t>(n) * 4);
}
// binary32 -> binary16, round to nearest even, overflow to inf, NaN -> 0x7E00 (as
// fp::Encode).  Branch-free, vectorisable; relies on IEEE float rounding (no -ffast-math).
PYPTO_HOST_SIMD __attribute__((noinline)) void FloatToHalf(uint16_t* out, const float* in, int64_t n)
{
    uint32_t w[kChunk], bias[kChunk];
    float base[kChunk];
    std::memcpy(w, in, static_cast<size_t>(n) * 4);
    for (int64_t k = 0; k < n; ++k) {
        base[k] = (std::fabs(in[k]) * 0x1.0p+112f) * 0x1.0p-110f;
        uint32_t b = (w[k] + w[k]) & 0xFF000000u;
        b = b < 0x71000000u ? 0x71000000u : b;
        bias[k] = (b >> 1) + 0x07800000u;
    }
    float bf[kChunk];
    std::memcpy(bf, bias, static_cast<size_t>(n) * 4);
    for (int64_t k = 0; k < n; ++k) base[k] = bf[k] + base[k];
    std::memcpy(bias, base, static_cast<size_t>(n) * 4);
    for (int64_t k = 0; k < n; ++k) {
        const uint32_t bits = bias[k];
        const uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
        const uint32_t two = w[k] + w[k];
        out[k] = static_cast<uint16_t>(two > 0xFF000000u ? 0x7E00u : ((w[k] & 0x80000000u) >> 16) | nonsign);
    }
}
template <typename T> inline void LoadF(float* buf, const uint8_t* p, int64_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        std::memcpy(buf, p, static_cast<size_t>(n) * 4);
    } else {
        uint16_t h[kChunk];
        std::memcpy(h, p, static_cast<size_t>(n) * 2);
        HalfToFloat(buf, h, n);
    }
}
template <typename T> inline void StoreF(uint8_t* p, const float* buf, int64_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        std::memcpy(p, buf, static_cast<size_t>(n) * 4);
    } else {
        uint16_t h[kChunk];
        FloatToHalf(h, buf, n);
        std::memcpy(p, h, static_cast<size_t>(n) * 2);
    }
}
// float seen through a may_alias type: the UB bytes are also read and written as other types
// (through memcpy), so the compiler must not assume type-based non-aliasing.
typedef float F32A __attribute__((may_alias));
// Elementwise float loops straight on UB.  The overlap check allows only "same start" or
// "disjoint", so each case below can tell the compiler exactly what may alias (restrict).
template <typename F> inline void BinF32Disjoint(F32A* __restrict d, const F32A* a, const F32A* b, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(a[k], b[k]);
}
template <typename F> inline void BinF32DstIsA(F32A* __restrict d, const F32A* __restrict b, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(d[k], b[k]);
}
template <typename F> inline void BinF32DstIsB(F32A* __restrict d, const F32A* __restrict a, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(a[k], d[k]);
}
template <typename F> inline void BinF32AllSame(F32A* __restrict d, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(d[k], d[k]);
}
// dst[i] = f(a[i], b[i]) over n elements of T (float or half), computed in float.
template <typename T, typename F> PYPTO_HOST_SIMD void FastBinary(uint8_t* d, const uint8_t* a, const uint8_t* b, int64_t n, F f)
{
    if constexpr (std::is_same<T, float>::value) {
        F32A* D = reinterpret_cast<F32A*>(d);
        const F32A* A = reinterpret_cast<const F32A*>(a);
        const F32A* B = reinterpret_cast<const F32A*>(b);
        if (d == a && d == b) BinF32AllSame(D, n, f);
        else if (d == a) BinF32DstIsA(D, B, n, f);
        else if (d == b) BinF32DstIsB(D, A, n, f);
        else BinF32Disjoint(D, A, B, n, f);
    } else {
        alignas(64) float x[kChunk], y[kChunk];
        for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t m = n - i < kChunk ? n - i : kChunk;
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            LoadF<T>(x, a + o, m);
            LoadF<T>(y, b + o, m);
            for (int64_t k = 0; k < m; ++k) x[k] = f(x[k], y[k]);
            StoreF<T>(d + o, x, m);
        }
    }
}
// dst[i] = f(src[i]) over n elements of T, f an elementwise float function.  float: one pass
// straight on UB, in place or (the overlap rule) between disjoint buffers.
template <typename F> inline void UnF32InPlace(F32A* __restrict d, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(d[k]);
}
template <typename F> inline void UnF32Disjoint(F32A* __restrict d, const F32A* __restrict a, int64_t n, F f)
{
    for (int64_t k = 0; k < n; ++k) d[k] = f(a[k]);
}
template <typename T, typename F> PYPTO_HOST_SIMD void FastUnary(uint8_t* d, const uint8_t* a, int64_t n, F f)
{
    if constexpr (std::is_same<T, float>::value) {
        if (d == a) UnF32InPlace(reinterpret_cast<F32A*>(d), n, f);
        else UnF32Disjoint(reinterpret_cast<F32A*>(d), reinterpret_cast<const F32A*>(a), n, f);
    } else {
        alignas(64) float x[kChunk];
        for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t m = n - i < kChunk ? n - i : kChunk;
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            LoadF<T>(x, a + o, m);
            for (int64_t k = 0; k < m; ++k) x[k] = f(x[k]);
            StoreF<T>(d + o, x, m);
        }
    }
}
// Cast float -> half (RINT / NONE: round to nearest even) and half -> float (exact), with
// the generic path's results: NaN -> 0x7E00 / 0x7FC00000 (fp::Encode / a quiet NaN).
PYPTO_HOST_SIMD inline void CastF32ToF16(uint8_t* d, const uint8_t* s, int64_t n)
{
    alignas(64) float x[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t m = n - i < kChunk ? n - i : kChunk;
        std::memcpy(x, s + static_cast<size_t>(i) * 4, static_cast<size_t>(m) * 4);
        StoreF<half>(d + static_cast<size_t>(i) * 2, x, m);
    }
}
PYPTO_HOST_SIMD inline void CastF16ToF32(uint8_t* d, const uint8_t* s, int64_t n)
{
    alignas(64) float x[kChunk];
    uint32_t b[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t m = n - i < kChunk ? n - i : kChunk;
        LoadF<half>(x, s + static_cast<size_t>(i) * 2, m);
        std::memcpy(b, x, static_cast<size_t>(m) * 4);
        for (int64_t k = 0; k < m; ++k) b[k] = (b[k] & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC00000u : b[k];
        std::memcpy(d + static_cast<size_t>(i) * 4, b, static_cast<size_t>(m) * 4);
    }
}
// bfloat16 is the top half of a binary32: widening is a 16-bit shift (exact), and rounding to
// nearest even is an integer add on the bits, carries into the exponent included (subnormals,
// overflow to inf).  NaN goes as the generic path (fp::Decode / fp::Encode through double) sends
// it: bf16 -> float keeps the sign and quietens to 0x7FC00000, float -> bf16 gives 0x7FC0.
// Cast's overlap rule leaves dst and src disjoint (different element sizes), hence restrict.
typedef uint16_t U16A __attribute__((may_alias));
typedef uint32_t U32A __attribute__((may_alias));
// 32 elements at a time in GCC vector types of 64 bytes (the clones compile them to AVX-512,
// AVX2 or SSE2): bf16 in 16-bit lanes, NaNs quietened there, then interleaved with zeros (=
// shifted up by 16 bits).
typedef int16_t VH32 __attribute__((vector_size(64)));
typedef int16_t VH32U __attribute__((vector_size(64), aligned(2), may_alias));  // UB bytes
typedef int32_t VI8 __attribute__((vector_size(32)));
typedef int32_t VI8U __attribute__((vector_size(32), aligned(4), may_alias));
typedef uint32_t VU8 __attribute__((vector_size(32)));
typedef float VF8 __attribute__((vector_size(32)));
typedef int32_t VI16 __attribute__((vector_size(64)));
typedef int32_t VI16U __attribute__((vector_size(64), aligned(4), may_alias));
typedef uint32_t VU16 __attribute__((vector_size(64)));
typedef float VF16 __attribute__((vector_size(64)));
inline uint32_t Bf16Widened(uint16_t h)
{
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    return (w & 0x7FFFFFFFu) > 0x7F800000u ? (w & 0x80000000u) | 0x7FC00000u : w;
}
inline uint16_t Bf16Rounded(uint32_t w)
{
    const uint32_t r = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;  // ties to the even bf16
    return static_cast<uint16_t>((w & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC0u : r);
}
// Two bodies of each bf16 cast, the same bits: 64-byte vectors (one zmm per step on AVX-512)
// and a plain loop that g++ vectorises for the ISA at hand.  On AVX2 and the baseline ISA the
// 64-byte vectors' lane selects and shuffles are lowered to scalar code (vpextrw / cmov per
// element: 1.6-2.0 ns per element on Zen 3, ten times the loop), so only the x86-64-v4 version
// takes them (function multiversioning: one version per ISA, picked at load time like the
// target_clones).  A build for one ISA alone (PYPTO_HOST_NO_CLONES) takes the 64-byte body
// where AVX512BW is on, or where PYPTO_HOST_BF16_WIDE asks for it (tests compare the two).
__attribute__((always_inline)) inline void Bf16ToF32Wide(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        VH32 h = *reinterpret_cast<const VH32U*>(s + 2 * k);
        h = (h & 0x7FFF) > 0x7F80 ? (VH32)((h & static_cast<int16_t>(0x8000)) | 0x7FC0) : h;
        const VH32 z = VH32{};
        reinterpret_cast<VH32U*>(d + 4 * k)[0] = __builtin_shufflevector(z, h, 0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39, 8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47);
        reinterpret_cast<VH32U*>(d + 4 * k)[1] = __builtin_shufflevector(z, h, 16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63);
    }
    for (; k < n; ++k) reinterpret_cast<U32A*>(d)[k] = Bf16Widened(reinterpret_cast<const U16A*>(s)[k]);
}
__attribute__((always_inline)) inline void F32ToBf16Wide(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        VI16 r[2];
        for (int h = 0; h < 2; ++h) {
            const VI16 w = reinterpret_cast<const VI16U*>(s + 4 * k)[h];
            const VF16 f = (VF16)w;  // the same bits as floats: NaN is the unordered compare
            r[h] = f != f ? 0x7FC0 : (VI16)(((VU16)w + 0x7FFFu + (((VU16)w >> 16) & 1u)) >> 16);
        }
        const VH32 a = (VH32)r[0], b = (VH32)r[1];  // the low halves hold the results
        *reinterpret_cast<VH32U*>(d + 2 * k) = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62);
    }
    for (; k < n; ++k) reinterpret_cast<U16A*>(d)[k] = Bf16Rounded(reinterpret_cast<const U32A*>(s)[k]);
}
__attribute__((always_inline)) inline void Bf16ToF32Loop(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    for (int64_t k = 0; k < n; ++k) reinterpret_cast<U32A*>(d)[k] = Bf16Widened(reinterpret_cast<const U16A*>(s)[k]);
}
__attribute__((always_inline)) inline void F32ToBf16Loop(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    for (int64_t k = 0; k < n; ++k) reinterpret_cast<U16A*>(d)[k] = Bf16Rounded(reinterpret_cast<const U32A*>(s)[k]);
}
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
__attribute__((target("arch=x86-64-v4"))) void CastBf16ToF32(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    Bf16ToF32Wide(d, s, n);
}
__attribute__((target("avx2"))) void CastBf16ToF32(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    Bf16ToF32Loop(d, s, n);
}
__attribute__((target("default"))) void CastBf16ToF32(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    Bf16ToF32Loop(d, s, n);
}
__attribute__((target("arch=x86-64-v4"))) void CastF32ToBf16(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    F32ToBf16Wide(d, s, n);
}
__attribute__((target("avx2"))) void CastF32ToBf16(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    F32ToBf16Loop(d, s, n);
}
__attribute__((target("default"))) void CastF32ToBf16(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n)
{
    F32ToBf16Loop(d, s, n);
}
#elif defined(__AVX512BW__) || defined(PYPTO_HOST_BF16_WIDE)
inline void CastBf16ToF32(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n) { Bf16ToF32Wide(d, s, n); }
inline void CastF32ToBf16(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n) { F32ToBf16Wide(d, s, n); }
#else
inline void CastBf16ToF32(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n) { Bf16ToF32Loop(d, s, n); }
inline void CastF32ToBf16(uint8_t* __restrict d, const uint8_t* __restrict s, int64_t n) { F32ToBf16Loop(d, s, n); }
#endif
template <typename To, typename From> inline To BitCast(From f)
{
    static_assert(sizeof(To) == sizeof(From), "BitCast of different sizes");
    To t;
    std::memcpy(&t, &f, sizeof t);  // a register move; vectorises
    return t;
}
// Equal floats differ at most in the sign of a zero: the AND of their bits is +0 unless both
// are -0 (maximum), the OR is -0 if either is (minimum).
inline float BitsAnd(float x, float y) { return BitCast<float>(BitCast<uint32_t>(x) & BitCast<uint32_t>(y)); }
inline float BitsOr(float x, float y) { return BitCast<float>(BitCast<uint32_t>(x) | BitCast<uint32_t>(y)); }
// Float forms of Arith: exact IEEE float results, identical to Arith<float> (double then
// rounded once) and, through FloatToHalf, to Arith<half>.
template <char code> struct ArithF {
    float operator()(float x, float y) const
    {
        if constexpr (code == '+') return x + y;
        else if constexpr (code == '-') return x - y;
        else if constexpr (code == '*') return x * y;
        else if constexpr (code == '/') return x / y;
        else if constexpr (code == '>') return x == y ? BitsAnd(x, y) : (x != x || x > y) ? x : y;  // = MaxD
        else return x == y ? BitsOr(x, y) : (x != x || x < y) ? x : y;                              // = MinD
    }
};
// e^x in float arithmetic, vectorisable in a loop (Cephes expf, with fused multiply-adds): x =
// n ln2 + r (Cody-Waite, |r| <= ln2/2), e^r by a degree-7 polynomial in Horner's form, times 2^n
// applied as two exact power-of-two factors (so subnormal results are rounded once).  Each a * b
// + c of the reduction and the polynomial is one fmaf (rounded once): half the operations of
// separate multiplies and adds and a shorter dependency chain (1.45x the throughput on Zen 3),
// the same bits on every ISA (libm's fmaf is exact where the CPU has no FMA).  Error against the
// exact value: 0.857 ulp at most, 99.54% correctly rounded (every 97th float of (-87, 88.7),
// 23M; the separate multiplies and adds before gave 0.972 and 99.19%); overflow -> +inf,
// underflow -> 0 / subnormal, NaN stays NaN (quietened).
inline float ExpF(float x0)
{
    float x = x0 < 89.0f ? x0 : 89.0f;   // e^89 > FLT_MAX: +inf below (a NaN becomes 89 here:
    x = x > -104.0f ? x : -104.0f;       // min/max instructions); e^-104 < FLT_TRUE_MIN / 2: +0 below
    const float t = __builtin_fmaf(x, 1.44269504088896341f, 12582912.0f);  // 1.5 * 2^23: round(x / ln2)
    const float n = t - 12582912.0f;
    x = __builtin_fmaf(-n, 0.693359375f, x);
    x = __builtin_fmaf(-n, -2.12194440e-4f, x);
    float p = __builtin_fmaf(x, 1.9875691500e-4f, 1.3981999507e-3f);
    p = __builtin_fmaf(p, x, 8.3334519073e-3f);
    p = __builtin_fmaf(p, x, 4.1665795894e-2f);
    p = __builtin_fmaf(p, x, 1.6666665459e-1f);
    p = __builtin_fmaf(p, x, 5.0000001201e-1f);
    p = __builtin_fmaf(p, x, 1.0f);
    p = __builtin_fmaf(p, x, 1.0f);
    const int32_t ni = BitCast<int32_t>(t) - 0x4B400000;  // n in [-150, 128]
    const int32_t n1 = ni >> 1;
    const float r = (p * BitCast<float>((n1 + 127) << 23)) * BitCast<float>((ni - n1 + 127) << 23);
    return x0 != x0 ? BitCast<float>(BitCast<uint32_t>(x0) | 0x00400000u) : r;  // NaN: x0, quietened
}
// ExpF over float UB, in place or between disjoint buffers.  ExpF is a chain of about a dozen
// dependent operations per element: an auto-vectorised loop runs one vector's chain after
// another and the out-of-order window overlaps only a few, so the x86-64-v3 version below
// computes four vectors of 8 side by side, each step of ExpF for all four before the next step
// (the same operations in the same order for every element: the same bits).  x86-64-v4 and the
// baseline keep the auto-vectorised loop (FastUnary).  A build for one ISA alone
// (PYPTO_HOST_NO_CLONES) takes the four-vector body where AVX2 is on without AVX-512, or where
// PYPTO_HOST_EXP4 asks for it (tests compare the two).  The four-vector body is in
// pypto_host_expf.h, which the fused runs share.
typedef float VF8UA __attribute__((vector_size(32), aligned(4), may_alias));  // UB bytes, 8 floats
__attribute__((always_inline)) inline void ExpF4x8(VF8* v) { pypto_host::expf::Exp4x8(v); }  // pypto_host_expf.h
__attribute__((always_inline)) inline void ExpF32Four(uint8_t* d, const uint8_t* a, int64_t n)
{
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        VF8 v[4];
        for (int j = 0; j < 4; ++j) v[j] = reinterpret_cast<const VF8UA*>(a + 4 * k)[j];
        ExpF4x8(v);
        for (int j = 0; j < 4; ++j) reinterpret_cast<VF8UA*>(d + 4 * k)[j] = v[j];
    }
    for (; k < n; ++k) reinterpret_cast<F32A*>(d)[k] = ExpF(reinterpret_cast<const F32A*>(a)[k]);
}
struct ExpFn {
    float operator()(float x) const { return ExpF(x); }
};
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
__attribute__((target("arch=x86-64-v3"))) void ExpF32(uint8_t* d, const uint8_t* a, int64_t n) { ExpF32Four(d, a, n); }
__attribute__((target("arch=x86-64-v4"))) void ExpF32(uint8_t* d, const uint8_t* a, int64_t n) { FastUnary<float>(d, a, n, ExpFn{}); }
__attribute__((target("default"))) void ExpF32(uint8_t* d, const uint8_t* a, int64_t n) { FastUnary<float>(d, a, n, ExpFn{}); }
#elif (defined(__AVX2__) && !defined(__AVX512F__)) || defined(PYPTO_HOST_EXP4)
inline void ExpF32(uint8_t* d, const uint8_t* a, int64_t n) { ExpF32Four(d, a, n); }
#else
inline void ExpF32(uint8_t* d, const uint8_t* a, int64_t n) { FastUnary<float>(d, a, n, ExpFn{}); }
#endif

// ---- Float ReduceSum's repeats ---------------------------------------------------------
// One repeat of 64 elements sums as TreeSum (reduce.cpp) does: halves of a power of two, which
// are adjacent pairs, level by level, each pair one float add (= Arith<float>).  Two bodies,
// the same adds in the same tree: shuffles that gather the even- and odd-indexed elements of 16
// (any ISA; on AVX2 these are two-source lane crossings, 4 shuffles a level-pair), and AVX's
// horizontal adds, which add adjacent pairs in place within each 128-bit lane, so that three
// levels cost one hadd per two vectors and one lane swap (2.2x the repeats per second of the
// shuffles on Zen 3, the same bits: tests/emit_host/test_runtime_isa.py).  The AVX2 clone takes
// the hadds; x86-64-v4 keeps the shuffles, which AVX-512's two-source permutes do in one
// instruction each (not measured here: no AVX-512 CPU).
typedef float V4 __attribute__((vector_size(16)));
// (Vectors pass by pointer: by value they would change the ABI between the ISA clones.)
inline void PairSums(VF8* out, const VF8* x, const VF8* y)
{
    *out = __builtin_shufflevector(*x, *y, 0, 2, 4, 6, 8, 10, 12, 14) + __builtin_shufflevector(*x, *y, 1, 3, 5, 7, 9, 11, 13, 15);
}
inline float TreeSum64(const uint8_t* p)
{
    typedef float VF8U __attribute__((vector_size(32), aligned(4), may_alias));  // UB bytes
    VF8 v[8];
    for (int i = 0; i < 8; ++i) v[i] = reinterpret_cast<const VF8U*>(p)[i];
    for (int w = 4; w >= 1; w /= 2)
        for (int i = 0; i < w; ++i) PairSums(&v[i], &v[2 * i], &v[2 * i + 1]);
    const V4 d = __builtin_shufflevector(v[0], v[0], 0, 2, 4, 6) + __builtin_shufflevector(v[0], v[0], 1, 3, 5, 7);
    return (d[0] + d[1]) + (d[2] + d[3]);
}
inline void TreeSums64Shuffled(const uint8_t* p, uint32_t reps, float* out)
{
    for (uint32_t r = 0; r < reps; ++r) out[r] = TreeSum64(p + static_cast<size_t>(r) * 256);
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// hadd(x, y) = [x0+x1, x2+x3, y0+y1, y2+y3 | x4+x5, x6+x7, y4+y5, y6+y7].  Over v0..v7 (8
// consecutive floats each): two rounds give, per 128-bit lane, the quads' sums of four vectors;
// joining the lanes gives the 8 vector sums in order, and three more levels the repeat's sum.
__attribute__((always_inline, target("avx2"))) inline void TreeSums64Hadd(const uint8_t* p, uint32_t reps, float* out)
{
    for (uint32_t r = 0; r < reps; ++r) {
        const float* q = reinterpret_cast<const float*>(p + static_cast<size_t>(r) * 256);
        __m256 v[8];
        for (int i = 0; i < 8; ++i) v[i] = _mm256_loadu_ps(q + 8 * i);
        const __m256 lo4 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
        const __m256 hi4 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
        const __m256 s8 = _mm256_add_ps(_mm256_permute2f128_ps(lo4, hi4, 0x20), _mm256_permute2f128_ps(lo4, hi4, 0x31));
        const __m256 s2 = _mm256_hadd_ps(_mm256_hadd_ps(s8, s8), _mm256_setzero_ps());
        out[r] = _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(s2), _mm256_extractf128_ps(s2, 1)));
    }
}
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
__attribute__((target("avx2"))) void TreeSums64(const uint8_t* p, uint32_t reps, float* out) { TreeSums64Hadd(p, reps, out); }
__attribute__((target("arch=x86-64-v4"))) void TreeSums64(const uint8_t* p, uint32_t reps, float* out) { TreeSums64Shuffled(p, reps, out); }
__attribute__((target("default"))) void TreeSums64(const uint8_t* p, uint32_t reps, float* out) { TreeSums64Shuffled(p, reps, out); }
#elif defined(__AVX2__) && !defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
inline void TreeSums64(const uint8_t* p, uint32_t reps, float* out) { TreeSums64Hadd(p, reps, out); }
#else
inline void TreeSums64(const uint8_t* p, uint32_t reps, float* out) { TreeSums64Shuffled(p, reps, out); }
#endif

}  // namespace
}  // namespace detail
}  // namespace AscendC

#endif  // PYPTO_HOST_RUNTIME_FASTFLOAT_H
