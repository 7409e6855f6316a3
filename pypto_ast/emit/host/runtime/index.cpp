// runtime/index.cpp -- the indexing, sorting and scan calls of pypto_host_index.h:
// CreateVecIndex, Gather, Sort, Extract, CumSum (ascendc_assert: runtime/integer.cpp).
#include "runtime/internal.h"

#include <cstdarg>


namespace AscendC {
namespace detail {
namespace {
// The UB bytes of two operands overlap (the APIs here forbid any overlap).
bool Overlap(const TensorDesc& a, uint64_t aBytes, const TensorDesc& b, uint64_t bBytes)
{
    return a.ub == b.ub && a.addr < b.addr + bBytes && b.addr < a.addr + aBytes;
}
void CheckNoOverlap(const char* op, const char* what, const TensorDesc& a, uint64_t aBytes, const TensorDesc& b,
                    uint64_t bBytes)
{
    if (Overlap(a, aBytes, b, bBytes)) Fault(std::string(op) + ": " + what + " overlap in UB (the API forbids it)");
}
void CheckRepeat(const char* op, int32_t repeatTime)
{
    if (repeatTime < 0 || repeatTime > 255) Fault(std::string(op) + ": repeatTime outside [0, 255]");
}
// Sort's order: does score a come before score b (descending; NaN above +inf; -0 = +0)?
// Equal scores are left to the stable sort (input order).
bool SortsBefore(double a, double b)
{
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
    return a > b;
}
}  // namespace

void VecCreateIndex(Ty t, const TensorDesc& dst, const void* first, uint32_t count)
{
    const char* op = "CreateVecIndex";
    CheckDtype(t.dt, op, {Dt::I16, Dt::F16, Dt::I32, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    WithTypeIn<Dt::I16, Dt::F16, Dt::I32, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const double f = ToD(Load<T>(static_cast<const uint8_t*>(first)));
        for (uint32_t i = 0; i < count; ++i) Store<T>(Ptr(dst) + static_cast<size_t>(i) * sizeof(T), FromD<T>(f + i));
    });
}

void VecGather(Ty t, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& offsets, uint32_t base,
               uint32_t count)
{
    const char* op = "Gather";
    CheckDtype(t.dt, op, {Dt::I16, Dt::U16, Dt::F16, Dt::BF16, Dt::I32, Dt::U32, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    CheckOperand(offsets, op, "srcOffset", count);
    CheckUbAligned(src, op, "src");
    CheckNoOverlap(op, "dst and src", dst, uint64_t(count) * t.size, src, uint64_t(src.count) * t.size);
    const uint8_t* o = Ptr(offsets);
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t at = uint64_t(base) + Load<uint32_t>(o + static_cast<size_t>(i) * 4);
        if (at % t.size != 0 || at + t.size > uint64_t(src.count) * t.size) {
            std::ostringstream m;
            m << op << ": element " << i << " reads byte " << at << " of a src of " << uint64_t(src.count) * t.size
              << " bytes" << (at % t.size ? " (not a multiple of the element size)" : "");
            Fault(m.str());
        }
        std::memcpy(Ptr(dst) + static_cast<size_t>(i) * t.size, Ptr(src) + at, t.size);
    }
}

void VecSort(Ty t, bool full, const TensorDesc& dst, const TensorDesc& concat, const TensorDesc& index,
             const TensorDesc& tmp, int32_t repeatTime)
{
    const char* op = "Sort";
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32});
    CheckRepeat(op, repeatTime);
    const uint32_t n = 32u * static_cast<uint32_t>(repeatTime);
    const uint64_t pairBytes = uint64_t(n) * 8;
    CheckOperand(concat, op, "concat", n);
    CheckOperand(index, op, "index", n);
    CheckOperand(dst, op, "dst", pairBytes / t.size);
    CheckOperand(tmp, op, "tmp", pairBytes / t.size);
    CheckNoOverlap(op, "dst and concat", dst, pairBytes, concat, uint64_t(n) * t.size);
    CheckNoOverlap(op, "dst and index", dst, pairBytes, index, uint64_t(n) * 4);
    CheckNoOverlap(op, "dst and tmp", dst, pairBytes, tmp, pairBytes);
    WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        std::vector<uint32_t> order(n);
        for (uint32_t i = 0; i < n; ++i) order[i] = i;
        auto score = [&](uint32_t i) { return ToD(Load<T>(Ptr(concat) + static_cast<size_t>(i) * sizeof(T))); };
        const uint32_t run = full ? (n ? n : 1) : 32;
        for (uint32_t s = 0; s < n; s += run) {
            std::stable_sort(order.begin() + s, order.begin() + s + run,
                             [&](uint32_t a, uint32_t b) { return SortsBefore(score(a), score(b)); });
        }
        std::vector<uint8_t> out(pairBytes, 0);
        for (uint32_t k = 0; k < n; ++k) {
            std::memcpy(&out[size_t(k) * 8], Ptr(concat) + static_cast<size_t>(order[k]) * sizeof(T), sizeof(T));
            std::memcpy(&out[size_t(k) * 8 + 4], Ptr(index) + static_cast<size_t>(order[k]) * 4, 4);
        }
        std::memset(Ptr(tmp), 0xFF, pairBytes);  // scratch: what it holds afterwards is unspecified
        std::memcpy(Ptr(dst), out.data(), pairBytes);
    });
}

void VecExtract(Ty t, const TensorDesc& values, const TensorDesc& indices, const TensorDesc& sorted, int32_t repeatTime)
{
    const char* op = "Extract";
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32});
    CheckRepeat(op, repeatTime);
    const uint32_t n = 32u * static_cast<uint32_t>(repeatTime);
    CheckOperand(values, op, "dstValue", n);
    CheckOperand(indices, op, "dstIndex", n);
    CheckOperand(sorted, op, "sorted", uint64_t(n) * 8 / t.size);
    CheckNoOverlap(op, "dstValue and sorted", values, uint64_t(n) * t.size, sorted, uint64_t(n) * 8);
    CheckNoOverlap(op, "dstIndex and sorted", indices, uint64_t(n) * 4, sorted, uint64_t(n) * 8);
    for (uint32_t k = 0; k < n; ++k) {
        std::memcpy(Ptr(values) + static_cast<size_t>(k) * t.size, Ptr(sorted) + size_t(k) * 8, t.size);
        std::memcpy(Ptr(indices) + static_cast<size_t>(k) * 4, Ptr(sorted) + size_t(k) * 8 + 4, 4);
    }
}

void VecCumSum(Ty t, bool lastAxis, bool lastRow, const TensorDesc& dst, const TensorDesc& lastRowDst,
               const TensorDesc& src, const TensorDesc& tmp, uint32_t outter, uint32_t inner)
{
    const char* op = "CumSum";
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32});
    if (outter == 0 || inner == 0) Fault(std::string(op) + ": cumSumInfo.outter and inner must be > 0");
    if (uint64_t(inner) * t.size % kBlock != 0) {
        Fault(std::string(op) + ": cumSumInfo.inner * sizeof(T) = " + std::to_string(uint64_t(inner) * t.size) +
              " is not a multiple of 32 bytes");
    }
    const uint64_t total = uint64_t(outter) * inner;
    CheckOperand(src, op, "srcTensor", static_cast<int64_t>(total));
    CheckOperand(dst, op, "dstTensor", static_cast<int64_t>(total));
    CheckUbAligned(tmp, op, "sharedTmpBuffer");
    if (lastRow) CheckOperand(lastRowDst, op, "lastRowTensor", lastAxis ? outter : inner);
    CheckOverlap(dst, t.size, src, t.size, total, op);
    WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        auto at = [&](const TensorDesc& d, uint64_t i) { return Ptr(d) + i * sizeof(T); };
        for (uint32_t a = 0; a < (lastAxis ? outter : inner); ++a) {  // each row (last axis) or column
            T acc = T(0);
            for (uint32_t b = 0; b < (lastAxis ? inner : outter); ++b) {
                const uint64_t i = lastAxis ? uint64_t(a) * inner + b : uint64_t(b) * inner + a;
                const T x = Load<T>(at(src, i));
                acc = b == 0 ? x : Arith<T>('+', acc, x);
                Store<T>(at(dst, i), acc);
            }
            if (lastRow) Store<T>(at(lastRowDst, a), acc);
        }
    });
}

}  // namespace detail
}  // namespace AscendC
