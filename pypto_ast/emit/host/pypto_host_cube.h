// pypto_host_cube.h -- host (CPU) implementation of the Ascend C cube subset (included by
// kernel_operator.h; emitted kernels include only kernel_operator.h).
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
// Errors: every misuse the device would turn into corruption or a hang throws
// pypto_host::HardwareFault (see kernel_operator.h).  Traffic: GM->L1 bytes are counted in
// Traffic().gmToUbBytes/gmToUbCalls, Fixpipe GM writes in ubToGmBytes/ubToGmCalls.
#ifndef PYPTO_HOST_CUBE_H
#define PYPTO_HOST_CUBE_H

#include <algorithm>
#include <utility>

// §10.2 Fixpipe quantisation modes (global enum as in CANN; QuantMode_t::X also works).
enum QuantMode_t : uint8_t {
    NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, REQ8, QF322B8_PRE, VQF322B8_PRE
};

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

// ---- pools ---------------------------------------------------------------------------------
enum class CubeMem : int { L1 = 0, L0A, L0B, L0C, BT, COUNT };
struct CubeMemInfo {
    const char* name;
    uint32_t size;
    uint32_t align;
};
inline const CubeMemInfo& InfoOf(CubeMem m)
{
    static const CubeMemInfo info[] = {{"L1", 512u * 1024u, 32}, {"L0A", 64u * 1024u, 512}, {"L0B", 64u * 1024u, 512},
                                       {"L0C", 128u * 1024u, 64}, {"BiasTable", 1024u, 64}};
    return info[static_cast<int>(m)];
}
inline const char* PosName(TPosition p)
{
    switch (p) {
    case TPosition::A1: return "A1";
    case TPosition::A2: return "A2";
    case TPosition::B1: return "B1";
    case TPosition::B2: return "B2";
    case TPosition::C1: return "C1";
    case TPosition::C2: return "C2";
    case TPosition::CO1: return "CO1";
    case TPosition::CO2: return "CO2";
    case TPosition::TSCM: return "TSCM";
    case TPosition::C2PIPE2GM: return "C2PIPE2GM";
    default: return "vector";
    }
}
inline CubeMem MemOfPosition(TPosition p, const char* op)
{
    switch (p) {
    case TPosition::A1: case TPosition::B1: case TPosition::C1: case TPosition::TSCM: return CubeMem::L1;
    case TPosition::A2: return CubeMem::L0A;
    case TPosition::B2: return CubeMem::L0B;
    case TPosition::CO1: return CubeMem::L0C;
    case TPosition::C2: return CubeMem::BT;
    default: break;
    }
    Fault(std::string(op) + ": TPosition " + PosName(p) +
          " is not modelled on the host (cube positions: A1/B1/C1/TSCM = L1, A2 = L0A, B2 = L0B, CO1 = L0C, C2 = BiasTable)");
}

struct CubePool {
    std::unique_ptr<uint8_t[]> mem;
    std::vector<uint8_t> written;  // one flag per 32-byte block
    uint32_t used = 0;
};

// Registry of the live pools of this thread (base pointer -> memory kind), so that a cube op
// can tell which memory a LocalTensor lives in.  The pools themselves belong to their TPipe.
struct CubeRegistryEntry {
    const uint8_t* base;
    CubeMem mem;
    CubePool* pool;
};
inline std::vector<CubeRegistryEntry>& CubeRegistry()
{
    static thread_local std::vector<CubeRegistryEntry> r;
    return r;
}

// Per-TPipe cube state (held by TPipe through a type-erased shared_ptr).
struct CubePools {
    CubePool pool[static_cast<int>(CubeMem::COUNT)];
    int perPos[16] = {};
    uint32_t buffers = 0;
    CubePools() = default;
    CubePools(const CubePools&) = delete;
    CubePools& operator=(const CubePools&) = delete;
    ~CubePools()
    {
        auto& reg = CubeRegistry();
        reg.erase(std::remove_if(reg.begin(), reg.end(),
                                 [this](const CubeRegistryEntry& e) {
                                     for (const CubePool& p : pool)
                                         if (p.mem && e.base == p.mem.get()) return true;
                                     return false;
                                 }),
                  reg.end());
    }
    CubePool& Get(CubeMem m)
    {
        CubePool& p = pool[static_cast<int>(m)];
        if (!p.mem) {
            const uint32_t size = InfoOf(m).size;
            p.mem.reset(new uint8_t[size]);
            std::memset(p.mem.get(), 0xFF, size);
            p.written.assign(size / kBlock, 0);
            CubeRegistry().push_back(CubeRegistryEntry{p.mem.get(), m, &p});
        }
        return p;
    }
    // Carve `num` buffers of `len` bytes, each starting on the memory's alignment.
    uint32_t Carve(TPosition pos, uint32_t num, uint32_t len, uint32_t* stride, const char* op)
    {
        const CubeMem m = MemOfPosition(pos, op);
        const CubeMemInfo& info = InfoOf(m);
        if (len == 0 || len % kBlock != 0) {
            Fault(std::string(op) + ": buffer length " + std::to_string(len) +
                  " bytes is not a positive multiple of 32 bytes (§5.1/§15.2)");
        }
        int& pp = perPos[static_cast<int>(pos) & 15];
        if (pp + static_cast<int>(num) > 8) {
            std::ostringstream msg;
            msg << op << ": " << pp + num << " queue buffers on TPosition " << PosName(pos) << "; at most 8 (§5.1)";
            Fault(msg.str());
        }
        if (buffers + num > 64) Fault(std::string(op) + ": more than 64 cube buffers in one kernel (§5.1)");
        CubePool& p = Get(m);
        const uint32_t st = (len + info.align - 1) / info.align * info.align;
        const uint64_t at = (static_cast<uint64_t>(p.used) + info.align - 1) / info.align * info.align;
        const uint64_t end = at + static_cast<uint64_t>(st) * (num - 1) + len;
        if (end > info.size) {
            std::ostringstream msg;
            msg << op << ": " << info.name << " overflow on TPosition " << PosName(pos) << ": " << p.used
                << " B already allocated + " << num << " x " << len << " B requested (start alignment " << info.align
                << " B) = " << end << " B > " << info.name << " size " << info.size << " B (§1.2)";
            Fault(msg.str());
        }
        p.used = static_cast<uint32_t>(end);
        pp += static_cast<int>(num);
        buffers += num;
        *stride = st;
        return static_cast<uint32_t>(at);
    }
};

inline CubePools& PoolsOf(std::shared_ptr<void>& holder)
{
    if (!holder) {
        CubePools* p = new CubePools();
        holder = std::shared_ptr<void>(p, [](void* q) { delete static_cast<CubePools*>(q); });
    }
    return *static_cast<CubePools*>(holder.get());
}

// Which cube memory a LocalTensor lives in (faults for UB / unbound tensors).
struct Where {
    CubeMem mem;
    CubePool* pool;
};
inline Where CubeWhere(const TensorDesc& d, const char* op, const char* which)
{
    if (!d.ub) Fault(std::string(op) + ": " + which + " LocalTensor is not bound to on-chip memory (never allocated)");
    CheckLive(d, op);
    for (const CubeRegistryEntry& e : CubeRegistry())
        if (e.base == d.ub) return Where{e.mem, e.pool};
    Fault(std::string(op) + ": " + which + " LocalTensor lives in the Unified Buffer (VECIN/VECOUT/VECCALC); "
          "this operand must be in a cube memory (L1/L0A/L0B/L0C/BiasTable)");
}
inline void NeedMem(const Where& w, std::initializer_list<CubeMem> allowed, const char* op, const char* which,
                    const char* expect)
{
    for (CubeMem m : allowed)
        if (m == w.mem) return;
    Fault(std::string(op) + ": " + which + " LocalTensor is in " + InfoOf(w.mem).name + ", expected " + expect);
}
inline void CheckAlign(const TensorDesc& d, uint32_t align, const char* op, const char* which, const Where& w)
{
    if (d.addr % align != 0) {
        std::ostringstream msg;
        msg << op << ": " << which << " address " << d.addr << " in " << InfoOf(w.mem).name << " is not " << align
            << "-byte aligned (§1.2)";
        Fault(msg.str());
    }
}
inline void CheckSpan(const TensorDesc& d, uint64_t relEnd, const char* op, const char* which, const Where& w)
{
    if (relEnd > d.capBytes) {
        std::ostringstream msg;
        msg << op << ": " << which << " access of " << relEnd << " bytes from the tensor start runs outside its "
            << InfoOf(w.mem).name << " buffer (" << d.capBytes << " bytes left in the buffer)";
        Fault(msg.str());
    }
}
inline void MarkWritten(const Where& w, const TensorDesc& d, uint64_t rel, uint64_t len)
{
    if (len == 0) return;
    const uint64_t a = d.addr + rel;
    for (uint64_t b = a / kBlock; b <= (a + len - 1) / kBlock; ++b) w.pool->written[b] = 1;
}
inline bool IsWritten(const Where& w, const TensorDesc& d, uint64_t rel, uint64_t len)
{
    const uint64_t a = d.addr + rel;
    for (uint64_t b = a / kBlock; b <= (a + len - 1) / kBlock; ++b)
        if (!w.pool->written[b]) return false;
    return true;
}
template <typename T> constexpr uint32_t C0Of() { return kBlock / static_cast<uint32_t>(sizeof(T)); }
inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

template <typename T> inline double CubeIn(const uint8_t* p) { return ToD(Load<T>(p)); }
}  // namespace detail

// Hooks called by TPipe::InitBuffer (found by argument-dependent lookup at instantiation).
template <TPosition pos, int32_t depth>
inline void PyptoHostCubeInitQueue(std::shared_ptr<void>& holder, TQue<pos, depth>& que, uint8_t num, uint32_t len)
{
    const char* op = "TPipe::InitBuffer(que)";
    detail::QueueCore& q = que.core_;
    if (q.initialised()) pypto_host::Fault(std::string(op) + ": this TQue was already initialised");
    if (num == 0) pypto_host::Fault(std::string(op) + ": num must be >= 1");
    detail::CubePools& pools = detail::PoolsOf(holder);
    uint32_t stride = 0;
    const uint32_t base = pools.Carve(pos, num, len, &stride, op);
    q.ub = pools.Get(detail::MemOfPosition(pos, op)).mem.get();
    q.len = len;
    q.bufs.assign(num, detail::QueueBuf{});
    for (uint32_t i = 0; i < num; ++i) q.bufs[i].addr = base + i * stride;
}
template <TPosition pos>
inline void PyptoHostCubeInitTBuf(std::shared_ptr<void>& holder, TBuf<pos>& buf, uint32_t len)
{
    const char* op = "TPipe::InitBuffer(tbuf)";
    if (buf.ub_) pypto_host::Fault(std::string(op) + ": this TBuf was already initialised");
    detail::CubePools& pools = detail::PoolsOf(holder);
    uint32_t stride = 0;
    buf.addr_ = pools.Carve(pos, 1, len, &stride, op);
    buf.ub_ = pools.Get(detail::MemOfPosition(pos, op)).mem.get();
    buf.len_ = len;
}


// ===========================================================================================
// §10.2 GM (ND) -> L1 (NZ):  DataCopy(l1, gm, Nd2NzParams{...}).
//   for i < ndNum, j < nValue, b < ceil(dValue / C0):
//     L1[dst + i*dstNzMatrixStride + (j*dstNzNStride + b*dstNzC0Stride)*C0 .. +C0)
//        = GM[src + i*srcNdMatrixStride + j*srcDValue + b*C0 ..], the last block of a row
//          zero-filled past dValue; rows beyond nValue are not written.
// ===========================================================================================
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p)
{
    using namespace detail;
    const char* op = "DataCopy(GM->L1, Nd2NzParams)";
    CheckDtype<T>(op, {Dt::I8, Dt::U8, Dt::F16, Dt::BF16, Dt::I16, Dt::U16, Dt::F32, Dt::I32, Dt::U32});
    const Where w = CubeWhere(dst.d_, op, "dst");
    NeedMem(w, {CubeMem::L1}, op, "dst", "L1 (A1/B1/C1)");
    CheckAlign(dst.d_, kBlock, op, "dst", w);
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
        Fault(std::string(op) + ": ndNum, nValue and dValue must be >= 1 (the device treats the copy as a NOP and "
              "the L1 tile keeps stale data)");
    }
    if (p.srcDValue == 0 || p.dstNzC0Stride == 0 || p.dstNzNStride == 0 || (p.ndNum > 1 && p.dstNzMatrixStride == 0)) {
        Fault(std::string(op) + ": srcDValue, dstNzC0Stride, dstNzNStride (and dstNzMatrixStride when ndNum > 1) must be >= 1");
    }
    if (p.nValue > 16384) Fault(std::string(op) + ": nValue " + std::to_string(p.nValue) + " > 16384");
    constexpr uint32_t c0 = C0Of<T>();
    const uint32_t blocks = CeilDiv(p.dValue, c0);
    // GM extent read and L1 extent written.
    const uint64_t srcEnd = (uint64_t(p.ndNum) - 1) * p.srcNdMatrixStride + (uint64_t(p.nValue) - 1) * p.srcDValue + p.dValue;
    src.CheckRange(0, srcEnd * sizeof(T), op);
    CheckGmAligned(src, op, GmAlign() ? GmAlign() : sizeof(T));
    uint64_t dstEndBlocks = 0;
    std::vector<uint64_t> seen;
    seen.reserve(uint64_t(p.ndNum) * p.nValue * blocks);
    for (uint32_t i = 0; i < p.ndNum; ++i)
        for (uint32_t j = 0; j < p.nValue; ++j)
            for (uint32_t b = 0; b < blocks; ++b) {
                const uint64_t byteOff = uint64_t(i) * p.dstNzMatrixStride * sizeof(T) +
                                         (uint64_t(j) * p.dstNzNStride + uint64_t(b) * p.dstNzC0Stride) * kBlock;
                seen.push_back(byteOff);
                dstEndBlocks = std::max<uint64_t>(dstEndBlocks, byteOff + kBlock);
            }
    CheckSpan(dst.d_, dstEndBlocks, op, "dst", w);
    std::sort(seen.begin(), seen.end());
    for (size_t i = 1; i < seen.size(); ++i)
        if (seen[i] < seen[i - 1] + kBlock) {
            Fault(std::string(op) + ": destination blocks overlap (dstNzC0Stride / dstNzNStride / dstNzMatrixStride "
                  "too small); the device gives no error and the write order is unspecified");
        }
    const uint8_t* s0 = src.Addr();
    uint8_t* d0 = dst.Ptr();
    for (uint32_t i = 0; i < p.ndNum; ++i)
        for (uint32_t j = 0; j < p.nValue; ++j) {
            const uint8_t* srow = s0 + (uint64_t(i) * p.srcNdMatrixStride + uint64_t(j) * p.srcDValue) * sizeof(T);
            for (uint32_t b = 0; b < blocks; ++b) {
                const uint64_t off = uint64_t(i) * p.dstNzMatrixStride * sizeof(T) +
                                     (uint64_t(j) * p.dstNzNStride + uint64_t(b) * p.dstNzC0Stride) * kBlock;
                const uint32_t nEl = std::min<uint32_t>(c0, p.dValue - b * c0);
                std::memcpy(d0 + off, srow + uint64_t(b) * c0 * sizeof(T), nEl * sizeof(T));
                if (nEl < c0) std::memset(d0 + off + nEl * sizeof(T), 0, (c0 - nEl) * sizeof(T));
                MarkWritten(w, dst.d_, off, kBlock);
            }
        }
    CountIn(uint64_t(p.ndNum) * p.nValue * p.dValue * sizeof(T));
}

// ===========================================================================================
// §10.2 L1 -> L0A / L0B:  LoadData(l0, l1, LoadData2DParams{...}).
//   for r < repeatTimes: dst fractal r*(1+dstGap) = src fractal startIndex + r*srcStride
//   (512-byte fractals), each transposed (16x16, 16-bit types only) when ifTranspose.
// ===========================================================================================
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p)
{
    using namespace detail;
    const char* op = "LoadData(LoadData2DParams)";
    CheckDtype<T>(op, {Dt::I8, Dt::U8, Dt::F16, Dt::BF16, Dt::I16, Dt::U16, Dt::F32, Dt::I32, Dt::U32});
    const Where wd = CubeWhere(dst.d_, op, "dst");
    const Where ws = CubeWhere(src.d_, op, "src");
    NeedMem(wd, {CubeMem::L0A, CubeMem::L0B}, op, "dst", "L0A (A2) or L0B (B2)");
    NeedMem(ws, {CubeMem::L1}, op, "src", "L1 (A1/B1)");
    CheckAlign(dst.d_, 512, op, "dst", wd);
    CheckAlign(src.d_, kBlock, op, "src", ws);
    if (p.repeatTimes == 0) Fault(std::string(op) + ": repeatTimes must be in [1, 255]");
    if (p.addrMode != 0) Fault(std::string(op) + ": addrMode other than 0 (increasing addresses) is not modelled");
    if (p.ifTranspose && sizeof(T) != 2) {
        Fault(std::string(op) + ": ifTranspose works on 16-bit types only (" + DtName(DtOf<T>()) +
              "); 32-bit / 8-bit transposes need LoadDataWithTranspose (§10.2)");
    }
    constexpr uint32_t kFrac = 512;
    const uint64_t srcEnd = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * kFrac;
    const uint64_t dstEnd = (uint64_t(p.repeatTimes - 1) * (1 + uint64_t(p.dstGap)) + 1) * kFrac;
    CheckSpan(src.d_, srcEnd, "LoadData: source fractal", "src", ws);
    CheckSpan(dst.d_, dstEnd, "LoadData: destination fractal", "dst", wd);
    uint8_t tmp[kFrac];
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        const uint64_t so = (uint64_t(p.startIndex) + uint64_t(r) * p.srcStride) * kFrac;
        const uint64_t dof = uint64_t(r) * (1 + uint64_t(p.dstGap)) * kFrac;
        const uint8_t* s = src.Ptr() + so;
        if (!p.ifTranspose) {
            std::memcpy(tmp, s, kFrac);
            for (uint32_t b = 0; b < kFrac / kBlock; ++b) {
                if (IsWritten(ws, src.d_, so + b * kBlock, kBlock)) MarkWritten(wd, dst.d_, dof + b * kBlock, kBlock);
                else wd.pool->written[(dst.d_.addr + dof) / kBlock + b] = 0;
            }
        } else {
            for (uint32_t i = 0; i < 16; ++i)
                for (uint32_t j = 0; j < 16; ++j) std::memcpy(tmp + (j * 16 + i) * 2, s + (i * 16 + j) * 2, 2);
            const bool all = IsWritten(ws, src.d_, so, kFrac);
            for (uint32_t b = 0; b < kFrac / kBlock; ++b) wd.pool->written[(dst.d_.addr + dof) / kBlock + b] = all ? 1 : 0;
        }
        std::memcpy(dst.Ptr() + dof, tmp, kFrac);
    }
}

// ===========================================================================================
// §10.2 Mmad: L0C (Nz, float/int32) = [L0C +] L0A (Zz) x L0B (Zn) [+ bias from BiasTable].
// ===========================================================================================
namespace detail {
template <typename T, typename U, typename S>
inline void MmadImpl(const LocalTensor<T>& c, const LocalTensor<U>& a, const LocalTensor<S>& b, const MmadParams& p,
                     const LocalTensor<T>* bias, const char* op)
{
    static_assert(std::is_same<U, S>::value, "Mmad: left and right operands must have the same dtype (§10.1)");
    const bool ok = (DtOf<T>() == Dt::F32 && (DtOf<U>() == Dt::F16 || DtOf<U>() == Dt::BF16 || DtOf<U>() == Dt::F32)) ||
                    (DtOf<T>() == Dt::I32 && DtOf<U>() == Dt::I8);
    if (!ok) {
        Fault(std::string(op) + ": dtype combination " + DtName(DtOf<U>()) + " x " + DtName(DtOf<S>()) + " -> " +
              DtName(DtOf<T>()) + " is not an A2 cube combination (half/bf16/float -> float, int8 -> int32; §10.1)");
    }
    const Where wc = CubeWhere(c.d_, op, "dst");
    const Where wa = CubeWhere(a.d_, op, "fm (left)");
    const Where wb = CubeWhere(b.d_, op, "filter (right)");
    NeedMem(wc, {CubeMem::L0C}, op, "dst", "L0C (CO1)");
    NeedMem(wa, {CubeMem::L0A}, op, "fm (left)", "L0A (A2)");
    NeedMem(wb, {CubeMem::L0B}, op, "filter (right)", "L0B (B2)");
    CheckAlign(c.d_, 64, op, "dst", wc);
    CheckAlign(a.d_, 512, op, "fm (left)", wa);
    CheckAlign(b.d_, 512, op, "filter (right)", wb);
    if (p.m == 0 || p.n == 0 || p.k == 0 || p.m > 4095 || p.n > 4095 || p.k > 4095) {
        Fault(std::string(op) + ": m, n, k must be in [1, 4095] (got m=" + std::to_string(p.m) + " n=" +
              std::to_string(p.n) + " k=" + std::to_string(p.k) + ")");
    }
    constexpr uint32_t c0 = C0Of<U>();
    const uint32_t M = CeilDiv(p.m, 16), N = CeilDiv(p.n, 16), K = CeilDiv(p.k, c0);
    const uint64_t aBytes = uint64_t(M) * K * 512, bBytes = uint64_t(K) * N * 512;
    const uint64_t cBytes = uint64_t(M) * N * 256 * sizeof(T);
    {
        std::ostringstream m;
        m << "Mmad(m=" << p.m << ", n=" << p.n << ", k=" << p.k << "): ";
        const std::string pre = m.str();
        CheckSpan(a.d_, aBytes, (pre + "left operand " + std::to_string(M) + "x" + std::to_string(K) + " fractals").c_str(), "L0A", wa);
        CheckSpan(b.d_, bBytes, (pre + "right operand " + std::to_string(K) + "x" + std::to_string(N) + " fractals").c_str(), "L0B", wb);
        CheckSpan(c.d_, cBytes, (pre + "result " + std::to_string(M) + "x" + std::to_string(N) + " fractals").c_str(), "L0C", wc);
        // Every operand element that reaches a valid output must have been loaded.
        for (uint32_t i = 0; i < p.m; ++i)
            for (uint32_t kf = 0; kf < K; ++kf)
                if (!IsWritten(wa, a.d_, (uint64_t(i / 16) * K + kf) * 512 + (i % 16) * kBlock, kBlock)) {
                    Fault(pre + "row " + std::to_string(i) + ", k-fractal " + std::to_string(kf) +
                          " of the left operand was never loaded into L0A (m/k larger than what LoadData moved, or "
                          "padding in L1 that no Nd2Nz wrote)");
                }
        for (uint32_t kf = 0; kf < K; ++kf)
            for (uint32_t j = 0; j < p.n; ++j)
                if (!IsWritten(wb, b.d_, (uint64_t(kf) * N + j / 16) * 512 + (j % 16) * kBlock, kBlock)) {
                    Fault(pre + "column " + std::to_string(j) + ", k-fractal " + std::to_string(kf) +
                          " of the right operand was never loaded into L0B (n/k larger than what LoadData moved, or "
                          "padding in L1 that no Nd2Nz wrote)");
                }
        if (!p.cmatrixInitVal && !p.cmatrixSource && !IsWritten(wc, c.d_, 0, cBytes)) {
            Fault(pre + "accumulates into L0C (cmatrixInitVal=false) that no earlier Mmad wrote");
        }
    }
    const bool fromBias = !p.cmatrixInitVal && p.cmatrixSource;
    if (fromBias && !bias) {
        Fault(std::string(op) + ": cmatrixSource=true (initial C from the BiasTable) needs the bias overload Mmad(c, a, b, bias, params)");
    }
    std::vector<double> biasVal(uint64_t(N) * 16, 0.0);
    if (fromBias) {
        const Where wbias = CubeWhere(bias->d_, op, "bias");
        NeedMem(wbias, {CubeMem::BT}, op, "bias", "the BiasTable (C2)");
        CheckSpan(bias->d_, uint64_t(N) * 16 * sizeof(T), (std::string(op) + ": bias of n rounded up to 16").c_str(), "bias", wbias);
        if (!IsWritten(wbias, bias->d_, 0, CeilDiv(p.n * sizeof(T), kBlock) * kBlock)) {
            Fault(std::string(op) + ": bias values for n=" + std::to_string(p.n) + " were never copied into the BiasTable");
        }
        for (uint32_t j = 0; j < N * 16; ++j) biasVal[j] = CubeIn<T>(bias->Ptr() + j * sizeof(T));
    }
    // Gather operands as doubles (A: [M*16][K*c0], B: [K*c0][N*16]).
    const uint32_t KK = K * c0;
    std::vector<double> A(uint64_t(M) * 16 * KK), B(uint64_t(KK) * N * 16);
    const uint8_t* pa = a.Ptr();
    const uint8_t* pb = b.Ptr();
    for (uint32_t i = 0; i < M * 16; ++i)
        for (uint32_t kk = 0; kk < KK; ++kk)
            A[uint64_t(i) * KK + kk] = CubeIn<U>(pa + ((uint64_t(i / 16) * K + kk / c0) * 512) + ((i % 16) * c0 + kk % c0) * sizeof(U));
    for (uint32_t kk = 0; kk < KK; ++kk)
        for (uint32_t j = 0; j < N * 16; ++j)
            B[uint64_t(kk) * N * 16 + j] = CubeIn<U>(pb + ((uint64_t(kk / c0) * N + j / 16) * 512) + ((j % 16) * c0 + kk % c0) * sizeof(U));
    uint8_t* pc = c.Ptr();
    for (uint32_t i = 0; i < M * 16; ++i)
        for (uint32_t j = 0; j < N * 16; ++j) {
            // Products of half/bf16 are exact in double; sum in double, round once to float.
            double acc = 0.0;
            const double* ar = &A[uint64_t(i) * KK];
            for (uint32_t kk = 0; kk < KK; ++kk) acc += ar[kk] * B[uint64_t(kk) * N * 16 + j];
            uint8_t* cp = pc + ((uint64_t(j / 16) * M + i / 16) * 256 + (i % 16) * 16 + j % 16) * sizeof(T);
            double init = 0.0;
            if (fromBias) init = biasVal[j];
            else if (!p.cmatrixInitVal) init = CubeIn<T>(cp);
            Store<T>(cp, FromD<T>(init + acc));
        }
    MarkWritten(wc, c.d_, 0, cBytes);
}
}  // namespace detail

template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const MmadParams& params)
{
    detail::MmadImpl(dst, fm, filter, params, static_cast<const LocalTensor<T>*>(nullptr), "Mmad");
}
// Bias overload: with cmatrixInitVal=false and cmatrixSource=true, C = bias (row broadcast) + A*B.
template <typename T, typename U, typename S, typename V>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const LocalTensor<V>& bias, const MmadParams& params)
{
    static_assert(std::is_same<T, V>::value, "Mmad: bias dtype must equal the L0C dtype (float / int32, §10.1)");
    detail::MmadImpl(dst, fm, filter, params, &bias, "Mmad(bias)");
}

// ===========================================================================================
// §10.2 Bias: L1 (C1) -> BiasTable (C2), DataCopyParams in 64-byte units on A2.
// ===========================================================================================
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p)
{
    using namespace detail;
    const char* op = "DataCopy(L1->BiasTable)";
    const Where wd = CubeWhere(dst.d_, op, "dst");
    const Where ws = CubeWhere(src.d_, op, "src");
    NeedMem(wd, {CubeMem::BT}, op, "dst", "the BiasTable (C2)");
    NeedMem(ws, {CubeMem::L1}, op, "src", "L1 (C1)");
    CheckAlign(dst.d_, 64, op, "dst", wd);
    CheckAlign(src.d_, kBlock, op, "src", ws);
    if (p.blockCount == 0 || p.blockLen == 0) Fault(std::string(op) + ": blockCount and blockLen must be >= 1");
    const uint64_t len = uint64_t(p.blockLen) * 64, ss = (uint64_t(p.blockLen) + p.srcStride) * 64,
                   ds = (uint64_t(p.blockLen) + p.dstStride) * 64;
    CheckSpan(src.d_, (p.blockCount - 1) * ss + len, op, "src", ws);
    CheckSpan(dst.d_, (p.blockCount - 1) * ds + len, op, "dst", wd);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        std::memcpy(dst.Ptr() + i * ds, src.Ptr() + i * ss, len);
        for (uint64_t o = 0; o < len; o += kBlock)
            wd.pool->written[(dst.d_.addr + i * ds + o) / kBlock] = IsWritten(ws, src.d_, i * ss + o, kBlock) ? 1 : 0;
    }
}

// ===========================================================================================
// §10.2 Fixpipe: L0C (Nz) -> GM (ND), valid [mSize, nSize] only, with quantPre.
//   GM[i*dstStride + j] = quant(L0C[((j/16)*srcStride + i)*16 + j%16])  (i < mSize, j < nSize)
// ===========================================================================================
template <typename T, typename U>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p)
{
    using namespace detail;
    const char* op = "Fixpipe(L0C->GM)";
    const Where ws = CubeWhere(src.d_, op, "src");
    NeedMem(ws, {CubeMem::L0C}, op, "src", "L0C (CO1)");
    CheckAlign(src.d_, 64, op, "src", ws);
    const Dt s = DtOf<U>(), d = DtOf<T>();
    bool ok = false;
    switch (p.quantPre) {
    case QuantMode_t::NoQuant: ok = (s == Dt::F32 && d == Dt::F32) || (s == Dt::I32 && d == Dt::I32); break;
    case QuantMode_t::F322F16: ok = s == Dt::F32 && d == Dt::F16; break;
    case QuantMode_t::F322BF16: ok = s == Dt::F32 && d == Dt::BF16; break;
    default:
        Fault(std::string(op) + ": quantPre " + std::to_string(static_cast<int>(p.quantPre)) +
              " is not modelled on the host (NoQuant, F322F16, F322BF16)");
    }
    if (!ok) {
        Fault(std::string(op) + ": quantPre " + std::to_string(static_cast<int>(p.quantPre)) + " does not convert " +
              DtName(s) + " (L0C) to " + DtName(d) + " (GM) (NoQuant: float->float / int32->int32, F322F16: "
              "float->half, F322BF16: float->bf16; §10.2)");
    }
    if (p.ndNum != 1) Fault(std::string(op) + ": ndNum other than 1 is not modelled on the host");
    if (p.nSize == 0 || p.mSize == 0) Fault(std::string(op) + ": nSize and mSize must be >= 1");
    if (p.mSize > 8192) Fault(std::string(op) + ": mSize > 8192 with NZ->ND (§10.2)");
    if (p.srcStride == 0) Fault(std::string(op) + ": srcStride must be >= 1 (m rounded up to 16)");
    const uint32_t nf = CeilDiv(p.nSize, 16);
    const uint64_t srcEnd = ((uint64_t(nf) - 1) * p.srcStride + p.mSize) * 16 * sizeof(U);
    CheckSpan(src.d_, srcEnd, "Fixpipe: L0C read (nSize, mSize, srcStride)", "src", ws);
    const uint64_t gmEnd = (uint64_t(p.mSize) - 1) * p.dstStride + p.nSize;
    dst.CheckRange(0, gmEnd * sizeof(T), op);
    CheckGmAligned(dst, op, GmAlign() ? GmAlign() : sizeof(T));
    const uint8_t* pc = src.Ptr();
    std::vector<uint8_t> row(uint64_t(p.nSize) * sizeof(T));
    for (uint32_t i = 0; i < p.mSize; ++i) {
        for (uint32_t j = 0; j < p.nSize; ++j) {
            const uint64_t off = ((uint64_t(j / 16) * p.srcStride + i) * 16 + j % 16) * sizeof(U);
            if (!IsWritten(ws, src.d_, off, sizeof(U))) {
                Fault(std::string(op) + ": L0C element (" + std::to_string(i) + ", " + std::to_string(j) +
                      ") was never written by Mmad (nSize/mSize/srcStride do not match the Mmad result)");
            }
            double v = CubeIn<U>(pc + off);
            if (p.reluEn && v < 0) v = 0;
            Store<T>(row.data() + uint64_t(j) * sizeof(T), FromD<T>(v));
        }
        StoreGm<T>(dst.Addr() + uint64_t(i) * p.dstStride * sizeof(T), row.data(), row.size());
    }
    CountOut(uint64_t(p.mSize) * p.nSize * sizeof(T));
}

}  // namespace AscendC

#endif  // PYPTO_HOST_CUBE_H
