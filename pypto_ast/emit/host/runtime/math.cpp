// runtime/math.cpp -- the high-level math APIs (pypto_host_math.h): Erf, Erfc, Atan, Sinh, Cosh,
// Asinh, Acosh, Atanh, Tan, Tanh, Asin, Acos and Power on half/float, each element computed in double with the C library
// and rounded once to the element type.
#include "runtime/internal.h"

namespace AscendC {
namespace detail {
namespace {

// Name and minimum sharedTmpBuffer size in 256-byte blocks, for float and for half inputs (the
// minValue of the API's GetXxxMaxMinTmpSize on A2).
struct MathInfo {
    const char* name;
    uint32_t floatBlocks;
    uint32_t halfBlocks;
};
const MathInfo& InfoOf(MathFn fn)
{
    static const MathInfo info[] = {{"Erf", 3, 8}, {"Erfc", 7, 16}, {"Atan", 5, 12}, {"Sinh", 1, 4},
                                    {"Cosh", 2, 6}, {"Asinh", 3, 3}, {"Acosh", 1, 2}, {"Atanh", 1, 4},
                                    {"Power", 5, 8}, {"Tan", 4, 10}, {"Tanh", 1, 4}, {"Asin", 2, 6}, {"Acos", 2, 6}};
    return info[static_cast<int>(fn)];
}

double Apply(MathFn fn, double x, double y)
{
    switch (fn) {
    case MathFn::Erf: return std::erf(x);
    case MathFn::Erfc: return std::erfc(x);
    case MathFn::Atan: return std::atan(x);
    case MathFn::Sinh: return std::sinh(x);
    case MathFn::Cosh: return std::cosh(x);
    case MathFn::Asinh: return std::asinh(x);
    case MathFn::Acosh: return std::acosh(x);
    case MathFn::Atanh: return std::atanh(x);
    case MathFn::Power: return std::pow(x, y);
    case MathFn::Tan: return std::tan(x);
    case MathFn::Tanh: return std::tanh(x);
    case MathFn::Asin: return std::asin(x);
    case MathFn::Acos: return std::acos(x);
    }
    return x;
}

// The API pages forbid any overlap of these two regions (even a complete one).
void CheckApart(const TensorDesc& a, uint64_t aBytes, const TensorDesc& b, uint64_t bBytes, const char* op,
                const char* what)
{
    if (a.ub != b.ub || aBytes == 0 || bBytes == 0) return;
    if (a.addr < b.addr + bBytes && b.addr < a.addr + aBytes) {
        std::ostringstream m;
        m << op << ": " << what << " overlap in UB ([" << a.addr << ", " << a.addr + aBytes << ") and [" << b.addr
          << ", " << b.addr + bBytes << ")); the API does not allow it";
        Fault(m.str());
    }
}
}  // namespace

void VecMath(MathFn fn, Dt dt, const TensorDesc& dst, const TensorDesc& src0, const TensorDesc* src1,
             const TensorDesc& sharedTmpBuffer, int64_t count)
{
    const MathInfo& info = InfoOf(fn);
    const char* op = info.name;
    CheckCount(count, op);
    CheckDtype(dt, op, {Dt::F16, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src0, op, "src", count);
    if (src1) CheckOperand(*src1, op, "src1", count);
    CheckUbAligned(sharedTmpBuffer, op, "sharedTmpBuffer");
    const uint64_t need = 256ull * (dt == Dt::F32 ? info.floatBlocks : info.halfBlocks);
    if (sharedTmpBuffer.count < need) {
        std::ostringstream m;
        m << op << ": sharedTmpBuffer holds " << sharedTmpBuffer.count << " bytes, the API needs at least " << need
          << " for " << DtName(dt) << " (its minimum temporary size)";
        Fault(m.str());
    }
    const uint64_t bytes = static_cast<uint64_t>(count) * (dt == Dt::F32 ? 4 : 2);
    CheckApart(dst, bytes, src0, bytes, op, "dst and src");
    if (src1) CheckApart(dst, bytes, *src1, bytes, op, "dst and src1");
    CheckApart(sharedTmpBuffer, need, dst, bytes, op, "sharedTmpBuffer and dst");
    CheckApart(sharedTmpBuffer, need, src0, bytes, op, "sharedTmpBuffer and src");
    if (src1) CheckApart(sharedTmpBuffer, need, *src1, bytes, op, "sharedTmpBuffer and src1");
    WithTypeIn<Dt::F16, Dt::F32>(dt, [&](auto tag) {
        using T = decltype(tag);
        uint8_t* d = Ptr(dst);
        const uint8_t* x = Ptr(src0);
        const uint8_t* y = src1 ? Ptr(*src1) : nullptr;
        for (int64_t i = 0; i < count; ++i) {
            const size_t o = static_cast<size_t>(i) * sizeof(T);
            const double b = y ? ToD(Load<T>(y + o)) : 0.0;
            Store<T>(d + o, FromD<T>(Apply(fn, ToD(Load<T>(x + o)), b)));
        }
    });
    std::memset(Ptr(sharedTmpBuffer), 0xFF, static_cast<size_t>(need));
}

}  // namespace detail
}  // namespace AscendC
