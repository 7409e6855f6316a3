"""Batched 3-D matmul (fp16 in, fp32 out) followed by a 3-D vector op."""
import pypto

B, M, K, N = 2, 32, 64, 32
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def matmul_batched(
    a: pypto.Tensor((B, M, K), F16),
    b: pypto.Tensor((B, K, N), F16),
    out: pypto.Tensor((B, M, N), F32),
):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
    pypto.set_vec_tile_shapes(1, 32, 32)
    out[:] = pypto.matmul(a, b, F32) * 0.125 - 1.0


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(14)
    return {"a": torch.randn(B, M, K, generator=g).half(), "b": torch.randn(B, K, N, generator=g).half(),
            "out": torch.zeros(B, M, N)}


def reference(a, b, out):
    return {"out": (a.float() @ b.float()) * 0.125 - 1.0}


TOLERANCE = (1e-4, 1e-4)
