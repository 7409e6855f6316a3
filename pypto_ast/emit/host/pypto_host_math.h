// pypto_host_math.h -- host (CPU) implementation of the high-level math APIs of Ascend C (CANN's
// adv_api: Erf, Erfc, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Tan, Tanh, Asin, Acos, Power) that pypto-ast's kernels call,
// in the form with a caller-provided sharedTmpBuffer and a count.  Included by kernel_operator.h, as
// CANN's kernel_operator.h includes the high-level API.  Written from the APIs' documented
// interfaces and constraints; no CANN code is used.  Implemented in runtime/math.cpp.
//
// Semantics: each element is the function computed in double and rounded once to T -- within one
// ulp of the exact value, with the C99 special values (erf(+-inf) = +-1, erfc(-inf) = 2,
// atan(+-inf) = +-pi/2, atanh(+-1) = +-inf, acosh(x < 1) = NaN, pow(x, 0) = 1, pow(1, y) = 1, a
// negative base only with an integral exponent ...).  The device computes these functions with
// approximations of its own: compare with a tolerance (docs/semantics.md, "Math functions").
//
// Checks, as the API pages state them for A2: T is half or float; 0 <= calCount <= the size of
// every operand; dst must not overlap a source at all (not even 100%), nor may sharedTmpBuffer
// overlap any operand; sharedTmpBuffer holds at least the API's minimum temporary size
// (GetXxxMaxMinTmpSize's minValue: a few 256-byte blocks per function and dtype).  The API may
// use all of sharedTmpBuffer: its minimum size reads as garbage (0xFF bytes) afterwards.
#ifndef PYPTO_HOST_MATH_H
#define PYPTO_HOST_MATH_H

namespace AscendC {
namespace detail {
enum class MathFn { Erf, Erfc, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Power, Tan, Tanh, Asin, Acos };
void VecMath(MathFn fn, Dt dt, const TensorDesc& dst, const TensorDesc& src0, const TensorDesc* src1,
             const TensorDesc& sharedTmpBuffer, int64_t count);
}  // namespace detail

#define PYPTO_MATH_UNARY(NAME)                                                                            \
    template <typename T, bool isReuseSource = false>                                                     \
    __aicore__ inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,         \
                                const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount)     \
    {                                                                                                     \
        detail::VecMath(detail::MathFn::NAME, detail::DtOf<T>(), dstTensor.d_, srcTensor.d_, nullptr,     \
                        sharedTmpBuffer.d_, calCount);                                                    \
    }
PYPTO_MATH_UNARY(Erf)
PYPTO_MATH_UNARY(Erfc)
PYPTO_MATH_UNARY(Atan)
PYPTO_MATH_UNARY(Sinh)
PYPTO_MATH_UNARY(Cosh)
PYPTO_MATH_UNARY(Asinh)
PYPTO_MATH_UNARY(Acosh)
PYPTO_MATH_UNARY(Atanh)
PYPTO_MATH_UNARY(Tan)
PYPTO_MATH_UNARY(Tanh)
PYPTO_MATH_UNARY(Asin)
PYPTO_MATH_UNARY(Acos)
#undef PYPTO_MATH_UNARY

// Power(dst, base, exponent, sharedTmpBuffer, calCount): dst[i] = base[i] ** exponent[i].
template <typename T, bool isReuseSource = false>
__aicore__ inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,
                             const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             uint32_t calCount)
{
    detail::VecMath(detail::MathFn::Power, detail::DtOf<T>(), dstTensor.d_, src0Tensor.d_, &src1Tensor.d_,
                    sharedTmpBuffer.d_, calCount);
}

}  // namespace AscendC

#endif  // PYPTO_HOST_MATH_H
