// kernel_operator.h -- host (CPU) implementation of the Ascend C vector subset that the
// pypto-ast emitter uses.  Same include name as CANN's header, so one emitted kernel source
// builds both with bisheng/CANN and with
//
//     g++ -std=c++17 -O2 -I pypto_ast/emit/host kernel.cpp
//
// Written from /work/shared/reference/ascendc.md (section numbers "§n" below refer to it);
// no CANN code is used.  Target model: Atlas A2 (910B), one AIV core per block.
//
// Error policy (chosen deliberately): every rule the hardware enforces, or a violation that
// hardware would turn into silent corruption / a hang, throws pypto_host::HardwareFault
// (a std::runtime_error) whose what() starts with "pypto_host::HardwareFault: ".  Kernels
// are plain C++ functions on the host, so exceptions cross the "kernel boundary" fine; a
// host driver may catch it, and if it does not, std::terminate prints the message and aborts
// (non-zero exit).  Nothing here throws from a destructor.
//
// Execution model: pypto_host::Launch(numBlocks, kernel, args...) runs the kernel once per
// block with GetBlockIdx()/GetBlockNum() set, after resetting the traffic counters.  Blocks
// run concurrently on a few host threads (PYPTO_AST_HOST_THREADS / SetHostThreads; 0 = one
// per core, 1 = in order on the caller); block state (index, atomic mode, traffic counters,
// the one-TPipe rule) is per thread, the counters of all blocks are summed into Traffic()
// of the caller, and a fault is rethrown from Launch for the lowest faulting block (see
// Launch).  Inside a block, pipes are not modelled as concurrent: every DMA/vector call
// completes before returning, so queue/flag calls only *check* the protocol (never wait).
//
// Speed: count-form vector ops (and Cast float<->half, ReduceSum/Max/Min of float) check
// their operands once per call (same checks, same fault messages) and then run plain typed
// loops that g++ vectorises: float straight on UB (may_alias pointers, restrict where the
// overlap rule proves it), half through float stack chunks; compiled for AVX2 and for the
// baseline ISA, picked at load time (target_clones, x86-64 g++; results are identical, no
// FMA).  No per-element double conversion where the result is provably the same; other
// dtypes and forms keep the element-by-element code.
// Arithmetic semantics (see §6 below): + - * / sqrt, max/min and comparisons are exact IEEE
// results rounded once to T (float: computed in float; half: computed in float, rounded once
// to half -- both bit-identical to computing in double, since 24 >= 2*11+2 and 53 >= 2*24+2);
// Exp of float/half uses a float-precision exp (error < 1 ulp of float, not always
// correctly rounded), Ln/Rsqrt are computed in double -- the device's transcendental ops are
// approximate anyway: compare with tolerances.  NaN results may differ in payload bits.
#ifndef PYPTO_HOST_KERNEL_OPERATOR_H
#define PYPTO_HOST_KERNEL_OPERATOR_H

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <thread>
#include <vector>

// ===========================================================================================
// §2 Device keywords: empty on the host (as in CANN's own CPU-debug build).
// ===========================================================================================
#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif

// ===========================================================================================
// Host-side control: faults, block index, traffic counters, launcher.
// ===========================================================================================
namespace pypto_host {

class HardwareFault : public std::runtime_error {
public:
    explicit HardwareFault(const std::string& msg) : std::runtime_error("pypto_host::HardwareFault: " + msg) {}
};

[[noreturn]] inline void Fault(const std::string& msg) { throw HardwareFault(msg); }

// Bytes moved by DMA in each direction since the last reset (Launch resets them).
struct TrafficCounters {
    uint64_t gmToUbBytes = 0;   // DataCopy / DataCopyPad GM -> UB (MTE2)
    uint64_t ubToGmBytes = 0;   // DataCopy / DataCopyPad UB -> GM (MTE3)
    uint64_t gmToUbCalls = 0;
    uint64_t ubToGmCalls = 0;
    uint64_t gmScalarBytes = 0; // GlobalTensor::GetValue/SetValue (PIPE_S, not DMA)
};

// A2: 192 KiB of Unified Buffer per AIV (§1.2).  The limit is the hardware size; the
// emitter's own budget (≤ 184 KiB, §1.2 / §15.2) is stricter and can be set with SetUbBytes.
constexpr uint32_t kA2UbBytes = 196608;

namespace detail {
// Process-wide settings: written by the host program before a Launch, only read by kernels.
struct State {
    uint32_t ubBytes = kA2UbBytes;
    bool strictGmAlign = false;   // see SetStrictGmAlignment
};
inline State g_state;
// Per-block state.  thread_local: Launch may run blocks on several threads (see Launch).
struct BlockState {
    int64_t blockIdx = 0;
    int64_t blockNum = 1;
    TrafficCounters traffic;
    int livePipes = 0;
    int atomicMode = 0;           // 0 none, 1 add, 2 max, 3 min (§7.3)
};
inline thread_local BlockState t_block;
// Thread count set by SetHostThreads / pypto_host_set_threads; -1: read PYPTO_AST_HOST_THREADS.
inline std::atomic<int> g_threadsOverride{-1};
// Serialises atomic (SetAtomicAdd/Max/Min) UB->GM stores of concurrently running blocks.
inline std::mutex g_atomicMutex;
}  // namespace detail

inline void SetBlock(int64_t idx, int64_t num)
{
    if (num <= 0 || idx < 0 || idx >= num) {
        std::ostringstream m;
        m << "SetBlock(" << idx << ", " << num << "): block index must be in [0, num) and num > 0";
        Fault(m.str());
    }
    detail::t_block.blockIdx = idx;
    detail::t_block.blockNum = num;
}
// Counters of the calling thread: after Launch, the sum over all of that Launch's blocks.
inline const TrafficCounters& Traffic() { return detail::t_block.traffic; }
inline void ResetTraffic() { detail::t_block.traffic = TrafficCounters{}; }
// UB capacity enforced by TPipe::InitBuffer (default: A2 hardware size, 196608 bytes).
inline void SetUbBytes(uint32_t bytes) { detail::g_state.ubBytes = bytes; }
inline uint32_t UbBytes() { return detail::g_state.ubBytes; }
// §7.1 says DataCopy needs the GM address aligned to sizeof(T) only.  Strict mode demands the
// 32-byte grid for GM addresses too (useful to find slow, unaligned bursts).  Off by default.
inline void SetStrictGmAlignment(bool on) { detail::g_state.strictGmAlign = on; }

// Threads used by Launch: n > 0 uses min(n, numBlocks) threads (even above the core count);
// 0 = auto, min(numBlocks, std::thread::hardware_concurrency()); n < 0 forgets the setting
// and goes back to the environment variable PYPTO_AST_HOST_THREADS (same meaning; unset,
// empty or 0 = auto).  A malformed variable throws std::runtime_error from Launch.
inline void SetHostThreads(int n) { detail::g_threadsOverride.store(n < 0 ? -1 : n); }
inline uint32_t HostThreads(uint32_t numBlocks)
{
    long n = detail::g_threadsOverride.load();
    if (n < 0) {
        n = 0;
        const char* env = std::getenv("PYPTO_AST_HOST_THREADS");
        if (env && *env) {
            char* end = nullptr;
            n = std::strtol(env, &end, 10);
            while (end && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
            if (end == env || (end && *end) || n < 0) {
                throw std::runtime_error(std::string("PYPTO_AST_HOST_THREADS=") + env +
                                         ": expected a thread count >= 0 (0 = one per core)");
            }
        }
    }
    if (n == 0) {
        const unsigned hw = std::thread::hardware_concurrency();
        n = hw == 0 ? 1 : static_cast<long>(hw);
    }
    return static_cast<uint32_t>(n < static_cast<long>(numBlocks) ? n : static_cast<long>(numBlocks));
}

// Run `kernel(args...)` once per block, like `kernel<<<numBlocks, ...>>>`.
// Blocks run on HostThreads(numBlocks) threads (the caller is one of them); each block sees
// its own GetBlockIdx()/GetBlockNum(), atomic mode (reset to none) and traffic counters, and
// Traffic() on the calling thread returns their sum afterwards.  Blocks are handed out in
// increasing index order; once a block faults no higher block is started, and Launch rethrows
// the exception of the lowest faulting block (what a sequential run would have thrown first).
// With one thread the blocks run in order on the caller and the first fault stops the rest.
// Kernels must not share mutable state across blocks except through GM (as on the device);
// SetAtomicAdd/Max/Min UB->GM stores are serialised by a mutex, so concurrent atomic blocks
// accumulate in an unspecified order (like the hardware).
template <typename F, typename... Args>
void Launch(uint32_t numBlocks, F&& kernel, Args&&... args)
{
    if (numBlocks == 0 || numBlocks > 65535) Fault("Launch: numBlocks must be in [1, 65535] (§1.4)");
    const uint32_t threads = HostThreads(numBlocks);
    ResetTraffic();
    if (threads <= 1) {
        for (uint32_t b = 0; b < numBlocks; ++b) {
            SetBlock(b, numBlocks);
            detail::t_block.atomicMode = 0;
            kernel(args...);
        }
        return;
    }
    std::atomic<uint32_t> next{0};
    std::atomic<uint32_t> stopAt{numBlocks};  // lowest faulting block so far
    std::vector<std::exception_ptr> faults(numBlocks);
    std::vector<TrafficCounters> sums(threads);
    auto worker = [&](uint32_t w) {
        TrafficCounters sum;
        for (;;) {
            const uint32_t b = next.fetch_add(1);
            if (b >= numBlocks || b > stopAt.load()) break;
            detail::t_block = detail::BlockState{};
            detail::t_block.blockIdx = b;
            detail::t_block.blockNum = numBlocks;
            try {
                kernel(args...);
            } catch (...) {
                faults[b] = std::current_exception();
                uint32_t cur = stopAt.load();
                while (b < cur && !stopAt.compare_exchange_weak(cur, b)) {}
            }
            const TrafficCounters& t = detail::t_block.traffic;
            sum.gmToUbBytes += t.gmToUbBytes; sum.ubToGmBytes += t.ubToGmBytes;
            sum.gmToUbCalls += t.gmToUbCalls; sum.ubToGmCalls += t.ubToGmCalls;
            sum.gmScalarBytes += t.gmScalarBytes;
        }
        sums[w] = sum;
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    try {
        for (uint32_t w = 1; w < threads; ++w) pool.emplace_back(worker, w);
    } catch (const std::system_error&) {
        // Could not start another thread: the threads already running still take every block.
    }
    worker(0);
    for (std::thread& t : pool) t.join();
    TrafficCounters total;
    for (const TrafficCounters& t : sums) {
        total.gmToUbBytes += t.gmToUbBytes; total.ubToGmBytes += t.ubToGmBytes;
        total.gmToUbCalls += t.gmToUbCalls; total.ubToGmCalls += t.ubToGmCalls;
        total.gmScalarBytes += t.gmScalarBytes;
    }
    detail::t_block = detail::BlockState{};
    detail::t_block.traffic = total;
    for (uint32_t b = 0; b < numBlocks; ++b) {
        if (faults[b]) std::rethrow_exception(faults[b]);
    }
}
}  // namespace pypto_host

// Lets a host program (e.g. the Python side, through ctypes) set the Launch thread count:
// same meaning as pypto_host::SetHostThreads.  Weak, so every translation unit may define it.
extern "C" __attribute__((weak)) void pypto_host_set_threads(int n) { pypto_host::SetHostThreads(n); }

namespace pypto_host {
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
}  // namespace fp
}  // namespace pypto_host

// ===========================================================================================
// §3 Data types: half (IEEE binary16) and bfloat16_t, global namespace like CANN's.
// Conversion from any arithmetic type rounds to nearest-even; arithmetic is done exactly in
// double and rounded once (= correctly rounded binary16 arithmetic).
// ===========================================================================================
#define PYPTO_HOST_SMALL_FLOAT(NAME, FMT)                                                          \
    struct NAME {                                                                                  \
        uint16_t bits_ = 0;                                                                        \
        NAME() = default;                                                                          \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        NAME(U v) : bits_(FromDouble(static_cast<double>(v))) {}                                   \
        operator float() const { return static_cast<float>(ToDouble()); }                          \
        double ToDouble() const { return pypto_host::fp::Decode(bits_, FMT); }                     \
        static uint16_t FromDouble(double d)                                                       \
        {                                                                                          \
            using namespace pypto_host::fp;                                                        \
            return static_cast<uint16_t>(Encode(RoundTo(d, FMT, Rnd::NearestEven), FMT));          \
        }                                                                                          \
        static NAME FromBits(uint16_t b) { NAME h; h.bits_ = b; return h; }                        \
        uint16_t Bits() const { return bits_; }                                                    \
        friend NAME operator+(NAME a, NAME b) { return NAME(a.ToDouble() + b.ToDouble()); }        \
        friend NAME operator-(NAME a, NAME b) { return NAME(a.ToDouble() - b.ToDouble()); }        \
        friend NAME operator*(NAME a, NAME b) { return NAME(a.ToDouble() * b.ToDouble()); }        \
        friend NAME operator/(NAME a, NAME b) { return NAME(a.ToDouble() / b.ToDouble()); }        \
        NAME operator-() const { return FromBits(static_cast<uint16_t>(bits_ ^ 0x8000u)); }        \
        NAME& operator+=(NAME o) { return *this = *this + o; }                                     \
        NAME& operator-=(NAME o) { return *this = *this - o; }                                     \
        NAME& operator*=(NAME o) { return *this = *this * o; }                                     \
        NAME& operator/=(NAME o) { return *this = *this / o; }                                     \
        /* mixed arithmetic promotes to float (avoids ambiguity with the built-ins) */             \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator+(NAME a, U b) { return float(a) + static_cast<float>(b); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator+(U b, NAME a) { return static_cast<float>(b) + float(a); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator-(NAME a, U b) { return float(a) - static_cast<float>(b); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator-(U b, NAME a) { return static_cast<float>(b) - float(a); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator*(NAME a, U b) { return float(a) * static_cast<float>(b); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator*(U b, NAME a) { return static_cast<float>(b) * float(a); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator/(NAME a, U b) { return float(a) / static_cast<float>(b); }           \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        friend float operator/(U b, NAME a) { return static_cast<float>(b) / float(a); }           \
    };

PYPTO_HOST_SMALL_FLOAT(half, pypto_host::fp::kHalf)
PYPTO_HOST_SMALL_FLOAT(bfloat16_t, pypto_host::fp::kBf16)
#undef PYPTO_HOST_SMALL_FLOAT

// ===========================================================================================
// §1.1 / §9 Pipes and hardware events (global names in CANN: pipe_t, event_t).
// ===========================================================================================
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

// ===========================================================================================
// Enums: positions (§1.2, §5.1), rounding (§6.3), compare/select (§6.4), reduce order (§6.5).
// ===========================================================================================
enum class TPosition : uint8_t {
    GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, TSCM, C2PIPE2GM
};
using QuePosition = TPosition;

enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V,
    MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3,
    S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3
};

// ===========================================================================================
// Internal helpers: byte-level element access (memcpy; no aliasing tricks), dtype ids.
// ===========================================================================================
namespace detail {
using pypto_host::Fault;

constexpr uint32_t kBlock = 32;    // DataBlock (§1.3)
constexpr uint32_t kRepeat = 256;  // one vector repeat (§1.3)

template <typename T> inline T Load(const uint8_t* p) { T v; std::memcpy(&v, p, sizeof(T)); return v; }
template <typename T> inline void Store(uint8_t* p, const T& v) { std::memcpy(p, &v, sizeof(T)); }

enum class Dt { I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, OTHER };
template <typename T> constexpr Dt DtOf()
{
    if (std::is_same<T, int8_t>::value) return Dt::I8;
    if (std::is_same<T, uint8_t>::value) return Dt::U8;
    if (std::is_same<T, int16_t>::value) return Dt::I16;
    if (std::is_same<T, uint16_t>::value) return Dt::U16;
    if (std::is_same<T, int32_t>::value) return Dt::I32;
    if (std::is_same<T, uint32_t>::value) return Dt::U32;
    if (std::is_same<T, int64_t>::value) return Dt::I64;
    if (std::is_same<T, uint64_t>::value) return Dt::U64;
    if (std::is_same<T, half>::value) return Dt::F16;
    if (std::is_same<T, bfloat16_t>::value) return Dt::BF16;
    if (std::is_same<T, float>::value) return Dt::F32;
    return Dt::OTHER;
}
inline const char* DtName(Dt d)
{
    static const char* names[] = {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
                                  "int64_t", "uint64_t", "half", "bfloat16_t", "float", "<other>"};
    return names[static_cast<int>(d)];
}
// §6.2: count forms accept any dtype at compile time and fail at run time on the device.
template <typename T> inline void CheckDtype(const char* op, std::initializer_list<Dt> allowed)
{
    for (Dt d : allowed) if (d == DtOf<T>()) return;
    std::ostringstream m;
    m << op << ": dtype " << DtName(DtOf<T>()) << " is not supported on A2 (allowed:";
    for (Dt d : allowed) m << ' ' << DtName(d);
    m << "; §6.2)";
    Fault(m.str());
}

// Value <-> double for the arithmetic of vector ops.
template <typename T> inline double ToD(const T& v) { return static_cast<double>(v); }
inline double ToD(const half& v) { return v.ToDouble(); }
inline double ToD(const bfloat16_t& v) { return v.ToDouble(); }
template <typename T> inline T FromD(double d) { return static_cast<T>(d); }
template <> inline half FromD<half>(double d) { return half(d); }
template <> inline bfloat16_t FromD<bfloat16_t>(double d) { return bfloat16_t(d); }

// Queue buffer bookkeeping (§5.2): which state each physical buffer of a TQue is in.
enum class BufState { Free, Allocated, Queued, Dequeued };
struct QueueBuf {
    uint32_t addr = 0;
    BufState state = BufState::Free;
    uint64_t gen = 0;  // bumped on every AllocTensor: stale copies of a LocalTensor are detected
};
struct QueueCore;  // defined with TQue

// Everything a LocalTensor knows about where it lives.
struct TensorDesc {
    uint8_t* ub = nullptr;     // base of the owning TPipe's UB model
    uint32_t addr = 0;         // byte address inside UB
    uint32_t count = 0;        // elements in this view
    uint32_t capBytes = 0;     // bytes from addr to the end of the underlying buffer
    QueueCore* owner = nullptr;  // queue that allocated it (nullptr: TBuf / constructed)
    int32_t buf = -1;
    uint64_t gen = 0;
};
void CheckLive(const TensorDesc& d, const char* op);  // defined after QueueCore
}  // namespace detail

// ===========================================================================================
// §4.1 GlobalTensor<T>: a bounded GM view.  SetGlobalBuffer registers [base, base+size);
// every access (DMA or scalar) through this tensor or any operator[] sub-view is checked
// against that range -- on hardware an out-of-range access silently hits another tensor.
// ===========================================================================================
template <typename T> class GlobalTensor {
public:
    GlobalTensor() = default;
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize)
    {
        base_ = reinterpret_cast<uint8_t*>(buffer);
        size_ = bufferSize;
        off_ = 0;
        bounded_ = true;
    }
    // Without a size the range is unknown: accesses are not bounds-checked.
    __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer)
    {
        base_ = reinterpret_cast<uint8_t*>(buffer);
        size_ = std::numeric_limits<uint64_t>::max();
        off_ = 0;
        bounded_ = false;
    }
    __aicore__ inline GlobalTensor operator[](const uint64_t offset) const
    {
        GlobalTensor g = *this;
        g.off_ += offset;
        return g;
    }
    __aicore__ inline T GetValue(const uint64_t offset) const
    {
        CheckRange(offset * sizeof(T), sizeof(T), "GlobalTensor::GetValue");
        pypto_host::detail::t_block.traffic.gmScalarBytes += sizeof(T);
        return detail::Load<T>(Addr() + offset * sizeof(T));
    }
    __aicore__ inline void SetValue(const uint64_t offset, const T& value)
    {
        CheckRange(offset * sizeof(T), sizeof(T), "GlobalTensor::SetValue");
        pypto_host::detail::t_block.traffic.gmScalarBytes += sizeof(T);
        detail::Store<T>(Addr() + offset * sizeof(T), value);
    }
    __aicore__ inline __gm__ T* GetPhyAddr() const { return reinterpret_cast<T*>(Addr()); }
    __aicore__ inline uint64_t GetSize() const { return off_ >= size_ ? 0 : size_ - off_; }
    template <typename U> __aicore__ inline GlobalTensor<U> ReinterpretCast() const
    {
        GlobalTensor<U> g;
        g.base_ = base_;
        g.bounded_ = bounded_;
        g.size_ = bounded_ ? size_ * sizeof(T) / sizeof(U) : size_;
        g.off_ = off_ * sizeof(T) / sizeof(U);
        return g;
    }

    // ---- host-runtime internals -------------------------------------------------------
    uint8_t* Addr() const { return base_ + off_ * sizeof(T); }
    // Check that bytes [relByte, relByte+len) from this view's start lie in the registered buffer.
    void CheckRange(uint64_t relByte, uint64_t len, const char* op) const
    {
        if (!base_) pypto_host::Fault(std::string(op) + ": GlobalTensor used before SetGlobalBuffer");
        if (!bounded_) return;
        const uint64_t start = off_ * sizeof(T) + relByte;
        const uint64_t limit = size_ * sizeof(T);
        if (start + len > limit) {
            std::ostringstream m;
            m << op << ": GM access out of bounds: bytes [" << start << ", " << start + len
              << ") of a buffer of " << limit << " bytes (" << size_ << " elements) registered with SetGlobalBuffer";
            pypto_host::Fault(m.str());
        }
    }
    uint8_t* base_ = nullptr;
    uint64_t size_ = 0;  // elements registered
    uint64_t off_ = 0;   // element offset of this view
    bool bounded_ = false;
};

// ===========================================================================================
// §4.2 LocalTensor<T>: a view into the UB of the kernel's TPipe.
// ===========================================================================================
template <typename T> class LocalTensor {
public:
    LocalTensor() = default;
    // Sub-view by element offset.  Vector/DMA users check that the result is 32-byte aligned.
    __aicore__ inline LocalTensor operator[](const uint32_t offset) const
    {
        if (offset > d_.count) {
            std::ostringstream m;
            m << "LocalTensor::operator[](" << offset << "): offset beyond the tensor's " << d_.count << " elements";
            pypto_host::Fault(m.str());
        }
        LocalTensor t = *this;
        t.d_.addr += offset * sizeof(T);
        t.d_.count -= offset;
        t.d_.capBytes -= offset * sizeof(T);
        return t;
    }
    __aicore__ inline T GetValue(const uint32_t index) const
    {
        CheckIndex(index, "LocalTensor::GetValue");
        return detail::Load<T>(Ptr() + index * sizeof(T));
    }
    __aicore__ inline void SetValue(const uint32_t index, const T& value) const
    {
        CheckIndex(index, "LocalTensor::SetValue");
        detail::Store<T>(Ptr() + index * sizeof(T), value);
    }
    __aicore__ inline uint32_t GetSize() const { return d_.count; }
    // §4.2 SetSize: may not grow the view past the end of the underlying buffer.
    __aicore__ inline void SetSize(const uint32_t size)
    {
        if (static_cast<uint64_t>(size) * sizeof(T) > d_.capBytes) {
            std::ostringstream m;
            m << "LocalTensor::SetSize(" << size << "): " << static_cast<uint64_t>(size) * sizeof(T)
              << " bytes exceed the " << d_.capBytes << " bytes left in the underlying UB buffer";
            pypto_host::Fault(m.str());
        }
        d_.count = size;
    }
    template <typename U> __aicore__ inline LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> t;
        t.d_ = d_;
        t.d_.count = static_cast<uint32_t>(static_cast<uint64_t>(d_.count) * sizeof(T) / sizeof(U));
        return t;
    }
    __aicore__ inline __ubuf__ T* GetPhyAddr() const { return reinterpret_cast<T*>(Ptr()); }

    // ---- host-runtime internals -------------------------------------------------------
    uint8_t* Ptr() const { return d_.ub + d_.addr; }
    void CheckIndex(uint32_t index, const char* op) const
    {
        if (!d_.ub) pypto_host::Fault(std::string(op) + ": LocalTensor is not bound to UB (never allocated)");
        detail::CheckLive(d_, op);
        if (index >= d_.count) {
            std::ostringstream m;
            m << op << "(" << index << "): index out of range for a LocalTensor of " << d_.count << " elements";
            pypto_host::Fault(m.str());
        }
    }
    detail::TensorDesc d_;
};

class TPipe;

// ===========================================================================================
// §5.1/§5.2 TQue: a ring of `num` UB buffers with queue protocol checks.  On hardware a
// violation of the protocol dead-locks (AllocTensor with no free buffer, DeQue of an empty
// queue) or races (touching a buffer that is enqueued or already freed); here it faults.
// ===========================================================================================
namespace detail {
struct QueueCore {
    const char* name = "TQue";
    TPosition pos = TPosition::VECIN;
    int32_t depth = 1;
    uint8_t* ub = nullptr;
    uint32_t len = 0;
    std::vector<QueueBuf> bufs;
    std::deque<int32_t> fifo;
    size_t next = 0;  // round-robin allocation cursor (ping-pong order of the hardware)
    bool initialised() const { return ub != nullptr; }
    std::string Where() const
    {
        std::ostringstream m;
        m << "TQue<" << (pos == TPosition::VECIN ? "VECIN" : pos == TPosition::VECOUT ? "VECOUT" : "?")
          << ", depth " << depth << "> with " << bufs.size() << " buffer(s) of " << len << " B";
        return m.str();
    }
};

inline void CheckLive(const TensorDesc& d, const char* op)
{
    if (!d.owner) return;
    const QueueBuf& b = d.owner->bufs.at(static_cast<size_t>(d.buf));
    if (b.gen != d.gen || b.state == BufState::Free) {
        Fault(std::string(op) + ": LocalTensor used after FreeTensor (its queue buffer was released"
              " or re-allocated) on " + d.owner->Where());
    }
    if (b.state == BufState::Queued) {
        Fault(std::string(op) + ": LocalTensor used while it is enqueued (EnQue'd but not DeQue'd) on " +
              d.owner->Where() + "; on hardware this races with the consuming pipe (§5.2)");
    }
}
}  // namespace detail

template <TPosition pos, int32_t depth> class TQue {
public:
    TQue() { core_.pos = pos; core_.depth = depth; }
    TQue(const TQue&) = delete;
    TQue& operator=(const TQue&) = delete;

    template <typename T> __aicore__ inline LocalTensor<T> AllocTensor()
    {
        Need("AllocTensor");
        const size_t n = core_.bufs.size();
        for (size_t k = 0; k < n; ++k) {
            const size_t i = (core_.next + k) % n;
            detail::QueueBuf& b = core_.bufs[i];
            if (b.state != detail::BufState::Free) continue;
            core_.next = (i + 1) % n;
            b.state = detail::BufState::Allocated;
            ++b.gen;
            return Make<T>(static_cast<int32_t>(i));
        }
        std::ostringstream m;
        m << "AllocTensor: all " << n << " buffer(s) of " << core_.Where()
          << " are in use (allocated or enqueued, not freed); on hardware AllocTensor waits forever";
        pypto_host::Fault(m.str());
    }
    template <typename T> __aicore__ inline bool EnQue(const LocalTensor<T>& tensor)
    {
        Need("EnQue");
        detail::QueueBuf& b = Own(tensor.d_, "EnQue");
        if (b.state != detail::BufState::Allocated) {
            pypto_host::Fault(std::string("EnQue: tensor is not in the allocated state (") +
                              StateName(b.state) + ") on " + core_.Where());
        }
        if (depth > 0 && static_cast<int32_t>(core_.fifo.size()) >= depth) {
            std::ostringstream m;
            m << "EnQue: queue already holds " << core_.fifo.size() << " tensor(s) = its depth; DeQue first ("
              << core_.Where() << ")";
            pypto_host::Fault(m.str());
        }
        b.state = detail::BufState::Queued;
        core_.fifo.push_back(tensor.d_.buf);
        return true;
    }
    template <typename T> __aicore__ inline LocalTensor<T> DeQue()
    {
        Need("DeQue");
        if (core_.fifo.empty()) {
            pypto_host::Fault("DeQue: queue is empty (no EnQue before this DeQue) on " + core_.Where() +
                              "; on hardware DeQue waits forever");
        }
        const int32_t i = core_.fifo.front();
        core_.fifo.pop_front();
        core_.bufs[static_cast<size_t>(i)].state = detail::BufState::Dequeued;
        return Make<T>(i);
    }
    template <typename T> __aicore__ inline void FreeTensor(LocalTensor<T>& tensor)
    {
        Need("FreeTensor");
        detail::QueueBuf& b = Own(tensor.d_, "FreeTensor");
        if (b.state == detail::BufState::Free || b.gen != tensor.d_.gen) {
            pypto_host::Fault("FreeTensor: tensor was already freed (double FreeTensor) on " + core_.Where());
        }
        if (b.state == detail::BufState::Queued) {
            pypto_host::Fault("FreeTensor: tensor is still enqueued (DeQue it first) on " + core_.Where());
        }
        b.state = detail::BufState::Free;
    }
    // Number of tensors currently enqueued (for tests / debugging).
    size_t HostQueuedCount() const { return core_.fifo.size(); }

    detail::QueueCore core_;

private:
    void Need(const char* op) const
    {
        if (!core_.initialised()) pypto_host::Fault(std::string(op) + ": TQue used before TPipe::InitBuffer");
    }
    static const char* StateName(detail::BufState s)
    {
        switch (s) {
        case detail::BufState::Free: return "free";
        case detail::BufState::Allocated: return "allocated";
        case detail::BufState::Queued: return "enqueued";
        case detail::BufState::Dequeued: return "dequeued";
        }
        return "?";
    }
    detail::QueueBuf& Own(const detail::TensorDesc& d, const char* op)
    {
        if (d.owner != &core_ || d.buf < 0) {
            pypto_host::Fault(std::string(op) + ": tensor was not allocated from this queue (" + core_.Where() + ")");
        }
        return core_.bufs[static_cast<size_t>(d.buf)];
    }
    template <typename T> LocalTensor<T> Make(int32_t i)
    {
        LocalTensor<T> t;
        t.d_.ub = core_.ub;
        t.d_.addr = core_.bufs[static_cast<size_t>(i)].addr;
        t.d_.count = core_.len / static_cast<uint32_t>(sizeof(T));
        t.d_.capBytes = core_.len;
        t.d_.owner = &core_;
        t.d_.buf = i;
        t.d_.gen = core_.bufs[static_cast<size_t>(i)].gen;
        return t;
    }
};

// §5.1 TBuf: scratch UB without queue semantics.
template <TPosition pos = TPosition::VECCALC> class TBuf {
public:
    TBuf() = default;
    TBuf(const TBuf&) = delete;
    TBuf& operator=(const TBuf&) = delete;
    template <typename T> __aicore__ inline LocalTensor<T> Get() { return Get<T>(len_ / static_cast<uint32_t>(sizeof(T))); }
    template <typename T> __aicore__ inline LocalTensor<T> Get(const uint32_t len) { return GetWithOffset<T>(len, 0); }
    template <typename T> __aicore__ inline LocalTensor<T> GetWithOffset(const uint32_t size, const uint32_t bufOffset)
    {
        if (!ub_) pypto_host::Fault("TBuf::Get: TBuf used before TPipe::InitBuffer");
        if (bufOffset % detail::kBlock != 0) {
            pypto_host::Fault("TBuf::GetWithOffset: byte offset " + std::to_string(bufOffset) +
                              " is not a multiple of 32 (UB addresses are 32-byte aligned, §1.2)");
        }
        if (static_cast<uint64_t>(bufOffset) + static_cast<uint64_t>(size) * sizeof(T) > len_) {
            std::ostringstream m;
            m << "TBuf::Get: " << size << " elements of " << sizeof(T) << " B at byte offset " << bufOffset
              << " exceed the TBuf's " << len_ << " bytes";
            pypto_host::Fault(m.str());
        }
        LocalTensor<T> t;
        t.d_.ub = ub_;
        t.d_.addr = addr_ + bufOffset;
        t.d_.count = size;
        t.d_.capBytes = len_ - bufOffset;
        return t;
    }
    uint8_t* ub_ = nullptr;
    uint32_t addr_ = 0;
    uint32_t len_ = 0;
};

// ===========================================================================================
// §5.1 TPipe: owns the UB model (one per kernel) and carves buffers out of it.
// UB starts filled with 0xFF bytes (NaN for float/half, -1 for ints): reading memory that no
// DMA or vector op wrote shows up instead of silently reading zeros.
// ===========================================================================================
class TPipe {
public:
    TPipe() : ub_(new uint8_t[pypto_host::UbBytes()])
    {
        if (pypto_host::detail::t_block.livePipes > 0) {
            pypto_host::Fault("TPipe: a second TPipe was constructed while one is alive; exactly one TPipe per kernel (§5.1)");
        }
        ++pypto_host::detail::t_block.livePipes;
        std::memset(ub_.get(), 0xFF, pypto_host::UbBytes());
    }
    ~TPipe() { --pypto_host::detail::t_block.livePipes; }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <TPosition pos, int32_t depth>
    __aicore__ inline bool InitBuffer(TQue<pos, depth>& que, uint8_t num, uint32_t len)
    {
        detail::QueueCore& q = que.core_;
        if (pos != TPosition::VECIN && pos != TPosition::VECOUT && pos != TPosition::VECCALC) {
            // Cube positions: per-TPipe L1/L0A/L0B/L0C/BiasTable pools (pypto_host_cube.h).
            PyptoHostCubeInitQueue(cube_, que, num, len);
            return true;
        }
        if (q.initialised()) pypto_host::Fault("TPipe::InitBuffer: this TQue was already initialised");
        if (num == 0) pypto_host::Fault("TPipe::InitBuffer: num must be >= 1");
        // §15.2: every UB buffer size must be a multiple of 32 B (the device would silently round
        // up, so the emitter's size arithmetic would be wrong).
        CheckLen("TPipe::InitBuffer(que)", len);
        int& perPos = pos == TPosition::VECIN ? vecinBufs_ : pos == TPosition::VECOUT ? vecoutBufs_ : veccalcBufs_;
        if (perPos + num > 8) {  // §5.1: at most 8 queue buffers per TPosition (8 event IDs)
            std::ostringstream m;
            m << "TPipe::InitBuffer: " << perPos + num << " queue buffers on one TPosition; at most 8 (§5.1)";
            pypto_host::Fault(m.str());
        }
        const uint32_t base = Carve("TPipe::InitBuffer(que)", static_cast<uint64_t>(num) * len, num);
        perPos += num;
        q.ub = ub_.get();
        q.len = len;
        q.bufs.assign(num, detail::QueueBuf{});
        for (uint32_t i = 0; i < num; ++i) q.bufs[i].addr = base + i * len;
        return true;
    }
    template <TPosition pos> __aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len)
    {
        if (pos != TPosition::VECIN && pos != TPosition::VECOUT && pos != TPosition::VECCALC) {
            PyptoHostCubeInitTBuf(cube_, buf, len);  // cube positions (pypto_host_cube.h)
            return true;
        }
        if (buf.ub_) pypto_host::Fault("TPipe::InitBuffer: this TBuf was already initialised");
        CheckLen("TPipe::InitBuffer(tbuf)", len);
        buf.addr_ = Carve("TPipe::InitBuffer(tbuf)", len, 1);
        buf.ub_ = ub_.get();
        buf.len_ = len;
        return true;
    }
    // Bytes of UB handed out so far (for tests / budget reports).
    uint32_t HostUbUsed() const { return used_; }

private:
    static void CheckLen(const char* op, uint32_t len)
    {
        if (len == 0 || len % detail::kBlock != 0) {
            pypto_host::Fault(std::string(op) + ": buffer length " + std::to_string(len) +
                              " bytes is not a positive multiple of 32 bytes (UB is addressed in 32-byte blocks, §1.3/§15.2)");
        }
    }
    uint32_t Carve(const char* op, uint64_t bytes, uint32_t nbufs)
    {
        if (buffers_ + nbufs > 64) pypto_host::Fault(std::string(op) + ": more than 64 buffers in one kernel (§5.1)");
        if (used_ + bytes > pypto_host::UbBytes()) {
            std::ostringstream m;
            m << op << ": UB overflow: " << used_ << " B already allocated + " << bytes << " B requested = "
              << used_ + bytes << " B > UB size " << pypto_host::UbBytes() << " B";
            pypto_host::Fault(m.str());
        }
        const uint32_t at = used_;
        used_ += static_cast<uint32_t>(bytes);
        buffers_ += nbufs;
        return at;
    }
    std::unique_ptr<uint8_t[]> ub_;
    uint32_t used_ = 0;
    uint32_t buffers_ = 0;
    int vecinBufs_ = 0;
    int vecoutBufs_ = 0;
    int veccalcBufs_ = 0;
    std::shared_ptr<void> cube_;  // cube pools, created by InitBuffer on first use (pypto_host_cube.h)
};

// ===========================================================================================
// §1.4 System variables.
// ===========================================================================================
__aicore__ inline int64_t GetBlockIdx() { return pypto_host::detail::t_block.blockIdx; }
__aicore__ inline int64_t GetBlockNum() { return pypto_host::detail::t_block.blockNum; }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline void InitSocState() {}

// ===========================================================================================
// §9 Synchronisation.  Execution here is sequential, so barriers and flags are no-ops apart
// from argument checks (event ids 0-7 exist on A2).
// ===========================================================================================
template <pipe_t pipe> __aicore__ inline void PipeBarrier() {}
template <HardEvent event> __aicore__ inline void SetFlag(int32_t eventID)
{
    if (eventID < 0 || eventID > 7) pypto_host::Fault("SetFlag: event id " + std::to_string(eventID) + " outside 0..7 (§9.1)");
}
template <HardEvent event> __aicore__ inline void WaitFlag(int32_t eventID)
{
    if (eventID < 0 || eventID > 7) pypto_host::Fault("WaitFlag: event id " + std::to_string(eventID) + " outside 0..7 (§9.1)");
}

// ===========================================================================================
// §7.3 Atomic accumulate into GM on UB->GM copies.
// ===========================================================================================
template <typename T> __aicore__ inline void SetAtomicAdd()
{
    detail::CheckDtype<T>("SetAtomicAdd", {detail::Dt::I8, detail::Dt::I16, detail::Dt::F16, detail::Dt::BF16, detail::Dt::I32, detail::Dt::F32});
    pypto_host::detail::t_block.atomicMode = 1;
}
template <typename T> __aicore__ inline void SetAtomicMax() { pypto_host::detail::t_block.atomicMode = 2; }
template <typename T> __aicore__ inline void SetAtomicMin() { pypto_host::detail::t_block.atomicMode = 3; }
__aicore__ inline void SetAtomicNone() { pypto_host::detail::t_block.atomicMode = 0; }

// ===========================================================================================
// §7 Data movement (AIV).
// ===========================================================================================
// §7.1 DataCopyParams: blockLen and both gaps in 32-byte blocks.
struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};
// §7.2 DataCopyExtParams: blockLen in bytes; GM-side stride in bytes, UB-side in 32-byte blocks.
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};
template <typename T> struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;   // elements
    uint8_t rightPadding = 0;  // elements
    T paddingValue = T(0);
};
// Older DataCopyPad form (§7.2 "Older signature"): paddingValue carries T's raw bits.
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

namespace detail {
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
template <typename T> inline void CheckGmAligned(const GlobalTensor<T>& g, const char* op, uint64_t align)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(g.Addr());
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
inline void CountIn(uint64_t bytes) { auto& t = pypto_host::detail::t_block.traffic; t.gmToUbBytes += bytes; ++t.gmToUbCalls; }
inline void CountOut(uint64_t bytes) { auto& t = pypto_host::detail::t_block.traffic; t.ubToGmBytes += bytes; ++t.ubToGmCalls; }
inline uint64_t GmAlign() { return pypto_host::detail::g_state.strictGmAlign ? kBlock : 0; }
template <typename T> inline void CheckCountBytes(const char* op, uint32_t count)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % kBlock != 0) {
        std::ostringstream m;
        m << op << ": length " << count << " x " << sizeof(T) << " B = " << bytes
          << " bytes is not a multiple of 32 bytes; the device silently rounds it down to " << bytes / kBlock * kBlock
          << " (use DataCopyPad for ragged lengths, §7.1/§7.2)";
        Fault(m.str());
    }
}
}  // namespace detail

// §7.1 GM -> UB, count form.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy(GM->UB)";
    detail::CheckUbAligned(dst.d_, op, "dst");
    detail::CheckGmAligned(src, op, detail::GmAlign() ? detail::GmAlign() : sizeof(T));
    detail::CheckCountBytes<T>(op, count);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    detail::CheckUbRange(dst.d_, bytes, op, "dst");
    src.CheckRange(0, bytes, op);
    std::memcpy(dst.Ptr(), src.Addr(), bytes);
    detail::CountIn(bytes);
}
// §7.1 UB -> GM, count form.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy(UB->GM)";
    detail::CheckUbAligned(src.d_, op, "src");
    detail::CheckGmAligned(dst, op, detail::GmAlign() ? detail::GmAlign() : sizeof(T));
    detail::CheckCountBytes<T>(op, count);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    detail::CheckUbRange(src.d_, bytes, op, "src");
    dst.CheckRange(0, bytes, op);
    detail::StoreGm<T>(dst.Addr(), src.Ptr(), bytes);
    detail::CountOut(bytes);
}
// §7.1 UB -> UB (MTE, 32-byte granularity).  Not GM traffic.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy(UB->UB)";
    detail::CheckUbAligned(dst.d_, op, "dst");
    detail::CheckUbAligned(src.d_, op, "src");
    detail::CheckCountBytes<T>(op, count);
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    detail::CheckUbRange(dst.d_, bytes, op, "dst");
    detail::CheckUbRange(src.d_, bytes, op, "src");
    std::memmove(dst.Ptr(), src.Ptr(), bytes);
}

namespace detail {
inline void CheckBlockCount(const char* op, uint32_t blockCount)
{
    if (blockCount > 4095) Fault(std::string(op) + ": blockCount " + std::to_string(blockCount) + " > 4095 (§7.1/§7.2)");
}
}  // namespace detail

// §7.1 strided GM -> UB: blockCount blocks of blockLen*32 B; gaps in 32-byte blocks.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p)
{
    const char* op = "DataCopy(GM->UB, DataCopyParams)";
    detail::CheckUbAligned(dst.d_, op, "dst");
    detail::CheckGmAligned(src, op, detail::GmAlign() ? detail::GmAlign() : sizeof(T));
    detail::CheckBlockCount(op, p.blockCount);
    const uint64_t len = uint64_t(p.blockLen) * 32, gs = (uint64_t(p.blockLen) + p.srcStride) * 32,
                   us = (uint64_t(p.blockLen) + p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    detail::CheckUbRange(dst.d_, (p.blockCount - 1) * us + len, op, "dst");
    src.CheckRange(0, (p.blockCount - 1) * gs + len, op);
    for (uint32_t i = 0; i < p.blockCount; ++i) std::memcpy(dst.Ptr() + i * us, src.Addr() + i * gs, len);
    detail::CountIn(uint64_t(p.blockCount) * len);
}
// §7.1 strided UB -> GM.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p)
{
    const char* op = "DataCopy(UB->GM, DataCopyParams)";
    detail::CheckUbAligned(src.d_, op, "src");
    detail::CheckGmAligned(dst, op, detail::GmAlign() ? detail::GmAlign() : sizeof(T));
    detail::CheckBlockCount(op, p.blockCount);
    const uint64_t len = uint64_t(p.blockLen) * 32, us = (uint64_t(p.blockLen) + p.srcStride) * 32,
                   gs = (uint64_t(p.blockLen) + p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    detail::CheckUbRange(src.d_, (p.blockCount - 1) * us + len, op, "src");
    dst.CheckRange(0, (p.blockCount - 1) * gs + len, op);
    for (uint32_t i = 0; i < p.blockCount; ++i) detail::StoreGm<T>(dst.Addr() + i * gs, src.Ptr() + i * us, len);
    detail::CountOut(uint64_t(p.blockCount) * len);
}

namespace detail {
inline uint64_t RoundUp32(uint64_t b) { return (b + kBlock - 1) / kBlock * kBlock; }

// §7.2 GM -> UB with padding.  Each block lands at a 32-byte boundary in UB as
// [leftPadding][blockLen bytes of data][rightPadding][filler up to 32 B].
// Filler: left = right = 0 -> copies of the block's first element (documented); otherwise
// paddingValue when isPad, else "unspecified" -- modelled as 0xFF poison bytes.
template <typename T>
inline void PadIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t blockCount, uint64_t blockLen,
                  uint64_t gmGapBytes, uint64_t ubGapBlocks, bool isPad, uint32_t left, uint32_t right, const T& value,
                  const char* op)
{
    CheckUbAligned(dst.d_, op, "dst");
    if (GmAlign()) CheckGmAligned(src, op, GmAlign());
    CheckBlockCount(op, blockCount);
    if (blockCount == 0 || blockLen == 0) return;
    if (blockLen % sizeof(T) != 0) {
        Fault(std::string(op) + ": blockLen " + std::to_string(blockLen) + " bytes is not a multiple of sizeof(T) = " +
              std::to_string(sizeof(T)) + " (§7.2)");
    }
    if (left * sizeof(T) > kBlock || right * sizeof(T) > kBlock) {
        Fault(std::string(op) + ": leftPadding/rightPadding exceed 32 bytes (§7.2)");
    }
    const uint64_t rowUsed = (left + right) * sizeof(T) + blockLen;
    const uint64_t row = RoundUp32(rowUsed);
    const uint64_t us = row + ubGapBlocks * kBlock, gs = blockLen + gmGapBytes;
    CheckUbRange(dst.d_, (blockCount - 1) * us + row, op, "dst");
    src.CheckRange(0, (blockCount - 1) * gs + blockLen, op);
    for (uint32_t i = 0; i < blockCount; ++i) {
        uint8_t* u = dst.Ptr() + i * us;
        const uint8_t* g = src.Addr() + i * gs;
        std::memcpy(u + left * sizeof(T), g, blockLen);
        if (left == 0 && right == 0) {
            for (uint64_t b = blockLen; b + sizeof(T) <= row; b += sizeof(T)) std::memcpy(u + b, g, sizeof(T));
            continue;
        }
        std::memset(u + rowUsed, 0xFF, row - rowUsed);
        for (uint32_t k = 0; k < left; ++k) {
            if (isPad) Store<T>(u + k * sizeof(T), value); else std::memset(u + k * sizeof(T), 0xFF, sizeof(T));
        }
        for (uint32_t k = 0; k < right; ++k) {
            uint8_t* p = u + left * sizeof(T) + blockLen + k * sizeof(T);
            if (isPad) Store<T>(p, value); else std::memset(p, 0xFF, sizeof(T));
        }
    }
    CountIn(uint64_t(blockCount) * blockLen);
}
// §7.2 UB -> GM: only the valid blockLen bytes of each (32-byte padded) UB row are written.
template <typename T>
inline void PadOut(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t blockCount, uint64_t blockLen,
                   uint64_t ubGapBlocks, uint64_t gmGapBytes, const char* op)
{
    CheckUbAligned(src.d_, op, "src");
    if (GmAlign()) CheckGmAligned(dst, op, GmAlign());
    CheckBlockCount(op, blockCount);
    if (blockCount == 0 || blockLen == 0) return;
    if (blockLen % sizeof(T) != 0) {
        Fault(std::string(op) + ": blockLen " + std::to_string(blockLen) + " bytes is not a multiple of sizeof(T) = " +
              std::to_string(sizeof(T)) + " (§7.2)");
    }
    const uint64_t us = RoundUp32(blockLen) + ubGapBlocks * kBlock, gs = blockLen + gmGapBytes;
    CheckUbRange(src.d_, (blockCount - 1) * us + blockLen, op, "src");
    dst.CheckRange(0, (blockCount - 1) * gs + blockLen, op);
    for (uint32_t i = 0; i < blockCount; ++i) StoreGm<T>(dst.Addr() + i * gs, src.Ptr() + i * us, blockLen);
    CountOut(uint64_t(blockCount) * blockLen);
}
}  // namespace detail

template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams)
{
    detail::PadIn(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                  dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding,
                  padParams.paddingValue, "DataCopyPad(GM->UB)");
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& dataCopyParams)
{
    detail::PadOut(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                   dataCopyParams.dstStride, "DataCopyPad(UB->GM)");
}
// Older forms: DataCopyParams{cnt, lenBytes, srcGapBytes, dstGapBlocks} + DataCopyPadParams.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyParams& dataCopyParams, const DataCopyPadParams& padParams)
{
    T v;
    std::memset(&v, 0, sizeof(T));
    std::memcpy(&v, &padParams.paddingValue, sizeof(T) < 8 ? sizeof(T) : 8);
    detail::PadIn(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                  dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding, v,
                  "DataCopyPad(GM->UB)");
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& dataCopyParams)
{
    detail::PadOut(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                   dataCopyParams.dstStride, "DataCopyPad(UB->GM)");
}

// ===========================================================================================
// §6 Vector compute, count form ("first n elements", §6.1).
// Checks on every call (§6.1): operands are live, 32-byte aligned UB tensors; 0 <= count <=
// each operand's size; dst and a src overlap either 100% (same start) or not at all;
// dtype allowed on A2 (§6.2).  count = 0 is a no-op.
// ===========================================================================================
namespace detail {
template <typename T> inline void CheckOperand(const LocalTensor<T>& t, const char* op, const char* which, int64_t count)
{
    CheckUbAligned(t.d_, op, which);
    if (count > static_cast<int64_t>(t.d_.count)) {
        std::ostringstream m;
        m << op << ": count " << count << " exceeds the " << which << " tensor's size of " << t.d_.count << " elements";
        Fault(m.str());
    }
}
inline void CheckCount(int64_t count, const char* op)
{
    if (count < 0) Fault(std::string(op) + ": negative count " + std::to_string(count));
}
template <typename D, typename S>
inline void CheckOverlap(const LocalTensor<D>& dst, const LocalTensor<S>& src, uint64_t count, const char* op)
{
    if (dst.d_.ub != src.d_.ub) return;
    const uint64_t d0 = dst.d_.addr, d1 = d0 + count * sizeof(D), s0 = src.d_.addr, s1 = s0 + count * sizeof(S);
    const bool overlap = d0 < s1 && s0 < d1;
    if (overlap && (d0 != s0 || sizeof(D) != sizeof(S))) {
        std::ostringstream m;
        m << op << ": dst UB [" << d0 << ", " << d1 << ") partially overlaps a source [" << s0 << ", " << s1
          << "); vector operands must overlap 100% or not at all (§6.1)";
        Fault(m.str());
    }
}
// Elementwise arithmetic: floats exactly in double then rounded once; ints wrap.
template <typename T> inline T Arith(char op, const T& a, const T& b)
{
    if constexpr (std::is_integral<T>::value) {
        const int64_t x = a, y = b;
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
        case '>': r = (std::isnan(x) || x > y) ? x : y; break;
        case '<': r = (std::isnan(x) || x < y) ? x : y; break;
        }
        return FromD<T>(r);
    }
}
// ---- Fast elementwise loops (float and half) -------------------------------------------
// Operands are checked once per call by the callers.  Data moves through typed stack chunks
// (memcpy in and out: no aliasing assumptions, and dst may be the very same buffer as a
// source, which the overlap rule allows), and the per-chunk loops are plain float loops that
// g++ vectorises.  half is widened to float exactly and rounded once back to half.
constexpr int64_t kChunk = 512;  // elements per stack chunk
// The chunk loops are compiled twice on x86-64 g++, for AVX2 and the baseline ISA, and picked
// at load time (target_clones: the build stays portable).  No FMA: results are identical.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
#define PYPTO_HOST_SIMD __attribute__((target_clones("avx2", "default")))
#else
#define PYPTO_HOST_SIMD
#endif
template <typename T> constexpr bool IsFastFloat() { return std::is_same<T, float>::value || std::is_same<T, half>::value; }

// Exact binary16 -> binary32 (all halves are floats).  Branch-free, vectorisable.
inline void HalfToFloat(float* out, const uint16_t* in, int64_t n)
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
inline void FloatToHalf(uint16_t* out, const float* in, int64_t n)
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
// dst[i] = f(a[i], b[i]) over n elements of T (float or half), computed in float.
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
// dst[i] = f(src) over n elements of T: f(F32A* inout, m) transforms m floats in place.
// float: copy src to dst unless it is the same buffer (disjoint otherwise), then f on dst.
template <typename T, typename F> PYPTO_HOST_SIMD void FastUnary(uint8_t* d, const uint8_t* a, int64_t n, F f)
{
    if constexpr (std::is_same<T, float>::value) {
        if (d != a) std::memcpy(d, a, static_cast<size_t>(n) * 4);
        f(reinterpret_cast<F32A*>(d), n);
    } else {
        alignas(64) float x[kChunk];
        for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t m = n - i < kChunk ? n - i : kChunk;
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            LoadF<T>(x, a + o, m);
            f(x, m);
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
// Float forms of Arith: exact IEEE float results, identical to Arith<float> (double then
// rounded once) and, through FloatToHalf, to Arith<half>.
template <char code> struct ArithF {
    float operator()(float x, float y) const
    {
        if constexpr (code == '+') return x + y;
        else if constexpr (code == '-') return x - y;
        else if constexpr (code == '*') return x * y;
        else if constexpr (code == '/') return x / y;
        else if constexpr (code == '>') return (x != x || x > y) ? x : y;
        else return (x != x || x < y) ? x : y;
    }
};
template <typename To, typename From> inline To BitCast(From f)
{
    static_assert(sizeof(To) == sizeof(From), "BitCast of different sizes");
    To t;
    std::memcpy(&t, &f, sizeof t);  // a register move; vectorises
    return t;
}
// e^x on a chunk of floats in float arithmetic, vectorisable (Cephes expf): x = n ln2 + r
// (Cody-Waite, |r| <= ln2/2), e^r by a degree-7 polynomial, times 2^n applied as two exact
// power-of-two factors (so subnormal results are rounded once).  Error < 1 ulp against the
// exact value (measured over 44M floats: 0.96 ulp max; 99.6% equal to the correctly rounded
// result); overflow -> +inf, underflow -> 0 / subnormal, NaN stays NaN (quietened).
inline void ExpChunk(F32A* v, int64_t m)
{
    for (int64_t k = 0; k < m; ++k) {
        const float x0 = v[k];
        float x = x0 > 89.0f ? 89.0f : x0;   // e^89 > FLT_MAX: +inf below
        x = x < -104.0f ? -104.0f : x;       // e^-104 < FLT_TRUE_MIN / 2: +0 below
        const float t = x * 1.44269504088896341f + 12582912.0f;  // 1.5 * 2^23: round(x / ln2)
        const float n = t - 12582912.0f;
        x = x - n * 0.693359375f;
        x = x - n * -2.12194440e-4f;
        float p = 1.9875691500e-4f;
        p = p * x + 1.3981999507e-3f;
        p = p * x + 8.3334519073e-3f;
        p = p * x + 4.1665795894e-2f;
        p = p * x + 1.6666665459e-1f;
        p = p * x + 5.0000001201e-1f;
        p = p * (x * x) + x + 1.0f;
        const int32_t ni = BitCast<int32_t>(t) - 0x4B400000;  // n in [-150, 128]
        const int32_t n1 = ni >> 1;
        const float r = (p * BitCast<float>((n1 + 127) << 23)) * BitCast<float>((ni - n1 + 127) << 23);
        const uint32_t in = BitCast<uint32_t>(x0);
        v[k] = (in & 0x7FFFFFFFu) > 0x7F800000u ? BitCast<float>(in | 0x00400000u) : r;
    }
}

template <typename T>
inline void Binary(const char* op, char code, const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                   int64_t count, std::initializer_list<Dt> dts)
{
    CheckCount(count, op);
    CheckDtype<T>(op, dts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(a, op, "src0", count);
    CheckOperand(b, op, "src1", count);
    CheckOverlap(dst, a, count, op);
    CheckOverlap(dst, b, count, op);
    if constexpr (IsFastFloat<T>()) {
        uint8_t* d = dst.Ptr();
        const uint8_t *x = a.Ptr(), *y = b.Ptr();
        switch (code) {
        case '+': return FastBinary<T>(d, x, y, count, ArithF<'+'>{});
        case '-': return FastBinary<T>(d, x, y, count, ArithF<'-'>{});
        case '*': return FastBinary<T>(d, x, y, count, ArithF<'*'>{});
        case '/': return FastBinary<T>(d, x, y, count, ArithF<'/'>{});
        case '>': return FastBinary<T>(d, x, y, count, ArithF<'>'>{});
        case '<': return FastBinary<T>(d, x, y, count, ArithF<'<'>{});
        }
    }
    for (int64_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        Store<T>(dst.Ptr() + o, Arith<T>(code, Load<T>(a.Ptr() + o), Load<T>(b.Ptr() + o)));
    }
}
// Checks of a one-source elementwise op; true when there is work to do.
template <typename T>
inline void CheckUnary(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count,
                       std::initializer_list<Dt> dts)
{
    CheckCount(count, op);
    CheckDtype<T>(op, dts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src, op, "src", count);
    CheckOverlap(dst, src, count, op);
}
template <typename T, typename F>
inline void Unary(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count,
                  std::initializer_list<Dt> dts, F f)
{
    CheckUnary(op, dst, src, count, dts);
    for (int64_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        Store<T>(dst.Ptr() + o, f(Load<T>(src.Ptr() + o)));
    }
}
// Unary with an in-place form `fast(F32A* v, m)` for float and half.
template <typename T, typename Fast, typename F>
inline void UnaryF(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count,
                   std::initializer_list<Dt> dts, Fast fast, F f)
{
    if constexpr (IsFastFloat<T>()) {
        CheckUnary(op, dst, src, count, dts);
        FastUnary<T>(dst.Ptr(), src.Ptr(), count, fast);
    } else {
        Unary(op, dst, src, count, dts, f);
    }
}
}  // namespace detail

#define PYPTO_BINARY(NAME, CODE, ...)                                                                     \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                    \
                                const LocalTensor<T>& src1, const int32_t& count)                         \
    {                                                                                                     \
        detail::Binary(#NAME, CODE, dst, src0, src1, count, __VA_ARGS__);                                 \
    }
// §6.2 table.
PYPTO_BINARY(Add, '+', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY(Sub, '-', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY(Mul, '*', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY(Div, '/', {detail::Dt::F16, detail::Dt::F32})
PYPTO_BINARY(Max, '>', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY(Min, '<', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
#undef PYPTO_BINARY

// §6.2 tensor-scalar ops: `Adds(dst, src, scalar, n)`, scalar of the element type.
#define PYPTO_SCALAR(NAME, CODE)                                                                          \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, \
                                const int32_t& count)                                                     \
    {                                                                                                     \
        const T s = scalarValue;                                                                          \
        const auto dts = {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32};            \
        if constexpr (detail::IsFastFloat<T>()) {                                                         \
            const float fs = static_cast<float>(s);                                                       \
            detail::UnaryF(#NAME, dst, src, count, dts,                                                   \
                           [fs](detail::F32A* v, int64_t m) { for (int64_t k = 0; k < m; ++k) v[k] = detail::ArithF<CODE>{}(v[k], fs); }, \
                           [s](const T& x) { return detail::Arith<T>(CODE, x, s); });                     \
        } else {                                                                                          \
            detail::Unary(#NAME, dst, src, count, dts, [s](const T& x) { return detail::Arith<T>(CODE, x, s); }); \
        }                                                                                                 \
    }
PYPTO_SCALAR(Adds, '+')
PYPTO_SCALAR(Muls, '*')
PYPTO_SCALAR(Maxs, '>')
PYPTO_SCALAR(Mins, '<')
#undef PYPTO_SCALAR

// §6.2 unary math.  EXPR: computed in double and rounded once to T (the generic path, and
// Ln/Rsqrt for float/half).  FAST: the same function on a chunk of floats `v[0..m)`; exact
// for Abs/Sqrt/Reciprocal/Relu (single IEEE operations), ExpChunk for Exp (see there).
// Hardware transcendental ops are approximate: compare device results with a tolerance.
#define PYPTO_UNARY(NAME, EXPR, FAST, ...)                                                                \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) \
    {                                                                                                     \
        detail::UnaryF(#NAME, dst, src, count, __VA_ARGS__, [](detail::F32A* v, int64_t m) { FAST; },           \
                       [](const T& val) {                                                                 \
                           const double x = detail::ToD(val);                                             \
                           return detail::FromD<T>(EXPR);                                                 \
                       });                                                                                \
    }
PYPTO_UNARY(Exp, std::exp(x), detail::ExpChunk(v, m), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Ln, std::log(x), for (int64_t k = 0; k < m; ++k) v[k] = static_cast<float>(std::log(static_cast<double>(v[k]))),
            {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Abs, std::fabs(x), for (int64_t k = 0; k < m; ++k) v[k] = std::fabs(v[k]), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Sqrt, std::sqrt(x), for (int64_t k = 0; k < m; ++k) v[k] = std::sqrt(v[k]), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Rsqrt, 1.0 / std::sqrt(x),
            for (int64_t k = 0; k < m; ++k) v[k] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(v[k]))),
            {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Reciprocal, 1.0 / x, for (int64_t k = 0; k < m; ++k) v[k] = 1.0f / v[k], {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY(Relu, (x > 0 ? x : 0.0), for (int64_t k = 0; k < m; ++k) v[k] = v[k] > 0 ? v[k] : 0.0f,
            {detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
#undef PYPTO_UNARY

// §6.2 / §6.6 Duplicate: fill the first `count` elements with a scalar.
template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count)
{
    const char* op = "Duplicate";
    detail::CheckCount(count, op);
    detail::CheckDtype<T>(op, {detail::Dt::I16, detail::Dt::U16, detail::Dt::F16, detail::Dt::BF16, detail::Dt::I32,
                               detail::Dt::U32, detail::Dt::F32});
    detail::CheckOperand(dst, op, "dst", count);
    if (count <= 0) return;
    // One element, then doubling copies of what is already filled.
    uint8_t* p = dst.Ptr();
    const size_t total = static_cast<size_t>(count) * sizeof(T);
    detail::Store<T>(p, scalarValue);
    for (size_t done = sizeof(T); done < total;) {
        const size_t n = done < total - done ? done : total - done;
        std::memcpy(p + done, p, n);
        done += n;
    }
}

// ===========================================================================================
// §6.1 Mask / repeat ("high-dimensional slicing") forms.  Each of `repeatTime` iterations
// covers 8 DataBlocks of 32 B; `mask` selects lanes inside a repeat (contiguous count, or a
// bit array mask[2] = {lanes 0-63, lanes 64-127}).  Strides are in 32-byte blocks.
// Every touched element must lie inside the operand tensor (checked).
// ===========================================================================================
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
};
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
};
struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

namespace detail {
// Active lanes of one repeat for element type T.
template <typename T> inline std::vector<bool> LanesFromCount(uint64_t mask, const char* op)
{
    const uint64_t lanes = kRepeat / sizeof(T);
    const uint64_t maxLanes = lanes > 128 ? 128 : lanes;
    if (mask == 0 || mask > maxLanes) {
        std::ostringstream m;
        m << op << ": contiguous mask " << mask << " outside [1, " << maxLanes << "] for " << sizeof(T) << "-byte elements (§1.3)";
        Fault(m.str());
    }
    std::vector<bool> on(lanes, false);
    for (uint64_t j = 0; j < mask; ++j) on[j] = true;
    return on;
}
template <typename T> inline std::vector<bool> LanesFromBits(const uint64_t mask[], const char* op)
{
    const uint64_t lanes = kRepeat / sizeof(T);
    if (sizeof(T) >= 4 && mask[1] != 0) Fault(std::string(op) + ": mask[1] must be 0 for 32-bit elements (§1.3)");
    std::vector<bool> on(lanes, false);
    for (uint64_t j = 0; j < lanes && j < 128; ++j) on[j] = (mask[j / 64] >> (j % 64)) & 1u;
    return on;
}
// Byte offset of lane j of repeat r for an operand with the given strides (in blocks).
template <typename T> inline uint64_t LaneByte(uint64_t r, uint64_t j, uint64_t blk, uint64_t rep)
{
    const uint64_t epb = kBlock / sizeof(T);
    return r * rep * kBlock + (j / epb) * blk * kBlock + (j % epb) * sizeof(T);
}
template <typename T> inline void CheckLane(const LocalTensor<T>& t, uint64_t byte, const char* op, const char* which)
{
    if (byte + sizeof(T) > static_cast<uint64_t>(t.d_.count) * sizeof(T)) {
        std::ostringstream m;
        m << op << ": mask/repeat access at byte " << byte << " of the " << which << " tensor, which has only "
          << t.d_.count << " elements (" << t.d_.count * sizeof(T) << " B)";
        Fault(m.str());
    }
}
// Generic mask/repeat elementwise driver: `nsrc` sources (0..2), per-repeat read-then-write.
template <typename T, typename F>
inline void MaskRepeat(const char* op, const std::vector<bool>& on, uint8_t repeatTime, const LocalTensor<T>& dst,
                       uint64_t dBlk, uint64_t dRep, const LocalTensor<T>* s0, uint64_t s0Blk, uint64_t s0Rep,
                       const LocalTensor<T>* s1, uint64_t s1Blk, uint64_t s1Rep, F f)
{
    CheckUbAligned(dst.d_, op, "dst");
    if (s0) CheckUbAligned(s0->d_, op, "src0");
    if (s1) CheckUbAligned(s1->d_, op, "src1");
    if (dBlk == 0) Fault(std::string(op) + ": dstBlkStride must not be 0 (§6.1)");
    std::vector<std::pair<uint64_t, T>> out;
    for (uint64_t r = 0; r < repeatTime; ++r) {
        out.clear();
        for (uint64_t j = 0; j < on.size(); ++j) {
            if (!on[j]) continue;
            const uint64_t db = LaneByte<T>(r, j, dBlk, dRep);
            CheckLane(dst, db, op, "dst");
            T a = T(0), b = T(0);
            if (s0) { const uint64_t o = LaneByte<T>(r, j, s0Blk, s0Rep); CheckLane(*s0, o, op, "src0"); a = Load<T>(s0->Ptr() + o); }
            if (s1) { const uint64_t o = LaneByte<T>(r, j, s1Blk, s1Rep); CheckLane(*s1, o, op, "src1"); b = Load<T>(s1->Ptr() + o); }
            out.emplace_back(db, f(a, b));
        }
        for (const auto& w : out) Store<T>(dst.Ptr() + w.first, w.second);
    }
}
}  // namespace detail

#define PYPTO_BINARY_MASK(NAME, CODE, ...)                                                                \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p)     \
    {                                                                                                     \
        detail::CheckDtype<T>(#NAME, __VA_ARGS__);                                                        \
        detail::MaskRepeat(#NAME, detail::LanesFromCount<T>(mask, #NAME), repeatTime, dst, p.dstBlkStride, \
                           p.dstRepStride, &src0, p.src0BlkStride, p.src0RepStride, &src1, p.src1BlkStride, \
                           p.src1RepStride, [](const T& a, const T& b) { return detail::Arith<T>(CODE, a, b); }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& p)   \
    {                                                                                                     \
        detail::CheckDtype<T>(#NAME, __VA_ARGS__);                                                        \
        detail::MaskRepeat(#NAME, detail::LanesFromBits<T>(mask, #NAME), repeatTime, dst, p.dstBlkStride, \
                           p.dstRepStride, &src0, p.src0BlkStride, p.src0RepStride, &src1, p.src1BlkStride, \
                           p.src1RepStride, [](const T& a, const T& b) { return detail::Arith<T>(CODE, a, b); }); \
    }
PYPTO_BINARY_MASK(Add, '+', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY_MASK(Sub, '-', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY_MASK(Mul, '*', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY_MASK(Div, '/', {detail::Dt::F16, detail::Dt::F32})
PYPTO_BINARY_MASK(Max, '>', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
PYPTO_BINARY_MASK(Min, '<', {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
#undef PYPTO_BINARY_MASK

#define PYPTO_SCALAR_MASK(NAME, CODE)                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, \
                                uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& p)      \
    {                                                                                                     \
        detail::CheckDtype<T>(#NAME, {detail::Dt::I16, detail::Dt::F16, detail::Dt::I32, detail::Dt::F32}); \
        const T s = scalarValue;                                                                          \
        detail::MaskRepeat(#NAME, detail::LanesFromCount<T>(mask, #NAME), repeatTime, dst, p.dstBlkStride, \
                           p.dstRepStride, &src, p.srcBlkStride, p.srcRepStride, static_cast<const LocalTensor<T>*>(nullptr), \
                           0, 0, [s](const T& a, const T&) { return detail::Arith<T>(CODE, a, s); });     \
    }
PYPTO_SCALAR_MASK(Adds, '+')
PYPTO_SCALAR_MASK(Muls, '*')
PYPTO_SCALAR_MASK(Maxs, '>')
PYPTO_SCALAR_MASK(Mins, '<')
#undef PYPTO_SCALAR_MASK

#define PYPTO_UNARY_MASK(NAME, EXPR, ...)                                                                 \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,      \
                                const uint8_t repeatTime, const UnaryRepeatParams& p)                     \
    {                                                                                                     \
        detail::CheckDtype<T>(#NAME, __VA_ARGS__);                                                        \
        detail::MaskRepeat(#NAME, detail::LanesFromCount<T>(mask, #NAME), repeatTime, dst, p.dstBlkStride, \
                           p.dstRepStride, &src, p.srcBlkStride, p.srcRepStride, static_cast<const LocalTensor<T>*>(nullptr), \
                           0, 0, [](const T& v, const T&) { const double x = detail::ToD(v); return detail::FromD<T>(EXPR); }); \
    }
PYPTO_UNARY_MASK(Exp, std::exp(x), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Ln, std::log(x), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Abs, std::fabs(x), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Sqrt, std::sqrt(x), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Rsqrt, 1.0 / std::sqrt(x), {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Reciprocal, 1.0 / x, {detail::Dt::F16, detail::Dt::F32})
PYPTO_UNARY_MASK(Relu, (x > 0 ? x : 0.0), {detail::Dt::F16, detail::Dt::I32, detail::Dt::F32})
#undef PYPTO_UNARY_MASK

// §6.6 Brcb: each repeat takes 8 consecutive src elements; element k fills block k of dst.
template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& repeatParams)
{
    const char* op = "Brcb";
    detail::CheckDtype<T>(op, {detail::Dt::I16, detail::Dt::U16, detail::Dt::F16, detail::Dt::BF16, detail::Dt::I32,
                               detail::Dt::U32, detail::Dt::F32});
    detail::CheckUbAligned(dst.d_, op, "dst");
    detail::CheckUbAligned(src.d_, op, "src");
    detail::CheckOperand(src, op, "src", 8 * static_cast<int64_t>(repeatTime));
    const uint64_t epb = detail::kBlock / sizeof(T);
    for (uint64_t r = 0; r < repeatTime; ++r) {
        for (uint64_t k = 0; k < 8; ++k) {
            const T v = src.GetValue(static_cast<uint32_t>(8 * r + k));
            const uint64_t base = (r * repeatParams.dstRepStride + k * repeatParams.dstBlkStride) * detail::kBlock;
            for (uint64_t e = 0; e < epb; ++e) {
                detail::CheckLane(dst, base + e * sizeof(T), op, "dst");
                detail::Store<T>(dst.Ptr() + base + e * sizeof(T), v);
            }
        }
    }
}

// §6.5 WholeReduceSum / WholeReduceMax / WholeReduceMin: one result per repeat.
namespace detail {
template <typename T>
inline void WholeReduce(const char* op, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                        const std::vector<bool>& on, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                        int32_t srcRepStride, ReduceOrder order)
{
    CheckDtype<T>(op, {Dt::F16, Dt::F32});
    CheckUbAligned(dst.d_, op, "dst");
    CheckUbAligned(src.d_, op, "src");
    if (repeatTime < 0 || repeatTime > 255) Fault(std::string(op) + ": repeatTime outside [0, 255] (§1.3)");
    for (int32_t r = 0; r < repeatTime; ++r) {
        std::vector<T> vals;
        std::vector<uint32_t> idx;
        for (uint64_t j = 0; j < on.size(); ++j) {
            if (!on[j]) continue;
            const uint64_t o = LaneByte<T>(static_cast<uint64_t>(r), j, static_cast<uint64_t>(srcBlkStride), static_cast<uint64_t>(srcRepStride));
            CheckLane(src, o, op, "src");
            vals.push_back(Load<T>(src.Ptr() + o));
            idx.push_back(static_cast<uint32_t>(j));
        }
        if (kind == 0) {  // sum: binary tree over the active lanes
            std::vector<T> v = vals;
            while (v.size() > 1) {
                std::vector<T> next;
                for (size_t i = 0; i + 1 < v.size(); i += 2) next.push_back(Arith<T>('+', v[i], v[i + 1]));
                if (v.size() % 2) next.push_back(v.back());
                v.swap(next);
            }
            const uint64_t o = static_cast<uint64_t>(r) * static_cast<uint64_t>(dstRepStride) * sizeof(T);
            CheckLane(dst, o, op, "dst");
            Store<T>(dst.Ptr() + o, v.empty() ? T(0) : v[0]);
            continue;
        }
        size_t best = 0;
        for (size_t i = 1; i < vals.size(); ++i) {
            const double a = ToD(vals[i]), b = ToD(vals[best]);
            if (kind == 1 ? a > b : a < b) best = i;
        }
        T ix;
        std::memset(&ix, 0, sizeof(T));
        std::memcpy(&ix, &idx[best], sizeof(T) < 4 ? sizeof(T) : 4);  // index as raw integer bits
        const bool both = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
        const uint64_t o = static_cast<uint64_t>(r) * static_cast<uint64_t>(dstRepStride) * sizeof(T) * (both ? 2 : 1);
        CheckLane(dst, o + (both ? sizeof(T) : 0), op, "dst");
        if (order == ReduceOrder::ORDER_VALUE_INDEX) { Store<T>(dst.Ptr() + o, vals[best]); Store<T>(dst.Ptr() + o + sizeof(T), ix); }
        else if (order == ReduceOrder::ORDER_INDEX_VALUE) { Store<T>(dst.Ptr() + o, ix); Store<T>(dst.Ptr() + o + sizeof(T), vals[best]); }
        else if (order == ReduceOrder::ORDER_ONLY_VALUE) Store<T>(dst.Ptr() + o, vals[best]);
        else Store<T>(dst.Ptr() + o, ix);
    }
}
}  // namespace detail

template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    detail::WholeReduce("WholeReduceSum", 0, dst, src, detail::LanesFromCount<T>(static_cast<uint64_t>(mask), "WholeReduceSum"),
                        repeatTime, dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail::WholeReduce("WholeReduceMax", 1, dst, src, detail::LanesFromCount<T>(static_cast<uint64_t>(mask), "WholeReduceMax"),
                        repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail::WholeReduce("WholeReduceMin", 2, dst, src, detail::LanesFromCount<T>(static_cast<uint64_t>(mask), "WholeReduceMin"),
                        repeatTime, dstRepStride, srcBlkStride, srcRepStride, order);
}

// ===========================================================================================
// §6.3 Cast.  Pairs and modes follow the A2 table; anything else faults (the device rejects
// it at run time).  Float -> integer saturates; NaN -> 0.
// ===========================================================================================
namespace detail {
inline pypto_host::fp::Rnd ToRnd(RoundMode m)
{
    using R = pypto_host::fp::Rnd;
    switch (m) {
    case RoundMode::CAST_NONE: return R::NearestEven;  // exact when representable, else RNE (§6.3)
    case RoundMode::CAST_RINT: return R::NearestEven;
    case RoundMode::CAST_FLOOR: return R::Floor;
    case RoundMode::CAST_CEIL: return R::Ceil;
    case RoundMode::CAST_ROUND: return R::AwayFromZero;
    case RoundMode::CAST_TRUNC: return R::Trunc;
    case RoundMode::CAST_ODD: return R::Odd;
    }
    return R::NearestEven;
}
inline const char* RoundName(RoundMode m)
{
    static const char* n[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return n[static_cast<int>(m)];
}
// Allowed modes per (src, dst): bit 0 NONE, bit 1 R (RINT/FLOOR/CEIL/ROUND/TRUNC), bit 2 ODD.
inline int CastModes(Dt s, Dt d)
{
    const int N = 1, R = 2, O = 4;
    struct E { Dt s, d; int m; };
    static const E table[] = {
        {Dt::F16, Dt::F32, N}, {Dt::BF16, Dt::F32, N}, {Dt::I16, Dt::F32, N}, {Dt::I8, Dt::F16, N}, {Dt::U8, Dt::F16, N},
        {Dt::F32, Dt::F16, R | O | N}, {Dt::F32, Dt::BF16, R}, {Dt::F32, Dt::I32, R}, {Dt::F32, Dt::I16, R},
        {Dt::F32, Dt::I64, R}, {Dt::F32, Dt::F32, R}, {Dt::F16, Dt::I32, R}, {Dt::F16, Dt::I16, R},
        {Dt::F16, Dt::I8, R | N}, {Dt::F16, Dt::U8, R | N}, {Dt::BF16, Dt::I32, R}, {Dt::I32, Dt::F32, R | N},
        {Dt::I16, Dt::F16, R | N}, {Dt::I32, Dt::I16, N}, {Dt::I32, Dt::I64, N}, {Dt::I64, Dt::I32, N},
        {Dt::I64, Dt::F32, R},
    };
    for (const E& e : table) if (e.s == s && e.d == d) return e.m;
    return 0;
}
template <typename D> inline D CastValue(double x, pypto_host::fp::Rnd r, bool srcIsF32)
{
    using namespace pypto_host::fp;
    if constexpr (std::is_same<D, half>::value) {
        return half::FromBits(static_cast<uint16_t>(Encode(RoundTo(x, kHalf, r), kHalf)));
    } else if constexpr (std::is_same<D, bfloat16_t>::value) {
        return bfloat16_t::FromBits(static_cast<uint16_t>(Encode(RoundTo(x, kBf16, r), kBf16)));
    } else if constexpr (std::is_same<D, float>::value) {
        if (srcIsF32) {  // float -> float: round to an integral value
            if (std::isnan(x) || std::isinf(x)) return static_cast<float>(x);
            const double v = RoundMag(std::fabs(x), x < 0, r);
            return static_cast<float>(x < 0 ? -v : v);
        }
        return static_cast<float>(RoundTo(x, kF32, r));
    } else {
        if (std::isnan(x)) return D(0);
        const double v = RoundMag(std::fabs(x), x < 0, r);
        const double s = x < 0 ? -v : v;
        if (s <= static_cast<double>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
        if (s >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
        return static_cast<D>(s);
    }
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                            const uint32_t count)
{
    const char* op = "Cast";
    const detail::Dt s = detail::DtOf<U>(), d = detail::DtOf<T>();
    if (s == detail::Dt::I32 && d == detail::Dt::F16) {
        pypto_host::Fault("Cast int32_t -> half needs SetDeqScale on A2 and is not modelled; cast int32 -> float -> half (§6.3)");
    }
    const int modes = detail::CastModes(s, d);
    const int want = round_mode == RoundMode::CAST_NONE ? 1 : round_mode == RoundMode::CAST_ODD ? 4 : 2;
    if (!(modes & want)) {
        std::ostringstream m;
        m << op << ": " << detail::DtName(s) << " -> " << detail::DtName(d) << " with RoundMode::" << detail::RoundName(round_mode)
          << (modes ? " is not an allowed mode" : " is not a supported conversion") << " on A2 (§6.3 table)";
        pypto_host::Fault(m.str());
    }
    detail::CheckOperand(dst, op, "dst", count);
    detail::CheckOperand(src, op, "src", count);
    detail::CheckOverlap(dst, src, count, op);
    const auto r = detail::ToRnd(round_mode);
    if constexpr (std::is_same<U, float>::value && std::is_same<T, half>::value) {
        if (r == pypto_host::fp::Rnd::NearestEven) return detail::CastF32ToF16(dst.Ptr(), src.Ptr(), count);
    }
    if constexpr (std::is_same<U, half>::value && std::is_same<T, float>::value) {
        if (r == pypto_host::fp::Rnd::NearestEven) return detail::CastF16ToF32(dst.Ptr(), src.Ptr(), count);
    }
    for (uint32_t i = 0; i < count; ++i) {
        const double x = detail::ToD(detail::Load<U>(src.Ptr() + static_cast<size_t>(i) * sizeof(U)));
        detail::Store<T>(dst.Ptr() + static_cast<size_t>(i) * sizeof(T), detail::CastValue<T>(x, r, s == detail::Dt::F32));
    }
}

// ===========================================================================================
// §6.4 Compare / CompareScalar / Select.  Bit-packed masks: element i -> bit (i % 8) of byte i/8.
// ===========================================================================================
namespace detail {
template <typename T> inline void CheckCompare(const char* op, CMPMODE mode, uint32_t count)
{
    CheckDtype<T>(op, {Dt::F16, Dt::F32, Dt::I32});
    if (DtOf<T>() == Dt::I32 && mode != CMPMODE::EQ) Fault(std::string(op) + ": int32_t supports only CMPMODE::EQ on A2 (§6.4)");
    if ((static_cast<uint64_t>(count) * sizeof(T)) % kRepeat != 0) {
        std::ostringstream m;
        m << op << ": count " << count << " x " << sizeof(T) << " B is not a multiple of 256 bytes (§6.4); pad the tile";
        Fault(m.str());
    }
}
inline bool Cmp(CMPMODE m, double a, double b)
{
    switch (m) {
    case CMPMODE::LT: return a < b;
    case CMPMODE::GT: return a > b;
    case CMPMODE::EQ: return a == b;
    case CMPMODE::LE: return a <= b;
    case CMPMODE::GE: return a >= b;
    case CMPMODE::NE: return a != b;
    }
    return false;
}
template <typename U> inline void CheckMaskTensor(const LocalTensor<U>& m, const char* op, uint32_t count)
{
    CheckUbAligned(m.d_, op, "mask");
    const uint64_t need = (static_cast<uint64_t>(count) + 7) / 8;
    if (static_cast<uint64_t>(m.d_.count) * sizeof(U) < need) {
        std::ostringstream s;
        s << op << ": mask tensor holds " << m.d_.count * sizeof(U) << " bytes, " << need << " needed for " << count << " elements";
        Fault(s.str());
    }
}
template <typename U, typename T, typename F>
inline void CompareImpl(const char* op, const LocalTensor<U>& dst, const LocalTensor<T>& src0, CMPMODE mode, uint32_t count, F rhs)
{
    CheckCompare<T>(op, mode, count);
    CheckOperand(src0, op, "src0", count);
    CheckMaskTensor(dst, op, count);
    for (uint32_t i = 0; i < count; i += 8) {
        uint8_t byte = 0;
        for (uint32_t k = 0; k < 8 && i + k < count; ++k) {
            const double a = ToD(Load<T>(src0.Ptr() + static_cast<size_t>(i + k) * sizeof(T)));
            if (Cmp(mode, a, rhs(i + k))) byte = static_cast<uint8_t>(byte | (1u << k));
        }
        dst.Ptr()[i / 8] = byte;
    }
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, uint32_t count)
{
    detail::CheckOperand(src1, "Compare", "src1", count);
    detail::CompareImpl("Compare", dst, src0, cmpMode, count,
                        [&](uint32_t i) { return detail::ToD(detail::Load<T>(src1.Ptr() + static_cast<size_t>(i) * sizeof(T))); });
}
template <typename T, typename U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, uint32_t count)
{
    const double s = detail::ToD(src1Scalar);
    detail::CompareImpl("CompareScalar", dst, src0, cmpMode, count, [s](uint32_t) { return s; });
}

namespace detail {
template <typename T, typename U, typename F>
inline void SelectImpl(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                       SELMODE mode, SELMODE expected, uint32_t count, F other)
{
    const char* op = "Select";
    if (mode == SELMODE::VSEL_CMPMASK_SPR) Fault("Select: VSEL_CMPMASK_SPR (compare-register mask) is not modelled on the host; pass a mask tensor");
    if (mode != expected) Fault("Select: SELMODE does not match the overload (tensor src1 -> VSEL_TENSOR_TENSOR_MODE, scalar src1 -> VSEL_TENSOR_SCALAR_MODE, §6.4)");
    CheckDtype<T>(op, {Dt::F16, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src0, op, "src0", count);
    CheckMaskTensor(selMask, op, count);
    for (uint32_t i = 0; i < count; ++i) {
        const bool bit = (selMask.Ptr()[i / 8] >> (i % 8)) & 1u;
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        Store<T>(dst.Ptr() + o, bit ? Load<T>(src0.Ptr() + o) : other(i));
    }
}
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count)
{
    detail::CheckOperand(src1, "Select", "src1", count);
    detail::SelectImpl(dst, selMask, src0, selMode, SELMODE::VSEL_TENSOR_TENSOR_MODE, count,
                       [&](uint32_t i) { return detail::Load<T>(src1.Ptr() + static_cast<size_t>(i) * sizeof(T)); });
}
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count)
{
    detail::SelectImpl(dst, selMask, src0, selMode, SELMODE::VSEL_TENSOR_SCALAR_MODE, count, [src1](uint32_t) { return src1; });
}

// ===========================================================================================
// §6.5 Whole-range reductions (count form).  ReduceSum: binary tree inside each 256-byte
// repeat, repeats combined in order, in T precision.  ReduceMax/Min: dst[0] = value and,
// with calIndex, dst[1] = index stored as raw integer bits of T.
// ===========================================================================================
namespace detail {
template <typename T> inline T TreeSum(const uint8_t* p, uint32_t n)
{
    if (n == 1) return Load<T>(p);
    const uint32_t h = (n + 1) / 2;
    if (n - h == 0) return TreeSum<T>(p, h);
    return Arith<T>('+', TreeSum<T>(p, h), TreeSum<T>(p + static_cast<size_t>(h) * sizeof(T), n - h));
}
// Float ReduceSum of one repeat of 64 elements: the same binary tree as TreeSum (halves of a
// power of two = adjacent pairs, level by level), in float (= Arith<float>).
inline float TreeSum64(const uint8_t* p)
{
    float v[64];
    std::memcpy(v, p, sizeof v);
    for (int w = 32; w >= 1; w /= 2) {
        for (int i = 0; i < w; ++i) v[i] = v[2 * i] + v[2 * i + 1];
    }
    return v[0];
}
// Index of the first element that a sequential scan `if (v > best) best = v` (or <) keeps:
// src[0] when it is NaN, else the first occurrence of the largest (smallest) non-NaN value.
// Two passes: the extreme value over 16 lanes that start at src[0] and skip NaN exactly like
// the scan (vector compares), then the first position holding it (== matches either zero).
template <bool isMax> PYPTO_HOST_SIMD uint32_t FirstExtreme(const uint8_t* p, uint32_t n)
{
    typedef float V4 __attribute__((vector_size(16)));
    float first;
    std::memcpy(&first, p, sizeof first);
    if (first != first) return 0;
    V4 acc[4];
    for (V4& a : acc) a = V4{first, first, first, first};
    uint32_t k = 0;
    for (; k + 16 <= n; k += 16) {
        for (int j = 0; j < 4; ++j) {
            V4 v;
            std::memcpy(&v, p + (static_cast<size_t>(k) + 4 * j) * 4, sizeof v);
            acc[j] = (isMax ? v > acc[j] : v < acc[j]) ? v : acc[j];
        }
    }
    float best = first;
    for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 4; ++l) best = (isMax ? acc[j][l] > best : acc[j][l] < best) ? acc[j][l] : best;
    }
    for (; k < n; ++k) {
        float v;
        std::memcpy(&v, p + static_cast<size_t>(k) * 4, sizeof v);
        best = (isMax ? v > best : v < best) ? v : best;
    }
    const V4 b4{best, best, best, best};
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        V4 v[4];
        std::memcpy(v, p + static_cast<size_t>(i) * 4, sizeof v);
        const auto hit = (v[0] == b4) | (v[1] == b4) | (v[2] == b4) | (v[3] == b4);
        if (hit[0] | hit[1] | hit[2] | hit[3]) break;
    }
    for (; i < n; ++i) {
        float v;
        std::memcpy(&v, p + static_cast<size_t>(i) * 4, sizeof v);
        if (v == best) return i;
    }
    return 0;  // unreachable: best is one of the values
}
template <typename T>
inline void CheckReduce(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
                        int32_t count, uint32_t dstNeed)
{
    CheckCount(count, op);
    CheckDtype<T>(op, {Dt::F16, Dt::F32});
    CheckOperand(src, op, "src", count);
    CheckOperand(dst, op, "dst", dstNeed);
    CheckUbAligned(work.d_, op, "work");
}
template <typename T>
inline void ReduceExtreme(const char* op, bool isMax, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                          const LocalTensor<T>& work, int32_t count, bool calIndex)
{
    CheckReduce(op, dst, src, work, count, calIndex ? 2 : 1);
    // §6.5: the first round stores (value, index) pairs: 2 * repeats elements rounded to a block.
    const uint32_t perRep = kRepeat / sizeof(T), perBlk = kBlock / sizeof(T);
    const uint32_t reps = (static_cast<uint32_t>(count) + perRep - 1) / perRep;
    const uint32_t need = (2 * (reps ? reps : 1) + perBlk - 1) / perBlk * perBlk;
    if (work.d_.count < need) {
        std::ostringstream m;
        m << op << ": work tensor has " << work.d_.count << " elements, needs at least " << need << " (§6.5)";
        Fault(m.str());
    }
    if (count == 0) return;
    uint32_t best = 0;
    if constexpr (std::is_same<T, float>::value) {
        best = isMax ? FirstExtreme<true>(src.Ptr(), static_cast<uint32_t>(count))
                     : FirstExtreme<false>(src.Ptr(), static_cast<uint32_t>(count));
    } else {
        double bv = ToD(Load<T>(src.Ptr()));
        for (uint32_t i = 1; i < static_cast<uint32_t>(count); ++i) {
            const double v = ToD(Load<T>(src.Ptr() + static_cast<size_t>(i) * sizeof(T)));
            if (isMax ? v > bv : v < bv) { bv = v; best = i; }
        }
    }
    Store<T>(dst.Ptr(), Load<T>(src.Ptr() + static_cast<size_t>(best) * sizeof(T)));
    if (calIndex) {
        if (sizeof(T) == 2) {
            if (best > 65535) Fault(std::string(op) + ": index above 65535 cannot be returned for half (§6.5)");
            Store<uint16_t>(dst.Ptr() + sizeof(T), static_cast<uint16_t>(best));
        } else {
            Store<uint32_t>(dst.Ptr() + sizeof(T), best);
        }
    }
}
}  // namespace detail

template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count)
{
    detail::CheckReduce("ReduceSum", dst, src, sharedTmpBuffer, count, 1);
    const uint32_t perRep = detail::kRepeat / sizeof(T);
    T acc = T(0);
    for (uint32_t i = 0; i < static_cast<uint32_t>(count); i += perRep) {
        const uint32_t n = static_cast<uint32_t>(count) - i < perRep ? static_cast<uint32_t>(count) - i : perRep;
        if constexpr (std::is_same<T, float>::value) {
            if (n == 64) {
                const float part = detail::TreeSum64(src.Ptr() + static_cast<size_t>(i) * sizeof(T));
                acc = i == 0 ? part : acc + part;
                continue;
            }
        }
        const T part = detail::TreeSum<T>(src.Ptr() + static_cast<size_t>(i) * sizeof(T), n);
        acc = i == 0 ? part : detail::Arith<T>('+', acc, part);
    }
    detail::Store<T>(dst.Ptr(), acc);
}
template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = false)
{
    detail::ReduceExtreme("ReduceMax", true, dst, src, sharedTmpBuffer, count, calIndex);
}
template <typename T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = false)
{
    detail::ReduceExtreme("ReduceMin", false, dst, src, sharedTmpBuffer, count, calIndex);
}

}  // namespace AscendC

// Cube unit (AIC): L1/L0 buffers, Nd2Nz DataCopy, LoadData, Mmad, Fixpipe.
#include "pypto_host_cube.h"

#endif  // PYPTO_HOST_KERNEL_OPERATOR_H
