// runtime/internal.h -- what the runtime's translation units share and kernels never see:
// the per-block state, exact floating-point rounding, byte-level element access, the common
// operand checks and the dtype dispatch.  Included by runtime/*.cpp only.
#ifndef PYPTO_HOST_RUNTIME_INTERNAL_H
#define PYPTO_HOST_RUNTIME_INTERNAL_H

#include "kernel_operator.h"
#include "pypto_host_fault.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#if defined(__linux__)
#include <sched.h>
#endif
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace pypto_host {
namespace detail {
// Process-wide settings: written by the host program before a Launch, only read by kernels.
struct State {
    uint32_t ubBytes = kA2UbBytes;
    bool strictGmAlign = false;   // see SetStrictGmAlignment
};
extern State g_state;
// Per-block state.  thread_local: Launch may run blocks on several threads (see Launch).
struct BlockState {
    int64_t blockIdx = 0;
    int64_t blockNum = 1;
    TrafficCounters traffic;
    int livePipes = 0;
    int atomicMode = 0;           // 0 none, 1 add, 2 max, 3 min (§7.3)
    // GM -> UB load streams (one per GM tensor loaded from, the last kStreams ones) and the
    // bytes to prefetch for each: see NoteGmLoad and PrefetchAhead in runtime/internal.h.
    struct Stream {
        const uint8_t* base = nullptr;  // the GM tensor's registered start
        const uint8_t* last = nullptr;  // start of its last load
        int64_t delta = 0;              // last - the load before
        const uint8_t* next = nullptr;  // prefetch cursor: [next, end) still to prefetch
        const uint8_t* end = nullptr;
    };
    static constexpr int kStreams = 4;
    Stream streams[kStreams];
    int pending = 0;              // streams with next < end
    int victim = 0;               // the slot a new stream tries first when none is free
};
extern thread_local BlockState t_block;
// Serialises atomic (SetAtomicAdd/Max/Min) UB->GM stores of concurrently running blocks.
extern std::mutex g_atomicMutex;
}  // namespace detail

// -------------------------------------------------------------------------------------------
// Floating-point formats: exact rounding of a double into binary16 / bfloat16 / binary32 /
// integers under each Cast RoundMode (§6.3).  Values are rounded by magnitude, then encoded.
// -------------------------------------------------------------------------------------------
namespace fp {
enum class Rnd { NearestEven, AwayFromZero, Trunc, Floor, Ceil, Odd };

// Round a non-negative magnitude m to an integer; `neg` is the sign of the original value.
inline double RoundMag(double m, bool neg, Rnd r)
{
    const double fl = std::floor(m);
    const double frac = m - fl;
    const bool flEven = std::fmod(fl, 2.0) == 0.0;
    switch (r) {
    case Rnd::NearestEven: return frac > 0.5 ? fl + 1 : frac < 0.5 ? fl : (flEven ? fl : fl + 1);
    case Rnd::AwayFromZero: return frac >= 0.5 ? fl + 1 : fl;
    case Rnd::Trunc: return fl;
    case Rnd::Floor: return (neg && frac > 0) ? fl + 1 : fl;
    case Rnd::Ceil: return (!neg && frac > 0) ? fl + 1 : fl;
    case Rnd::Odd: return frac == 0 ? fl : (flEven ? fl + 1 : fl);
    }
    return fl;
}

struct Format {
    int mantBits;  // explicit fraction bits
    int expBits;
    int minExp;    // exponent of the smallest normal
    int maxExp;    // exponent of the largest finite
};
constexpr Format kHalf{10, 5, -14, 15};
constexpr Format kBf16{7, 8, -126, 127};
constexpr Format kF32{23, 8, -126, 127};

// Round x to a value representable in `f` (possibly ±inf); NaN stays NaN.
inline double RoundTo(double x, Format f, Rnd r)
{
    if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
    const bool neg = x < 0;
    const double a = std::fabs(x);
    int e = 0;
    std::frexp(a, &e);  // a = fr * 2^e, fr in [0.5, 1)
    const int E = e - 1;
    const int qexp = (E < f.minExp ? f.minExp : E) - f.mantBits;
    double v = std::ldexp(RoundMag(std::ldexp(a, -qexp), neg, r), qexp);
    const double maxFinite = std::ldexp(2.0 - std::ldexp(1.0, -f.mantBits), f.maxExp);
    if (v > maxFinite) {
        const bool toMax = r == Rnd::Trunc || r == Rnd::Odd || (r == Rnd::Floor && !neg) || (r == Rnd::Ceil && neg);
        v = toMax ? maxFinite : std::numeric_limits<double>::infinity();
    }
    return neg ? -v : v;
}

// Encode a value already representable in `f` into its bit pattern.
inline uint32_t Encode(double v, Format f)
{
    const uint32_t signBit = 1u << (f.expBits + f.mantBits);
    const uint32_t expMask = (1u << f.expBits) - 1;
    if (std::isnan(v)) return (expMask << f.mantBits) | (1u << (f.mantBits - 1));
    uint32_t s = std::signbit(v) ? signBit : 0u;
    double a = std::fabs(v);
    if (std::isinf(a)) return s | (expMask << f.mantBits);
    if (a == 0.0) return s;
    int e = 0;
    std::frexp(a, &e);
    const int E = e - 1;
    if (E < f.minExp) {  // subnormal
        return s | static_cast<uint32_t>(std::ldexp(a, -(f.minExp - f.mantBits)));
    }
    const uint32_t frac = static_cast<uint32_t>(std::ldexp(std::ldexp(a, -E) - 1.0, f.mantBits));
    return s | (static_cast<uint32_t>(E + f.maxExp) << f.mantBits) | frac;
}

inline double Decode(uint32_t bits, Format f)
{
    const uint32_t expMask = (1u << f.expBits) - 1;
    const bool neg = (bits >> (f.expBits + f.mantBits)) & 1u;
    const uint32_t ex = (bits >> f.mantBits) & expMask;
    const uint32_t fr = bits & ((1u << f.mantBits) - 1);
    double v;
    if (ex == expMask) v = fr ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (ex == 0) v = std::ldexp(static_cast<double>(fr), f.minExp - f.mantBits);
    else v = std::ldexp(1.0 + std::ldexp(static_cast<double>(fr), -f.mantBits), static_cast<int>(ex) - f.maxExp);
    return neg ? -v : v;
}

// Exact widenings, by bits (Decode, the generic path, goes through ldexp: the cube's operand
// gathers spent most of a matmul there).  Infinities and NaNs keep the generic path.
inline double WidenHalf(uint16_t bits)
{
    const uint64_t e = (bits >> 10) & 0x1Fu, m = bits & 0x3FFu, sign = uint64_t(bits >> 15) << 63;
    if (e == 0x1F) return Decode(bits, kHalf);
    if (e == 0) {
        const double v = static_cast<double>(m) * 0x1p-24;  // subnormal or zero: exact
        return sign ? -v : v;
    }
    const uint64_t d = sign | ((e - 15 + 1023) << 52) | (m << 42);
    double out;
    std::memcpy(&out, &d, 8);
    return out;
}

inline double WidenBf16(uint16_t bits)
{
    if (((bits >> 7) & 0xFFu) == 0xFFu) return Decode(bits, kBf16);
    const uint32_t f = uint32_t(bits) << 16;  // bfloat16 is the top half of a float: exact
    float out;
    std::memcpy(&out, &f, 4);
    return static_cast<double>(out);
}
}  // namespace fp
}  // namespace pypto_host

namespace AscendC {
namespace detail {
using pypto_host::Fault;

constexpr uint32_t kBlock = 32;    // DataBlock (§1.3)
constexpr uint32_t kRepeat = 256;  // one vector repeat (§1.3)

template <typename T> inline T Load(const uint8_t* p) { T v; std::memcpy(static_cast<void*>(&v), p, sizeof(T)); return v; }
template <typename T> inline void Store(uint8_t* p, const T& v) { std::memcpy(p, static_cast<const void*>(&v), sizeof(T)); }

inline uint8_t* Ptr(const TensorDesc& d) { return d.ub + d.addr; }
inline uint8_t* Addr(const GmDesc& g) { return g.base + g.off * g.elem; }

inline const char* DtName(Dt d)
{
    static const char* names[] = {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
                                  "int64_t", "uint64_t", "half", "bfloat16_t", "float", "<other>"};
    return names[static_cast<int>(d)];
}
// §6.2: count forms accept any dtype at compile time and fail at run time on the device.
inline void CheckDtype(Dt dt, const char* op, const Dt* allowed, size_t n)
{
    for (size_t i = 0; i < n; ++i) if (allowed[i] == dt) return;
    std::ostringstream m;
    m << op << ": dtype " << DtName(dt) << " is not supported on A2 (allowed:";
    for (size_t i = 0; i < n; ++i) m << ' ' << DtName(allowed[i]);
    m << "; §6.2)";
    Fault(m.str());
}
inline void CheckDtype(Dt dt, const char* op, std::initializer_list<Dt> allowed)
{
    CheckDtype(dt, op, allowed.begin(), allowed.size());
}
// A list of allowed dtypes that can live in a table.
struct DtList {
    Dt dts[4];
    size_t n;
};
inline void CheckDtype(Dt dt, const char* op, const DtList& allowed) { CheckDtype(dt, op, allowed.dts, allowed.n); }

// The C++ type of a dtype id.
template <Dt D> struct TypeOfDt;
template <> struct TypeOfDt<Dt::I8> { using type = int8_t; };
template <> struct TypeOfDt<Dt::U8> { using type = uint8_t; };
template <> struct TypeOfDt<Dt::I16> { using type = int16_t; };
template <> struct TypeOfDt<Dt::U16> { using type = uint16_t; };
template <> struct TypeOfDt<Dt::I32> { using type = int32_t; };
template <> struct TypeOfDt<Dt::U32> { using type = uint32_t; };
template <> struct TypeOfDt<Dt::I64> { using type = int64_t; };
template <> struct TypeOfDt<Dt::U64> { using type = uint64_t; };
template <> struct TypeOfDt<Dt::F16> { using type = half; };
template <> struct TypeOfDt<Dt::BF16> { using type = bfloat16_t; };
template <> struct TypeOfDt<Dt::F32> { using type = float; };

// Calls f(T{}) with T the C++ type of `dt`, for dt among Ds (the runtime's dtype switch; the
// callers have checked the dtype already, so the fault is a safety net).  Only the listed
// types are instantiated, which keeps the runtime's own build short.
template <Dt... Ds, typename F> inline void WithTypeIn(Dt dt, F&& f)
{
    const bool done = ((dt == Ds ? (f(typename TypeOfDt<Ds>::type{}), true) : false) || ...);
    if (!done) Fault("element type not modelled by the host runtime for this operation");
}
template <typename F> inline void WithType(Dt dt, F&& f)
{
    WithTypeIn<Dt::I8, Dt::U8, Dt::I16, Dt::U16, Dt::I32, Dt::U32, Dt::I64, Dt::U64, Dt::F16, Dt::BF16, Dt::F32>(
        dt, static_cast<F&&>(f));
}

// Value <-> double for the arithmetic of vector ops.
template <typename T> inline double ToD(const T& v) { return static_cast<double>(v); }
inline double ToD(const half& v) { return pypto_host::fp::WidenHalf(v.Bits()); }
inline double ToD(const bfloat16_t& v) { return pypto_host::fp::WidenBf16(v.Bits()); }
template <typename T> inline T FromD(double d) { return static_cast<T>(d); }
template <> inline half FromD<half>(double d) { return half(d); }
template <> inline bfloat16_t FromD<bfloat16_t>(double d) { return bfloat16_t(d); }

void CheckLive(const TensorDesc& d, const char* op);  // runtime/core.cpp
bool IsLive(const TensorDesc& d);                      // what CheckLive checks, without faulting
// Cube memories of a TPipe (runtime/cube.cpp); `pools` is the TPipe's, created on first use.
void CubeInitQueue(void*& pools, QueueCore& q, uint8_t num, uint32_t len);
void CubeInitTBuf(void*& pools, TPosition pos, uint8_t*& ub, uint32_t& addr, uint32_t& len, uint32_t bytes);
void CubeDestroyPools(void* pools);
// Mmad's arithmetic (runtime/cube_dot.cpp), after cube.cpp's checks: L0C (Nz) = init + L0A (Zz)
// x L0B (Zn) over M x N x K fractals, every output summed in double in increasing k.
enum class MmadInit { Zero, L0C, Bias };
struct MmadArith {
    Dt ab, cDt;          // operand dtype; L0C dtype (F32 or I32)
    const uint8_t* a;    // L0A, M x K fractals
    const uint8_t* b;    // L0B, K x N fractals
    uint8_t* c;          // L0C, M x N fractals of 16 x 16
    uint32_t M, N, K, c0;
    MmadInit init;
    const double* bias;  // N * 16 values when init == Bias
};
void CubeMmadArith(const MmadArith& m);
// 16 x 16 elements of 16 bits at src (row-major) -> dst, transposed; the two must not overlap
// (runtime/cube_dot.cpp).
void Transpose16x16u16(const uint8_t* src, uint8_t* dst);

inline void CheckUbAligned(const TensorDesc& d, const char* op, const char* which)
{
    if (!d.ub) Fault(std::string(op) + ": " + which + " LocalTensor is not bound to UB (never allocated)");
    CheckLive(d, op);
    if (d.addr % kBlock != 0) {
        std::ostringstream m;
        m << op << ": " << which << " UB address " << d.addr << " is not 32-byte aligned (§1.2/§6.1/§7.1)";
        Fault(m.str());
    }
}
inline void CheckGmAligned(const GmDesc& g, const char* op, uint64_t align)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(Addr(g));
    if (a % align != 0) {
        std::ostringstream m;
        m << op << ": GM address 0x" << std::hex << a << std::dec << " is not " << align << "-byte aligned ("
          << (align == kBlock ? "strict 32-byte GM mode" : "DataCopy needs element alignment, §7.1") << ")";
        Fault(m.str());
    }
}
inline void CheckUbRange(const TensorDesc& d, uint64_t relEnd, const char* op, const char* which)
{
    if (relEnd > d.capBytes) {
        std::ostringstream m;
        m << op << ": " << which << " UB range of " << relEnd << " bytes exceeds the " << d.capBytes
          << " bytes of the LocalTensor's buffer";
        Fault(m.str());
    }
}
// UB -> GM store honouring SetAtomicAdd/Max/Min (§7.3).
template <typename T> inline void StoreGm(uint8_t* gm, const uint8_t* ub, uint64_t bytes)
{
    const int mode = pypto_host::detail::t_block.atomicMode;
    if (mode == 0) { std::memcpy(gm, ub, bytes); return; }
    if (bytes % sizeof(T) != 0) Fault("atomic UB->GM copy of a partial element");
    std::lock_guard<std::mutex> lock(pypto_host::detail::g_atomicMutex);  // blocks may run concurrently
    for (uint64_t i = 0; i < bytes; i += sizeof(T)) {
        const double a = ToD(Load<T>(gm + i)), b = ToD(Load<T>(ub + i));
        const double r = mode == 1 ? a + b : mode == 2 ? (a > b ? a : b) : (a < b ? a : b);
        Store<T>(gm + i, FromD<T>(r));
    }
}
// StoreGm for an element type known only at run time (plain copies need no type).
inline void StoreGmAs(Dt dt, uint8_t* gm, const uint8_t* ub, uint64_t bytes)
{
    if (pypto_host::detail::t_block.atomicMode == 0) { std::memcpy(gm, ub, bytes); return; }
    WithType(dt, [&](auto tag) { StoreGm<decltype(tag)>(gm, ub, bytes); });
}
inline void CountIn(uint64_t bytes) { auto& t = pypto_host::detail::t_block.traffic; t.gmToUbBytes += bytes; ++t.gmToUbCalls; }
inline void CountOut(uint64_t bytes) { auto& t = pypto_host::detail::t_block.traffic; t.ubToGmBytes += bytes; ++t.ubToGmCalls; }
// Software prefetch of the next GM -> UB load.  A kernel loads its tiles one after another and
// computes on each with nothing else in flight on its thread, so each load's lines come from
// DRAM while the thread waits (most of the 9-op chain's copy time on Zen 3).  A load's start is
// compared with the previous load from the same GM tensor in this block: when two successive
// loads are the same distance apart (the tile loop's stride), the lines of the next one, that far
// on and as long, are prefetched into L2 a slice at a time by the vector ops that follow (half
// the bytes each op touches), so they arrive while the tile is computed.  Only a hint: the loads
// still copy every byte, the same bytes; nothing is read past the GM tensor's registered end.
inline void NoteGmLoad(const GmDesc& g, const uint8_t* at, uint64_t span)
{
    auto& b = pypto_host::detail::t_block;
    using S = pypto_host::detail::BlockState;
    S::Stream* s = nullptr;
    for (auto& c : b.streams)
        if (c.base == g.base) { s = &c; break; }
    if (!s) {  // a new stream takes a free slot, else in turn one with nothing pending, else the next
        for (auto& c : b.streams)
            if (!c.base) { s = &c; break; }
        if (!s) {
            int pick = b.victim;
            for (int k = 0; k < S::kStreams; ++k) {
                const int i = (b.victim + k) % S::kStreams;
                if (b.streams[i].next >= b.streams[i].end) { pick = i; break; }
            }
            b.victim = (pick + 1) % S::kStreams;
            s = &b.streams[pick];
            if (s->next < s->end) --b.pending;
        }
        *s = S::Stream{};
        s->base = g.base;
    }
    const int64_t delta = s->last ? static_cast<int64_t>(at - s->last) : 0;
    const bool was = s->next < s->end;
    s->next = s->end = nullptr;
    if (delta != 0 && delta == s->delta && span > 0) {
        const uint8_t* from = at + delta;
        const uint8_t* to = from + span;
        if (g.bounded) {
            const uint8_t* limit = g.base + g.size * g.elem;
            if (to > limit) to = limit;
        }
        if (from >= g.base && from < to) { s->next = from; s->end = to; }
    }
    b.pending += static_cast<int>(s->next < s->end) - static_cast<int>(was);
    s->delta = delta;
    s->last = at;
}
// Takes up to bytes / 2 of the pending prefetches off the streams, as up to `max` address ranges
// (64-byte lines from from[i], len[i] bytes each): PrefetchAhead issues them at once, the fused
// runs a few lines per group, with no call inside their vector loop.
inline int TakePrefetch(uint64_t bytes, const void** from, uint64_t* len, int max)
{
    auto& b = pypto_host::detail::t_block;
    int got = 0;
    if (b.pending == 0) return 0;
    uint64_t budget = bytes / 2 + 64;
    for (auto& s : b.streams) {
        if (got == max) break;
        if (s.next >= s.end) continue;
        const uint64_t left = static_cast<uint64_t>(s.end - s.next);
        const uint64_t n = left < budget ? left : budget;
        from[got] = s.next;
        len[got++] = n;
        s.next += n;
        budget -= n;
        if (s.next >= s.end) --b.pending;
        if (budget == 0) break;
    }
    return got;
}
// Issues up to bytes / 2 of the pending prefetches (called by the vector ops with the bytes they touch).
inline void PrefetchAhead(uint64_t bytes)
{
    using S = pypto_host::detail::BlockState;
    const void* from[S::kStreams];
    uint64_t len[S::kStreams];
    const int n = TakePrefetch(bytes, from, len, S::kStreams);
    for (int i = 0; i < n; ++i)
        for (uint64_t o = 0; o < len[i]; o += 64) __builtin_prefetch(static_cast<const uint8_t*>(from[i]) + o, 0, 1);
}
inline uint64_t GmAlign() { return pypto_host::detail::g_state.strictGmAlign ? kBlock : 0; }
inline void CheckBlockCount(const char* op, uint32_t blockCount)
{
    if (blockCount > 4095) Fault(std::string(op) + ": blockCount " + std::to_string(blockCount) + " > 4095 (§7.1/§7.2)");
}
inline uint64_t RoundUp32(uint64_t b) { return (b + kBlock - 1) / kBlock * kBlock; }

// ---- vector operand checks (§6.1) -----------------------------------------------------------
inline void CheckOperand(const TensorDesc& t, const char* op, const char* which, int64_t count)
{
    CheckUbAligned(t, op, which);
    if (count > static_cast<int64_t>(t.count)) {
        std::ostringstream m;
        m << op << ": count " << count << " exceeds the " << which << " tensor's size of " << t.count << " elements";
        Fault(m.str());
    }
}
inline void CheckCount(int64_t count, const char* op)
{
    if (count < 0) Fault(std::string(op) + ": negative count " + std::to_string(count));
}
inline void CheckOverlap(const TensorDesc& dst, uint32_t dElem, const TensorDesc& src, uint32_t sElem, uint64_t count,
                         const char* op)
{
    if (dst.ub != src.ub) return;
    const uint64_t d0 = dst.addr, d1 = d0 + count * dElem, s0 = src.addr, s1 = s0 + count * sElem;
    const bool overlap = d0 < s1 && s0 < d1;
    if (overlap && (d0 != s0 || dElem != sElem)) {
        std::ostringstream m;
        m << op << ": dst UB [" << d0 << ", " << d1 << ") partially overlaps a source [" << s0 << ", " << s1
          << "); vector operands must overlap 100% or not at all (§6.1)";
        Fault(m.str());
    }
}
// IEEE 754-2019 maximum / minimum of two doubles: a NaN operand gives NaN, and -0 < +0.
// ascendc.md does not say how the vector Max/Min treat NaN or signed zeros; the model takes
// the semantics docs/semantics.md writes for pypto's maximum/minimum (torch's NaN rule, and one
// answer for the sign of a zero, which torch's CPU kernels leave to the code path taken).
inline double MaxD(double x, double y)
{
    if (x == y) return std::signbit(x) ? y : x;  // equal: only zeros can differ (in sign)
    return (std::isnan(x) || x > y) ? x : y;
}
inline double MinD(double x, double y)
{
    if (x == y) return std::signbit(x) ? x : y;
    return (std::isnan(x) || x < y) ? x : y;
}
// Elementwise arithmetic: floats exactly in double then rounded once; ints wrap.
template <typename T> inline T Arith(char op, const T& a, const T& b)
{
    if constexpr (std::is_integral<T>::value) {
        const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
        int64_t r = 0;
        switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '>': r = x > y ? x : y; break;
        case '<': r = x < y ? x : y; break;
        default: Fault("integer division is not a vector op on A2");
        }
        return static_cast<T>(r);
    } else {
        const double x = ToD(a), y = ToD(b);
        double r = 0;
        switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/': r = x / y; break;
        case '>': r = MaxD(x, y); break;
        case '<': r = MinD(x, y); break;
        }
        return FromD<T>(r);
    }
}

// ---- mask / repeat lanes (§6.1) -----------------------------------------------------------
// Active lanes of one repeat for elements of `elem` bytes.
inline std::vector<bool> LanesFromCount(uint64_t mask, uint32_t elem, const char* op)
{
    const uint64_t lanes = kRepeat / elem;
    const uint64_t maxLanes = lanes > 128 ? 128 : lanes;
    if (mask == 0 || mask > maxLanes) {
        std::ostringstream m;
        m << op << ": contiguous mask " << mask << " outside [1, " << maxLanes << "] for " << elem << "-byte elements (§1.3)";
        Fault(m.str());
    }
    std::vector<bool> on(lanes, false);
    for (uint64_t j = 0; j < mask; ++j) on[j] = true;
    return on;
}
inline std::vector<bool> LanesFromBits(const uint64_t mask[], uint32_t elem, const char* op)
{
    const uint64_t lanes = kRepeat / elem;
    if (elem >= 4 && mask[1] != 0) Fault(std::string(op) + ": mask[1] must be 0 for 32-bit elements (§1.3)");
    std::vector<bool> on(lanes, false);
    for (uint64_t j = 0; j < lanes && j < 128; ++j) on[j] = (mask[j / 64] >> (j % 64)) & 1u;
    return on;
}
// Byte offset of lane j of repeat r for an operand with the given strides (in blocks).
inline uint64_t LaneByte(uint64_t r, uint64_t j, uint64_t blk, uint64_t rep, uint32_t elem)
{
    const uint64_t epb = kBlock / elem;
    return r * rep * kBlock + (j / epb) * blk * kBlock + (j % epb) * elem;
}
inline void CheckLane(const TensorDesc& t, uint64_t byte, uint32_t elem, const char* op, const char* which)
{
    if (byte + elem > static_cast<uint64_t>(t.count) * elem) {
        std::ostringstream m;
        m << op << ": mask/repeat access at byte " << byte << " of the " << which << " tensor, which has only "
          << t.count << " elements (" << t.count * elem << " B)";
        Fault(m.str());
    }
}
}  // namespace detail
}  // namespace AscendC

#endif  // PYPTO_HOST_RUNTIME_INTERNAL_H
