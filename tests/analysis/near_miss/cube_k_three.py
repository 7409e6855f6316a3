# near-miss: PTO005
"""k = [kL0, kL1a, kL1b] (separate L1 tiles for A and B) is accepted by 0.2.0 and HEAD."""
import pypto


@pypto.frontend.jit
def project(a: pypto.Tensor((128, 1024), pypto.DT_FP16), w: pypto.Tensor((1024, 256), pypto.DT_FP16),
            out: pypto.Tensor((128, 256), pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 256)
    pypto.set_cube_tile_shapes([64, 128], [128, 1024, 512], [256, 256])
    out[:] = pypto.matmul(a, w, pypto.DT_FP32)
