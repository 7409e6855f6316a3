// pypto_host_fuse.h -- host (CPU) only: a run of float count-form vector ops computed in one pass.
//
// The emitter writes a run of consecutive fp32 count-form elementwise calls of one count (Add,
// Sub, Mul, Div, Max, Min, Adds, Muls, Maxs, Mins, Exp, Abs, Sqrt, Relu, Reciprocal, Duplicate) as
//
//     #if defined(PYPTO_HOST_FUSE)
//         if (!pypto_host::FuseF32<LOADS, STORES, pypto_host::fuse::Steps<...>>(n, {scalars}, slots...))
//     #endif
//         { AscendC::Add(...); AscendC::Muls(...); ... }
//
// CANN's kernel_operator.h does not define PYPTO_HOST_FUSE: on the NPU the block of Ascend C
// calls is all there is.  Here the ops run element group by element group (32 floats, four AVX2
// vectors) with every intermediate in registers: the UB slots the run reads are loaded once, the
// slots it writes are stored once, with the values the calls one after another would leave there.
// That is exact because every operand of the run is a whole slot: two slots are the same buffer
// (the same expression) or disjoint, so element i of every op depends on element i only.
// FuseOperands (runtime/elementwise.cpp) checks at run time what the calls would check (live,
// 32-byte aligned, count within every operand) and that the slots are disjoint; when any check
// fails, fusion is off (knobs.host_fuse) or the CPU lacks AVX2 or FMA, FuseF32 returns false and the
// calls run, faulting at the op that faults.  The arithmetic is the runtime's, op for op: IEEE
// +, -, *, /, sqrt rounded once; Max/Min as ArithF (NaN wins, -0 < +0); Exp the runtime's own
// four-vector body (pypto_host_expf.h, one definition for both; its fmafs the only fused
// multiply-adds).  tests/emit_host/test_fuse.py compares the bits of both paths.  docs/design.md §34.
#ifndef PYPTO_HOST_FUSE_H
#define PYPTO_HOST_FUSE_H

#include "pypto_host_expf.h"

#include <initializer_list>

namespace AscendC {
namespace detail {
// True when the n-element operands t[0..k) (elem[i] bytes an element) may run fused: each as a
// count-form vector op or Cast would accept it, distinct ones disjoint, the CPU has AVX2 and FMA and
// fusion is on.
bool FuseOperands(const TensorDesc* const* t, const uint32_t* elem, int k, int64_t n);
// The runtime's prefetch of the next tile that a call touching `bytes` would issue, handed back
// as up to `max` ranges of 64-byte lines for the caller to issue (the return: how many).
int FusePrefetchRanges(uint64_t bytes, const void** from, uint64_t* len, int max);
}  // namespace detail
}  // namespace AscendC

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_FUSE)
#define PYPTO_HOST_FUSE 1

namespace pypto_host {
namespace fuse {
enum Code { Add, Sub, Mul, Div, Max, Min, Adds, Muls, Maxs, Mins, Exp, Abs, Sqrt, Relu, Reciprocal, Dup, Widen, Round };
// One op: slot D = C(slot A, slot B) for the binary ops, C(slot A, scalar B) for the scalar ones,
// C(slot A) for the unary ones; Dup (Duplicate) fills slot D with scalar B; Widen / Round are
// Cast bf16 -> float (CAST_NONE) and float -> bf16 (CAST_RINT).
template <int C, int D, int A, int B = 0> struct Step {};
template <typename... S> struct Steps {};
constexpr int kSlots = 8;   // distinct UB operands of one run (the emitter splits longer runs)
constexpr int kScalars = 8;
constexpr int kGroup = 32;  // floats per step: four AVX2 vectors side by side
}  // namespace fuse
}  // namespace pypto_host

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#pragma GCC optimize("O3", "fp-contract=off")  // with FMA in the target, no a * b + c of two steps may fuse
namespace pypto_host {
namespace fuse {
typedef float VF8 __attribute__((vector_size(32)));
typedef int32_t VI8 __attribute__((vector_size(32)));
typedef float VF8UA __attribute__((vector_size(32), aligned(4), may_alias));  // UB bytes
typedef uint32_t VU8 __attribute__((vector_size(32)));
typedef uint16_t VH8 __attribute__((vector_size(16)));
typedef uint16_t VH8UA __attribute__((vector_size(16), aligned(2), may_alias));  // 8 bf16 in UB
// A bf16 slot is held in registers as its bits << 16 (a float with the same value); loads and
// stores move the 16 bits.
__attribute__((always_inline)) inline VF8 LoadBf16(const uint16_t* q)
{
    return (VF8)(__builtin_convertvector(*reinterpret_cast<const VH8UA*>(q), VU8) << 16);
}
__attribute__((always_inline)) inline void StoreBf16(uint16_t* q, VF8 v)
{
    *reinterpret_cast<VH8UA*>(q) = __builtin_convertvector((VU8)v >> 16, VH8);
}
// runtime/fastfloat.h's Bf16Widened and Bf16Rounded on 8 lanes: a NaN widens to a quiet NaN of
// its sign and rounds to 0x7FC0; else rounding to nearest even is an add on the bits.
__attribute__((always_inline)) inline VF8 WidenV(VF8 v)
{
    const VU8 w = (VU8)v;
    return (VF8)((w & 0x7FFFFFFFu) > 0x7F800000u ? (w & 0x80000000u) | 0x7FC00000u : w);
}
__attribute__((always_inline)) inline VF8 RoundV(VF8 v)
{
    const VU8 w = (VU8)v;
    const VU8 r = ((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16) << 16;
    return (VF8)((w & 0x7FFFFFFFu) > 0x7F800000u ? VU8{} + 0x7FC00000u : r);
}
// ArithF's '>' and '<' (runtime/fastfloat.h) on 8 lanes: equal operands differ at most in the sign
// of a zero (AND of the bits for max, OR for min); else a NaN first operand or the larger wins.
__attribute__((always_inline)) inline VF8 MaxV(VF8 x, VF8 y)
{
    return x == y ? (VF8)((VI8)x & (VI8)y) : ((x != x) | (x > y)) ? x : y;
}
__attribute__((always_inline)) inline VF8 MinV(VF8 x, VF8 y)
{
    return x == y ? (VF8)((VI8)x | (VI8)y) : ((x != x) | (x < y)) ? x : y;
}
// s in every lane, its bits unchanged (0 + s would turn -0 into +0).
__attribute__((always_inline)) inline VF8 Splat(float s) { return VF8{s, s, s, s, s, s, s, s}; }
template <int C, int D, int A, int B>
__attribute__((always_inline)) inline void Apply(Step<C, D, A, B>, VF8 (*v)[4], const float* s)
{
    if constexpr (C == Dup) {
        for (int j = 0; j < 4; ++j) v[D][j] = Splat(s[B]);
    } else if constexpr (C == Exp) {
        VF8 t[4] = {v[A][0], v[A][1], v[A][2], v[A][3]};
        pypto_host::expf::Exp4x8(t);  // the runtime's Exp, pypto_host_expf.h
        for (int j = 0; j < 4; ++j) v[D][j] = t[j];
    } else {
        for (int j = 0; j < 4; ++j) {
            const VF8 a = v[A][j];
            if constexpr (C == Add) v[D][j] = a + v[B][j];
            else if constexpr (C == Sub) v[D][j] = a - v[B][j];
            else if constexpr (C == Mul) v[D][j] = a * v[B][j];
            else if constexpr (C == Div) v[D][j] = a / v[B][j];
            else if constexpr (C == Max) v[D][j] = MaxV(a, v[B][j]);
            else if constexpr (C == Min) v[D][j] = MinV(a, v[B][j]);
            else if constexpr (C == Adds) v[D][j] = a + Splat(s[B]);
            else if constexpr (C == Muls) v[D][j] = a * Splat(s[B]);
            else if constexpr (C == Maxs) v[D][j] = MaxV(a, Splat(s[B]));
            else if constexpr (C == Mins) v[D][j] = MinV(a, Splat(s[B]));
            else if constexpr (C == Abs) v[D][j] = (VF8)((VI8)a & 0x7FFFFFFF);
            else if constexpr (C == Sqrt) v[D][j] = __builtin_ia32_sqrtps256(a);
            else if constexpr (C == Relu) v[D][j] = MaxV(a, VF8{});
            else if constexpr (C == Widen) v[D][j] = WidenV(a);
            else if constexpr (C == Round) v[D][j] = RoundV(a);
            else v[D][j] = 1.0f / a;
        }
    }
}
// One group of 32 elements at p[.] + k (slots in H hold bf16: 2 bytes an element); a tail group
// (m < 32) goes through a local copy, its unused lanes zero (lanes are independent; only the m
// valid ones are stored).
template <unsigned L, unsigned W, unsigned H, typename... S>
__attribute__((always_inline)) inline void Group(Steps<S...>, void* const* p, int64_t k, int64_t m, const float* s)
{
    VF8 v[kSlots][4];
    for (int i = 0; i < kSlots; ++i) {
        if (!(L & (1u << i))) continue;
        if (H & (1u << i)) {
            const uint16_t* q = static_cast<const uint16_t*>(p[i]) + k;
            uint16_t t[kGroup] = {};
            if (m < kGroup) {
                for (int64_t l = 0; l < m; ++l) t[l] = q[l];
                q = t;
            }
            for (int j = 0; j < 4; ++j) v[i][j] = LoadBf16(q + 8 * j);
        } else {
            const float* q = static_cast<const float*>(p[i]) + k;
            float t[kGroup] = {};
            if (m < kGroup) {
                for (int64_t l = 0; l < m; ++l) t[l] = q[l];
                q = t;
            }
            for (int j = 0; j < 4; ++j) v[i][j] = reinterpret_cast<const VF8UA*>(q)[j];
        }
    }
    (Apply(S{}, v, s), ...);
    for (int i = 0; i < kSlots; ++i) {
        if (!(W & (1u << i))) continue;
        if (H & (1u << i)) {
            uint16_t* q = static_cast<uint16_t*>(p[i]) + k;
            uint16_t t[kGroup];
            uint16_t* o = m < kGroup ? t : q;
            for (int j = 0; j < 4; ++j) StoreBf16(o + 8 * j, v[i][j]);
            for (int64_t l = 0; m < kGroup && l < m; ++l) q[l] = t[l];
        } else {
            float* q = static_cast<float*>(p[i]) + k;
            float t[kGroup];
            float* o = m < kGroup ? t : q;
            for (int j = 0; j < 4; ++j) reinterpret_cast<VF8UA*>(o)[j] = v[i][j];
            for (int64_t l = 0; m < kGroup && l < m; ++l) q[l] = t[l];
        }
    }
}
// The groups, each after its share of the prefetch of the next tile that the calls would have
// issued (a few lines per group: issued in bursts of a quarter tile, most of the prefetches were
// lost and the pass ran 1.1x longer on Zen 3).  The runtime hands the lines over once, as ranges,
// and the loop issues them inline: a call per group made g++ keep the run's constants on the
// stack (every vector register is the caller's to save) and reload them in every group.
template <unsigned L, unsigned W, unsigned H, typename St>
__attribute__((noinline)) void Loop(int64_t n, void* const* p, const float* s, uint64_t bytes)
{
    const int64_t groups = (n + kGroup - 1) / kGroup;
    constexpr int kRanges = 4;
    const void* from[kRanges];
    uint64_t len[kRanges];
    const int ranges = AscendC::detail::FusePrefetchRanges(bytes + 128 * static_cast<uint64_t>(groups), from, len, kRanges);
    uint64_t lines = 0;
    for (int i = 0; i < ranges; ++i) lines += (len[i] + 63) / 64;
    const uint64_t perGroup = groups > 0 ? (lines + static_cast<uint64_t>(groups) - 1) / static_cast<uint64_t>(groups) : 0;
    int r = 0;
    uint64_t at = 0;  // bytes of range r issued
    int64_t k = 0;
    for (; k + kGroup <= n; k += kGroup) {
        for (uint64_t q = 0; q < perGroup && r < ranges; ++q) {
            __builtin_prefetch(static_cast<const char*>(from[r]) + at, 0, 1);
            at += 64;
            if (at >= len[r]) { ++r; at = 0; }
        }
        Group<L, W, H>(St{}, p, k, kGroup, s);
    }
    if (k < n) Group<L, W, H>(St{}, p, k, n - k, s);
    for (; r < ranges; ++r, at = 0)  // what the groups did not take (the tail group's share)
        for (; at < len[r]; at += 64) __builtin_prefetch(static_cast<const char*>(from[r]) + at, 0, 1);
}
}  // namespace fuse
}  // namespace pypto_host
#pragma GCC pop_options

namespace pypto_host {
// The run St on the operands `slots` (slot i = slots[i], float or bf16), LOADS / STORES the bit
// sets of the slots it reads before writing / writes; false (nothing done) when the calls must run
// instead.
template <unsigned L, unsigned W, typename St, typename... T>
inline bool FuseF32(int32_t n, std::initializer_list<float> scalars, const AscendC::LocalTensor<T>&... slots)
{
    static_assert(sizeof...(T) <= fuse::kSlots, "a fused run has at most kSlots operands");
    static_assert(((std::is_same<T, float>::value || std::is_same<T, bfloat16_t>::value) && ...),
                  "fused runs are of float and bf16 slots");
    constexpr int k = static_cast<int>(sizeof...(T));
    constexpr unsigned H = [] {  // the bf16 slots, as a bit set
        constexpr bool half[] = {std::is_same<T, bfloat16_t>::value...};
        unsigned h = 0;
        for (int i = 0; i < k; ++i) h |= half[i] ? 1u << i : 0u;
        return h;
    }();
    const AscendC::detail::TensorDesc* d[] = {&slots.d_...};
    const uint32_t elem[] = {static_cast<uint32_t>(sizeof(T))...};
    uint64_t bytes = 0;  // the slots' bytes, for the prefetch
    for (int i = 0; i < k; ++i) bytes += static_cast<uint64_t>(n) * elem[i];
    if (scalars.size() > static_cast<size_t>(fuse::kScalars) || !AscendC::detail::FuseOperands(d, elem, k, n))
        return false;
    void* p[fuse::kSlots] = {};
    for (int i = 0; i < k; ++i) p[i] = d[i]->ub + d[i]->addr;
    float s[fuse::kScalars] = {};
    int j = 0;
    for (float x : scalars) s[j++] = x;
    fuse::Loop<L, W, H, St>(n, p, s, bytes);
    return true;
}
}  // namespace pypto_host

#endif  // x86-64 g++
#endif  // PYPTO_HOST_FUSE_H
