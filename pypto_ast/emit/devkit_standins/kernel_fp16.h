// Stand-in for CANN's closed CPU-debug `kernel_fp16.h` (tikicpulib), written for pypto-ast's
// syntax check of emitted kernels against the real asc-devkit headers (pypto_ast/emit/realheaders.py).
// The devkit's CPU-debug branches use `half` as a class (`x.ToFloat()`), so it is one here:
// a float that only has to type-check, never to compute.
#ifndef PYPTO_STANDIN_KERNEL_FP16_H
#define PYPTO_STANDIN_KERNEL_FP16_H

struct PyptoStandinFloat16 {
    float v;
    PyptoStandinFloat16() = default;
    template <class T>
    constexpr PyptoStandinFloat16(T x) : v(static_cast<float>(x)) {}
    constexpr operator float() const { return v; }
    constexpr float ToFloat() const { return v; }
};

struct half : PyptoStandinFloat16 {
    using PyptoStandinFloat16::PyptoStandinFloat16;
};

#endif
