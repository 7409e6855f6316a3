// runtime/integer.cpp -- the bitwise vector ops of §6.2 (And, Or, Not on int16/uint16; ShiftLeft,
// ShiftRight by a scalar on int16/uint16/int32/uint32) and ascendc_assert.  The emitter composes
// every other integer op from these and the arithmetic of runtime/elementwise.cpp (see
// docs/semantics.md, "Integers").
#include "runtime/internal.h"

#include <cstdarg>

namespace pypto_host {
void AssertFailed(const char* expr, const char* fmt, ...)
{
    char text[512] = "";
    if (fmt != nullptr) {
        va_list args;
        va_start(args, fmt);
        std::vsnprintf(text, sizeof text, fmt, args);
        va_end(args);
    }
    Fault(std::string("ascendc_assert(") + expr + ") failed" + (text[0] ? std::string(": ") + text : std::string()));
}
}  // namespace pypto_host

namespace AscendC {
namespace detail {
namespace {
const DtList kBitwiseDts = {{Dt::I16, Dt::U16}, 2};
const DtList kShiftDts = {{Dt::I16, Dt::U16, Dt::I32, Dt::U32}, 4};

template <typename T, typename F> void Elementwise(uint8_t* d, const uint8_t* x, int64_t count, F f)
{
    for (int64_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        Store<T>(d + o, f(Load<T>(x + o), o));
    }
}
}  // namespace

void VecBitwise(BitOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, int64_t count)
{
    const char* op = opId == BitOp::And ? "And" : "Or";
    CheckCount(count, op);
    CheckDtype(dt, op, kBitwiseDts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(a, op, "src0", count);
    CheckOperand(b, op, "src1", count);
    CheckOverlap(dst, 2, a, 2, static_cast<uint64_t>(count), op);
    CheckOverlap(dst, 2, b, 2, static_cast<uint64_t>(count), op);
    const uint8_t* y = Ptr(b);
    const bool isAnd = opId == BitOp::And;
    Elementwise<uint16_t>(Ptr(dst), Ptr(a), count, [y, isAnd](uint16_t v, size_t o) {
        const uint16_t w = Load<uint16_t>(y + o);
        return static_cast<uint16_t>(isAnd ? (v & w) : (v | w));
    });
}

void VecNot(Dt dt, const TensorDesc& dst, const TensorDesc& src, int64_t count)
{
    const char* op = "Not";
    CheckCount(count, op);
    CheckDtype(dt, op, kBitwiseDts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src, op, "src", count);
    CheckOverlap(dst, 2, src, 2, static_cast<uint64_t>(count), op);
    Elementwise<uint16_t>(Ptr(dst), Ptr(src), count, [](uint16_t v, size_t) { return static_cast<uint16_t>(~v); });
}

void VecShift(bool left, Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* bits, int64_t count)
{
    const char* op = left ? "ShiftLeft" : "ShiftRight";
    CheckCount(count, op);
    CheckDtype(dt, op, kShiftDts);
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src, op, "src", count);
    const uint32_t e = dt == Dt::I16 || dt == Dt::U16 ? 2 : 4;
    CheckOverlap(dst, e, src, e, static_cast<uint64_t>(count), op);
    WithTypeIn<Dt::I16, Dt::U16, Dt::I32, Dt::U32>(dt, [&](auto tag) {
        using T = decltype(tag);
        using U = typename std::make_unsigned<T>::type;
        const int64_t k = static_cast<int64_t>(Load<T>(static_cast<const uint8_t*>(bits)));
        const int64_t width = 8 * static_cast<int64_t>(sizeof(T));
        if (k < 0 || k > width) {  // the API's range check (kernel_operator_vec_binary_scalar_impl.h)
            Fault(std::string(op) + ": shift amount " + std::to_string(k) + " outside [0, " + std::to_string(width) +
                  "] for " + DtName(dt));
        }
        Elementwise<T>(Ptr(dst), Ptr(src), count, [k, width, left](T v, size_t) {
            if (left) return k == width ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(v) << k));
            if (std::is_signed<T>::value) return static_cast<T>(v >> (k == width ? width - 1 : k));  // arithmetic
            return k == width ? T(0) : static_cast<T>(static_cast<U>(v) >> k);
        });
    });
}

}  // namespace detail
}  // namespace AscendC
