# caught: PTO017
"""The FAQ's shape of kernel: tensors arrive unannotated, so pypto reads them as plain values."""
import pypto


@pypto.frontend.jit
def scaled_exp(src, dst: pypto.Tensor([32, 64], pypto.DT_FP32), factor: float = 0.5):
    pypto.set_vec_tile_shapes(16, 64)
    for r in pypto.loop(2, name="halves", idx_name="r"):
        part = pypto.view(src, [16, 64], [r * 16, 0])
        pypto.assemble(pypto.exp(part) * factor, [r * 16, 0], dst)
