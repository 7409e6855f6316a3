// pypto_host_cube.h -- host (CPU) implementation of the Ascend C cube subset (included by
// kernel_operator.h; emitted kernels include only kernel_operator.h).  Declarations and thin
// wrappers only; the model itself is runtime/cube.cpp.
//
// Written from /work/shared/reference/ascendc.md §1.2 (memories), §9 (sync) and §10 (cube);
// no CANN code is used.  Target: the AIC of an Atlas A2 (910B) core, low-level path (§10.2):
//
//     GM (ND) --DataCopy+Nd2NzParams--> L1 (NZ) --LoadData--> L0A (Zz) / L0B (Zn)
//           --Mmad--> L0C (Nz, float) --Fixpipe (NZ->ND, NoQuant | F322F16)--> GM (ND)
//     bias: GM --Nd2Nz--> L1 (C1) --DataCopy 64-byte units--> BiasTable (C2) --Mmad overload
//
// Memories.  TPipe::InitBuffer hands cube positions buffers from per-TPipe pools with the A2
// capacities and start alignments of §1.2 (L1 512 KiB / 32 B, L0A and L0B 64 KiB / 512 B,
// L0C 128 KiB / 64 B, BiasTable 1 KiB / 64 B).  Pools start as 0xFF poison (NaN in half and
// float) and every pool keeps a "written" flag per 32-byte block, so data that no DMA/Mmad
// produced is detected where it would reach a result (Mmad operands, Fixpipe source).
//
// Layouts (§10.1), fractal = 512 B = 16 rows x C0 columns, C0 = 32 B / sizeof(T):
//   NZ (L1):  fractals column-major, elements inside row-major; the Nd2Nz strides decide where
//             each row/column block lands, exactly as the parameters say.
//   Zz (L0A): Mmad reads fractal (mi, ki) at (mi * ceil(k/C0) + ki) * 512 B, row-major inside.
//   Zn (L0B): Mmad reads fractal (ki, ni) at (ki * ceil(n/16) + ni) * 512 B, column-major inside
//             (each 32-byte block = the C0 k-values of one column n).
//   Nz (L0C): fractal (mi, ni) of 16x16 float at (ni * ceil(m/16) + mi) * 1 KiB, row-major inside.
// Mmad multiplies whole fractals along K (k rounded up to C0): padding in K that is not zero
// (times finite) reaches valid outputs, as on the device.  Rows of A beyond m and columns of B
// beyond n only reach padded outputs, which Fixpipe never writes when nSize/mSize are right.
//
// Arithmetic (runtime/cube_dot.cpp; docs/design.md §17): each Mmad output is the sum over k of
// the products in double, in increasing k, plus the initial value, rounded once; register
// blocks for AVX-512 / AVX2 + FMA / the baseline, picked per CPU (knobs.host_cube), same bits.
//
// Errors: every misuse the device would turn into corruption or a hang throws
// pypto_host::HardwareFault (see kernel_operator.h).  Traffic: GM->L1 bytes are counted in
// Traffic().gmToUbBytes/gmToUbCalls, Fixpipe GM writes in ubToGmBytes/ubToGmCalls.
#ifndef PYPTO_HOST_CUBE_H
#define PYPTO_HOST_CUBE_H

namespace AscendC {

// ===========================================================================================
// §10.2 parameter structs (field order as in ascendc.md; aggregates with defaults).
// ===========================================================================================
struct Nd2NzParams {
    uint16_t ndNum = 0;
    uint16_t nValue = 0;             // rows
    uint16_t dValue = 0;             // columns (elements)
    uint16_t srcNdMatrixStride = 0;  // elements between ND matrices in GM
    uint16_t srcDValue = 0;          // GM row length (elements)
    uint16_t dstNzC0Stride = 0;      // C0 blocks between column blocks in L1 (rows padded to 16)
    uint16_t dstNzNStride = 0;       // C0 blocks between rows in L1
    uint16_t dstNzMatrixStride = 0;  // elements between NZ matrices in L1
};
struct LoadData2DParams {
    uint16_t startIndex = 0;   // first source fractal (512 B units)
    uint8_t repeatTimes = 0;   // fractals moved
    uint16_t srcStride = 0;    // start-to-start distance of source fractals (512 B units)
    uint8_t sid = 0;
    uint16_t dstGap = 0;       // gap between destination fractals (512 B units)
    bool ifTranspose = false;  // transpose each fractal (16-bit types)
    uint8_t addrMode = 0;
};
struct MmadParams {
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    uint8_t unitFlag = 0;
    bool cmatrixSource = false;  // initial C from the BiasTable (true) or L0C (false)
    bool cmatrixInitVal = true;  // true: C starts at 0 (C = A*B)
};
struct FixpipeParamsV220 {
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;  // rows between column fractals in L0C (m rounded up to 16)
    uint32_t dstStride = 0;  // GM row length (elements)
    bool reluEn = false;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    uint8_t unitFlag = 0;
};

namespace detail {
void CubeNd2Nz(Ty t, const TensorDesc& dst, const GmDesc& src, const Nd2NzParams& p);
void CubeLoadData(Ty t, const TensorDesc& dst, const TensorDesc& src, const LoadData2DParams& p);
void CubeMmad(Ty c, Ty ab, const TensorDesc& dst, const TensorDesc& a, const TensorDesc& b, const MmadParams& p,
              const TensorDesc* bias, const char* op);
void CubeL1ToBias(const TensorDesc& dst, const TensorDesc& src, const DataCopyParams& p);
void CubeFixpipe(Ty d, Ty s, const GmDesc& dst, const TensorDesc& src, const FixpipeParamsV220& p);
}  // namespace detail

// §10.2 GM (ND) -> L1 (NZ):  DataCopy(l1, gm, Nd2NzParams{...}).
//   for i < ndNum, j < nValue, b < ceil(dValue / C0):
//     L1[dst + i*dstNzMatrixStride + (j*dstNzNStride + b*dstNzC0Stride)*C0 .. +C0)
//        = GM[src + i*srcNdMatrixStride + j*srcDValue + b*C0 ..], the last block of a row
//          zero-filled past dValue; rows beyond nValue are not written.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p)
{
    detail::CubeNd2Nz(detail::TyOf<T>(), dst.d_, src.Desc(), p);
}

// §10.2 L1 -> L0A / L0B:  LoadData(l0, l1, LoadData2DParams{...}).
//   for r < repeatTimes: dst fractal r*(1+dstGap) = src fractal startIndex + r*srcStride
//   (512-byte fractals), each transposed (16x16, 16-bit types only) when ifTranspose.
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p)
{
    detail::CubeLoadData(detail::TyOf<T>(), dst.d_, src.d_, p);
}

// §10.2 Mmad: L0C (Nz, float/int32) = [L0C +] L0A (Zz) x L0B (Zn) [+ bias from BiasTable].
template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const MmadParams& params)
{
    static_assert(std::is_same<U, S>::value, "Mmad: left and right operands must have the same dtype (§10.1)");
    detail::CubeMmad(detail::TyOf<T>(), detail::TyOf<U>(), dst.d_, fm.d_, filter.d_, params, nullptr, "Mmad");
}
// Bias overload: with cmatrixInitVal=false and cmatrixSource=true, C = bias (row broadcast) + A*B.
template <typename T, typename U, typename S, typename V>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const LocalTensor<V>& bias, const MmadParams& params)
{
    static_assert(std::is_same<U, S>::value, "Mmad: left and right operands must have the same dtype (§10.1)");
    static_assert(std::is_same<T, V>::value, "Mmad: bias dtype must equal the L0C dtype (float / int32, §10.1)");
    detail::CubeMmad(detail::TyOf<T>(), detail::TyOf<U>(), dst.d_, fm.d_, filter.d_, params, &bias.d_, "Mmad(bias)");
}

// §10.2 Bias: L1 (C1) -> BiasTable (C2), DataCopyParams in 64-byte units on A2.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p)
{
    detail::CubeL1ToBias(dst.d_, src.d_, p);
}

// §10.2 Fixpipe: L0C (Nz) -> GM (ND), valid [mSize, nSize] only, with quantPre.
//   GM[i*dstStride + j] = quant(L0C[((j/16)*srcStride + i)*16 + j%16])  (i < mSize, j < nSize)
template <typename T, typename U>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p)
{
    detail::CubeFixpipe(detail::TyOf<T>(), detail::TyOf<U>(), dst.Desc(), src.d_, p);
}

}  // namespace AscendC

#endif  // PYPTO_HOST_CUBE_H
