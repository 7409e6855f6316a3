# caught: PTO020
"""A frontend.jit kernel written as a function that returns its result: pypto's parser stops at
the return the first time the kernel is called."""
import pypto


@pypto.frontend.jit
def row_max(x: pypto.Tensor([64, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 128)
    peak = pypto.amax(x, -1, keepdim=True)
    return peak
