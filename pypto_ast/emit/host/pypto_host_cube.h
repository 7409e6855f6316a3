// pypto_host_cube.h -- host (CPU) implementation of the Ascend C cube subset (included by
// kernel_operator.h; emitted kernels include only kernel_operator.h).
#ifndef PYPTO_HOST_CUBE_H
#define PYPTO_HOST_CUBE_H
#endif  // PYPTO_HOST_CUBE_H
