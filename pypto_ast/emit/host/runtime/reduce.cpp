// runtime/reduce.cpp -- AIV reductions, casts and selection (§6.3, §6.4, §6.5 of ascendc.md):
// WholeReduceSum/Max/Min, Cast, Compare/CompareScalar, Select, ReduceSum/Max/Min.
#include "runtime/fastfloat.h"

namespace AscendC {
namespace detail {
namespace {

template <typename T> T TreeSum(const uint8_t* p, uint32_t n)
{
    if (n == 1) return Load<T>(p);
    const uint32_t h = (n + 1) / 2;
    if (n - h == 0) return TreeSum<T>(p, h);
    return Arith<T>('+', TreeSum<T>(p, h), TreeSum<T>(p + static_cast<size_t>(h) * sizeof(T), n - h));
}
// ReduceMax / ReduceMin / WholeReduceMax / WholeReduceMin pick the element that Max / Min
// folded over the row would give (internal.h MaxD / MinD; ascendc.md is silent on NaN and
// signed zeros): a NaN anywhere gives NaN (the first one, for the index), otherwise the extreme
// with -0 < +0, at its first position.
// Does v replace `best` (the pick so far, from earlier positions)?
inline bool Beats(double v, double best, bool isMax)
{
    if (best != best) return false;
    if (v != v) return true;
    if (v == best) return std::signbit(v) != std::signbit(best) && std::signbit(isMax ? best : v);
    return isMax ? v > best : v < best;
}
// A float's bits as an int32 whose order is the float order, -0 < +0 (NaN excluded).
inline int32_t OrderKey(uint32_t bits)
{
    const int32_t k = static_cast<int32_t>(bits);
    return k ^ static_cast<int32_t>(static_cast<uint32_t>(k >> 31) >> 1);
}
// The first i < n whose float bits satisfy pred, n if none; 16 elements per vectorised step.
template <typename P> inline uint32_t FirstWhere(const uint8_t* p, uint32_t n, P pred)
{
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t b[16];
        std::memcpy(b, p + static_cast<size_t>(i) * 4, sizeof b);
        bool hit = false;
        for (int j = 0; j < 16; ++j) hit |= pred(b[j]);
        if (hit) break;
    }
    for (; i < n; ++i) {
        uint32_t b;
        std::memcpy(&b, p + static_cast<size_t>(i) * 4, sizeof b);
        if (pred(b)) return i;
    }
    return n;
}
// The index Beats picks for n >= 1 floats, in three vectorised passes: the first NaN, else the
// extreme order key, then its first position.
template <bool isMax> PYPTO_HOST_SIMD uint32_t FirstExtreme(const uint8_t* p, uint32_t n)
{
    const uint32_t nan = FirstWhere(p, n, [](uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; });
    if (nan < n) return nan;
    int32_t best = isMax ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t b;
        std::memcpy(&b, p + static_cast<size_t>(i) * 4, sizeof b);
        const int32_t k = OrderKey(b);
        best = (isMax ? k > best : k < best) ? k : best;
    }
    return FirstWhere(p, n, [best](uint32_t b) { return OrderKey(b) == best; });
}

// The bits of the value FirstExtreme's index holds, in one vectorised pass (no index wanted):
// the extreme order key (OrderKey is its own inverse), unless a NaN is present (then the first).
template <bool isMax> PYPTO_HOST_SIMD uint32_t ExtremeBitsByKey(const uint8_t* p, uint32_t n)
{
    // 16 running extremes side by side in two vectors (VI8: fastfloat.h), folded at the end.
    const int32_t start = isMax ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
    VI8 lane[2] = {start - VI8{}, start - VI8{}}, nans = VI8{};
    uint32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int h = 0; h < 2; ++h) {
            const VI8 b = reinterpret_cast<const VI8U*>(p + static_cast<size_t>(i) * 4)[h];
            nans |= (b & 0x7FFFFFFF) > 0x7F800000;
            const VI8 k = b ^ (VI8)((VU8)(b >> 31) >> 1);  // OrderKey (a vector cast: the same bits)
            lane[h] = isMax ? (k > lane[h] ? k : lane[h]) : (k < lane[h] ? k : lane[h]);
        }
    }
    int32_t best = start;
    uint32_t nan = 0;
    for (int h = 0; h < 2; ++h) {
        for (int j = 0; j < 8; ++j) {
            nan |= static_cast<uint32_t>(nans[j] != 0);
            best = isMax ? (lane[h][j] > best ? lane[h][j] : best) : (lane[h][j] < best ? lane[h][j] : best);
        }
    }
    for (; i < n; ++i) {
        uint32_t b;
        std::memcpy(&b, p + static_cast<size_t>(i) * 4, sizeof b);
        nan |= static_cast<uint32_t>((b & 0x7FFFFFFFu) > 0x7F800000u);
        const int32_t k = OrderKey(b);
        best = isMax ? (k > best ? k : best) : (k < best ? k : best);
    }
    if (nan) {
        uint32_t b;
        std::memcpy(&b, p + static_cast<size_t>(FirstExtreme<isMax>(p, n)) * 4, sizeof b);
        return b;
    }
    return static_cast<uint32_t>(OrderKey(static_cast<uint32_t>(best)));
}
// ExtremeBits in float compares: a running max (min) of 16 lanes is one vmaxps per 8 floats
// where the order keys take five integer operations, and a NaN flag one compare.  Float order
// is the keys' order but for NaN and the sign of zero; nonzero floats that compare equal have
// the same bits.  So the float pick is the answer unless the row holds a NaN or its extreme is
// a zero (-0 < +0 then decides): those rows, and rows under 16 floats, take the keys' pass.
template <bool isMax> PYPTO_HOST_SIMD uint32_t ExtremeBits(const uint8_t* p, uint32_t n)
{
    if (n < 16) return ExtremeBitsByKey<isMax>(p, n);
    VF8 lane[2] = {reinterpret_cast<const VF8UA*>(p)[0], reinterpret_cast<const VF8UA*>(p)[1]};
    VI8 nans = (lane[0] != lane[0]) | (lane[1] != lane[1]);
    uint32_t i = 16;
    for (; i + 16 <= n; i += 16) {
        for (int h = 0; h < 2; ++h) {
            const VF8 x = reinterpret_cast<const VF8UA*>(p + static_cast<size_t>(i) * 4)[h];
            nans |= x != x;
            lane[h] = isMax ? (x > lane[h] ? x : lane[h]) : (x < lane[h] ? x : lane[h]);
        }
    }
    float best = lane[0][0];
    bool nan = false;
    for (int j = 0; j < 8; ++j) nan |= nans[j] != 0;
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 8; ++j)
            best = isMax ? (lane[h][j] > best ? lane[h][j] : best) : (lane[h][j] < best ? lane[h][j] : best);
    for (; i < n; ++i) {
        float x;
        std::memcpy(&x, p + static_cast<size_t>(i) * 4, sizeof x);
        nan |= x != x;
        best = isMax ? (x > best ? x : best) : (x < best ? x : best);
    }
    if (nan || best == 0.0f) return ExtremeBitsByKey<isMax>(p, n);
    uint32_t bits;
    std::memcpy(&bits, &best, sizeof bits);
    return bits;
}

// ---- Cast (§6.3) --------------------------------------------------------------------------

pypto_host::fp::Rnd ToRnd(RoundMode m)
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
const char* RoundName(RoundMode m)
{
    static const char* n[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return n[static_cast<int>(m)];
}
// Allowed modes per (src, dst): bit 0 NONE, bit 1 R (RINT/FLOOR/CEIL/ROUND/TRUNC), bit 2 ODD.
int CastModes(Dt s, Dt d)
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
template <typename D> D CastValue(double x, pypto_host::fp::Rnd r, bool srcIsF32)
{
    using namespace pypto_host::fp;
    if constexpr (std::is_same<D, half>::value) {
        return half::FromBits(static_cast<uint16_t>(Encode(RoundTo(x, kHalf, r), kHalf)));
    } else if constexpr (std::is_same<D, bfloat16_t>::value) {
        return bfloat16_t::FromBits(static_cast<uint16_t>(Encode(RoundTo(x, kBf16, r), kBf16)));
    } else if constexpr (std::is_same<D, float>::value) {
        if (srcIsF32) {  // float -> float: round to an integral value, keeping the sign (of a zero too)
            if (std::isnan(x) || std::isinf(x)) return static_cast<float>(x);
            return static_cast<float>(std::copysign(RoundMag(std::fabs(x), x < 0, r), x));
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
// Element i of a tensor of dtype dt, as a double.
double LoadAsDouble(Dt dt, const uint8_t* p)
{
    double x = 0;
    WithType(dt, [&](auto tag) { x = ToD(Load<decltype(tag)>(p)); });
    return x;
}

// ---- Compare / Select (§6.4) --------------------------------------------------------------
void CheckCompare(const char* op, Ty t, CMPMODE mode, uint32_t count)
{
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32, Dt::I32});
    if (t.dt == Dt::I32 && mode != CMPMODE::EQ) Fault(std::string(op) + ": int32_t supports only CMPMODE::EQ on A2 (§6.4)");
    if ((static_cast<uint64_t>(count) * t.size) % kRepeat != 0) {
        std::ostringstream m;
        m << op << ": count " << count << " x " << t.size << " B is not a multiple of 256 bytes (§6.4); pad the tile";
        Fault(m.str());
    }
}
void CheckMaskTensor(const TensorDesc& m, uint32_t maskElem, const char* op, uint32_t count)
{
    CheckUbAligned(m, op, "mask");
    const uint64_t need = (static_cast<uint64_t>(count) + 7) / 8;
    if (static_cast<uint64_t>(m.count) * maskElem < need) {
        std::ostringstream s;
        s << op << ": mask tensor holds " << m.count * maskElem << " bytes, " << need << " needed for " << count << " elements";
        Fault(s.str());
    }
}

// The element loops of Compare and Select.  Every input arrives by value: a store through
// uint8_t* may alias anything, and captured references would be reloaded after each one.
template <typename T, typename Rhs, typename Cmp>
void CompareLoop(uint8_t* d, const uint8_t* a, uint32_t count, Rhs rhs, Cmp cmp)
{
    for (uint32_t i = 0; i < count; i += 8) {
        const uint32_t n = count - i < 8 ? count - i : 8;
        uint32_t byte = 0;
        for (uint32_t k = 0; k < n; ++k) {
            const size_t o = static_cast<size_t>(i + k) * sizeof(T);
            byte |= static_cast<uint32_t>(cmp(ToD(Load<T>(a + o)), rhs(o))) << k;
        }
        d[i / 8] = static_cast<uint8_t>(byte);
    }
}
template <typename T, typename Other>
void SelectLoop(uint8_t* d, const uint8_t* m, const uint8_t* a, uint32_t count, Other other)
{
    for (uint32_t i = 0; i < count; i += 8) {
        const uint32_t n = count - i < 8 ? count - i : 8;
        const uint32_t bits = m[i / 8];
        for (uint32_t k = 0; k < n; ++k) {
            const size_t o = static_cast<size_t>(i + k) * sizeof(T);
            Store<T>(d + o, ((bits >> k) & 1u) ? Load<T>(a + o) : other(o));
        }
    }
}

void CheckReduce(const char* op, Dt dt, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& work,
                 int32_t count, uint32_t dstNeed)
{
    CheckCount(count, op);
    CheckDtype(dt, op, {Dt::F16, Dt::F32});
    CheckOperand(src, op, "src", count);
    CheckOperand(dst, op, "dst", dstNeed);
    CheckUbAligned(work, op, "work");
}
// Values a cast to nearest met within kTieUlps fp32 steps of n + 0.5 (pypto_ast/rounding_ties.py,
// PTO114): counted over every block's thread, read and reset by pypto_host_rounding_ties.  A
// diagnostic only: nothing computed depends on it.
constexpr double kTieUlps = 8;
std::mutex g_tieLock;
uint64_t g_ties = 0;
double g_tieFirst[2] = {0, 0};

template <typename Rounded>
void NoteTies(Dt sdt, const uint8_t* src, uint32_t size, uint32_t count, Rounded rounded)
{
    uint64_t n = 0;
    uint32_t first = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const double x = LoadAsDouble(sdt, src + static_cast<size_t>(i) * size);
        if (!std::isfinite(x)) continue;
        const float a = std::fabs(static_cast<float>(x));
        const double ulp = static_cast<double>(std::nextafter(a, INFINITY)) - static_cast<double>(a);
        // near only where the window is well inside the half-unit (|x| < 2^18), as the interpreter
        if (kTieUlps * ulp < 0.25 && std::fabs(x - std::floor(x) - 0.5) <= kTieUlps * ulp && n++ == 0) first = i;
    }
    if (n == 0) return;
    std::lock_guard<std::mutex> hold(g_tieLock);
    if (g_ties == 0) {
        g_tieFirst[0] = LoadAsDouble(sdt, src + static_cast<size_t>(first) * size);
        g_tieFirst[1] = rounded(first);
    }
    g_ties += n;
}

}  // namespace

void VecWholeReduce(int kind, Ty t, const TensorDesc& dst, const TensorDesc& src, int32_t mask, int32_t repeatTime,
                    int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order)
{
    static const char* names[] = {"WholeReduceSum", "WholeReduceMax", "WholeReduceMin"};
    const char* op = names[kind];
    const std::vector<bool> on = LanesFromCount(static_cast<uint64_t>(mask), t.size, op);
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32});
    CheckUbAligned(dst, op, "dst");
    CheckUbAligned(src, op, "src");
    if (repeatTime < 0 || repeatTime > 255) Fault(std::string(op) + ": repeatTime outside [0, 255] (§1.3)");
    WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const uint32_t e = sizeof(T);
        for (int32_t r = 0; r < repeatTime; ++r) {
            std::vector<T> vals;
            std::vector<uint32_t> idx;
            for (uint64_t j = 0; j < on.size(); ++j) {
                if (!on[j]) continue;
                const uint64_t o = LaneByte(static_cast<uint64_t>(r), j, static_cast<uint64_t>(srcBlkStride),
                                            static_cast<uint64_t>(srcRepStride), e);
                CheckLane(src, o, e, op, "src");
                vals.push_back(Load<T>(Ptr(src) + o));
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
                const uint64_t o = static_cast<uint64_t>(r) * static_cast<uint64_t>(dstRepStride) * e;
                CheckLane(dst, o, e, op, "dst");
                // the sum starts from +0, as torch's does (ascendc.md is silent): a sum of -0s is +0
                Store<T>(Ptr(dst) + o, v.empty() ? T(0) : Arith<T>('+', v[0], T(0)));
                continue;
            }
            size_t best = 0;
            for (size_t i = 1; i < vals.size(); ++i) {
                if (Beats(ToD(vals[i]), ToD(vals[best]), kind == 1)) best = i;
            }
            T ix;
            std::memset(static_cast<void*>(&ix), 0, e);
            std::memcpy(static_cast<void*>(&ix), &idx[best], e < 4 ? e : 4);  // index as raw integer bits
            const bool both = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
            const uint64_t o = static_cast<uint64_t>(r) * static_cast<uint64_t>(dstRepStride) * e * (both ? 2 : 1);
            CheckLane(dst, o + (both ? e : 0), e, op, "dst");
            uint8_t* d = Ptr(dst);
            if (order == ReduceOrder::ORDER_VALUE_INDEX) { Store<T>(d + o, vals[best]); Store<T>(d + o + e, ix); }
            else if (order == ReduceOrder::ORDER_INDEX_VALUE) { Store<T>(d + o, ix); Store<T>(d + o + e, vals[best]); }
            else if (order == ReduceOrder::ORDER_ONLY_VALUE) Store<T>(d + o, vals[best]);
            else Store<T>(d + o, ix);
        }
    });
}

void VecCast(Ty d, Ty s, const TensorDesc& dst, const TensorDesc& src, RoundMode mode, uint32_t count)
{
    const char* op = "Cast";
    if (s.dt == Dt::I32 && d.dt == Dt::F16) {
        Fault("Cast int32_t -> half needs SetDeqScale on A2 and is not modelled; cast int32 -> float -> half (§6.3)");
    }
    const int modes = CastModes(s.dt, d.dt);
    const int want = mode == RoundMode::CAST_NONE ? 1 : mode == RoundMode::CAST_ODD ? 4 : 2;
    if (!(modes & want)) {
        std::ostringstream m;
        m << op << ": " << DtName(s.dt) << " -> " << DtName(d.dt) << " with RoundMode::" << RoundName(mode)
          << (modes ? " is not an allowed mode" : " is not a supported conversion") << " on A2 (§6.3 table)";
        Fault(m.str());
    }
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src, op, "src", count);
    CheckOverlap(dst, d.size, src, s.size, count, op);
    PrefetchAhead(static_cast<uint64_t>(count) * (d.size + s.size) / 2);
    const auto r = ToRnd(mode);
    if (s.dt == Dt::F32 && d.dt == Dt::F16 && r == pypto_host::fp::Rnd::NearestEven) return CastF32ToF16(Ptr(dst), Ptr(src), count);
    if (s.dt == Dt::F16 && d.dt == Dt::F32 && r == pypto_host::fp::Rnd::NearestEven) return CastF16ToF32(Ptr(dst), Ptr(src), count);
    if (s.dt == Dt::F32 && d.dt == Dt::BF16 && r == pypto_host::fp::Rnd::NearestEven) return CastF32ToBf16(Ptr(dst), Ptr(src), count);
    if (s.dt == Dt::BF16 && d.dt == Dt::F32) return CastBf16ToF32(Ptr(dst), Ptr(src), count);  // CAST_NONE only
    const bool toNearest = mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_ROUND;
    const bool floatSrc = s.dt == Dt::F32 || s.dt == Dt::F16 || s.dt == Dt::BF16;
    WithType(d.dt, [&](auto tag) {
        using T = decltype(tag);
        for (uint32_t i = 0; i < count; ++i) {
            const double x = LoadAsDouble(s.dt, Ptr(src) + static_cast<size_t>(i) * s.size);
            Store<T>(Ptr(dst) + static_cast<size_t>(i) * sizeof(T), CastValue<T>(x, r, s.dt == Dt::F32));
        }
        // to an integer (or an integral float) to nearest: note values at a tie (PTO114)
        constexpr bool halfOrBf = std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;
        if constexpr (!halfOrBf) {
            if (toNearest && floatSrc && (!std::is_same<T, float>::value || s.dt == Dt::F32)) {
                NoteTies(s.dt, Ptr(src), s.size, count, [&](uint32_t i) {
                    return static_cast<double>(Load<T>(Ptr(dst) + static_cast<size_t>(i) * sizeof(T)));
                });
            }
        }
    });
}

void VecCompare(Ty t, uint32_t maskElem, const TensorDesc& dst, const TensorDesc& src0, const TensorDesc* src1,
                const void* scalar, CMPMODE mode, uint32_t count)
{
    const char* op = src1 ? "Compare" : "CompareScalar";
    if (src1) CheckOperand(*src1, "Compare", "src1", count);
    CheckCompare(op, t, mode, count);
    CheckOperand(src0, op, "src0", count);
    CheckMaskTensor(dst, maskElem, op, count);
    WithTypeIn<Dt::I32, Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const uint8_t* a = Ptr(src0);
        uint8_t* d = Ptr(dst);
        // The mode and the right-hand side are chosen once, outside the element loop.
        auto with_mode = [&](auto rhs) {
            switch (mode) {
            case CMPMODE::LT: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x < y; });
            case CMPMODE::GT: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x > y; });
            case CMPMODE::EQ: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x == y; });
            case CMPMODE::LE: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x <= y; });
            case CMPMODE::GE: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x >= y; });
            case CMPMODE::NE: return CompareLoop<T>(d, a, count, rhs, [](double x, double y) { return x != y; });
            }
        };
        if (src1) {
            const uint8_t* b = Ptr(*src1);
            with_mode([b](size_t o) { return ToD(Load<T>(b + o)); });
        } else {
            const double s = ToD(Load<T>(static_cast<const uint8_t*>(scalar)));
            with_mode([s](size_t) { return s; });
        }
    });
}

void VecSelect(Ty t, uint32_t maskElem, const TensorDesc& dst, const TensorDesc& mask, const TensorDesc& src0,
               const TensorDesc* src1, const void* scalar, SELMODE mode, uint32_t count)
{
    const char* op = "Select";
    if (src1) CheckOperand(*src1, "Select", "src1", count);
    const SELMODE expected = src1 ? SELMODE::VSEL_TENSOR_TENSOR_MODE : SELMODE::VSEL_TENSOR_SCALAR_MODE;
    if (mode == SELMODE::VSEL_CMPMASK_SPR) Fault("Select: VSEL_CMPMASK_SPR (compare-register mask) is not modelled on the host; pass a mask tensor");
    if (mode != expected) Fault("Select: SELMODE does not match the overload (tensor src1 -> VSEL_TENSOR_TENSOR_MODE, scalar src1 -> VSEL_TENSOR_SCALAR_MODE, §6.4)");
    CheckDtype(t.dt, op, {Dt::F16, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    CheckOperand(src0, op, "src0", count);
    CheckMaskTensor(mask, maskElem, op, count);
    WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const uint8_t *m = Ptr(mask), *a = Ptr(src0);
        uint8_t* d = Ptr(dst);
        if (src1) {
            const uint8_t* b = Ptr(*src1);
            SelectLoop<T>(d, m, a, count, [b](size_t o) { return Load<T>(b + o); });
        } else {
            const T v = Load<T>(static_cast<const uint8_t*>(scalar));
            SelectLoop<T>(d, m, a, count, [v](size_t) { return v; });
        }
    });
}

void VecReduce(int kind, Ty t, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& work, int32_t count,
               bool calIndex)
{
    if (kind == 0) {
        CheckReduce("ReduceSum", t.dt, dst, src, work, count, 1);
        PrefetchAhead(static_cast<uint64_t>(count) * t.size);
        WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
            using T = decltype(tag);
            const uint32_t perRep = kRepeat / sizeof(T);
            T acc = T(0);
            uint32_t i = 0;
            if constexpr (std::is_same<T, float>::value) {  // the whole repeats first, side by side
                const uint32_t whole = static_cast<uint32_t>(count) / 64;
                float parts[64];
                for (uint32_t r0 = 0; r0 < whole; r0 += 64) {
                    const uint32_t m = whole - r0 < 64 ? whole - r0 : 64;
                    TreeSums64(Ptr(src) + static_cast<size_t>(r0) * 256, m, parts);
                    for (uint32_t r = 0; r < m; ++r) acc = r0 + r == 0 ? parts[r] : acc + parts[r];
                }
                i = whole * 64;
            }
            for (; i < static_cast<uint32_t>(count); i += perRep) {
                const uint32_t n = static_cast<uint32_t>(count) - i < perRep ? static_cast<uint32_t>(count) - i : perRep;
                const T part = TreeSum<T>(Ptr(src) + static_cast<size_t>(i) * sizeof(T), n);
                acc = i == 0 ? part : Arith<T>('+', acc, part);
            }
            Store<T>(Ptr(dst), Arith<T>('+', acc, T(0)));  // from +0: a sum of -0s is +0 (see WholeReduceSum)
        });
        return;
    }
    const bool isMax = kind == 1;
    const char* op = isMax ? "ReduceMax" : "ReduceMin";
    CheckReduce(op, t.dt, dst, src, work, count, calIndex ? 2 : 1);
    PrefetchAhead(static_cast<uint64_t>(count) * t.size);
    // §6.5: the first round stores (value, index) pairs: 2 * repeats elements rounded to a block.
    const uint32_t perRep = kRepeat / t.size, perBlk = kBlock / t.size;
    const uint32_t reps = (static_cast<uint32_t>(count) + perRep - 1) / perRep;
    const uint32_t need = (2 * (reps ? reps : 1) + perBlk - 1) / perBlk * perBlk;
    if (work.count < need) {
        std::ostringstream m;
        m << op << ": work tensor has " << work.count << " elements, needs at least " << need << " (§6.5)";
        Fault(m.str());
    }
    if (count == 0) return;
    WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
        using T = decltype(tag);
        const uint8_t* p = Ptr(src);
        uint32_t best = 0;
        if constexpr (std::is_same<T, float>::value) {
            if (!calIndex) {  // the value only: one pass
                const uint32_t n = static_cast<uint32_t>(count);
                Store<uint32_t>(Ptr(dst), isMax ? ExtremeBits<true>(p, n) : ExtremeBits<false>(p, n));
                return;
            }
            best = isMax ? FirstExtreme<true>(p, static_cast<uint32_t>(count)) : FirstExtreme<false>(p, static_cast<uint32_t>(count));
        } else {
            double bv = ToD(Load<T>(p));
            for (uint32_t i = 1; i < static_cast<uint32_t>(count); ++i) {
                const double v = ToD(Load<T>(p + static_cast<size_t>(i) * sizeof(T)));
                if (Beats(v, bv, isMax)) { bv = v; best = i; }
            }
        }
        Store<T>(Ptr(dst), Load<T>(p + static_cast<size_t>(best) * sizeof(T)));
        if (calIndex) {
            if (sizeof(T) == 2) {
                if (best > 65535) Fault(std::string(op) + ": index above 65535 cannot be returned for half (§6.5)");
                Store<uint16_t>(Ptr(dst) + sizeof(T), static_cast<uint16_t>(best));
            } else {
                Store<uint32_t>(Ptr(dst) + sizeof(T), best);
            }
        }
    });
}

}  // namespace detail
}  // namespace AscendC

// The ties noted since the last call (PTO114), and the first one's value and result in first[0..1].
extern "C" uint64_t pypto_host_rounding_ties(double* first)
{
    std::lock_guard<std::mutex> hold(AscendC::detail::g_tieLock);
    const uint64_t n = AscendC::detail::g_ties;
    first[0] = AscendC::detail::g_tieFirst[0];
    first[1] = AscendC::detail::g_tieFirst[1];
    AscendC::detail::g_ties = 0;
    return n;
}
