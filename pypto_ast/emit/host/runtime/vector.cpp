// runtime/vector.cpp -- AIV vector compute (§6 of ascendc.md): count forms with their fast
// float/half paths, mask/repeat forms, Duplicate, Brcb, WholeReduce, Cast, Compare, Select and
// the count-form reductions.  Every entry point checks its operands in the documented order,
// then dispatches on the element type once.
#include "runtime/internal.h"

namespace AscendC {
namespace detail {
namespace {

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
    case UnOp::Relu: return x > 0 ? x : 0.0;
    }
    return x;
}
// The same function on a chunk of floats v[0..m): exact for Abs/Sqrt/Reciprocal/Relu (single
// IEEE operations), ExpChunk for Exp, Ln/Rsqrt through double.
template <UnOp op> struct UnaryChunk {
    void operator()(F32A* v, int64_t m) const
    {
        if constexpr (op == UnOp::Exp) ExpChunk(v, m);
        else if constexpr (op == UnOp::Ln) { for (int64_t k = 0; k < m; ++k) v[k] = static_cast<float>(std::log(static_cast<double>(v[k]))); }
        else if constexpr (op == UnOp::Abs) { for (int64_t k = 0; k < m; ++k) v[k] = std::fabs(v[k]); }
        else if constexpr (op == UnOp::Sqrt) { for (int64_t k = 0; k < m; ++k) v[k] = std::sqrt(v[k]); }
        else if constexpr (op == UnOp::Rsqrt) { for (int64_t k = 0; k < m; ++k) v[k] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(v[k]))); }
        else if constexpr (op == UnOp::Reciprocal) { for (int64_t k = 0; k < m; ++k) v[k] = 1.0f / v[k]; }
        else { for (int64_t k = 0; k < m; ++k) v[k] = v[k] > 0 ? v[k] : 0.0f; }
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
            FastUnary<T>(d, x, count, [fs, f](F32A* v, int64_t m) { for (int64_t k = 0; k < m; ++k) v[k] = f(v[k], fs); });
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
    FastUnary<T>(Ptr(dst), Ptr(src), count, UnaryChunk<op>{});
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

template <typename T> T TreeSum(const uint8_t* p, uint32_t n)
{
    if (n == 1) return Load<T>(p);
    const uint32_t h = (n + 1) / 2;
    if (n - h == 0) return TreeSum<T>(p, h);
    return Arith<T>('+', TreeSum<T>(p, h), TreeSum<T>(p + static_cast<size_t>(h) * sizeof(T), n - h));
}
// Float ReduceSum of one repeat of 64 elements: the same binary tree as TreeSum (halves of a
// power of two = adjacent pairs, level by level), in float (= Arith<float>).
float TreeSum64(const uint8_t* p)
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
bool Cmp(CMPMODE m, double a, double b)
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

void CheckReduce(const char* op, Dt dt, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& work,
                 int32_t count, uint32_t dstNeed)
{
    CheckCount(count, op);
    CheckDtype(dt, op, {Dt::F16, Dt::F32});
    CheckOperand(src, op, "src", count);
    CheckOperand(dst, op, "dst", dstNeed);
    CheckUbAligned(work, op, "work");
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
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) { BinaryTyped<decltype(tag)>(info.code, dst, a, b, count); });
}

void VecScalar(ScalarOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& src, const void* scalar, int64_t count)
{
    const BinInfo& info = InfoOf(opId);
    CheckUnary(info.name, dst, src, count, SizeOf(dt), dt, info.dts);
    WithTypeIn<Dt::I16, Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) {
        using T = decltype(tag);
        ScalarTyped<T>(info.code, dst, src, Load<T>(static_cast<const uint8_t*>(scalar)), count);
    });
}

void VecUnary(UnOp opId, Dt dt, const TensorDesc& dst, const TensorDesc& src, int64_t count)
{
    const UnInfo& info = InfoOf(opId);
    CheckUnary(info.name, dst, src, count, SizeOf(dt), dt, info.dts);
    WithTypeIn<Dt::I32, Dt::F16, Dt::F32>(dt, [&](auto tag) { UnaryTyped<decltype(tag)>(opId, dst, src, count); });
}

void VecDuplicate(Ty t, const TensorDesc& dst, const void* value, int64_t count)
{
    const char* op = "Duplicate";
    CheckCount(count, op);
    CheckDtype(t.dt, op, {Dt::I16, Dt::U16, Dt::F16, Dt::BF16, Dt::I32, Dt::U32, Dt::F32});
    CheckOperand(dst, op, "dst", count);
    if (count <= 0) return;
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
                Store<T>(Ptr(dst) + o, v.empty() ? T(0) : v[0]);
                continue;
            }
            size_t best = 0;
            for (size_t i = 1; i < vals.size(); ++i) {
                const double a = ToD(vals[i]), b = ToD(vals[best]);
                if (kind == 1 ? a > b : a < b) best = i;
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
    const auto r = ToRnd(mode);
    if (s.dt == Dt::F32 && d.dt == Dt::F16 && r == pypto_host::fp::Rnd::NearestEven) return CastF32ToF16(Ptr(dst), Ptr(src), count);
    if (s.dt == Dt::F16 && d.dt == Dt::F32 && r == pypto_host::fp::Rnd::NearestEven) return CastF16ToF32(Ptr(dst), Ptr(src), count);
    WithType(d.dt, [&](auto tag) {
        using T = decltype(tag);
        for (uint32_t i = 0; i < count; ++i) {
            const double x = LoadAsDouble(s.dt, Ptr(src) + static_cast<size_t>(i) * s.size);
            Store<T>(Ptr(dst) + static_cast<size_t>(i) * sizeof(T), CastValue<T>(x, r, s.dt == Dt::F32));
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
        const double s = scalar ? ToD(Load<T>(static_cast<const uint8_t*>(scalar))) : 0.0;
        for (uint32_t i = 0; i < count; i += 8) {
            uint8_t byte = 0;
            for (uint32_t k = 0; k < 8 && i + k < count; ++k) {
                const size_t o = static_cast<size_t>(i + k) * sizeof(T);
                const double a = ToD(Load<T>(Ptr(src0) + o));
                const double b = src1 ? ToD(Load<T>(Ptr(*src1) + o)) : s;
                if (Cmp(mode, a, b)) byte = static_cast<uint8_t>(byte | (1u << k));
            }
            Ptr(dst)[i / 8] = byte;
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
    const uint8_t* other = src1 ? Ptr(*src1) : nullptr;
    for (uint32_t i = 0; i < count; ++i) {
        const bool bit = (Ptr(mask)[i / 8] >> (i % 8)) & 1u;
        const size_t o = static_cast<size_t>(i) * t.size;
        std::memcpy(Ptr(dst) + o, bit ? Ptr(src0) + o : (other ? other + o : static_cast<const uint8_t*>(scalar)), t.size);
    }
}

void VecReduce(int kind, Ty t, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& work, int32_t count,
               bool calIndex)
{
    if (kind == 0) {
        CheckReduce("ReduceSum", t.dt, dst, src, work, count, 1);
        WithTypeIn<Dt::F16, Dt::F32>(t.dt, [&](auto tag) {
            using T = decltype(tag);
            const uint32_t perRep = kRepeat / sizeof(T);
            T acc = T(0);
            for (uint32_t i = 0; i < static_cast<uint32_t>(count); i += perRep) {
                const uint32_t n = static_cast<uint32_t>(count) - i < perRep ? static_cast<uint32_t>(count) - i : perRep;
                if constexpr (std::is_same<T, float>::value) {
                    if (n == 64) {
                        const float part = TreeSum64(Ptr(src) + static_cast<size_t>(i) * sizeof(T));
                        acc = i == 0 ? part : acc + part;
                        continue;
                    }
                }
                const T part = TreeSum<T>(Ptr(src) + static_cast<size_t>(i) * sizeof(T), n);
                acc = i == 0 ? part : Arith<T>('+', acc, part);
            }
            Store<T>(Ptr(dst), acc);
        });
        return;
    }
    const bool isMax = kind == 1;
    const char* op = isMax ? "ReduceMax" : "ReduceMin";
    CheckReduce(op, t.dt, dst, src, work, count, calIndex ? 2 : 1);
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
            best = isMax ? FirstExtreme<true>(p, static_cast<uint32_t>(count)) : FirstExtreme<false>(p, static_cast<uint32_t>(count));
        } else {
            double bv = ToD(Load<T>(p));
            for (uint32_t i = 1; i < static_cast<uint32_t>(count); ++i) {
                const double v = ToD(Load<T>(p + static_cast<size_t>(i) * sizeof(T)));
                if (isMax ? v > bv : v < bv) { bv = v; best = i; }
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
