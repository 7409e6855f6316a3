// runtime/cube.cpp -- the AIC cube subset (§10 of ascendc.md): per-TPipe L1/L0A/L0B/L0C/
// BiasTable pools with written-block tracking, Nd2Nz, LoadData, Mmad, the L1 -> BiasTable
// copy and Fixpipe.  See pypto_host_cube.h for layouts and the contract.
#include "runtime/internal.h"

namespace AscendC {
namespace detail {
namespace {

// ---- pools ---------------------------------------------------------------------------------
enum class CubeMem : int { L1 = 0, L0A, L0B, L0C, BT, COUNT };
struct CubeMemInfo {
    const char* name;
    uint32_t size;
    uint32_t align;
};
const CubeMemInfo& InfoOf(CubeMem m)
{
    static const CubeMemInfo info[] = {{"L1", 512u * 1024u, 32}, {"L0A", 64u * 1024u, 512}, {"L0B", 64u * 1024u, 512},
                                       {"L0C", 128u * 1024u, 64}, {"BiasTable", 1024u, 64}};
    return info[static_cast<int>(m)];
}
const char* PosName(TPosition p)
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
CubeMem MemOfPosition(TPosition p, const char* op)
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

// One memory of each kind per thread, reused by every TPipe of that thread (one TPipe per
// kernel, one kernel per thread at a time): allocating and poisoning 770 KiB of cube memory
// per block cost more than most matmuls.
struct CubeMemory {
    std::unique_ptr<uint8_t[]> mem;
    std::vector<uint8_t> written;  // one flag per 32-byte block
};
CubeMemory& ThreadMemory(CubeMem m)
{
    static thread_local CubeMemory memories[static_cast<int>(CubeMem::COUNT)];
    CubeMemory& c = memories[static_cast<int>(m)];
    if (!c.mem) {
        const uint32_t size = InfoOf(m).size;
        c.mem.reset(new uint8_t[size]);
        c.written.assign(size / kBlock, 0);
    }
    return c;
}
struct CubePool {
    uint8_t* mem = nullptr;
    std::vector<uint8_t>* writtenFlags = nullptr;
    uint32_t used = 0;
    std::vector<uint8_t>& written() const { return *writtenFlags; }
};

// Registry of the live pools of this thread (base pointer -> memory kind), so that a cube op
// can tell which memory a LocalTensor lives in.  The pools themselves belong to their TPipe.
struct CubeRegistryEntry {
    const uint8_t* base;
    CubeMem mem;
    CubePool* pool;
};
std::vector<CubeRegistryEntry>& CubeRegistry()
{
    static thread_local std::vector<CubeRegistryEntry> r;
    return r;
}

// Per-TPipe cube state (held by the TPipe as an opaque pointer).
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
                                         if (p.mem && e.base == p.mem) return true;
                                     return false;
                                 }),
                  reg.end());
    }
    CubePool& Get(CubeMem m)
    {
        CubePool& p = pool[static_cast<int>(m)];
        if (!p.mem) {
            CubeMemory& c = ThreadMemory(m);
            p.mem = c.mem.get();
            p.writtenFlags = &c.written;
            CubeRegistry().push_back(CubeRegistryEntry{p.mem, m, &p});
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
        // The memory reads as 0xFF and as never written until something writes it.  Only
        // carved bytes are reachable through a tensor, so resetting them here is the same as
        // a fresh memory per TPipe.
        std::memset(p.mem + p.used, 0xFF, end - p.used);
        std::fill(p.written().begin() + p.used / kBlock, p.written().begin() + (end + kBlock - 1) / kBlock, 0);
        p.used = static_cast<uint32_t>(end);
        pp += static_cast<int>(num);
        buffers += num;
        *stride = st;
        return static_cast<uint32_t>(at);
    }
};

CubePools& PoolsOf(void*& holder)
{
    if (!holder) holder = new CubePools();
    return *static_cast<CubePools*>(holder);
}

// Which cube memory a LocalTensor lives in (faults for UB / unbound tensors).
struct Where {
    CubeMem mem;
    CubePool* pool;
};
Where CubeWhere(const TensorDesc& d, const char* op, const char* which)
{
    if (!d.ub) Fault(std::string(op) + ": " + which + " LocalTensor is not bound to on-chip memory (never allocated)");
    CheckLive(d, op);
    for (const CubeRegistryEntry& e : CubeRegistry())
        if (e.base == d.ub) return Where{e.mem, e.pool};
    Fault(std::string(op) + ": " + which + " LocalTensor lives in the Unified Buffer (VECIN/VECOUT/VECCALC); "
          "this operand must be in a cube memory (L1/L0A/L0B/L0C/BiasTable)");
}
void NeedMem(const Where& w, std::initializer_list<CubeMem> allowed, const char* op, const char* which,
             const char* expect)
{
    for (CubeMem m : allowed)
        if (m == w.mem) return;
    Fault(std::string(op) + ": " + which + " LocalTensor is in " + InfoOf(w.mem).name + ", expected " + expect);
}
void CheckAlign(const TensorDesc& d, uint32_t align, const char* op, const char* which, const Where& w)
{
    if (d.addr % align != 0) {
        std::ostringstream msg;
        msg << op << ": " << which << " address " << d.addr << " in " << InfoOf(w.mem).name << " is not " << align
            << "-byte aligned (§1.2)";
        Fault(msg.str());
    }
}
void CheckSpan(const TensorDesc& d, uint64_t relEnd, const char* op, const char* which, const Where& w)
{
    if (relEnd > d.capBytes) {
        std::ostringstream msg;
        msg << op << ": " << which << " access of " << relEnd << " bytes from the tensor start runs outside its "
            << InfoOf(w.mem).name << " buffer (" << d.capBytes << " bytes left in the buffer)";
        Fault(msg.str());
    }
}
void MarkWritten(const Where& w, const TensorDesc& d, uint64_t rel, uint64_t len)
{
    if (len == 0) return;
    const uint64_t a = d.addr + rel, first = a / kBlock, last = (a + len - 1) / kBlock;
    std::memset(w.pool->written().data() + first, 1, last - first + 1);
}
bool IsWritten(const Where& w, const TensorDesc& d, uint64_t rel, uint64_t len)
{
    if (len == 0) return true;
    const uint64_t a = d.addr + rel, first = a / kBlock, last = (a + len - 1) / kBlock;
    return std::memchr(w.pool->written().data() + first, 0, last - first + 1) == nullptr;
}
uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
constexpr std::initializer_list<Dt> kCubeCopyDts = {Dt::I8, Dt::U8, Dt::F16, Dt::BF16, Dt::I16, Dt::U16,
                                                    Dt::F32, Dt::I32, Dt::U32};

template <typename T> double CubeIn(const uint8_t* p) { return ToD(Load<T>(p)); }
double CubeInAs(Dt dt, const uint8_t* p)
{
    double x = 0;
    WithTypeIn<Dt::I8, Dt::I32, Dt::F16, Dt::BF16, Dt::F32>(dt, [&](auto tag) { x = CubeIn<decltype(tag)>(p); });
    return x;
}
}  // namespace

// Hooks called by TPipe::InitBuffer for cube positions (runtime/core.cpp).
void CubeInitQueue(void*& holder, QueueCore& q, uint8_t num, uint32_t len)
{
    const char* op = "TPipe::InitBuffer(que)";
    if (q.initialised()) pypto_host::Fault(std::string(op) + ": this TQue was already initialised");
    if (num == 0) pypto_host::Fault(std::string(op) + ": num must be >= 1");
    CubePools& pools = PoolsOf(holder);
    uint32_t stride = 0;
    const uint32_t base = pools.Carve(q.pos, num, len, &stride, op);
    q.ub = pools.Get(MemOfPosition(q.pos, op)).mem;
    q.len = len;
    q.nbufs = num;
    for (uint32_t i = 0; i < num; ++i) q.bufs[i] = QueueBuf{base + i * stride, BufState::Free, 0};
}
void CubeInitTBuf(void*& holder, TPosition pos, uint8_t*& ub, uint32_t& addr, uint32_t& len, uint32_t bytes)
{
    const char* op = "TPipe::InitBuffer(tbuf)";
    if (ub) pypto_host::Fault(std::string(op) + ": this TBuf was already initialised");
    CubePools& pools = PoolsOf(holder);
    uint32_t stride = 0;
    addr = pools.Carve(pos, 1, bytes, &stride, op);
    ub = pools.Get(MemOfPosition(pos, op)).mem;
    len = bytes;
}
void CubeDestroyPools(void* pools) { delete static_cast<CubePools*>(pools); }

// ===========================================================================================
// §10.2 GM (ND) -> L1 (NZ).
// ===========================================================================================
void CubeNd2Nz(Ty t, const TensorDesc& dst, const GmDesc& src, const Nd2NzParams& p)
{
    const char* op = "DataCopy(GM->L1, Nd2NzParams)";
    CheckDtype(t.dt, op, kCubeCopyDts);
    const Where w = CubeWhere(dst, op, "dst");
    NeedMem(w, {CubeMem::L1}, op, "dst", "L1 (A1/B1/C1)");
    CheckAlign(dst, kBlock, op, "dst", w);
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
        Fault(std::string(op) + ": ndNum, nValue and dValue must be >= 1 (the device treats the copy as a NOP and "
              "the L1 tile keeps stale data)");
    }
    if (p.srcDValue == 0 || p.dstNzC0Stride == 0 || p.dstNzNStride == 0 || (p.ndNum > 1 && p.dstNzMatrixStride == 0)) {
        Fault(std::string(op) + ": srcDValue, dstNzC0Stride, dstNzNStride (and dstNzMatrixStride when ndNum > 1) must be >= 1");
    }
    if (p.nValue > 16384) Fault(std::string(op) + ": nValue " + std::to_string(p.nValue) + " > 16384");
    const uint32_t e = t.size;
    const uint32_t c0 = kBlock / e;
    const uint32_t blocks = CeilDiv(p.dValue, c0);
    // GM extent read and L1 extent written.
    const uint64_t srcEnd = (uint64_t(p.ndNum) - 1) * p.srcNdMatrixStride + (uint64_t(p.nValue) - 1) * p.srcDValue + p.dValue;
    CheckGmRange(src, 0, srcEnd * e, op);
    CheckGmAligned(src, op, GmAlign() ? GmAlign() : e);
    // Destination blocks (32-byte units) of matrix i, row j, column block b:
    // i * dstNzMatrixStride * e + (j * dstNzNStride + b * dstNzC0Stride) * 32.
    const uint64_t ns = p.dstNzNStride, cs = p.dstNzC0Stride, ms = uint64_t(p.dstNzMatrixStride) * e;
    const uint64_t span = ((p.nValue - 1) * ns + (blocks - 1) * cs + 1) * kBlock;  // one matrix
    CheckSpan(dst, (p.ndNum - 1) * ms + span, op, "dst", w);
    // No two blocks of a matrix meet when the column blocks' row ranges are apart (or each
    // row's blocks), nor two matrices when each starts past the one before; else compare all.
    const bool apart = (cs > (p.nValue - 1) * ns || ns > (blocks - 1) * cs) && (p.ndNum == 1 || ms >= span);
    if (!apart) {
        std::vector<uint64_t> seen;
        seen.reserve(uint64_t(p.ndNum) * p.nValue * blocks);
        for (uint32_t i = 0; i < p.ndNum; ++i)
            for (uint32_t j = 0; j < p.nValue; ++j)
                for (uint32_t b = 0; b < blocks; ++b) seen.push_back(i * ms + (j * ns + b * cs) * kBlock);
        std::sort(seen.begin(), seen.end());
        for (size_t i = 1; i < seen.size(); ++i)
            if (seen[i] < seen[i - 1] + kBlock) {
                Fault(std::string(op) + ": destination blocks overlap (dstNzC0Stride / dstNzNStride / dstNzMatrixStride "
                      "too small); the device gives no error and the write order is unspecified");
            }
    }
    const uint8_t* s0 = Addr(src);
    uint8_t* d0 = Ptr(dst);
    constexpr uint32_t kAhead = 4;
    const uint32_t full = p.dValue / c0;  // whole 32-byte blocks of a row; then a zero-filled tail
    const uint32_t tail = p.dValue - full * c0;
    uint8_t* flags = w.pool->written().data() + dst.addr / kBlock;
    for (uint32_t i = 0; i < p.ndNum; ++i)
        for (uint32_t j = 0; j < p.nValue; ++j) {
            const uint8_t* srow = s0 + (uint64_t(i) * p.srcNdMatrixStride + uint64_t(j) * p.srcDValue) * e;
            if (j + kAhead < p.nValue)  // GM rows lie far apart: fetch one a few rows ahead
                for (uint32_t o = 0; o < p.dValue * e; o += 64) __builtin_prefetch(srow + uint64_t(kAhead) * p.srcDValue * e + o);
            const uint64_t rowOff = i * ms + j * ns * kBlock;
            for (uint32_t b = 0; b < blocks; ++b) {
                const uint64_t off = rowOff + b * cs * kBlock;
                if (b < full) {
                    std::memcpy(d0 + off, srow + uint64_t(b) * kBlock, kBlock);
                } else {
                    std::memcpy(d0 + off, srow + uint64_t(b) * kBlock, tail * e);
                    std::memset(d0 + off + tail * e, 0, (c0 - tail) * e);
                }
                if (off % kBlock == 0) flags[off / kBlock] = 1;  // dst is 32-byte aligned
                else MarkWritten(w, dst, off, kBlock);
            }
        }
    CountIn(uint64_t(p.ndNum) * p.nValue * p.dValue * e);
}

// ===========================================================================================
// §10.2 L1 -> L0A / L0B.
// ===========================================================================================
void CubeLoadData(Ty t, const TensorDesc& dst, const TensorDesc& src, const LoadData2DParams& p)
{
    const char* op = "LoadData(LoadData2DParams)";
    CheckDtype(t.dt, op, kCubeCopyDts);
    const Where wd = CubeWhere(dst, op, "dst");
    const Where ws = CubeWhere(src, op, "src");
    NeedMem(wd, {CubeMem::L0A, CubeMem::L0B}, op, "dst", "L0A (A2) or L0B (B2)");
    NeedMem(ws, {CubeMem::L1}, op, "src", "L1 (A1/B1)");
    CheckAlign(dst, 512, op, "dst", wd);
    CheckAlign(src, kBlock, op, "src", ws);
    if (p.repeatTimes == 0) Fault(std::string(op) + ": repeatTimes must be in [1, 255]");
    if (p.addrMode != 0) Fault(std::string(op) + ": addrMode other than 0 (increasing addresses) is not modelled");
    if (p.ifTranspose && t.size != 2) {
        Fault(std::string(op) + ": ifTranspose works on 16-bit types only (" + DtName(t.dt) +
              "); 32-bit / 8-bit transposes need LoadDataWithTranspose (§10.2)");
    }
    constexpr uint32_t kFrac = 512;
    const uint64_t srcEnd = (uint64_t(p.startIndex) + uint64_t(p.repeatTimes - 1) * p.srcStride + 1) * kFrac;
    const uint64_t dstEnd = (uint64_t(p.repeatTimes - 1) * (1 + uint64_t(p.dstGap)) + 1) * kFrac;
    CheckSpan(src, srcEnd, "LoadData: source fractal", "src", ws);
    CheckSpan(dst, dstEnd, "LoadData: destination fractal", "dst", wd);
    // Written flags move with the data: one per 32-byte block, a transposed fractal's all or none.
    const uint8_t* srcFlags = ws.pool->written().data() + src.addr / kBlock;
    uint8_t* dstFlags = wd.pool->written().data() + dst.addr / kBlock;
    constexpr uint32_t kBlocks = kFrac / kBlock;
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        const uint64_t so = (uint64_t(p.startIndex) + uint64_t(r) * p.srcStride) * kFrac;
        const uint64_t dof = uint64_t(r) * (1 + uint64_t(p.dstGap)) * kFrac;
        const uint8_t* s = Ptr(src) + so;
        uint8_t* d = Ptr(dst) + dof;
        if (!p.ifTranspose) {
            std::memcpy(d, s, kFrac);  // L1 -> L0A/L0B: different memories
            std::memcpy(dstFlags + dof / kBlock, srcFlags + so / kBlock, kBlocks);
        } else {
            Transpose16x16u16(s, d);
            const bool all = std::memchr(srcFlags + so / kBlock, 0, kBlocks) == nullptr;
            std::memset(dstFlags + dof / kBlock, all ? 1 : 0, kBlocks);
        }
    }
}

// ===========================================================================================
// §10.2 Mmad: L0C (Nz, float/int32) = [L0C +] L0A (Zz) x L0B (Zn) [+ bias from BiasTable].
// ===========================================================================================
void CubeMmad(Ty ct, Ty ab, const TensorDesc& c, const TensorDesc& a, const TensorDesc& b, const MmadParams& p,
              const TensorDesc* bias, const char* op)
{
    const bool ok = (ct.dt == Dt::F32 && (ab.dt == Dt::F16 || ab.dt == Dt::BF16 || ab.dt == Dt::F32)) ||
                    (ct.dt == Dt::I32 && ab.dt == Dt::I8);
    if (!ok) {
        Fault(std::string(op) + ": dtype combination " + DtName(ab.dt) + " x " + DtName(ab.dt) + " -> " +
              DtName(ct.dt) + " is not an A2 cube combination (half/bf16/float -> float, int8 -> int32; §10.1)");
    }
    const Where wc = CubeWhere(c, op, "dst");
    const Where wa = CubeWhere(a, op, "fm (left)");
    const Where wb = CubeWhere(b, op, "filter (right)");
    NeedMem(wc, {CubeMem::L0C}, op, "dst", "L0C (CO1)");
    NeedMem(wa, {CubeMem::L0A}, op, "fm (left)", "L0A (A2)");
    NeedMem(wb, {CubeMem::L0B}, op, "filter (right)", "L0B (B2)");
    CheckAlign(c, 64, op, "dst", wc);
    CheckAlign(a, 512, op, "fm (left)", wa);
    CheckAlign(b, 512, op, "filter (right)", wb);
    if (p.m == 0 || p.n == 0 || p.k == 0 || p.m > 4095 || p.n > 4095 || p.k > 4095) {
        Fault(std::string(op) + ": m, n, k must be in [1, 4095] (got m=" + std::to_string(p.m) + " n=" +
              std::to_string(p.n) + " k=" + std::to_string(p.k) + ")");
    }
    const uint32_t c0 = kBlock / ab.size;
    const uint32_t M = CeilDiv(p.m, 16), N = CeilDiv(p.n, 16), K = CeilDiv(p.k, c0);
    const uint64_t aBytes = uint64_t(M) * K * 512, bBytes = uint64_t(K) * N * 512;
    const uint64_t cBytes = uint64_t(M) * N * 256 * ct.size;
    {
        std::ostringstream m;
        m << "Mmad(m=" << p.m << ", n=" << p.n << ", k=" << p.k << "): ";
        const std::string pre = m.str();
        CheckSpan(a, aBytes, (pre + "left operand " + std::to_string(M) + "x" + std::to_string(K) + " fractals").c_str(), "L0A", wa);
        CheckSpan(b, bBytes, (pre + "right operand " + std::to_string(K) + "x" + std::to_string(N) + " fractals").c_str(), "L0B", wb);
        CheckSpan(c, cBytes, (pre + "result " + std::to_string(M) + "x" + std::to_string(N) + " fractals").c_str(), "L0C", wc);
        // Every operand element that reaches a valid output must have been loaded: all of
        // both operands mostly, else the rows and columns that reach valid outputs one by one.
        if (!IsWritten(wa, a, 0, aBytes))
        for (uint32_t i = 0; i < p.m; ++i)
            for (uint32_t kf = 0; kf < K; ++kf)
                if (!IsWritten(wa, a, (uint64_t(i / 16) * K + kf) * 512 + (i % 16) * kBlock, kBlock)) {
                    Fault(pre + "row " + std::to_string(i) + ", k-fractal " + std::to_string(kf) +
                          " of the left operand was never loaded into L0A (m/k larger than what LoadData moved, or "
                          "padding in L1 that no Nd2Nz wrote)");
                }
        if (!IsWritten(wb, b, 0, bBytes))
        for (uint32_t kf = 0; kf < K; ++kf)
            for (uint32_t j = 0; j < p.n; ++j)
                if (!IsWritten(wb, b, (uint64_t(kf) * N + j / 16) * 512 + (j % 16) * kBlock, kBlock)) {
                    Fault(pre + "column " + std::to_string(j) + ", k-fractal " + std::to_string(kf) +
                          " of the right operand was never loaded into L0B (n/k larger than what LoadData moved, or "
                          "padding in L1 that no Nd2Nz wrote)");
                }
        if (!p.cmatrixInitVal && !p.cmatrixSource && !IsWritten(wc, c, 0, cBytes)) {
            Fault(pre + "accumulates into L0C (cmatrixInitVal=false) that no earlier Mmad wrote");
        }
    }
    const bool fromBias = !p.cmatrixInitVal && p.cmatrixSource;
    if (fromBias && !bias) {
        Fault(std::string(op) + ": cmatrixSource=true (initial C from the BiasTable) needs the bias overload Mmad(c, a, b, bias, params)");
    }
    std::vector<double> biasVal;
    if (fromBias) {
        biasVal.resize(uint64_t(N) * 16);
        const Where wbias = CubeWhere(*bias, op, "bias");
        NeedMem(wbias, {CubeMem::BT}, op, "bias", "the BiasTable (C2)");
        CheckSpan(*bias, uint64_t(N) * 16 * ct.size, (std::string(op) + ": bias of n rounded up to 16").c_str(), "bias", wbias);
        if (!IsWritten(wbias, *bias, 0, CeilDiv(p.n * ct.size, kBlock) * kBlock)) {
            Fault(std::string(op) + ": bias values for n=" + std::to_string(p.n) + " were never copied into the BiasTable");
        }
        for (uint32_t j = 0; j < N * 16; ++j) biasVal[j] = CubeInAs(ct.dt, Ptr(*bias) + j * ct.size);
    }
    const MmadInit init = fromBias ? MmadInit::Bias : p.cmatrixInitVal ? MmadInit::Zero : MmadInit::L0C;
    CubeMmadArith(MmadArith{ab.dt, ct.dt, Ptr(a), Ptr(b), Ptr(c), M, N, K, c0, init, fromBias ? biasVal.data() : nullptr});
    MarkWritten(wc, c, 0, cBytes);
}

// ===========================================================================================
// §10.2 Bias: L1 (C1) -> BiasTable (C2), DataCopyParams in 64-byte units on A2.
// ===========================================================================================
void CubeL1ToBias(const TensorDesc& dst, const TensorDesc& src, const DataCopyParams& p)
{
    const char* op = "DataCopy(L1->BiasTable)";
    const Where wd = CubeWhere(dst, op, "dst");
    const Where ws = CubeWhere(src, op, "src");
    NeedMem(wd, {CubeMem::BT}, op, "dst", "the BiasTable (C2)");
    NeedMem(ws, {CubeMem::L1}, op, "src", "L1 (C1)");
    CheckAlign(dst, 64, op, "dst", wd);
    CheckAlign(src, kBlock, op, "src", ws);
    if (p.blockCount == 0 || p.blockLen == 0) Fault(std::string(op) + ": blockCount and blockLen must be >= 1");
    const uint64_t len = uint64_t(p.blockLen) * 64, ss = (uint64_t(p.blockLen) + p.srcStride) * 64,
                   ds = (uint64_t(p.blockLen) + p.dstStride) * 64;
    CheckSpan(src, (p.blockCount - 1) * ss + len, op, "src", ws);
    CheckSpan(dst, (p.blockCount - 1) * ds + len, op, "dst", wd);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        std::memcpy(Ptr(dst) + i * ds, Ptr(src) + i * ss, len);
        for (uint64_t o = 0; o < len; o += kBlock)
            wd.pool->written()[(dst.addr + i * ds + o) / kBlock] = IsWritten(ws, src, i * ss + o, kBlock) ? 1 : 0;
    }
}

// ===========================================================================================
// §10.2 Fixpipe: L0C (Nz) -> GM (ND), valid [mSize, nSize] only, with quantPre.
// ===========================================================================================
void CubeFixpipe(Ty dt, Ty st, const GmDesc& dst, const TensorDesc& src, const FixpipeParamsV220& p)
{
    const char* op = "Fixpipe(L0C->GM)";
    const Where ws = CubeWhere(src, op, "src");
    NeedMem(ws, {CubeMem::L0C}, op, "src", "L0C (CO1)");
    CheckAlign(src, 64, op, "src", ws);
    const Dt s = st.dt, d = dt.dt;
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
    const uint64_t srcEnd = ((uint64_t(nf) - 1) * p.srcStride + p.mSize) * 16 * st.size;
    CheckSpan(src, srcEnd, "Fixpipe: L0C read (nSize, mSize, srcStride)", "src", ws);
    const uint64_t gmEnd = (uint64_t(p.mSize) - 1) * p.dstStride + p.nSize;
    CheckGmRange(dst, 0, gmEnd * dt.size, op);
    CheckGmAligned(dst, op, GmAlign() ? GmAlign() : dt.size);
    WithTypeIn<Dt::I32, Dt::F16, Dt::BF16, Dt::F32>(d, [&](auto tagT) {
        WithTypeIn<Dt::I32, Dt::F32>(s, [&](auto tagU) {
            using T = decltype(tagT);
            using U = decltype(tagU);
            const uint8_t* pc = Ptr(src);
            // Mostly every fractal column's rows [0, mSize) were written: one check for all.
            bool written = true;
            for (uint32_t jf = 0; jf < nf && written; ++jf)
                written = IsWritten(ws, src, uint64_t(jf) * p.srcStride * 16 * st.size, uint64_t(p.mSize) * 16 * st.size);
            std::vector<T> row(p.nSize);
            const bool relu = p.reluEn;
            for (uint32_t i = 0; i < p.mSize; ++i) {
                for (uint32_t jf = 0; jf < nf; ++jf) {
                    const uint32_t j0 = jf * 16, n = std::min<uint32_t>(16, p.nSize - j0);
                    const uint64_t off = (uint64_t(jf) * p.srcStride + i) * 16 * st.size;
                    for (uint32_t jj = 0; jj < n && !written; ++jj)
                        if (!IsWritten(ws, src, off + jj * st.size, st.size)) {
                            Fault(std::string(op) + ": L0C element (" + std::to_string(i) + ", " + std::to_string(j0 + jj) +
                                  ") was never written by Mmad (nSize/mSize/srcStride do not match the Mmad result)");
                        }
                    U seg[16];
                    std::memcpy(seg, pc + off, sizeof(seg));  // a whole 64-byte fractal row
                    T* out = row.data() + j0;
                    if (n == 16 && !relu) {  // the common case, in a loop the compiler vectorises
                        for (uint32_t jj = 0; jj < 16; ++jj) out[jj] = FromD<T>(ToD(seg[jj]));
                    } else {
                        for (uint32_t jj = 0; jj < n; ++jj) {
                            const double v = ToD(seg[jj]);
                            out[jj] = FromD<T>(relu && v < 0 ? 0.0 : v);
                        }
                    }
                }
                StoreGm<T>(Addr(dst) + uint64_t(i) * p.dstStride * sizeof(T), reinterpret_cast<const uint8_t*>(row.data()),
                           row.size() * sizeof(T));
            }
        });
    });
    CountOut(uint64_t(p.mSize) * p.nSize * dt.size);
}

}  // namespace detail
}  // namespace AscendC
