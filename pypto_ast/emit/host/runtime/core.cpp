// runtime/core.cpp -- faults, blocks and the launcher, half/bfloat16 conversion, tensors,
// queues, TBuf, TPipe (UB carving), synchronisation checks, atomics and the AIV data copies
// (§1.4, §3, §4, §5, §7, §9 of ascendc.md).  See kernel_operator.h for the contract.
#include "runtime/internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <unistd.h>

namespace pypto_host {
namespace detail {
State g_state;
thread_local BlockState t_block;
std::mutex g_atomicMutex;
// Thread count set by SetHostThreads / pypto_host_set_threads; -1: read PYPTO_AST_HOST_THREADS.
static std::atomic<int> g_threadsOverride{-1};
// The last fault of RunGuarded on this thread.
static thread_local std::string t_lastError;
}  // namespace detail

void Fault(const std::string& msg) { throw HardwareFault(msg); }
void Fault(const char* msg) { throw HardwareFault(msg); }

void SetBlock(int64_t idx, int64_t num)
{
    if (num <= 0 || idx < 0 || idx >= num) {
        std::ostringstream m;
        m << "SetBlock(" << idx << ", " << num << "): block index must be in [0, num) and num > 0";
        Fault(m.str());
    }
    detail::t_block.blockIdx = idx;
    detail::t_block.blockNum = num;
}
const TrafficCounters& Traffic() { return detail::t_block.traffic; }
void ResetTraffic() { detail::t_block.traffic = TrafficCounters{}; }
void SetUbBytes(uint32_t bytes) { detail::g_state.ubBytes = bytes; }
uint32_t UbBytes() { return detail::g_state.ubBytes; }
void SetStrictGmAlignment(bool on) { detail::g_state.strictGmAlign = on; }
void SetHostThreads(int n) { detail::g_threadsOverride.store(n < 0 ? -1 : n); }

uint32_t UsableCores()
{
#if defined(__linux__)
    // The cores this process may run on (taskset, cgroups' cpusets, a CI runner's slice), not
    // every core of the machine: more threads than those only time-slice.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        const int count = CPU_COUNT(&set);
        if (count > 0) return static_cast<uint32_t>(count);
    }
#endif
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1u : hw;
}

uint32_t HostThreads(uint32_t numBlocks)
{
    long n = detail::g_threadsOverride.load();
    if (n < 0) {
        n = 0;
        const char* env = std::getenv("PYPTO_AST_HOST_THREADS");
        if (env && *env) {
            char* end = nullptr;
            n = std::strtol(env, &end, 10);
            while (end && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
            if (end == env || (end && *end) || n < 0) {
                throw std::runtime_error(std::string("PYPTO_AST_HOST_THREADS=") + env +
                                         ": expected a thread count >= 0 (0 = one per core)");
            }
        }
    }
    if (n == 0) n = static_cast<long>(UsableCores());
    return static_cast<uint32_t>(n < static_cast<long>(numBlocks) ? n : static_cast<long>(numBlocks));
}

namespace detail {
static void AddTraffic(TrafficCounters& sum, const TrafficCounters& t)
{
    sum.gmToUbBytes += t.gmToUbBytes; sum.ubToGmBytes += t.ubToGmBytes;
    sum.gmToUbCalls += t.gmToUbCalls; sum.ubToGmCalls += t.ubToGmCalls;
    sum.gmScalarBytes += t.gmScalarBytes;
}

void LaunchBlocks(uint32_t numBlocks, void (*body)(void*), void* ctx)
{
    if (numBlocks == 0 || numBlocks > 65535) Fault("Launch: numBlocks must be in [1, 65535] (§1.4)");
    const uint32_t threads = HostThreads(numBlocks);
    ResetTraffic();
    if (threads <= 1) {
        for (uint32_t b = 0; b < numBlocks; ++b) {
            SetBlock(b, numBlocks);
            t_block.atomicMode = 0;
            body(ctx);
        }
        return;
    }
    std::atomic<uint32_t> next{0};
    std::atomic<uint32_t> stopAt{numBlocks};  // lowest faulting block so far
    std::vector<std::exception_ptr> faults(numBlocks);
    std::vector<TrafficCounters> sums(threads);
    auto worker = [&](uint32_t w) {
        TrafficCounters sum;
        for (;;) {
            const uint32_t b = next.fetch_add(1);
            if (b >= numBlocks || b > stopAt.load()) break;
            t_block = BlockState{};
            t_block.blockIdx = b;
            t_block.blockNum = numBlocks;
            try {
                body(ctx);
            } catch (...) {
                faults[b] = std::current_exception();
                uint32_t cur = stopAt.load();
                while (b < cur && !stopAt.compare_exchange_weak(cur, b)) {}
            }
            AddTraffic(sum, t_block.traffic);
        }
        sums[w] = sum;
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    try {
        for (uint32_t w = 1; w < threads; ++w) pool.emplace_back(worker, w);
    } catch (const std::system_error&) {
        // Could not start another thread: the threads already running still take every block.
    }
    worker(0);
    for (std::thread& t : pool) t.join();
    TrafficCounters total;
    for (const TrafficCounters& t : sums) AddTraffic(total, t);
    t_block = BlockState{};
    t_block.traffic = total;
    for (uint32_t b = 0; b < numBlocks; ++b) {
        if (faults[b]) std::rethrow_exception(faults[b]);
    }
}
}  // namespace detail

int RunGuarded(void (*body)(void*), void* ctx)
{
    detail::t_lastError.clear();
    try {
        body(ctx);
    } catch (const HardwareFault& e) {
        detail::t_lastError = e.what();
        return 1;
    } catch (const std::exception& e) {
        detail::t_lastError = std::string("error: ") + e.what();
        return 2;
    }
    return 0;
}
const char* LastError() { return detail::t_lastError.c_str(); }

int64_t ReadInt32(const void* tensor, int64_t i, int64_t n)
{
    if (i < 0 || i >= n) Fault("scalar read outside an int32 tensor: index " + std::to_string(i));
    int32_t v;
    std::memcpy(&v, static_cast<const uint8_t*>(tensor) + i * 4, 4);
    return v;
}

}  // namespace pypto_host

#include "pypto_host_region.inc"  // CheckRegion, shared with the NPU control runtime

namespace pypto_host {

namespace fp {
uint16_t HalfFromDouble(double d) { return static_cast<uint16_t>(Encode(RoundTo(d, kHalf, Rnd::NearestEven), kHalf)); }
double HalfToDouble(uint16_t bits) { return WidenHalf(bits); }
uint16_t Bf16FromDouble(double d) { return static_cast<uint16_t>(Encode(RoundTo(d, kBf16, Rnd::NearestEven), kBf16)); }
double Bf16ToDouble(uint16_t bits) { return WidenBf16(bits); }
}  // namespace fp
}  // namespace pypto_host

extern "C" void pypto_host_set_threads(int n) { pypto_host::SetHostThreads(n); }

namespace AscendC {
namespace detail {

// ---- LocalTensor / GlobalTensor (§4) --------------------------------------------------------
static std::string QueueWhere(const QueueCore& q)
{
    std::ostringstream m;
    m << "TQue<" << (q.pos == TPosition::VECIN ? "VECIN" : q.pos == TPosition::VECOUT ? "VECOUT" : "?")
      << ", depth " << q.depth << "> with " << q.nbufs << " buffer(s) of " << q.len << " B";
    return m.str();
}

bool IsLive(const TensorDesc& d)
{
    if (!d.owner) return true;
    const QueueBuf& b = d.owner->bufs[static_cast<size_t>(d.buf)];
    return b.gen == d.gen && b.state != BufState::Free && b.state != BufState::Queued;
}

void CheckLive(const TensorDesc& d, const char* op)
{
    if (IsLive(d)) return;
    const QueueBuf& b = d.owner->bufs[static_cast<size_t>(d.buf)];
    if (b.gen != d.gen || b.state == BufState::Free) {
        Fault(std::string(op) + ": LocalTensor used after FreeTensor (its queue buffer was released"
              " or re-allocated) on " + QueueWhere(*d.owner));
    }
    if (b.state == BufState::Queued) {
        Fault(std::string(op) + ": LocalTensor used while it is enqueued (EnQue'd but not DeQue'd) on " +
              QueueWhere(*d.owner) + "; on hardware this races with the consuming pipe (§5.2)");
    }
}

void CheckIndex(const TensorDesc& d, uint32_t index, const char* op)
{
    if (!d.ub) Fault(std::string(op) + ": LocalTensor is not bound to UB (never allocated)");
    CheckLive(d, op);
    if (index >= d.count) {
        std::ostringstream m;
        m << op << "(" << index << "): index out of range for a LocalTensor of " << d.count << " elements";
        Fault(m.str());
    }
}

void SubView(TensorDesc& d, uint32_t offset, uint32_t elem)
{
    if (offset > d.count) {
        std::ostringstream m;
        m << "LocalTensor::operator[](" << offset << "): offset beyond the tensor's " << d.count << " elements";
        Fault(m.str());
    }
    d.addr += offset * elem;
    d.count -= offset;
    d.capBytes -= offset * elem;
}

void SetSize(TensorDesc& d, uint32_t size, uint32_t elem)
{
    if (static_cast<uint64_t>(size) * elem > d.capBytes) {
        std::ostringstream m;
        m << "LocalTensor::SetSize(" << size << "): " << static_cast<uint64_t>(size) * elem
          << " bytes exceed the " << d.capBytes << " bytes left in the underlying UB buffer";
        Fault(m.str());
    }
    d.count = size;
}

void ReadLocal(const TensorDesc& d, uint32_t index, uint32_t elem, void* out, const char* op)
{
    CheckIndex(d, index, op);
    std::memcpy(out, Ptr(d) + static_cast<size_t>(index) * elem, elem);
}

void WriteLocal(const TensorDesc& d, uint32_t index, uint32_t elem, const void* in, const char* op)
{
    CheckIndex(d, index, op);
    std::memcpy(Ptr(d) + static_cast<size_t>(index) * elem, in, elem);
}

void CheckGmRange(const GmDesc& g, uint64_t relByte, uint64_t len, const char* op)
{
    if (!g.base) Fault(std::string(op) + ": GlobalTensor used before SetGlobalBuffer");
    if (!g.bounded) return;
    const uint64_t start = g.off * g.elem + relByte;
    const uint64_t limit = g.size * g.elem;
    if (start + len > limit) {
        std::ostringstream m;
        m << op << ": GM access out of bounds: bytes [" << start << ", " << start + len
          << ") of a buffer of " << limit << " bytes (" << g.size << " elements) registered with SetGlobalBuffer";
        Fault(m.str());
    }
}

void ReadGm(const GmDesc& g, uint64_t offset, void* out, const char* op)
{
    CheckGmRange(g, offset * g.elem, g.elem, op);
    pypto_host::detail::t_block.traffic.gmScalarBytes += g.elem;
    std::memcpy(out, Addr(g) + offset * g.elem, g.elem);
}

void WriteGm(const GmDesc& g, uint64_t offset, const void* in, const char* op)
{
    CheckGmRange(g, offset * g.elem, g.elem, op);
    pypto_host::detail::t_block.traffic.gmScalarBytes += g.elem;
    std::memcpy(Addr(g) + offset * g.elem, in, g.elem);
}

// ---- TQue (§5.2) ----------------------------------------------------------------------------
static void NeedQueue(const QueueCore& q, const char* op)
{
    if (!q.initialised()) Fault(std::string(op) + ": TQue used before TPipe::InitBuffer");
}
static const char* StateName(BufState s)
{
    switch (s) {
    case BufState::Free: return "free";
    case BufState::Allocated: return "allocated";
    case BufState::Queued: return "enqueued";
    case BufState::Dequeued: return "dequeued";
    }
    return "?";
}
static QueueBuf& Own(QueueCore& q, const TensorDesc& d, const char* op)
{
    if (d.owner != &q || d.buf < 0) {
        Fault(std::string(op) + ": tensor was not allocated from this queue (" + QueueWhere(q) + ")");
    }
    return q.bufs[static_cast<size_t>(d.buf)];
}
static TensorDesc MakeQueued(QueueCore& q, int32_t i, uint32_t elem)
{
    TensorDesc t;
    t.ub = q.ub;
    t.addr = q.bufs[i].addr;
    t.count = q.len / elem;
    t.capBytes = q.len;
    t.owner = &q;
    t.buf = i;
    t.gen = q.bufs[i].gen;
    return t;
}

TensorDesc QueAlloc(QueueCore& q, uint32_t elem)
{
    NeedQueue(q, "AllocTensor");
    const uint32_t n = q.nbufs;
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = (q.next + k) % n;
        QueueBuf& b = q.bufs[i];
        if (b.state != BufState::Free) continue;
        q.next = (i + 1) % n;
        b.state = BufState::Allocated;
        ++b.gen;
        return MakeQueued(q, static_cast<int32_t>(i), elem);
    }
    std::ostringstream m;
    m << "AllocTensor: all " << n << " buffer(s) of " << QueueWhere(q)
      << " are in use (allocated or enqueued, not freed); on hardware AllocTensor waits forever";
    Fault(m.str());
}

void QueEnQue(QueueCore& q, const TensorDesc& t)
{
    NeedQueue(q, "EnQue");
    QueueBuf& b = Own(q, t, "EnQue");
    if (b.state != BufState::Allocated) {
        Fault(std::string("EnQue: tensor is not in the allocated state (") + StateName(b.state) + ") on " + QueueWhere(q));
    }
    if (q.depth > 0 && static_cast<int32_t>(q.queued) >= q.depth) {
        std::ostringstream m;
        m << "EnQue: queue already holds " << q.queued << " tensor(s) = its depth; DeQue first (" << QueueWhere(q) << ")";
        Fault(m.str());
    }
    b.state = BufState::Queued;
    q.fifo[(q.head + q.queued) % kMaxQueueBufs] = t.buf;
    ++q.queued;
}

TensorDesc QueDeQue(QueueCore& q, uint32_t elem)
{
    NeedQueue(q, "DeQue");
    if (q.queued == 0) {
        Fault("DeQue: queue is empty (no EnQue before this DeQue) on " + QueueWhere(q) + "; on hardware DeQue waits forever");
    }
    const int32_t i = q.fifo[q.head];
    q.head = (q.head + 1) % kMaxQueueBufs;
    --q.queued;
    q.bufs[static_cast<size_t>(i)].state = BufState::Dequeued;
    return MakeQueued(q, i, elem);
}

void QueFree(QueueCore& q, const TensorDesc& t)
{
    NeedQueue(q, "FreeTensor");
    QueueBuf& b = Own(q, t, "FreeTensor");
    if (b.state == BufState::Free || b.gen != t.gen) {
        Fault("FreeTensor: tensor was already freed (double FreeTensor) on " + QueueWhere(q));
    }
    if (b.state == BufState::Queued) {
        Fault("FreeTensor: tensor is still enqueued (DeQue it first) on " + QueueWhere(q));
    }
    b.state = BufState::Free;
}

// ---- TBuf (§5.1) ----------------------------------------------------------------------------
TensorDesc TBufView(uint8_t* ub, uint32_t addr, uint32_t len, uint32_t size, uint32_t bufOffset, uint32_t elem)
{
    if (!ub) Fault("TBuf::Get: TBuf used before TPipe::InitBuffer");
    if (bufOffset % kBlock != 0) {
        Fault("TBuf::GetWithOffset: byte offset " + std::to_string(bufOffset) +
              " is not a multiple of 32 (UB addresses are 32-byte aligned, §1.2)");
    }
    if (static_cast<uint64_t>(bufOffset) + static_cast<uint64_t>(size) * elem > len) {
        std::ostringstream m;
        m << "TBuf::Get: " << size << " elements of " << elem << " B at byte offset " << bufOffset
          << " exceed the TBuf's " << len << " bytes";
        Fault(m.str());
    }
    TensorDesc t;
    t.ub = ub;
    t.addr = addr + bufOffset;
    t.count = size;
    t.capBytes = len - bufOffset;
    return t;
}

// ---- TPipe (§5.1) ---------------------------------------------------------------------------
// The UB model of a TPipe.  One TPipe per kernel, one kernel per thread at a time: so each
// thread keeps one page-aligned buffer and every TPipe of that thread reuses it (a fresh
// allocation per block cost page faults, and malloc's 16-byte alignment slows the 0xFF fill,
// which is most of a small kernel's run time).
struct FreeUb {
    void operator()(uint8_t* p) const { std::free(p); }
};
constexpr size_t kUbAlign = 4096;
uint8_t* ThreadUb(uint32_t bytes)
{
    static thread_local std::unique_ptr<uint8_t[], FreeUb> buffer;
    static thread_local size_t capacity = 0;
    if (capacity < bytes) {
        const size_t size = (bytes + kUbAlign - 1) / kUbAlign * kUbAlign;
        buffer.reset(static_cast<uint8_t*>(std::aligned_alloc(kUbAlign, size)));
        if (!buffer) throw std::bad_alloc();
        capacity = size;
    }
    return buffer.get();
}
struct PipeCore {
    uint8_t* ub = nullptr;  // this thread's UB buffer (ThreadUb)
    uint32_t used = 0;
    uint32_t buffers = 0;
    int vecinBufs = 0;
    int vecoutBufs = 0;
    int veccalcBufs = 0;
    void* cube = nullptr;  // cube pools, created by the first cube InitBuffer (runtime/cube.cpp)
};

PipeCore* PipeCreate()
{
    if (pypto_host::detail::t_block.livePipes > 0) {
        Fault("TPipe: a second TPipe was constructed while one is alive; exactly one TPipe per kernel (§5.1)");
    }
    std::unique_ptr<PipeCore> p(new PipeCore());
    p->ub = ThreadUb(pypto_host::UbBytes());  // poisoned (0xFF) buffer by buffer, as Carve hands them out
    ++pypto_host::detail::t_block.livePipes;
    return p.release();
}

void PipeDestroy(PipeCore* p)
{
    --pypto_host::detail::t_block.livePipes;
    CubeDestroyPools(p->cube);
    delete p;
}

static bool IsVectorPosition(TPosition pos)
{
    return pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC;
}
static void CheckLen(const char* op, uint32_t len)
{
    if (len == 0 || len % kBlock != 0) {
        Fault(std::string(op) + ": buffer length " + std::to_string(len) +
              " bytes is not a positive multiple of 32 bytes (UB is addressed in 32-byte blocks, §1.3/§15.2)");
    }
}
static uint32_t Carve(PipeCore* p, const char* op, uint64_t bytes, uint32_t nbufs)
{
    if (p->buffers + nbufs > 64) Fault(std::string(op) + ": more than 64 buffers in one kernel (§5.1)");
    if (p->used + bytes > pypto_host::UbBytes()) {
        std::ostringstream m;
        m << op << ": UB overflow: " << p->used << " B already allocated + " << bytes << " B requested = "
          << p->used + bytes << " B > UB size " << pypto_host::UbBytes() << " B";
        Fault(m.str());
    }
    const uint32_t at = p->used;
    p->used += static_cast<uint32_t>(bytes);
    p->buffers += nbufs;
    // UB reads as 0xFF until written.  Only carved bytes can be reached through a tensor, so
    // poisoning them here is the same as poisoning all of UB when the TPipe starts.
    std::memset(p->ub + at, 0xFF, bytes);
    return at;
}

void PipeInitQueue(PipeCore* p, QueueCore& q, uint8_t num, uint32_t len)
{
    if (!IsVectorPosition(q.pos)) {
        // Cube positions: per-TPipe L1/L0A/L0B/L0C/BiasTable pools (runtime/cube.cpp).
        CubeInitQueue(p->cube, q, num, len);
        return;
    }
    if (q.initialised()) Fault("TPipe::InitBuffer: this TQue was already initialised");
    if (num == 0) Fault("TPipe::InitBuffer: num must be >= 1");
    // §15.2: every UB buffer size must be a multiple of 32 B (the device would silently round
    // up, so the emitter's size arithmetic would be wrong).
    CheckLen("TPipe::InitBuffer(que)", len);
    int& perPos = q.pos == TPosition::VECIN ? p->vecinBufs : q.pos == TPosition::VECOUT ? p->vecoutBufs : p->veccalcBufs;
    if (perPos + num > 8) {  // §5.1: at most 8 queue buffers per TPosition (8 event IDs)
        std::ostringstream m;
        m << "TPipe::InitBuffer: " << perPos + num << " queue buffers on one TPosition; at most 8 (§5.1)";
        Fault(m.str());
    }
    const uint32_t base = Carve(p, "TPipe::InitBuffer(que)", static_cast<uint64_t>(num) * len, num);
    perPos += num;
    q.ub = p->ub;
    q.len = len;
    q.nbufs = num;
    for (uint32_t i = 0; i < num; ++i) q.bufs[i] = QueueBuf{base + i * len, BufState::Free, 0};
}

void PipeInitTBuf(PipeCore* p, TPosition pos, uint8_t*& ub, uint32_t& addr, uint32_t& len, uint32_t bytes)
{
    if (!IsVectorPosition(pos)) {
        CubeInitTBuf(p->cube, pos, ub, addr, len, bytes);  // cube positions (runtime/cube.cpp)
        return;
    }
    if (ub) Fault("TPipe::InitBuffer: this TBuf was already initialised");
    CheckLen("TPipe::InitBuffer(tbuf)", bytes);
    addr = Carve(p, "TPipe::InitBuffer(tbuf)", bytes, 1);
    ub = p->ub;
    len = bytes;
}

uint32_t PipeUbUsed(const PipeCore* p) { return p->used; }

// ---- system variables, sync, atomics (§1.4, §9, §7.3) ---------------------------------------
int64_t BlockIdx() { return pypto_host::detail::t_block.blockIdx; }
int64_t BlockNum() { return pypto_host::detail::t_block.blockNum; }

void CheckEventId(const char* op, int32_t eventID)
{
    if (eventID < 0 || eventID > 7) Fault(std::string(op) + ": event id " + std::to_string(eventID) + " outside 0..7 (§9.1)");
}

void SetAtomicMode(int mode, Dt dt)
{
    if (mode == 1) CheckDtype(dt, "SetAtomicAdd", {Dt::I8, Dt::I16, Dt::F16, Dt::BF16, Dt::I32, Dt::F32});
    pypto_host::detail::t_block.atomicMode = mode;
}

// ---- data movement (§7) ---------------------------------------------------------------------
static void CheckCountBytes(const char* op, uint32_t count, uint32_t elem)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * elem;
    if (bytes % kBlock != 0) {
        std::ostringstream m;
        m << op << ": length " << count << " x " << elem << " B = " << bytes
          << " bytes is not a multiple of 32 bytes; the device silently rounds it down to " << bytes / kBlock * kBlock
          << " (use DataCopyPad for ragged lengths, §7.1/§7.2)";
        Fault(m.str());
    }
}
static uint64_t ElemAlign(const GmDesc& g) { return GmAlign() ? GmAlign() : g.elem; }

// UB -> GM stores into a GM tensor larger than the last-level cache bypass the caches (streaming
// stores): such a tensor is read back from DRAM anyway, and a plain store first reads each line
// it fills (a quarter of an elementwise kernel's DRAM traffic).  Same bytes; each call ends with
// a store fence, so the blocks' threads see them as before.
// The last-level cache is the one this CPU shares, as Linux's sysfs gives it (lscpu's figure).
// sysconf's L3 is read from CPUID, which in a virtual machine may describe the host's whole
// socket: 256 MiB on an EPYC guest whose L3 is 32 MiB, and then no tensor ever streamed.
static uint64_t SysfsL3Bytes()
{
    for (int i = 0; i < 8; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        FILE* f = std::fopen((dir + "level").c_str(), "r");
        if (!f) break;
        int level = 0;
        const bool ok = std::fscanf(f, "%d", &level) == 1;
        std::fclose(f);
        if (!ok || level != 3) continue;
        f = std::fopen((dir + "size").c_str(), "r");
        if (!f) return 0;
        unsigned long long n = 0;
        char unit = 0;
        const int got = std::fscanf(f, "%llu%c", &n, &unit);
        std::fclose(f);
        if (got < 1) return 0;
        return got == 2 && unit == 'M' ? n << 20 : got == 2 && unit == 'K' ? n << 10 : n;
    }
    return 0;
}
uint64_t StreamBytes()
{
    static const uint64_t bytes = [] {
        if (const uint64_t l3 = SysfsL3Bytes()) return l3;
#if defined(_SC_LEVEL3_CACHE_SIZE)
        const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) return static_cast<uint64_t>(l3);
#endif
        return uint64_t(32) << 20;
    }();
    return bytes;
}
static bool Streams(const GmDesc& g)
{
#if defined(__SSE2__)
    return g.bounded && pypto_host::detail::t_block.atomicMode == 0 && g.size * g.elem >= StreamBytes();
#else
    (void)g;
    return false;
#endif
}
static void StreamCopy(uint8_t* d, const uint8_t* s, uint64_t n)
{
#if defined(__SSE2__)
    const uint64_t head = std::min<uint64_t>(n, (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64);
    std::memcpy(d, s, head);
    uint64_t i = head;
    for (; i + 64 <= n; i += 64) {
        for (int k = 0; k < 64; k += 16)
            _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + k)));
    }
    std::memcpy(d + i, s + i, n - i);
#else
    std::memcpy(d, s, n);
#endif
}
static void StreamFence()
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

void CopyGmToUb(const TensorDesc& dst, const GmDesc& src, uint32_t count)
{
    const char* op = "DataCopy(GM->UB)";
    CheckUbAligned(dst, op, "dst");
    CheckGmAligned(src, op, ElemAlign(src));
    CheckCountBytes(op, count, src.elem);
    const uint64_t bytes = static_cast<uint64_t>(count) * src.elem;
    CheckUbRange(dst, bytes, op, "dst");
    CheckGmRange(src, 0, bytes, op);
    NoteGmLoad(src, Addr(src), bytes);
    std::memcpy(Ptr(dst), Addr(src), bytes);
    CountIn(bytes);
}

void CopyUbToGm(const GmDesc& dst, const TensorDesc& src, uint32_t count, Dt dt)
{
    const char* op = "DataCopy(UB->GM)";
    CheckUbAligned(src, op, "src");
    CheckGmAligned(dst, op, ElemAlign(dst));
    CheckCountBytes(op, count, dst.elem);
    const uint64_t bytes = static_cast<uint64_t>(count) * dst.elem;
    CheckUbRange(src, bytes, op, "src");
    CheckGmRange(dst, 0, bytes, op);
    if (Streams(dst)) { StreamCopy(Addr(dst), Ptr(src), bytes); StreamFence(); }
    else StoreGmAs(dt, Addr(dst), Ptr(src), bytes);
    CountOut(bytes);
}

void CopyUbToUb(const TensorDesc& dst, const TensorDesc& src, uint32_t count, uint32_t elem)
{
    const char* op = "DataCopy(UB->UB)";
    CheckUbAligned(dst, op, "dst");
    CheckUbAligned(src, op, "src");
    CheckCountBytes(op, count, elem);
    const uint64_t bytes = static_cast<uint64_t>(count) * elem;
    CheckUbRange(dst, bytes, op, "dst");
    CheckUbRange(src, bytes, op, "src");
    std::memmove(Ptr(dst), Ptr(src), bytes);
}

void CopyGmToUbStrided(const TensorDesc& dst, const GmDesc& src, const DataCopyParams& p)
{
    const char* op = "DataCopy(GM->UB, DataCopyParams)";
    CheckUbAligned(dst, op, "dst");
    CheckGmAligned(src, op, ElemAlign(src));
    CheckBlockCount(op, p.blockCount);
    const uint64_t len = uint64_t(p.blockLen) * 32, gs = (uint64_t(p.blockLen) + p.srcStride) * 32,
                   us = (uint64_t(p.blockLen) + p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    CheckUbRange(dst, (p.blockCount - 1) * us + len, op, "dst");
    CheckGmRange(src, 0, (p.blockCount - 1) * gs + len, op);
    NoteGmLoad(src, Addr(src), (p.blockCount - 1) * gs + len);
    for (uint32_t i = 0; i < p.blockCount; ++i) std::memcpy(Ptr(dst) + i * us, Addr(src) + i * gs, len);
    CountIn(uint64_t(p.blockCount) * len);
}

void CopyUbToGmStrided(const GmDesc& dst, const TensorDesc& src, const DataCopyParams& p, Dt dt)
{
    const char* op = "DataCopy(UB->GM, DataCopyParams)";
    CheckUbAligned(src, op, "src");
    CheckGmAligned(dst, op, ElemAlign(dst));
    CheckBlockCount(op, p.blockCount);
    const uint64_t len = uint64_t(p.blockLen) * 32, us = (uint64_t(p.blockLen) + p.srcStride) * 32,
                   gs = (uint64_t(p.blockLen) + p.dstStride) * 32;
    if (p.blockCount == 0 || len == 0) return;
    CheckUbRange(src, (p.blockCount - 1) * us + len, op, "src");
    CheckGmRange(dst, 0, (p.blockCount - 1) * gs + len, op);
    const bool stream = Streams(dst);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        if (stream) StreamCopy(Addr(dst) + i * gs, Ptr(src) + i * us, len);
        else StoreGmAs(dt, Addr(dst) + i * gs, Ptr(src) + i * us, len);
    }
    if (stream) StreamFence();
    CountOut(uint64_t(p.blockCount) * len);
}

void PadIn(const TensorDesc& dst, const GmDesc& src, uint32_t blockCount, uint64_t blockLen, uint64_t gmGapBytes,
           uint64_t ubGapBlocks, bool isPad, uint32_t left, uint32_t right, const void* value, const char* op)
{
    const uint32_t elem = src.elem;
    CheckUbAligned(dst, op, "dst");
    if (GmAlign()) CheckGmAligned(src, op, GmAlign());
    CheckBlockCount(op, blockCount);
    if (blockCount == 0 || blockLen == 0) return;
    if (blockLen % elem != 0) {
        Fault(std::string(op) + ": blockLen " + std::to_string(blockLen) + " bytes is not a multiple of sizeof(T) = " +
              std::to_string(elem) + " (§7.2)");
    }
    if (left * elem > kBlock || right * elem > kBlock) {
        Fault(std::string(op) + ": leftPadding/rightPadding exceed 32 bytes (§7.2)");
    }
    const uint64_t rowUsed = (left + right) * elem + blockLen;
    const uint64_t row = RoundUp32(rowUsed);
    const uint64_t us = row + ubGapBlocks * kBlock, gs = blockLen + gmGapBytes;
    CheckUbRange(dst, (blockCount - 1) * us + row, op, "dst");
    CheckGmRange(src, 0, (blockCount - 1) * gs + blockLen, op);
    NoteGmLoad(src, Addr(src), (blockCount - 1) * gs + blockLen);
    for (uint32_t i = 0; i < blockCount; ++i) {
        uint8_t* u = Ptr(dst) + i * us;
        const uint8_t* g = Addr(src) + i * gs;
        std::memcpy(u + left * elem, g, blockLen);
        if (left == 0 && right == 0) {
            for (uint64_t b = blockLen; b + elem <= row; b += elem) std::memcpy(u + b, g, elem);
            continue;
        }
        std::memset(u + rowUsed, 0xFF, row - rowUsed);
        for (uint32_t k = 0; k < left; ++k) {
            if (isPad) std::memcpy(u + k * elem, value, elem); else std::memset(u + k * elem, 0xFF, elem);
        }
        for (uint32_t k = 0; k < right; ++k) {
            uint8_t* p = u + left * elem + blockLen + k * elem;
            if (isPad) std::memcpy(p, value, elem); else std::memset(p, 0xFF, elem);
        }
    }
    CountIn(uint64_t(blockCount) * blockLen);
}

void PadOut(const GmDesc& dst, const TensorDesc& src, uint32_t blockCount, uint64_t blockLen, uint64_t ubGapBlocks,
            uint64_t gmGapBytes, Dt dt, const char* op)
{
    const uint32_t elem = dst.elem;
    CheckUbAligned(src, op, "src");
    if (GmAlign()) CheckGmAligned(dst, op, GmAlign());
    CheckBlockCount(op, blockCount);
    if (blockCount == 0 || blockLen == 0) return;
    if (blockLen % elem != 0) {
        Fault(std::string(op) + ": blockLen " + std::to_string(blockLen) + " bytes is not a multiple of sizeof(T) = " +
              std::to_string(elem) + " (§7.2)");
    }
    const uint64_t us = RoundUp32(blockLen) + ubGapBlocks * kBlock, gs = blockLen + gmGapBytes;
    CheckUbRange(src, (blockCount - 1) * us + blockLen, op, "src");
    CheckGmRange(dst, 0, (blockCount - 1) * gs + blockLen, op);
    const bool stream = Streams(dst);
    for (uint32_t i = 0; i < blockCount; ++i) {
        if (stream) StreamCopy(Addr(dst) + i * gs, Ptr(src) + i * us, blockLen);
        else StoreGmAs(dt, Addr(dst) + i * gs, Ptr(src) + i * us, blockLen);
    }
    if (stream) StreamFence();
    CountOut(uint64_t(blockCount) * blockLen);
}

}  // namespace detail
}  // namespace AscendC

// The GM size from which UB -> GM stores stream (tests compare it with sysfs).
extern "C" uint64_t pypto_host_stream_bytes() { return AscendC::detail::StreamBytes(); }
