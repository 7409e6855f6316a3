// Stand-in for CANN's closed CPU-debug `kernel_bf16.h` (see kernel_fp16.h): `bfloat16_t`, the same
// type-checking-only float class as `half`.
#ifndef PYPTO_STANDIN_KERNEL_BF16_H
#define PYPTO_STANDIN_KERNEL_BF16_H
#include "kernel_fp16.h"

struct bfloat16_t : PyptoStandinFloat16 {
    using PyptoStandinFloat16::PyptoStandinFloat16;
};

#endif
