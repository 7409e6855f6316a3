// runtime/cube_dot.cpp -- the arithmetic of Mmad (the checks and the memories are cube.cpp's).
//
//   L0C (Nz) = init + L0A (Zz) x L0B (Zn),  init = 0, the bias row or L0C itself,
//
// every output the sum over k of the products in double, in increasing k (0 + p0 + p1 + ...),
// then init added and the result rounded once to the L0C type.  Every product of two int8,
// half, bf16 or float operands is exact in double, so a fused multiply-add gives the bits of a
// multiply then an add and the only roundings are the sums, in the same order whatever the ISA:
// the blocked kernels below give the bits of the naive triple loop.
//
// Per Mmad the operands are widened once into double panels: A row-major [R][KK] (R = rows
// rounded up to 16, KK = k rounded up to C0), B as panels of 16 columns [N][KK][16].  Each
// panel of C is then computed in register blocks held over the whole of k (8 x 16 doubles with
// AVX-512, 6 x 8 with AVX2 + FMA, 2 x 16 on the baseline) and rounded into a float L0C straight
// from the registers (an int32 L0C, and the baseline, through a [R][16] strip of doubles).  The
// ISA is the best the CPU has (cpuid) unless knobs.host_cube names one: the library stays
// portable, and the bits are the same on each.
#include "runtime/internal.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PYPTO_HOST_NO_CLONES)
#define PYPTO_HOST_CUBE_X86 1
#include <immintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace AscendC {
namespace detail {
namespace {

// ---- widening to double (exact) --------------------------------------------------------------
// Bit-level widenings the compiler vectorises; half goes through F16C where the CPU has it.
template <typename U, typename F>
inline void WidenLoop(const uint8_t* src, double* dst, uint32_t n, F widen)
{
    for (uint32_t i = 0; i < n; ++i) {
        U v;
        std::memcpy(&v, src + uint64_t(i) * sizeof(U), sizeof(U));
        dst[i] = widen(v);
    }
}

#if defined(PYPTO_HOST_CUBE_X86)
__attribute__((target("avx2,f16c"))) void WidenHalfF16c(const uint8_t* src, double* dst, uint32_t n)
{
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
        _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
    for (; i < n; ++i) dst[i] = pypto_host::fp::WidenHalf(Load<uint16_t>(src + 2 * i));
}
#endif
#if defined(PYPTO_HOST_CUBE_X86) && !defined(__clang__)
#define PYPTO_HOST_CUBE_WIDEN __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PYPTO_HOST_CUBE_WIDEN
#endif

// n elements of dtype dt at src (contiguous) -> n doubles at dst.
PYPTO_HOST_CUBE_WIDEN void WidenRun(Dt dt, const uint8_t* src, double* dst, uint32_t n)
{
    switch (dt) {
    case Dt::I8: WidenLoop<int8_t>(src, dst, n, [](int8_t v) { return static_cast<double>(v); }); break;
    case Dt::BF16:
        WidenLoop<uint16_t>(src, dst, n, [](uint16_t v) {
            const uint32_t u = uint32_t(v) << 16;
            float f;
            std::memcpy(&f, &u, 4);
            return static_cast<double>(f);
        });
        break;
    case Dt::F32: WidenLoop<float>(src, dst, n, [](float v) { return static_cast<double>(v); }); break;
    default:  // half
        WidenLoop<uint16_t>(src, dst, n, [](uint16_t v) { return pypto_host::fp::WidenHalf(v); });
        break;
    }
}

bool HaveF16c()
{
#if defined(PYPTO_HOST_CUBE_X86)
    static const bool ok = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
    return ok;
#else
    return false;
#endif
}

void Widen(Dt dt, const uint8_t* src, double* dst, uint32_t n)
{
#if defined(PYPTO_HOST_CUBE_X86)
    if (dt == Dt::F16 && HaveF16c()) return WidenHalfF16c(src, dst, n);
#endif
    WidenRun(dt, src, dst, n);
}

// ---- 16 x 16 transposes of 16-bit elements (L0B fractals; LoadData's ifTranspose) --------------
#if defined(__SSE2__)
// One 8 x 8 block: rows of 8 at s (stride ss elements) -> columns at d (stride ds).
inline void Transpose8x8u16(const uint16_t* s, uint32_t ss, uint16_t* d, uint32_t ds)
{
    __m128i a[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * ss));
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        t[2 * i + 1] = _mm_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h)  // rows 0-3, then 4-7
        for (int i = 0; i < 2; ++i) {
            u[4 * h + 2 * i] = _mm_unpacklo_epi32(t[4 * h + i], t[4 * h + i + 2]);
            u[4 * h + 2 * i + 1] = _mm_unpackhi_epi32(t[4 * h + i], t[4 * h + i + 2]);
        }
    for (int c = 0; c < 4; ++c) {  // u[c] and u[c + 4] hold columns 2c and 2c + 1 of rows 0-3 and 4-7
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * c) * ds), _mm_unpacklo_epi64(u[c], u[c + 4]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * c + 1) * ds), _mm_unpackhi_epi64(u[c], u[c + 4]));
    }
}
#endif

}  // namespace

void Transpose16x16u16(const uint8_t* src, uint8_t* dst)
{
#if defined(__SSE2__)
    const uint16_t* in = reinterpret_cast<const uint16_t*>(src);  // read and written by SSE2 loads /
    uint16_t* out = reinterpret_cast<uint16_t*>(dst);             // stores only (no aliasing issue)
    for (uint32_t bi = 0; bi < 16; bi += 8)
        for (uint32_t bj = 0; bj < 16; bj += 8) Transpose8x8u16(in + bi * 16 + bj, 16, out + bj * 16 + bi, 16);
#else
    uint16_t in[256], out[256];
    std::memcpy(in, src, sizeof(in));
    for (uint32_t i = 0; i < 16; ++i)
        for (uint32_t j = 0; j < 16; ++j) out[j * 16 + i] = in[i * 16 + j];
    std::memcpy(dst, out, sizeof(out));
#endif
}

namespace {

// ---- the register blocks ----------------------------------------------------------------------
// Each computes s[r][j] = sum over k < kk of a[r * lda + k] * b[k * 16 + j] for its rows and
// columns (b: one 16-column panel), accumulators starting at +0, k increasing, and hands the
// sums to its Block: as doubles (d, rows of 16), or rounded into float L0C rows (f, rows of 16)
// as f = float(init + s), init = f's own value, the bias row or 0 (MmadInit).
struct Block {
    double* d;
    float* f;
    MmadInit init;
    const double* bias;  // this block's first column
    Block At(uint32_t row, uint32_t col) const
    {
        const uint64_t o = uint64_t(row) * 16 + col;
        return Block{d ? d + o : nullptr, f ? f + o : nullptr, init, bias ? bias + col : nullptr};
    }
};

#if defined(PYPTO_HOST_CUBE_X86)
// AVX-512: 8 rows x 16 columns, 16 accumulators of 8 doubles (of 32 registers).
__attribute__((target("avx512f"), noinline)) void Dot8x16(const double* a, uint32_t lda, const double* b,
                                                            uint32_t kk, Block o)
{
    __m512d lo[8], hi[8];
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; ++r) lo[r] = hi[r] = _mm512_setzero_pd();
    for (const double* end = b + uint64_t(kk) * 16; b != end; b += 16, ++a) {  // kk >= 1
        const __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; ++r) {
            const __m512d x = _mm512_set1_pd(a[uint64_t(r) * lda]);
            lo[r] = _mm512_fmadd_pd(x, b0, lo[r]);
            hi[r] = _mm512_fmadd_pd(x, b1, hi[r]);
        }
    }
    if (!o.f) {
        _Pragma("GCC unroll 8") for (int r = 0; r < 8; ++r) {
            _mm512_storeu_pd(o.d + 16 * r, lo[r]);
            _mm512_storeu_pd(o.d + 16 * r + 8, hi[r]);
        }
        return;
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; ++r) {
        float* f = o.f + 16 * r;
        __m512d i0 = _mm512_setzero_pd(), i1 = i0;
        if (o.init == MmadInit::L0C) {
            i0 = _mm512_cvtps_pd(_mm256_loadu_ps(f));
            i1 = _mm512_cvtps_pd(_mm256_loadu_ps(f + 8));
        } else if (o.init == MmadInit::Bias) {
            i0 = _mm512_loadu_pd(o.bias);
            i1 = _mm512_loadu_pd(o.bias + 8);
        }
        _mm256_storeu_ps(f, _mm512_cvtpd_ps(_mm512_add_pd(i0, lo[r])));
        _mm256_storeu_ps(f + 8, _mm512_cvtpd_ps(_mm512_add_pd(i1, hi[r])));
    }
}

// AVX2 + FMA: MR (6, 4 or 2) rows x 8 columns, 2 * MR accumulators of 4 doubles (of 16).
template <int MR>
__attribute__((target("avx2,fma"), noinline)) void DotAvx2(const double* a, uint32_t lda, const double* b,
                                                             uint32_t kk, Block o)
{
    __m256d lo[MR], hi[MR];
    _Pragma("GCC unroll 8") for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_pd();
    for (const double* end = b + uint64_t(kk) * 16; b != end; b += 16, ++a) {  // kk >= 1
        const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; ++r) {
            const __m256d x = _mm256_broadcast_sd(a + uint64_t(r) * lda);
            lo[r] = _mm256_fmadd_pd(x, b0, lo[r]);
            hi[r] = _mm256_fmadd_pd(x, b1, hi[r]);
        }
    }
    if (!o.f) {
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; ++r) {
            _mm256_storeu_pd(o.d + 16 * r, lo[r]);
            _mm256_storeu_pd(o.d + 16 * r + 4, hi[r]);
        }
        return;
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < MR; ++r) {
        float* f = o.f + 16 * r;
        __m256d i0 = _mm256_setzero_pd(), i1 = i0;
        if (o.init == MmadInit::L0C) {
            i0 = _mm256_cvtps_pd(_mm_loadu_ps(f));
            i1 = _mm256_cvtps_pd(_mm_loadu_ps(f + 4));
        } else if (o.init == MmadInit::Bias) {
            i0 = _mm256_loadu_pd(o.bias);
            i1 = _mm256_loadu_pd(o.bias + 4);
        }
        _mm_storeu_ps(f, _mm256_cvtpd_ps(_mm256_add_pd(i0, lo[r])));
        _mm_storeu_ps(f + 4, _mm256_cvtpd_ps(_mm256_add_pd(i1, hi[r])));
    }
}

void PanelWide(const double* a, uint32_t lda, const double* panel, uint32_t rows, uint32_t kk, const Block& o)
{
    for (uint32_t i = 0; i < rows; i += 8) Dot8x16(a + uint64_t(i) * lda, lda, panel, kk, o.At(i, 0));
}

void PanelAvx2(const double* a, uint32_t lda, const double* panel, uint32_t rows, uint32_t kk, const Block& o)
{
    for (uint32_t half = 0; half < 16; half += 8) {
        uint32_t i = 0;
        for (; i + 6 <= rows; i += 6) DotAvx2<6>(a + uint64_t(i) * lda, lda, panel + half, kk, o.At(i, half));
        // rows is a multiple of 16, so 0, 2 or 4 rows are left
        if (rows - i == 4) DotAvx2<4>(a + uint64_t(i) * lda, lda, panel + half, kk, o.At(i, half));
        else if (rows - i == 2) DotAvx2<2>(a + uint64_t(i) * lda, lda, panel + half, kk, o.At(i, half));
    }
}
#endif

// The baseline: 2 rows x 16 columns in portable vectors (SSE2 on x86-64), multiply then add.
typedef double Vec4 __attribute__((vector_size(32), aligned(8)));
// Doubles only (o.d): the caller rounds them (StoreStrip).
void PanelBase(const double* a, uint32_t lda, const double* panel, uint32_t rows, uint32_t kk, const Block& o)
{
    double* out = o.d;
    for (uint32_t i = 0; i < rows; i += 2) {
        Vec4 c00 = {}, c01 = {}, c02 = {}, c03 = {}, c10 = {}, c11 = {}, c12 = {}, c13 = {};
        const double* a0 = a + uint64_t(i) * lda;
        const double* a1 = a0 + lda;
        const double* bp = panel;
        for (uint32_t k = 0; k < kk; ++k, bp += 16) {
            Vec4 b0, b1, b2, b3;
            std::memcpy(&b0, bp, 32);
            std::memcpy(&b1, bp + 4, 32);
            std::memcpy(&b2, bp + 8, 32);
            std::memcpy(&b3, bp + 12, 32);
            const double x0 = a0[k], x1 = a1[k];
            c00 += x0 * b0; c01 += x0 * b1; c02 += x0 * b2; c03 += x0 * b3;
            c10 += x1 * b0; c11 += x1 * b1; c12 += x1 * b2; c13 += x1 * b3;
        }
        double* r = out + uint64_t(i) * 16;
        std::memcpy(r, &c00, 32); std::memcpy(r + 4, &c01, 32); std::memcpy(r + 8, &c02, 32); std::memcpy(r + 12, &c03, 32);
        std::memcpy(r + 16, &c10, 32); std::memcpy(r + 20, &c11, 32); std::memcpy(r + 24, &c12, 32);
        std::memcpy(r + 28, &c13, 32);
    }
}

using PanelFn = void (*)(const double*, uint32_t, const double*, uint32_t, uint32_t, const Block&);

// The register blocks this CPU can run, best first: 2 = AVX-512, 1 = AVX2 + FMA, 0 = baseline.
int BestCubeIsa()
{
#if defined(PYPTO_HOST_CUBE_X86)
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    return 0;
}
// pypto_host_set_cube (knobs.host_cube): -1 = the best, else that ISA (for tests: the bits
// must not depend on it).
std::atomic<int> g_cubeIsa{-1};

PanelFn ChoosePanel()
{
    static const int best = BestCubeIsa();
    const int want = g_cubeIsa.load(std::memory_order_relaxed);
    const int isa = want < 0 ? best : want;
    if (isa > best) {
        throw std::runtime_error(std::string("PYPTO_AST_HOST_CUBE=") + (isa == 2 ? "avx512" : "avx2") +
                                 ": this CPU has no " + (isa == 2 ? "AVX-512F" : "AVX2 with FMA"));
    }
#if defined(PYPTO_HOST_CUBE_X86)
    if (isa == 2) return PanelWide;
    if (isa == 1) return PanelAvx2;
#endif
    return PanelBase;
}

// ---- rounding into L0C --------------------------------------------------------------------------
// One panel's strip of sums [rows][16] -> L0C rows of that panel (contiguous [rows][16] of T).
template <typename T>
void StoreStrip(uint8_t* c, const double* sums, uint32_t rows, MmadInit init, const double* bias)
{
    T* out = reinterpret_cast<T*>(c);  // L0C is 64-byte aligned (checked by the caller)
    const uint32_t n = rows * 16;
    switch (init) {
    case MmadInit::Zero:
        for (uint32_t i = 0; i < n; ++i) out[i] = FromD<T>(0.0 + sums[i]);
        break;
    case MmadInit::L0C:
        for (uint32_t i = 0; i < n; ++i) out[i] = FromD<T>(static_cast<double>(out[i]) + sums[i]);
        break;
    case MmadInit::Bias:
        for (uint32_t i = 0; i < n; ++i) out[i] = FromD<T>(bias[i % 16] + sums[i]);
        break;
    }
}

// Scratch of this thread, reused by every Mmad (no allocation per call).
struct DotScratch {
    std::vector<double> a, b, sums, frac;
};
DotScratch& Scratch()
{
    static thread_local DotScratch s;
    return s;
}
template <typename V> double* Sized(V& v, uint64_t n)
{
    if (v.size() < n) v.resize(n);
    return v.data();
}

}  // namespace

void CubeMmadArith(const MmadArith& m)
{
    const PanelFn panelFn = ChoosePanel();
    const uint32_t c0 = m.c0, R = m.M * 16, KK = m.K * c0;
    DotScratch& s = Scratch();
    double* A = Sized(s.a, uint64_t(R) * KK);
    double* B = Sized(s.b, uint64_t(KK) * m.N * 16);
    double* sums = Sized(s.sums, uint64_t(R) * 16);
    double* frac = Sized(s.frac, 16 * c0);
    // A: fractal (mi, kf) holds rows mi*16.. (one 32-byte row of C0 k-values each), row-major.
    for (uint32_t mi = 0; mi < m.M; ++mi)
        for (uint32_t kf = 0; kf < m.K; ++kf) {
            Widen(m.ab, m.a + (uint64_t(mi) * m.K + kf) * 512, frac, 16 * c0);
            for (uint32_t r = 0; r < 16; ++r)
                std::memcpy(A + (uint64_t(mi) * 16 + r) * KK + uint64_t(kf) * c0, frac + r * c0, c0 * sizeof(double));
        }
    // B: fractal (kf, ni) holds 16 columns of C0 k-values each; the panel wants rows of 16.
    // A fractal is a [C0][16] slice of its panel, transposed: 16-bit ones are transposed as they
    // are, then widened in place; the others (float, int8) widened, then transposed.
    for (uint32_t ni = 0; ni < m.N; ++ni)
        for (uint32_t kf = 0; kf < m.K; ++kf) {
            const uint8_t* src = m.b + (uint64_t(kf) * m.N + ni) * 512;
            double* panel = B + (uint64_t(ni) * KK + uint64_t(kf) * c0) * 16;
            if (c0 == 16) {
                uint8_t t[512];
                Transpose16x16u16(src, t);
                Widen(m.ab, t, panel, 256);
                continue;
            }
            Widen(m.ab, src, frac, 16 * c0);
            for (uint32_t e = 0; e < c0; ++e)
                for (uint32_t j = 0; j < 16; ++j) panel[e * 16 + j] = frac[j * c0 + e];
        }
    // float L0C straight from the registers where the ISA has a kernel; else a strip of doubles.
    const bool direct = m.cDt == Dt::F32 && panelFn != PanelBase;
    for (uint32_t ni = 0; ni < m.N; ++ni) {
        uint8_t* strip = m.c + uint64_t(ni) * R * 16 * 4;  // the panel's [R][16] of float / int32
        const double* bias = m.bias ? m.bias + uint64_t(ni) * 16 : nullptr;
        const double* panel = B + uint64_t(ni) * KK * 16;
        if (direct) {
            panelFn(A, KK, panel, R, KK, Block{nullptr, reinterpret_cast<float*>(strip), m.init, bias});
            continue;
        }
        panelFn(A, KK, panel, R, KK, Block{sums, nullptr, m.init, bias});
        if (m.cDt == Dt::I32) StoreStrip<int32_t>(strip, sums, R, m.init, bias);
        else StoreStrip<float>(strip, sums, R, m.init, bias);
    }
}

}  // namespace detail
}  // namespace AscendC

extern "C" void pypto_host_set_cube(int isa) { AscendC::detail::g_cubeIsa.store(isa < 0 ? -1 : isa); }
