"""Matmul with fp16 inputs: fp32 accumulation and fp32 output, and the `@` operator (fp16 out)."""
import pypto

M, K, N = 64, 32, 64
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def matmul_fp16(
    a: pypto.Tensor((M, K), F16),
    b: pypto.Tensor((K, N), F16),
    c32: pypto.Tensor((M, N), F32),
    c16: pypto.Tensor((M, N), F16),
):
    pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 64])
    pypto.set_vec_tile_shapes(32, 64)
    c32[:] = pypto.matmul(a, b, F32)
    c16[:] = a @ b


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(12)
    return {"a": torch.randn(M, K, generator=g).half(), "b": torch.randn(K, N, generator=g).half(),
            "c32": torch.zeros(M, N), "c16": torch.zeros(M, N, dtype=torch.float16)}


def reference(a, b, c32, c16):
    acc = a.float() @ b.float()
    return {"c32": acc, "c16": acc.half()}


TOLERANCE = (1e-3, 1e-3)
