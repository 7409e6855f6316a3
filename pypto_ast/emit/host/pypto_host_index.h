// pypto_host_index.h -- host (CPU) implementation of the Ascend C calls that indexing, sorting
// and scans use (included by kernel_operator.h; emitted kernels include only kernel_operator.h).
// Declarations and thin wrappers only; the model itself is runtime/index.cpp.
//
// Written from /work/shared/reference/ascendc.md (§6.2 CreateVecIndex, §14 ascendc_assert) and
// the A2 lines of the open dev kit's API pages for Gather, Sort, Extract and CumSum (names,
// signatures and dtypes checked against its headers; no CANN code is used):
//
//   CreateVecIndex(dst, first, count)            dst[i] = first + i          int16 half int32 float
//   Gather(dst, src, offsets, base, count)       dst[i] = src[(base + offsets[i]) / sizeof(T)],
//                                                offsets in bytes (uint32)   int16 uint16 half bf16
//                                                                            int32 uint32 float
//   Sort<T, isFullSort>(dst, concat, index, tmp, repeatTime)                  half float
//       32 * repeatTime (score, index) pairs, 8 bytes each in dst (score in the low bytes, the
//       uint32 index in the high 4), sorted in descending score order -- all of them with
//       isFullSort, each run of 32 otherwise.  Equal scores keep their input order (the API
//       page: "if i > j, score[j] comes first"); -0 equals +0; where the page is silent the model
//       takes docs/semantics.md's rule: a NaN score sorts above +inf, NaNs in input order.
//       tmp must hold as many bytes as dst.
//   Extract(values, indices, sorted, repeatTime) the scores and indices of 32 * repeatTime pairs
//   CumSum<T, config>(dst, lastRow, src, tmp, {outter, inner})                half float
//       a running sum over the rows (config.isLastAxis false) or along each row (true) of an
//       outter x inner matrix, one addition after the other in T (the "line by line" algorithm,
//       the only one on A2); inner * sizeof(T) a multiple of 32; lastRow gets the last row
//       (first axis) or the last column (last axis) when config.outputLastRow.
//   ascendc_assert(cond, fmt, ...)               a kernel refusing its input: faults with the
//                                                formatted message (§14; the device prints it and
//                                                stops unless built with ASCENDC_DUMP=0)
#ifndef PYPTO_HOST_INDEX_H
#define PYPTO_HOST_INDEX_H

// ascendc_assert: kernel_operator.h (one definition, runtime/integer.cpp)

namespace AscendC {

enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};
};

namespace detail {
void VecCreateIndex(Ty t, const TensorDesc& dst, const void* first, uint32_t count);
void VecGather(Ty t, const TensorDesc& dst, const TensorDesc& src, const TensorDesc& offsets, uint32_t base,
               uint32_t count);
void VecSort(Ty t, bool full, const TensorDesc& dst, const TensorDesc& concat, const TensorDesc& index,
             const TensorDesc& tmp, int32_t repeatTime);
void VecExtract(Ty t, const TensorDesc& values, const TensorDesc& indices, const TensorDesc& sorted, int32_t repeatTime);
void VecCumSum(Ty t, bool lastAxis, bool lastRow, const TensorDesc& dst, const TensorDesc& lastRowDst,
               const TensorDesc& src, const TensorDesc& tmp, uint32_t outter, uint32_t inner);
}  // namespace detail

template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count)
{
    detail::VecCreateIndex(detail::TyOf<T>(), dst.d_, &firstValue, count);
}

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                              const uint32_t srcBaseAddr, const uint32_t count)
{
    detail::VecGather(detail::TyOf<T>(), dst.d_, src.d_, srcOffset.d_, srcBaseAddr, count);
}

template <typename T, bool isFullSort>
__aicore__ inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                            LocalTensor<T>& tmp, const int32_t repeatTime)
{
    detail::VecSort(detail::TyOf<T>(), isFullSort, dst.d_, concat.d_, index.d_, tmp.d_, repeatTime);
}

template <typename T>
__aicore__ inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex,
                               const LocalTensor<T>& sorted, const int32_t repeatTime)
{
    detail::VecExtract(detail::TyOf<T>(), dstValue.d_, dstIndex.d_, sorted.d_, repeatTime);
}

template <typename T, const CumSumConfig& config>
__aicore__ inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                              LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo)
{
    static_assert(config.algorithm == CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE,
                  "CumSum: the Sklansky algorithm is Ascend 950 only");
    detail::VecCumSum(detail::TyOf<T>(), config.isLastAxis, config.outputLastRow, dstTensor.d_, lastRowTensor.d_,
                      srcTensor.d_, sharedTmpBuffer.d_, cumSumInfo.outter, cumSumInfo.inner);
}

}  // namespace AscendC

#endif  // PYPTO_HOST_INDEX_H
