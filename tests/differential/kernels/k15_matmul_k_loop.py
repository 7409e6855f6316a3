"""fp32 matmul accumulated over K blocks in a loop: the first block initialises the output
(`if k == 0`), later blocks add to it."""
import pypto

M, K, N = 32, 128, 32
KB = 32
F32 = pypto.DT_FP32


@pypto.frontend.jit
def matmul_k_loop(
    a: pypto.Tensor((M, K), F32),
    b: pypto.Tensor((K, N), F32),
    c: pypto.Tensor((M, N), F32),
):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    for k in pypto.loop(K // KB, name="kblk", idx_name="k"):
        part = pypto.matmul(pypto.view(a, [M, KB], [0, k * KB]), pypto.view(b, [KB, N], [k * KB, 0]), F32)
        if k == 0:
            c[:] = part
        else:
            c[:] = c + part


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(15)
    return {"a": torch.randn(M, K, generator=g), "b": torch.randn(K, N, generator=g), "c": torch.zeros(M, N)}


def reference(a, b, c):
    return {"c": a @ b}


TOLERANCE = (1e-4, 1e-4)
