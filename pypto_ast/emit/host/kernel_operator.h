// kernel_operator.h -- host (CPU) implementation of the Ascend C subset that the pypto-ast
// emitter uses.  Same include name as CANN's header, so one emitted kernel source builds both
// with bisheng/CANN and, on any machine, with g++ against our runtime:
//
//     g++ -std=c++17 -O2 -pthread -I pypto_ast/emit/host kernel.cpp pypto_ast/emit/host/runtime/*.cpp
//
// (the host backend compiles runtime/*.cpp once per compiler and flags into its build cache
// and links every program against those objects, see emit/build.py).
//
// Written from /work/shared/reference/ascendc.md (section numbers "§n" below refer to it);
// no CANN code is used.  Target model: Atlas A2 (910B), one AIV/AIC core per block.
//
// Why a thin header: this file declares the API and holds only small inline wrappers; every
// check and every loop lives in runtime/*.cpp behind type-erased calls (a tensor is a
// TensorDesc plus its element type).  A kernel's translation unit therefore instantiates
// almost nothing and compiles in a fraction of a second, while the runtime -- its checks,
// its vectorised float paths -- is compiled once with -O3 (docs/design.md §7).
//
// Error policy (chosen deliberately): every rule the hardware enforces, or a violation that
// hardware would turn into silent corruption / a hang, throws pypto_host::HardwareFault
// (a std::runtime_error, declared in pypto_host_fault.h) whose what() starts with
// "pypto_host::HardwareFault: ".  Kernels
// are plain C++ functions on the host, so exceptions cross the "kernel boundary" fine; a
// host driver may catch it, and if it does not, std::terminate prints the message and aborts
// (non-zero exit).  Nothing here throws from a destructor.
//
// Execution model: pypto_host::Launch(numBlocks, kernel, args...) runs the kernel once per
// block with GetBlockIdx()/GetBlockNum() set, after resetting the traffic counters.  Blocks
// run concurrently on a few host threads (PYPTO_AST_HOST_THREADS / SetHostThreads; 0 = one
// per core, 1 = in order on the caller); block state (index, atomic mode, traffic counters,
// the one-TPipe rule) is per thread, the counters of all blocks are summed into Traffic()
// of the caller, and a fault is rethrown from Launch for the lowest faulting block.  Inside a
// block, pipes are not modelled as concurrent: every DMA/vector call completes before
// returning, so queue/flag calls only *check* the protocol (never wait).
//
// Speed (runtime/vector.cpp): count-form vector ops (and Cast float<->half, ReduceSum/Max/Min
// of float) check their operands once per call and then run plain typed loops that g++
// vectorises: float straight on UB, half through float stack chunks; compiled for AVX-512
// (x86-64-v4), AVX2 and the baseline ISA, picked at load time (target_clones on x86-64 g++;
// results are identical: -ffp-contract=off, no FMA).  Other dtypes and forms run element by
// element.
// Arithmetic semantics: + - * / sqrt, max/min and comparisons are exact IEEE results rounded
// once to T (float: computed in float; half: computed in float, rounded once to half -- both
// bit-identical to computing in double, since 24 >= 2*11+2 and 53 >= 2*24+2); Exp of
// float/half uses a float-precision exp (error < 1 ulp of float, not always correctly
// rounded), Ln/Rsqrt are computed in double -- the device's transcendental ops are
// approximate anyway: compare with tolerances.  NaN results may differ in payload bits.
// Where ascendc.md is silent (NaN and signed zeros in Max/Min/Relu/ReduceMax/ReduceMin, the
// start of ReduceSum, the sign of a zero rounded to integral) the model follows
// docs/semantics.md: NaN propagates, -0 < +0, a sum starts from +0, the sign is kept.
#ifndef PYPTO_HOST_KERNEL_OPERATOR_H
#define PYPTO_HOST_KERNEL_OPERATOR_H

// Only cheap C headers here: <string>/<stdexcept> alone would triple a kernel's compile time.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

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
// No INFINITY / NAN: CANN's kernel_operator.h has no <cmath> for the NPU, so emitted kernels
// spell them __builtin_inff() / __builtin_nanf("") (docs/realheaders.md).

// ===========================================================================================
// Host-side control: faults, block index, traffic counters, launcher.
// ===========================================================================================
namespace pypto_host {

// Throws pypto_host::HardwareFault (pypto_host_fault.h) with this message.
[[noreturn]] void Fault(const char* msg);

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

void SetBlock(int64_t idx, int64_t num);
// Counters of the calling thread: after Launch, the sum over all of that Launch's blocks.
const TrafficCounters& Traffic();
void ResetTraffic();
// UB capacity enforced by TPipe::InitBuffer (default: A2 hardware size, 196608 bytes).
void SetUbBytes(uint32_t bytes);
uint32_t UbBytes();
// §7.1 says DataCopy needs the GM address aligned to sizeof(T) only.  Strict mode demands the
// 32-byte grid for GM addresses too (useful to find slow, unaligned bursts).  Off by default.
void SetStrictGmAlignment(bool on);
// Threads used by Launch: n > 0 uses min(n, numBlocks) threads (even above the core count);
// 0 = auto, min(numBlocks, UsableCores()): the cores the process's affinity allows; n < 0 forgets the setting
// and goes back to the environment variable PYPTO_AST_HOST_THREADS (same meaning; unset,
// empty or 0 = auto).  A malformed variable throws std::runtime_error from Launch.
void SetHostThreads(int n);
uint32_t HostThreads(uint32_t numBlocks);
uint32_t UsableCores();  // the cores this process's CPU affinity allows (Linux), else hardware_concurrency

namespace detail {
// Runs body(ctx) once per block (see Launch); defined in runtime/core.cpp.
void LaunchBlocks(uint32_t numBlocks, void (*body)(void*), void* ctx);
}  // namespace detail

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
    auto call = [&]() { kernel(args...); };
    detail::LaunchBlocks(numBlocks, [](void* c) { (*static_cast<decltype(call)*>(c))(); }, &call);
}

// The control program's guard: runs body(ctx) and returns 0; a HardwareFault returns 1 and
// any other exception 2, with the message kept for LastError() on this thread.
int RunGuarded(void (*body)(void*), void* ctx);
const char* LastError();
// Scalar read of element i of an int32 tensor with n elements (the control program's lens[b]).
int64_t ReadInt32(const void* tensor, int64_t i, int64_t n);
// The control program's check of a view's or an assemble's region before the launches that
// use it, with the interpreter's rules and messages (ir/interp.py, _op_view and _write):
// offsets >= 0; a view's valid extents (valid; null for a view without valid_shape) in
// [0, shape]; offsets + valid (or + shape) within extent -- a tensor's dims, a value's valid
// extent, or for a view of a value without valid_shape its declared shape.  For an assemble,
// valid is the stored value's valid extent.  Faults otherwise; name is "@x" or "%v".
enum class Region { ViewOfTensor, ViewOfValue, Assemble };
void CheckRegion(Region kind, const char* name, int rank, const int64_t* offsets, const int64_t* shape,
                 const int64_t* valid, const int64_t* extent);
}  // namespace pypto_host

// ascendc.md §14 ascendc_assert(expr) / ascendc_assert(expr, fmt, args...): on the device a trap
// that stops the kernel (printing fmt); here a HardwareFault whose message is fmt formatted
// (printf rules) and the failed expression.  Defined in runtime/integer.cpp.
namespace pypto_host {
[[noreturn]] void AssertFailed(const char* expr, const char* fmt = nullptr, ...);
}  // namespace pypto_host
#ifndef ascendc_assert
#define ascendc_assert(expr, ...) (static_cast<bool>(expr) ? void(0) : pypto_host::AssertFailed(#expr, ##__VA_ARGS__))
#endif

// Lets a host program (e.g. the Python side, through ctypes) set the Launch thread count:
// same meaning as pypto_host::SetHostThreads.
extern "C" void pypto_host_set_threads(int n);

// ===========================================================================================
// §3 Data types: half (IEEE binary16) and bfloat16_t, global namespace like CANN's.
// Conversion from any arithmetic type rounds to nearest-even; arithmetic is done exactly in
// double and rounded once (= correctly rounded binary16 arithmetic).
// ===========================================================================================
namespace pypto_host {
namespace fp {
uint16_t HalfFromDouble(double d);
double HalfToDouble(uint16_t bits);
uint16_t Bf16FromDouble(double d);
double Bf16ToDouble(uint16_t bits);
}  // namespace fp
}  // namespace pypto_host

#define PYPTO_HOST_SMALL_FLOAT(NAME, FROM, TO)                                                     \
    struct NAME {                                                                                  \
        uint16_t bits_ = 0;                                                                        \
        NAME() = default;                                                                          \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic<U>::value>>           \
        NAME(U v) : bits_(FromDouble(static_cast<double>(v))) {}                                   \
        operator float() const { return static_cast<float>(ToDouble()); }                          \
        double ToDouble() const { return pypto_host::fp::TO(bits_); }                              \
        static uint16_t FromDouble(double d) { return pypto_host::fp::FROM(d); }                   \
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

PYPTO_HOST_SMALL_FLOAT(half, HalfFromDouble, HalfToDouble)
PYPTO_HOST_SMALL_FLOAT(bfloat16_t, Bf16FromDouble, Bf16ToDouble)
#undef PYPTO_HOST_SMALL_FLOAT

// ===========================================================================================
// §1.1 / §9 Pipes and hardware events (global names in CANN: pipe_t, event_t).
// ===========================================================================================
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// §10.2 Fixpipe quantisation modes (global enum as in CANN; QuantMode_t::X also works).
enum QuantMode_t : uint8_t {
    NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, REQ8, QF322B8_PRE, VQF322B8_PRE
};

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
// Type-erased descriptions: what the runtime needs to know about a tensor and its elements.
// ===========================================================================================
namespace detail {
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
// An element type: its dtype id and size in bytes.
struct Ty {
    Dt dt;
    uint32_t size;
};
template <typename T> constexpr Ty TyOf() { return Ty{DtOf<T>(), static_cast<uint32_t>(sizeof(T))}; }

// Queue buffer bookkeeping (§5.2): which state each physical buffer of a TQue is in.
enum class BufState { Free, Allocated, Queued, Dequeued };
struct QueueBuf {
    uint32_t addr = 0;
    BufState state = BufState::Free;
    uint64_t gen = 0;  // bumped on every AllocTensor: stale copies of a LocalTensor are detected
};
// At most 8 queue buffers per TPosition (§5.1), so a queue never holds more than 8.
constexpr uint32_t kMaxQueueBufs = 8;
struct QueueCore {
    TPosition pos = TPosition::VECIN;
    int32_t depth = 1;
    uint8_t* ub = nullptr;
    uint32_t len = 0;
    uint32_t nbufs = 0;
    QueueBuf bufs[kMaxQueueBufs];
    int32_t fifo[kMaxQueueBufs] = {};  // ring of queued buffer indices
    uint32_t head = 0, queued = 0;
    uint32_t next = 0;  // round-robin allocation cursor (ping-pong order of the hardware)
    bool initialised() const { return ub != nullptr; }
};

// Everything a LocalTensor knows about where it lives.
struct TensorDesc {
    uint8_t* ub = nullptr;     // base of the owning TPipe's UB model (or cube pool)
    uint32_t addr = 0;         // byte address inside UB
    uint32_t count = 0;        // elements in this view
    uint32_t capBytes = 0;     // bytes from addr to the end of the underlying buffer
    QueueCore* owner = nullptr;  // queue that allocated it (nullptr: TBuf / constructed)
    int32_t buf = -1;
    uint64_t gen = 0;
};
// A GlobalTensor view: registered range [base, base + size elements), this view at `off`.
struct GmDesc {
    uint8_t* base;
    uint64_t size;  // elements registered (UINT64_MAX: unbounded)
    uint64_t off;   // element offset of this view
    uint32_t elem;  // bytes per element
    bool bounded;
};

// ---- tensors (runtime/core.cpp) ------------------------------------------------------------
void CheckIndex(const TensorDesc& d, uint32_t index, const char* op);
void SubView(TensorDesc& d, uint32_t offset, uint32_t elem);
void SetSize(TensorDesc& d, uint32_t size, uint32_t elem);
void ReadLocal(const TensorDesc& d, uint32_t index, uint32_t elem, void* out, const char* op);
void WriteLocal(const TensorDesc& d, uint32_t index, uint32_t elem, const void* in, const char* op);
void CheckGmRange(const GmDesc& g, uint64_t relByte, uint64_t len, const char* op);
void ReadGm(const GmDesc& g, uint64_t offset, void* out, const char* op);
void WriteGm(const GmDesc& g, uint64_t offset, const void* in, const char* op);
TensorDesc QueAlloc(QueueCore& q, uint32_t elem);
void QueEnQue(QueueCore& q, const TensorDesc& t);
TensorDesc QueDeQue(QueueCore& q, uint32_t elem);
void QueFree(QueueCore& q, const TensorDesc& t);
TensorDesc TBufView(uint8_t* ub, uint32_t addr, uint32_t len, uint32_t size, uint32_t bufOffset, uint32_t elem);
struct PipeCore;
PipeCore* PipeCreate();
void PipeDestroy(PipeCore* p);
void PipeInitQueue(PipeCore* p, QueueCore& q, uint8_t num, uint32_t len);
void PipeInitTBuf(PipeCore* p, TPosition pos, uint8_t*& ub, uint32_t& addr, uint32_t& len, uint32_t bytes);
uint32_t PipeUbUsed(const PipeCore* p);
int64_t BlockIdx();
int64_t BlockNum();
void CheckEventId(const char* op, int32_t eventID);
void SetAtomicMode(int mode, Dt dt);
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
        size_ = UINT64_MAX;
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
        T v;
        detail::ReadGm(Desc(), offset, &v, "GlobalTensor::GetValue");
        return v;
    }
    __aicore__ inline void SetValue(const uint64_t offset, const T& value)
    {
        detail::WriteGm(Desc(), offset, &value, "GlobalTensor::SetValue");
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
    detail::GmDesc Desc() const { return detail::GmDesc{base_, size_, off_, static_cast<uint32_t>(sizeof(T)), bounded_}; }
    // Check that bytes [relByte, relByte+len) from this view's start lie in the registered buffer.
    void CheckRange(uint64_t relByte, uint64_t len, const char* op) const { detail::CheckGmRange(Desc(), relByte, len, op); }
    uint8_t* base_ = nullptr;
    uint64_t size_ = 0;  // elements registered
    uint64_t off_ = 0;   // element offset of this view
    bool bounded_ = false;
};

// ===========================================================================================
// §4.2 LocalTensor<T>: a view into the UB of the kernel's TPipe (or a cube memory).
// ===========================================================================================
template <typename T> class LocalTensor {
public:
    LocalTensor() = default;
    // Sub-view by element offset.  Vector/DMA users check that the result is 32-byte aligned.
    __aicore__ inline LocalTensor operator[](const uint32_t offset) const
    {
        LocalTensor t = *this;
        detail::SubView(t.d_, offset, sizeof(T));
        return t;
    }
    __aicore__ inline T GetValue(const uint32_t index) const
    {
        T v;
        detail::ReadLocal(d_, index, sizeof(T), &v, "LocalTensor::GetValue");
        return v;
    }
    __aicore__ inline void SetValue(const uint32_t index, const T& value) const
    {
        detail::WriteLocal(d_, index, sizeof(T), &value, "LocalTensor::SetValue");
    }
    __aicore__ inline uint32_t GetSize() const { return d_.count; }
    // §4.2 SetSize: may not grow the view past the end of the underlying buffer.
    __aicore__ inline void SetSize(const uint32_t size) { detail::SetSize(d_, size, sizeof(T)); }
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
    void CheckIndex(uint32_t index, const char* op) const { detail::CheckIndex(d_, index, op); }
    detail::TensorDesc d_;
};

namespace detail {
template <typename T> inline LocalTensor<T> Local(const TensorDesc& d)
{
    LocalTensor<T> t;
    t.d_ = d;
    return t;
}
}  // namespace detail

// ===========================================================================================
// §5.1/§5.2 TQue: a ring of `num` UB buffers with queue protocol checks.  On hardware a
// violation of the protocol dead-locks (AllocTensor with no free buffer, DeQue of an empty
// queue) or races (touching a buffer that is enqueued or already freed); here it faults.
// ===========================================================================================
template <TPosition pos, int32_t depth> class TQue {
public:
    TQue() { core_.pos = pos; core_.depth = depth; }
    TQue(const TQue&) = delete;
    TQue& operator=(const TQue&) = delete;

    template <typename T> __aicore__ inline LocalTensor<T> AllocTensor() { return detail::Local<T>(detail::QueAlloc(core_, sizeof(T))); }
    template <typename T> __aicore__ inline bool EnQue(const LocalTensor<T>& tensor)
    {
        detail::QueEnQue(core_, tensor.d_);
        return true;
    }
    template <typename T> __aicore__ inline LocalTensor<T> DeQue() { return detail::Local<T>(detail::QueDeQue(core_, sizeof(T))); }
    template <typename T> __aicore__ inline void FreeTensor(LocalTensor<T>& tensor) { detail::QueFree(core_, tensor.d_); }
    // Number of tensors currently enqueued (for tests / debugging).
    size_t HostQueuedCount() const { return core_.queued; }

    detail::QueueCore core_;
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
        return detail::Local<T>(detail::TBufView(ub_, addr_, len_, size, bufOffset, sizeof(T)));
    }
    uint8_t* ub_ = nullptr;
    uint32_t addr_ = 0;
    uint32_t len_ = 0;
};

// ===========================================================================================
// §5.1 TPipe: owns the UB model (one per kernel) and the cube pools, and carves buffers out
// of them.  UB starts filled with 0xFF bytes (NaN for float/half, -1 for ints): reading
// memory that no DMA or vector op wrote shows up instead of silently reading zeros.
// ===========================================================================================
class TPipe {
public:
    TPipe() : core_(detail::PipeCreate()) {}
    ~TPipe() { detail::PipeDestroy(core_); }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <TPosition pos, int32_t depth>
    __aicore__ inline bool InitBuffer(TQue<pos, depth>& que, uint8_t num, uint32_t len)
    {
        detail::PipeInitQueue(core_, que.core_, num, len);
        return true;
    }
    template <TPosition pos> __aicore__ inline bool InitBuffer(TBuf<pos>& buf, uint32_t len)
    {
        detail::PipeInitTBuf(core_, pos, buf.ub_, buf.addr_, buf.len_, len);
        return true;
    }
    // Bytes of UB handed out so far (for tests / budget reports).
    uint32_t HostUbUsed() const { return detail::PipeUbUsed(core_); }

private:
    detail::PipeCore* core_;
};

// ===========================================================================================
// §1.4 System variables.
// ===========================================================================================
__aicore__ inline int64_t GetBlockIdx() { return detail::BlockIdx(); }
__aicore__ inline int64_t GetBlockNum() { return detail::BlockNum(); }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline void InitSocState() {}

// ===========================================================================================
// §9 Synchronisation.  Execution here is sequential, so barriers and flags are no-ops apart
// from argument checks (event ids 0-7 exist on A2).
// ===========================================================================================
template <pipe_t pipe> __aicore__ inline void PipeBarrier() {}
template <HardEvent event> __aicore__ inline void SetFlag(int32_t eventID) { detail::CheckEventId("SetFlag", eventID); }
template <HardEvent event> __aicore__ inline void WaitFlag(int32_t eventID) { detail::CheckEventId("WaitFlag", eventID); }

// ===========================================================================================
// §7.3 Atomic accumulate into GM on UB->GM copies.
// ===========================================================================================
template <typename T> __aicore__ inline void SetAtomicAdd() { detail::SetAtomicMode(1, detail::DtOf<T>()); }
template <typename T> __aicore__ inline void SetAtomicMax() { detail::SetAtomicMode(2, detail::DtOf<T>()); }
template <typename T> __aicore__ inline void SetAtomicMin() { detail::SetAtomicMode(3, detail::DtOf<T>()); }
__aicore__ inline void SetAtomicNone() { detail::SetAtomicMode(0, detail::Dt::OTHER); }

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
void CopyGmToUb(const TensorDesc& dst, const GmDesc& src, uint32_t count);
void CopyUbToGm(const GmDesc& dst, const TensorDesc& src, uint32_t count, Dt dt);
void CopyUbToUb(const TensorDesc& dst, const TensorDesc& src, uint32_t count, uint32_t elem);
void CopyGmToUbStrided(const TensorDesc& dst, const GmDesc& src, const DataCopyParams& p);
void CopyUbToGmStrided(const GmDesc& dst, const TensorDesc& src, const DataCopyParams& p, Dt dt);
void PadIn(const TensorDesc& dst, const GmDesc& src, uint32_t blockCount, uint64_t blockLen, uint64_t gmGapBytes,
           uint64_t ubGapBlocks, bool isPad, uint32_t left, uint32_t right, const void* value, const char* op);
void PadOut(const GmDesc& dst, const TensorDesc& src, uint32_t blockCount, uint64_t blockLen, uint64_t ubGapBlocks,
            uint64_t gmGapBytes, Dt dt, const char* op);
}  // namespace detail

// §7.1 GM -> UB, count form.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count)
{
    detail::CopyGmToUb(dst.d_, src.Desc(), count);
}
// §7.1 UB -> GM, count form.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    detail::CopyUbToGm(dst.Desc(), src.d_, count, detail::DtOf<T>());
}
// §7.1 UB -> UB (MTE, 32-byte granularity).  Not GM traffic.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    detail::CopyUbToUb(dst.d_, src.d_, count, sizeof(T));
}
// §7.1 strided GM -> UB: blockCount blocks of blockLen*32 B; gaps in 32-byte blocks.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p)
{
    detail::CopyGmToUbStrided(dst.d_, src.Desc(), p);
}
// §7.1 strided UB -> GM.
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p)
{
    detail::CopyUbToGmStrided(dst.Desc(), src.d_, p, detail::DtOf<T>());
}
// §7.2 GM -> UB with padding.  Each block lands at a 32-byte boundary in UB as
// [leftPadding][blockLen bytes of data][rightPadding][filler up to 32 B].
// Filler: left = right = 0 -> copies of the block's first element (documented); otherwise
// paddingValue when isPad, else "unspecified" -- modelled as 0xFF poison bytes.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& dataCopyParams, const DataCopyPadExtParams<T>& padParams)
{
    detail::PadIn(dst.d_, src.Desc(), dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                  dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding,
                  &padParams.paddingValue, "DataCopyPad(GM->UB)");
}
// §7.2 UB -> GM: only the valid blockLen bytes of each (32-byte padded) UB row are written.
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& dataCopyParams)
{
    detail::PadOut(dst.Desc(), src.d_, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                   dataCopyParams.dstStride, detail::DtOf<T>(), "DataCopyPad(UB->GM)");
}
// Older forms: DataCopyParams{cnt, lenBytes, srcGapBytes, dstGapBlocks} + DataCopyPadParams.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyParams& dataCopyParams, const DataCopyPadParams& padParams)
{
    T v;
    std::memset(static_cast<void*>(&v), 0, sizeof(T));
    std::memcpy(static_cast<void*>(&v), &padParams.paddingValue, sizeof(T) < 8 ? sizeof(T) : 8);
    detail::PadIn(dst.d_, src.Desc(), dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                  dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding, &v,
                  "DataCopyPad(GM->UB)");
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& dataCopyParams)
{
    detail::PadOut(dst.Desc(), src.d_, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                   dataCopyParams.dstStride, detail::DtOf<T>(), "DataCopyPad(UB->GM)");
}

// ===========================================================================================
// §6 Vector compute, count form ("first n elements", §6.1).
// Checks on every call (§6.1): operands are live, 32-byte aligned UB tensors; 0 <= count <=
// each operand's size; dst and a src overlap either 100% (same start) or not at all;
// dtype allowed on A2 (§6.2).  count = 0 is a no-op.  Implemented in runtime/vector.cpp.
// ===========================================================================================
namespace detail {
enum class BinOp { Add, Sub, Mul, Div, Max, Min };
enum class ScalarOp { Adds, Muls, Maxs, Mins };
enum class UnOp { Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Relu };
void VecBinary(BinOp op, Dt dt, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, int64_t count);
void VecScalar(ScalarOp op, Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* scalar, int64_t count);
void VecUnary(UnOp op, Dt dt, const TensorDesc& dst, const TensorDesc& src, int64_t count);
void VecAxpy(Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* scalar, int64_t count);
void VecDuplicate(Ty t, const TensorDesc& dst, const void* value, int64_t count);
}  // namespace detail

#define PYPTO_BINARY(NAME)                                                                                \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                    \
                                const LocalTensor<T>& src1, const int32_t& count)                         \
    {                                                                                                     \
        detail::VecBinary(detail::BinOp::NAME, detail::DtOf<T>(), dst.d_, src0.d_, src1.d_, count);       \
    }
// §6.2 table (the allowed dtypes per op are checked in runtime/vector.cpp).
PYPTO_BINARY(Add)
PYPTO_BINARY(Sub)
PYPTO_BINARY(Mul)
PYPTO_BINARY(Div)
PYPTO_BINARY(Max)
PYPTO_BINARY(Min)
#undef PYPTO_BINARY

// §6.2 tensor-scalar ops: `Adds(dst, src, scalar, n)`, scalar of the element type.
#define PYPTO_SCALAR(NAME)                                                                                \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, \
                                const int32_t& count)                                                     \
    {                                                                                                     \
        const T s = scalarValue;                                                                          \
        detail::VecScalar(detail::ScalarOp::NAME, detail::DtOf<T>(), dst.d_, src.d_, &s, count);          \
    }
PYPTO_SCALAR(Adds)
PYPTO_SCALAR(Muls)
PYPTO_SCALAR(Maxs)
PYPTO_SCALAR(Mins)
#undef PYPTO_SCALAR

// §6.2 Axpy: dst = scalar * src + dst, one rounding (computed in double, as every op here).  The
// same-dtype form (half, float); the half-in, float-dst form is not modelled.
template <typename T>
__aicore__ inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, const int32_t& count)
{
    const T s = scalarValue;
    detail::VecAxpy(detail::DtOf<T>(), dst.d_, src.d_, &s, count);
}

// §6.2 unary math: computed in double and rounded once to T, or (float/half) in float where
// that gives the same result; Exp within 1 ulp of float (see the top of this file).
#define PYPTO_UNARY(NAME)                                                                                 \
    template <typename T>                                                                                 \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) \
    {                                                                                                     \
        detail::VecUnary(detail::UnOp::NAME, detail::DtOf<T>(), dst.d_, src.d_, count);                   \
    }
PYPTO_UNARY(Exp)
PYPTO_UNARY(Ln)
PYPTO_UNARY(Abs)
PYPTO_UNARY(Sqrt)
PYPTO_UNARY(Rsqrt)
PYPTO_UNARY(Reciprocal)
PYPTO_UNARY(Relu)
#undef PYPTO_UNARY

// §6.2 / §6.6 Duplicate: fill the first `count` elements with a scalar.
template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count)
{
    detail::VecDuplicate(detail::TyOf<T>(), dst.d_, &scalarValue, count);
}

// §6.2 And / Or / Not (bitwise, int16 / uint16 on A2: other widths go through ReinterpretCast)
// and ShiftLeft / ShiftRight by a scalar (int16, uint16, int32, uint32; the scalar in [0, bits]:
// a tensor of shift amounts is an A5-only form).  ShiftRight is arithmetic on the signed types
// and logical on the unsigned ones.  Implemented in runtime/bitwise.cpp.
namespace detail {
enum class BitOp { And, Or };
void VecBitwise(BitOp op, Dt dt, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, int64_t count);
void VecNot(Dt dt, const TensorDesc& dst, const TensorDesc& src, int64_t count);
void VecShift(bool left, Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* bits, int64_t count);
}  // namespace detail

template <typename T>
__aicore__ inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                           const int32_t& count)
{
    detail::VecBitwise(detail::BitOp::And, detail::DtOf<T>(), dst.d_, src0.d_, src1.d_, count);
}
template <typename T>
__aicore__ inline void Or(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                          const int32_t& count)
{
    detail::VecBitwise(detail::BitOp::Or, detail::DtOf<T>(), dst.d_, src0.d_, src1.d_, count);
}
template <typename T>
__aicore__ inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    detail::VecNot(detail::DtOf<T>(), dst.d_, src.d_, count);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                 const int32_t& count)
{
    const T s = scalarValue;
    detail::VecShift(true, detail::DtOf<T>(), dst.d_, src.d_, &s, count);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,
                                  const int32_t& count)
{
    const T s = scalarValue;
    detail::VecShift(false, detail::DtOf<T>(), dst.d_, src.d_, &s, count);
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
// A lane mask: a contiguous count (bits == nullptr) or the two 64-bit words of a bit mask.
struct LaneMask {
    uint64_t count;
    const uint64_t* bits;
};
void VecBinaryMask(BinOp op, Ty t, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, LaneMask mask,
                   uint8_t repeatTime, const BinaryRepeatParams& p);
void VecScalarMask(ScalarOp op, Ty t, const TensorDesc& dst, const TensorDesc& src, const void* scalar, LaneMask mask,
                   uint8_t repeatTime, const UnaryRepeatParams& p);
void VecUnaryMask(UnOp op, Ty t, const TensorDesc& dst, const TensorDesc& src, LaneMask mask, uint8_t repeatTime,
                  const UnaryRepeatParams& p);
void VecBrcb(Ty t, const TensorDesc& dst, const TensorDesc& src, uint8_t repeatTime, const BrcbRepeatParams& p);
void VecWholeReduce(int kind, Ty t, const TensorDesc& dst, const TensorDesc& src, int32_t mask, int32_t repeatTime,
                    int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order);
}  // namespace detail

#define PYPTO_BINARY_MASK(NAME)                                                                           \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p)     \
    {                                                                                                     \
        detail::VecBinaryMask(detail::BinOp::NAME, detail::TyOf<T>(), dst.d_, src0.d_, src1.d_,          \
                              detail::LaneMask{mask, nullptr}, repeatTime, p);                            \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& p)   \
    {                                                                                                     \
        detail::VecBinaryMask(detail::BinOp::NAME, detail::TyOf<T>(), dst.d_, src0.d_, src1.d_,          \
                              detail::LaneMask{0, mask}, repeatTime, p);                                  \
    }
PYPTO_BINARY_MASK(Add)
PYPTO_BINARY_MASK(Sub)
PYPTO_BINARY_MASK(Mul)
PYPTO_BINARY_MASK(Div)
PYPTO_BINARY_MASK(Max)
PYPTO_BINARY_MASK(Min)
#undef PYPTO_BINARY_MASK

#define PYPTO_SCALAR_MASK(NAME)                                                                           \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue, \
                                uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& p)      \
    {                                                                                                     \
        const T s = scalarValue;                                                                          \
        detail::VecScalarMask(detail::ScalarOp::NAME, detail::TyOf<T>(), dst.d_, src.d_, &s,             \
                              detail::LaneMask{mask, nullptr}, repeatTime, p);                            \
    }
PYPTO_SCALAR_MASK(Adds)
PYPTO_SCALAR_MASK(Muls)
PYPTO_SCALAR_MASK(Maxs)
PYPTO_SCALAR_MASK(Mins)
#undef PYPTO_SCALAR_MASK

#define PYPTO_UNARY_MASK(NAME)                                                                            \
    template <typename T, bool isSetMask = true>                                                          \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,      \
                                const uint8_t repeatTime, const UnaryRepeatParams& p)                     \
    {                                                                                                     \
        detail::VecUnaryMask(detail::UnOp::NAME, detail::TyOf<T>(), dst.d_, src.d_,                      \
                             detail::LaneMask{mask, nullptr}, repeatTime, p);                             \
    }
PYPTO_UNARY_MASK(Exp)
PYPTO_UNARY_MASK(Ln)
PYPTO_UNARY_MASK(Abs)
PYPTO_UNARY_MASK(Sqrt)
PYPTO_UNARY_MASK(Rsqrt)
PYPTO_UNARY_MASK(Reciprocal)
PYPTO_UNARY_MASK(Relu)
#undef PYPTO_UNARY_MASK

// §6.6 Brcb: each repeat takes 8 consecutive src elements; element k fills block k of dst.
template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& repeatParams)
{
    detail::VecBrcb(detail::TyOf<T>(), dst.d_, src.d_, repeatTime, repeatParams);
}

// §6.5 WholeReduceSum / WholeReduceMax / WholeReduceMin: one result per repeat.
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride)
{
    detail::VecWholeReduce(0, detail::TyOf<T>(), dst.d_, src.d_, mask, repeatTime, dstRepStride, srcBlkStride,
                           srcRepStride, ReduceOrder::ORDER_ONLY_VALUE);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail::VecWholeReduce(1, detail::TyOf<T>(), dst.d_, src.d_, mask, repeatTime, dstRepStride, srcBlkStride,
                           srcRepStride, order);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    detail::VecWholeReduce(2, detail::TyOf<T>(), dst.d_, src.d_, mask, repeatTime, dstRepStride, srcBlkStride,
                           srcRepStride, order);
}

// ===========================================================================================
// §6.3 Cast, §6.4 Compare / CompareScalar / Select (bit-packed masks: element i -> bit (i % 8)
// of byte i/8), §6.5 whole-range reductions (count form).  ReduceSum: binary tree inside each
// 256-byte repeat, repeats combined in order, in T precision.  ReduceMax/Min: dst[0] = value
// and, with calIndex, dst[1] = index stored as raw integer bits of T.
// ===========================================================================================
namespace detail {
void VecCast(Ty d, Ty s, const TensorDesc& dst, const TensorDesc& src, RoundMode mode, uint32_t count);
void VecCompare(Ty t, uint32_t maskElem, const TensorDesc& dst, const TensorDesc& src0, const TensorDesc* src1,
                const void* scalar, CMPMODE mode, uint32_t count);
void VecSelect(Ty t, uint32_t maskElem, const TensorDesc& dst, const TensorDesc& mask, const TensorDesc& src0,
               const TensorDesc* src1, const void* scalar, SELMODE mode, uint32_t count);
void VecReduce(int kind, Ty t, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& work, int32_t count,
               bool calIndex);
}  // namespace detail

template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                            const uint32_t count)
{
    detail::VecCast(detail::TyOf<T>(), detail::TyOf<U>(), dst.d_, src.d_, round_mode, count);
}
template <typename T, typename U>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, uint32_t count)
{
    detail::VecCompare(detail::TyOf<T>(), sizeof(U), dst.d_, src0.d_, &src1.d_, nullptr, cmpMode, count);
}
template <typename T, typename U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, uint32_t count)
{
    detail::VecCompare(detail::TyOf<T>(), sizeof(U), dst.d_, src0.d_, nullptr, &src1Scalar, cmpMode, count);
}
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count)
{
    detail::VecSelect(detail::TyOf<T>(), sizeof(U), dst.d_, selMask.d_, src0.d_, &src1.d_, nullptr, selMode, count);
}
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count)
{
    detail::VecSelect(detail::TyOf<T>(), sizeof(U), dst.d_, selMask.d_, src0.d_, nullptr, &src1, selMode, count);
}
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count)
{
    detail::VecReduce(0, detail::TyOf<T>(), dst.d_, src.d_, sharedTmpBuffer.d_, count, false);
}
template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = false)
{
    detail::VecReduce(1, detail::TyOf<T>(), dst.d_, src.d_, sharedTmpBuffer.d_, count, calIndex);
}
template <typename T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                                 const int32_t count, bool calIndex = false)
{
    detail::VecReduce(2, detail::TyOf<T>(), dst.d_, src.d_, sharedTmpBuffer.d_, count, calIndex);
}

}  // namespace AscendC

// Cube unit (AIC): L1/L0 buffers, Nd2Nz DataCopy, LoadData, Mmad, Fixpipe.
#include "pypto_host_cube.h"
// Indexing, sorting and scans: CreateVecIndex, Gather, Sort, Extract, CumSum, ascendc_assert.
#include "pypto_host_index.h"
// A run of float count-form ops in one pass (host only; the emitter guards it with PYPTO_HOST_FUSE).
#include "pypto_host_fuse.h"
// High-level math APIs (adv_api): Erf, Erfc, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Tan, Tanh, Asin, Acos, Power.
#include "pypto_host_math.h"

#endif  // PYPTO_HOST_KERNEL_OPERATOR_H
