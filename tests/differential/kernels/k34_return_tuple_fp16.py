"""Return convention with two results: an fp16 matmul with fp32 accumulation and the fp16
row maximum of its input."""
import pypto
import pypto_ast

M, K, N = 32, 64, 32
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto_ast.jit
def linear_and_max(a: pypto.Tensor((M, K), F16), w: pypto.Tensor((K, N), F16)):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 64)
    y = pypto.cast(pypto.matmul(a, w, F32), F16)
    return y, pypto.amax(a, -1, keepdim=True)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(34)
    return {"a": torch.randn(M, K, generator=g).half(), "w": torch.randn(K, N, generator=g).half()}


def reference(a, w):
    return (a.float() @ w.float()).half(), a.amax(-1, keepdim=True)
