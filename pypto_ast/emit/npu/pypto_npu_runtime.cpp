// pypto_npu_runtime.cpp -- see pypto_npu_runtime.h.  Compiled once into each NPU program library.
#include "pypto_npu_runtime.h"

#include <cstring>
#include <stdexcept>

namespace pypto_host {
namespace {

class NpuFault : public std::runtime_error {
public:
    explicit NpuFault(const std::string& msg) : std::runtime_error(msg) {}
};

thread_local void* t_stream = nullptr;
thread_local std::string t_lastError;

std::string AclMessage(const char* what, aclError rc)
{
    const char* detail = aclGetRecentErrMsg();
    return std::string(what) + " failed (aclError " + std::to_string(rc) + ")" + (detail ? std::string(": ") + detail : "");
}

void Check(aclError rc, const char* what)
{
    if (rc != ACL_SUCCESS) throw NpuFault(AclMessage(what, rc));
}

// The tiling ring: a device arena and its pinned host mirror, allocated on first use and kept for
// the process (kernels of an earlier run may still read their slots: never freed under them).
constexpr size_t kArenaBytes = 1 << 20;
constexpr size_t kSlotAlign = 64;
struct Arena {
    void* device = nullptr;
    void* host = nullptr;
    size_t next = 0;
};
thread_local Arena t_arena;

}  // namespace

[[noreturn]] void Fault(const std::string& msg) { throw NpuFault(msg); }
[[noreturn]] void Fault(const char* msg) { throw NpuFault(msg); }

void SetStream(void* stream) { t_stream = stream; }
void* Stream() { return t_stream; }

GM_ADDR Tiling(const int64_t* fields, size_t bytes)
{
    Arena& a = t_arena;
    if (a.device == nullptr) {
        Check(aclrtMalloc(&a.device, kArenaBytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc (tiling arena)");
        Check(aclrtMallocHost(&a.host, kArenaBytes), "aclrtMallocHost (tiling arena)");
    }
    const size_t size = (bytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
    if (size > kArenaBytes) Fault("a launch's tiling of " + std::to_string(bytes) + " bytes exceeds the tiling arena");
    if (a.next + size > kArenaBytes) {  // wrap: every slot of the ring may still be read until the stream drains
        Check(aclrtSynchronizeStream(static_cast<aclrtStream>(t_stream)), "aclrtSynchronizeStream");
        a.next = 0;
    }
    uint8_t* host = static_cast<uint8_t*>(a.host) + a.next;
    uint8_t* device = static_cast<uint8_t*>(a.device) + a.next;
    std::memcpy(host, fields, bytes);
    Check(aclrtMemcpyAsync(device, size, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE, static_cast<aclrtStream>(t_stream)),
          "aclrtMemcpyAsync (tiling)");
    a.next += size;
    return device;
}

const TrafficCounters& Traffic()
{
    static const TrafficCounters none{};
    return none;
}

int RunGuarded(void (*body)(void*), void* ctx)
{
    t_lastError.clear();
    try {
        body(ctx);
    } catch (const NpuFault& e) {
        t_lastError = e.what();
        return 1;
    } catch (const std::exception& e) {
        t_lastError = std::string("error: ") + e.what();
        return 2;
    }
    return 0;
}

const char* LastError() { return t_lastError.c_str(); }

int64_t ReadInt32(const void* tensor, int64_t i, int64_t n)
{
    if (i < 0 || i >= n) Fault("scalar read outside an int32 tensor: index " + std::to_string(i));
    Check(aclrtSynchronizeStream(static_cast<aclrtStream>(t_stream)), "aclrtSynchronizeStream (scalar read)");
    int32_t v = 0;
    Check(aclrtMemcpy(&v, sizeof v, static_cast<const uint8_t*>(tensor) + i * 4, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST),
          "aclrtMemcpy (scalar read)");
    return v;
}

}  // namespace pypto_host

#include "pypto_host_region.inc"
