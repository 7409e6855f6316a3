// runtime/elementwise.cpp -- AIV elementwise vector compute (§6.1, §6.2, §6.6 of ascendc.md):
// count forms with their fast float/half paths, mask/repeat forms, Duplicate and Brcb.  Every
// entry point checks its operands in the documented order, then dispatches on the element
// type once.
#include "runtime/fastfloat.h"

namespace AscendC {
namespace detail {
namespace {

// ---- op tables (§6.2) -------------------------------------------------------------------
#define PYPTO_FOUR {{Dt::I16, Dt::F16, Dt::I32, Dt::F32}, 4}
struct BinInfo {
    const char* name;
    char code;
    DtList dts;
};
const BinInfo& InfoOf(BinOp op)
{
    static const BinInfo info[] = {{"Add", '+', PYPTO_FOUR}, {"Sub", '-', PYPTO_FOUR}, {"Mul", '*', PYPTO_FOUR},
                                   {"Div", '/', {{Dt::F16, Dt::F32}, 2}}, {"Max", '>', PYPTO_FOUR}, {"Min", '<', PYPTO_FOUR}};
    return info[static_cast<int>(op)];
}
const BinInfo& InfoOf(ScalarOp op)
{
    static const BinInfo info[] = {{"Adds", '+', PYPTO_FOUR}, {"Muls", '*', PYPTO_FOUR}, {"Maxs", '>', PYPTO_FOUR},
                                   {"Mins", '<', PYPTO_FOUR}};
    return info[static_cast<int>(op)];
}
struct UnInfo {
    const char* name;
    DtList dts;
};
const UnInfo& InfoOf(UnOp op)
{
    const DtList f = {{Dt::F16, Dt::F32}, 2};
    static const UnInfo info[] = {{"Exp", f}, {"Ln", f}, {"Abs", f}, {"Sqrt", f}, {"Rsqrt", f}, {"Reciprocal", f},
                                  {"Relu", {{Dt::F16, Dt::I32, Dt::F32}, 3}}};
    return info[static_cast<int>(op)];
}
#undef PYPTO_FOUR

// The generic (double) form of a unary op: computed in double and rounded once to T.
double UnaryD(UnOp op, double x)
{
    switch (op) {
    case UnOp::Exp: return std::exp(x);
    case UnOp::Ln: return std::log(x);
    case UnOp::Abs: return std::fabs(x);
    case UnOp::Sqrt: return std::sqrt(x);
    case UnOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnOp::Reciprocal: return 1.0 / x;
    case UnOp::Relu: return MaxD(x, 0.0);  // as Maxs(x, 0): NaN stays NaN, -0 gives +0
    }
    return x;
}
// The same function on a float: exact for Abs/Sqrt/Reciprocal/Relu (single IEEE operations;
// Relu is Maxs(x, 0)), ExpF for Exp, Ln/Rsqrt through double.
template <UnOp op> struct UnaryF {
    float operator()(float x) const
    {
        if constexpr (op == UnOp::Exp) return ExpF(x);
        else if constexpr (op == UnOp::Ln) return static_cast<float>(std::log(static_cast<double>(x)));
        else if constexpr (op == UnOp::Abs) return std::fabs(x);
        else if constexpr (op == UnOp::Sqrt) return std::sqrt(x);
        else if constexpr (op == UnOp::Rsqrt) return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
        else if constexpr (op == UnOp::Reciprocal) return 1.0f / x;
        else return ArithF<'>'>{}(x, 0.0f);
    }
};

// Checks of a one-source elementwise op.
void CheckUnary(const char* op, const TensorDesc& dst, const TensorDesc& src, int64_t count, uint32_t elem, Dt dt,
                const DtList& dts)
{
    CheckCount(count, op);
    CheckDtype(dt, op, dts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src, op, "src", count);
    CheckOverlap(dst, elem, src, elem, count, op);
}
uint32_t SizeOf(Dt dt)
{
    static const uint32_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 1};
    return sizes[static_cast<int>(dt)];
}

template <typename T> void BinaryTyped(char code, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, int64_t count)
{
    uint8_t* d = Ptr(dst);
    const uint8_t *x = Ptr(a), *y = Ptr(b);
    if constexpr (IsFastFloat<T>()) {
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
        Store<T>(d + o, Arith<T>(code, Load<T>(x + o), Load<T>(y + o)));
    }
}

template <typename T> void ScalarTyped(char code, const TensorDesc& dst, const TensorDesc& src, const T& s, int64_t count)
{
    uint8_t* d = Ptr(dst);
    const uint8_t* x = Ptr(src);
    if constexpr (IsFastFloat<T>()) {
        const float fs = static_cast<float>(s);
        auto with = [&](auto f) {
            FastUnary<T>(d, x, count, [fs, f](float v) { return f(v, fs); });
        };
        switch (code) {
        case '+': return with(ArithF<'+'>{});
        case '*': return with(ArithF<'*'>{});
        case '>': return with(ArithF<'>'>{});
        default: return with(ArithF<'<'>{});
        }
    } else {
        for (int64_t i = 0; i < count; ++i) {
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            Store<T>(d + o, Arith<T>(code, Load<T>(x + o), s));
        }
    }
}

template <typename T, UnOp op> void UnaryFast(const TensorDesc& dst, const TensorDesc& src, int64_t count)
{
    if constexpr (std::is_same<T, float>::value && op == UnOp::Exp) return ExpF32(Ptr(dst), Ptr(src), count);
    else FastUnary<T>(Ptr(dst), Ptr(src), count, UnaryF<op>{});
}
template <typename T> void UnaryTyped(UnOp op, const TensorDesc& dst, const TensorDesc& src, int64_t count)
{
    if constexpr (IsFastFloat<T>()) {
        switch (op) {
        case UnOp::Exp: return UnaryFast<T, UnOp::Exp>(dst, src, count);
        case UnOp::Ln: return UnaryFast<T, UnOp::Ln>(dst, src, count);
        case UnOp::Abs: return UnaryFast<T, UnOp::Abs>(dst, src, count);
        case UnOp::Sqrt: return UnaryFast<T, UnOp::Sqrt>(dst, src, count);
        case UnOp::Rsqrt: return UnaryFast<T, UnOp::Rsqrt>(dst, src, count);
        case UnOp::Reciprocal: return UnaryFast<T, UnOp::Reciprocal>(dst, src, count);
        case UnOp::Relu: return UnaryFast<T, UnOp::Relu>(dst, src, count);
        }
    }
    uint8_t* d = Ptr(dst);
    const uint8_t* x = Ptr(src);
    for (int64_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        Store<T>(d + o, FromD<T>(UnaryD(op, ToD(Load<T>(x + o)))));
    }
}

// Generic mask/repeat elementwise driver: `nsrc` sources (0..2), per-repeat read-then-write.
template <typename T, typename F>
void MaskRepeat(const char* op, const std::vector<bool>& on, uint8_t repeatTime, const TensorDesc& dst, uint64_t dBlk,
                uint64_t dRep, const TensorDesc* s0, uint64_t s0Blk, uint64_t s0Rep, const TensorDesc* s1,
                uint64_t s1Blk, uint64_t s1Rep, F f)
{
    const uint32_t e = sizeof(T);
    CheckUbAligned(dst, op, "dst");
    if (s0) CheckUbAligned(*s0, op, "src0");
    if (s1) CheckUbAligned(*s1, op, "src1");
    if (dBlk == 0) Fault(std::string(op) + ": dstBlkStride must not be 0 (§6.1)");
    std::vector<std::pair<uint64_t, T>> out;
    for (uint64_t r = 0; r < repeatTime; ++r) {
        out.clear();
        for (uint64_t j = 0; j < on.size(); ++j) {
            if (!on[j]) continue;
            const uint64_t db = LaneByte(r, j, dBlk, dRep, e);
            CheckLane(dst, db, e, op, "dst");
            T a = T(0), b = T(0);
            if (s0) { const uint64_t o = LaneByte(r, j, s0Blk, s0Rep, e); CheckLane(*s0, o, e, op, "src0"); a = Load<T>(Ptr(*s0) + o); }
            if (s1) { const uint64_t o = LaneByte(r, j, s1Blk, s1Rep, e); CheckLane(*s1, o, e, op, "src1"); b = Load<T>(Ptr(*s1) + o); }
            out.emplace_back(db, f(a, b));
        }
        for (const auto& w : out) Store<T>(Ptr(dst) + w.first, w.second);
    }
}
std::vector<bool> Lanes(LaneMask mask, uint32_t elem, const char* op)
{
    return mask.bits ? LanesFromBits(mask.bits, elem, op) : LanesFromCount(mask.count, elem, op);
}
}  // namespace

// ===========================================================================================
// Entry points (declared in kernel_operator.h).
// ===========================================================================================
void VecBinary(BinOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, int64_t count)
{
    const BinInfo& info = InfoOf(opId);
    const char* op = info.name;
    const uint32_t e = SizeOf(dt);
    CheckCount(count, op);
    CheckDtype(dt, op, info.dts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(a, op, "src0", count);
    CheckOperand(b, op, "src1", count);
    CheckOverlap(dst, e, a, e, count, op);
    CheckOverlap(dst, e, b, e, count, op);
    PrefetchAhead(static_cast<uint64_t>(count) * e);
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) { BinaryTyped<decltype(tag)>(info.code, dst, a, b, count); });
}

void VecScalar(ScalarOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* scalar, int64_t count)
{
    const BinInfo& info = InfoOf(opId);
    CheckUnary(info.name, dst, src, count, SizeOf(dt), dt, info.dts);
    PrefetchAhead(static_cast<uint64_t>(count) * SizeOf(dt));
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) {
        using T = decltype(tag);
        ScalarTyped<T>(info.code, dst, src, Load<T>(static_cast<const uint8_t*>(scalar)), count);
    });
}

void VecAxpy(Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* scalar, int64_t count)
{
    CheckUnary("Axpy", dst, src, count, SizeOf(dt), dt, {{Dt::F16, Dt::F32}, 2});
    WithTypeIn<Dt::F16, Dt::F32>(dt, [&](auto tag) {
        using T = decltype(tag);
        const double s = ToD(Load<T>(static_cast<const uint8_t*>(scalar)));
        uint8_t* d = Ptr(dst);
        const uint8_t* x = Ptr(src);
        for (int64_t i = 0; i < count; ++i) {
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            Store<T>(d + o, FromD<T>(s * ToD(Load<T>(x + o)) + ToD(Load<T>(d + o))));  // the product is exact in double
        }
    });
}

void VecUnary(UnOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& src, int64_t count)
{
    const UnInfo& info = InfoOf(opId);
    CheckUnary(info.name, dst, src, count, SizeOf(dt), dt, info.dts);
    PrefetchAhead(static_cast<uint64_t>(count) * SizeOf(dt));
    WithTypeIn<Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) { UnaryTyped<decltype(tag)>(opId, dst, src, count); });
}

void VecDuplicate(Ty t, const TensorDesc& dst, const void* value, int64_t count)
{
    const char* op = "Duplicate";
    CheckCount(count, op);
    CheckDtype(t.dt, op, {Dt::I16, Dt::U16, Dt::F16, Dt::BF16, Dt::I32, Dt::U32, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    if (count <= 0) return;
    PrefetchAhead(static_cast<uint64_t>(count) * t.size);
    // One element, then doubling copies of what is already filled.
    uint8_t* p = Ptr(dst);
    const size_t total = static_cast<size_t>(count) * t.size;
    std::memcpy(p, value, t.size);
    for (size_t done = t.size; done < total;) {
        const size_t n = done < total - done ? done : total - done;
        std::memcpy(p + done, p, n);
        done += n;
    }
}

void VecBinaryMask(BinOp opId, Ty t, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, LaneMask mask,
                   uint8_t repeatTime, const BinaryRepeatParams& p)
{
    const BinInfo& info = InfoOf(opId);
    CheckDtype(t.dt, info.name, info.dts);
    const std::vector<bool> on = Lanes(mask, t.size, info.name);
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const char code = info.code;
        MaskRepeat<T>(info.name, on, repeatTime, dst, p.dstBlkStride, p.dstRepStride, &a, p.src0BlkStride,
                      p.src0RepStride, &b, p.src1BlkStride, p.src1RepStride,
                      [code](const T& x, const T& y) { return Arith<T>(code, x, y); });
    });
}

void VecScalarMask(ScalarOp opId, Ty t, const TensorDesc& dst, const TensorDesc& src, const void* scalar, LaneMask mask,
                   uint8_t repeatTime, const UnaryRepeatParams& p)
{
    const BinInfo& info = InfoOf(opId);
    CheckDtype(t.dt, info.name, info.dts);
    const std::vector<bool> on = LanesFromCount(mask.count, t.size, info.name);
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const T s = Load<T>(static_cast<const uint8_t*>(scalar));
        const char code = info.code;
        MaskRepeat<T>(info.name, on, repeatTime, dst, p.dstBlkStride, p.dstRepStride, &src, p.srcBlkStride,
                      p.srcRepStride, nullptr, 0, 0, [code, s](const T& x, const T&) { return Arith<T>(code, x, s); });
    });
}

void VecUnaryMask(UnOp opId, Ty t, const TensorDesc& dst, const TensorDesc& src, LaneMask mask, uint8_t repeatTime,
                  const UnaryRepeatParams& p)
{
    const UnInfo& info = InfoOf(opId);
    CheckDtype(t.dt, info.name, info.dts);
    const std::vector<bool> on = LanesFromCount(mask.count, t.size, info.name);
    WithTypeIn<Dt::I32, Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        MaskRepeat<T>(info.name, on, repeatTime, dst, p.dstBlkStride, p.dstRepStride, &src, p.srcBlkStride,
                      p.srcRepStride, nullptr, 0, 0,
                      [opId](const T& v, const T&) { return FromD<T>(UnaryD(opId, ToD(v))); });
    });
}

void VecBrcb(Ty t, const TensorDesc& dst, const TensorDesc& src, uint8_t repeatTime, const BrcbRepeatParams& p)
{
    const char* op = "Brcb";
    CheckDtype(t.dt, op, {Dt::I16, Dt::U16, Dt::F16, Dt::BF16, Dt::I32, Dt::U32, Dt::F32});
    CheckUbAligned(dst, op, "dst");
    CheckUbAligned(src, op, "src");
    CheckOperand(src, op, "src", 8 * static_cast<int64_t>(repeatTime));
    const uint64_t epb = kBlock / t.size;
    uint8_t v[8];
    for (uint64_t r = 0; r < repeatTime; ++r) {
        for (uint64_t k = 0; k < 8; ++k) {
            ReadLocal(src, static_cast<uint32_t>(8 * r + k), t.size, v, "LocalTensor::GetValue");
            const uint64_t base = (r * p.dstRepStride + k * p.dstBlkStride) * kBlock;
            for (uint64_t e = 0; e < epb; ++e) {
                CheckLane(dst, base + e * t.size, t.size, op, "dst");
                std::memcpy(Ptr(dst) + base + e * t.size, v, t.size);
            }
        }
    }
}

// ---- fused runs (pypto_host_fuse.h) ---------------------------------------------------------
std::atomic<bool> g_fuse{true};
std::atomic<uint64_t> g_fusedRuns{0};  // runs taken fused since the library was loaded (for tests)
// What VecBinary / VecScalar / VecUnary / Cast would accept of each operand, without faulting (the
// calls run instead and fault when this says no), and distinct operands disjoint over their n
// elements.
bool FuseOperands(const TensorDesc* const* t, const uint32_t* elem, int k, int64_t n)
{
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");  // the region's target
    if (!avx2 || !g_fuse.load(std::memory_order_relaxed) || n < 0) return false;
    for (int i = 0; i < k; ++i) {
        const TensorDesc& d = *t[i];
        if (!d.ub || !IsLive(d) || d.addr % kBlock != 0 || n > static_cast<int64_t>(d.count)) return false;
        for (int j = 0; j < i; ++j) {
            const TensorDesc& e = *t[j];
            if (e.ub != d.ub) continue;
            const uint64_t a0 = d.addr, a1 = a0 + static_cast<uint64_t>(n) * elem[i];
            const uint64_t b0 = e.addr, b1 = b0 + static_cast<uint64_t>(n) * elem[j];
            if (n > 0 && a0 < b1 && b0 < a1) return false;
        }
    }
    g_fusedRuns.fetch_add(1, std::memory_order_relaxed);
    return true;
}
int FusePrefetchRanges(uint64_t bytes, const void** from, uint64_t* len, int max) { return TakePrefetch(bytes, from, len, max); }

}  // namespace detail
}  // namespace AscendC

extern "C" void pypto_host_set_fuse(int on) { AscendC::detail::g_fuse.store(on != 0); }
extern "C" uint64_t pypto_host_fused_runs() { return AscendC::detail::g_fusedRuns.load(); }
