// pypto_host_fault.h -- the exception the host runtime throws for every hardware rule a kernel
// breaks (see kernel_operator.h, "Error policy").  Kept out of kernel_operator.h so that a
// kernel's translation unit does not parse <stdexcept>/<string> (most of its compile time);
// include it in host programs that catch the fault themselves.
#ifndef PYPTO_HOST_FAULT_H
#define PYPTO_HOST_FAULT_H

#include <stdexcept>
#include <string>

namespace pypto_host {

class HardwareFault : public std::runtime_error {
public:
    explicit HardwareFault(const std::string& msg) : std::runtime_error("pypto_host::HardwareFault: " + msg) {}
};

[[noreturn]] void Fault(const std::string& msg);

}  // namespace pypto_host

#endif  // PYPTO_HOST_FAULT_H
