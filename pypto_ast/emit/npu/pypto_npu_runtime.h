// pypto_npu_runtime.h -- what an NPU control program (control_npu.cpp) needs: the same names the
// host control program calls (pypto_host::Launch, Fault, CheckRegion, ReadInt32, RunGuarded...),
// implemented on the host CPU against CANN's ACL runtime (acl/acl.h) instead of the CPU model.
// Plain C++17 compiled with g++: the kernels are launched through the C-ABI launchers the bisheng
// build adds to each kernel TU (emit/npu_build.py), on the stream pypto_npu_run is given.
#ifndef PYPTO_NPU_RUNTIME_H
#define PYPTO_NPU_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "acl/acl.h"

typedef uint8_t* GM_ADDR;  // a device (GM) address, as the kernels' launchers take it

namespace pypto_host {

[[noreturn]] void Fault(const char* msg);
[[noreturn]] void Fault(const std::string& msg);

// One kernel: its name (for messages) and its launcher, pypto_launch_<name>(blocks, stream, args).
struct Kernel {
    const char* name;
    int (*launch)(uint32_t blocks, void* stream, void** args);
};

// The stream of the current pypto_npu_run (torch_npu's current stream, read by the caller).
void SetStream(void* stream);
void* Stream();

// Copy a launch's tiling fields to device memory, ordered on the stream before the launch; the
// returned GM address stays valid until the kernel that reads it has run (a ring of slots in a
// device arena: when the ring wraps, the stream is synchronised first).
GM_ADDR Tiling(const int64_t* fields, size_t bytes);

// Launch `kernel` on `blocks` cores with these GM arguments (the tiling last), asynchronously.
template <typename... Args>
void Launch(uint32_t blocks, const Kernel& kernel, Args... args)
{
    void* argv[] = {static_cast<void*>(args)...};
    const int rc = kernel.launch(blocks, Stream(), argv);
    if (rc != 0) Fault(std::string("launching ") + kernel.name + " failed (" + std::to_string(rc) + ")");
}

// GM traffic is not counted on the NPU (the profiler does that): always zero.
struct TrafficCounters {
    uint64_t gmToUbBytes = 0, ubToGmBytes = 0, gmToUbCalls = 0, ubToGmCalls = 0, gmScalarBytes = 0;
};
const TrafficCounters& Traffic();

int RunGuarded(void (*body)(void*), void* ctx);
const char* LastError();
// Element i of an int32 device tensor with n elements: synchronises the stream, then copies 4 bytes.
int64_t ReadInt32(const void* tensor, int64_t i, int64_t n);
enum class Region { ViewOfTensor, ViewOfValue, Assemble };
void CheckRegion(Region kind, const char* name, int rank, const int64_t* offsets, const int64_t* shape,
                 const int64_t* valid, const int64_t* extent);

}  // namespace pypto_host

// A kernel of this program, by the name the control program launches it under.
#define PYPTO_NPU_KERNEL(name)                                                        \
    extern "C" int pypto_launch_##name(uint32_t blocks, void* stream, void** args); \
    static const pypto_host::Kernel name{#name, &pypto_launch_##name}

#endif  // PYPTO_NPU_RUNTIME_H
