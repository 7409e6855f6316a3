"""Linear layer with bias and ReLU: out = relu(a @ w + bias), fp16 inputs, fp32 accumulation.

Uses `from pypto.frontend import jit`.  The matmul runs on the cube unit with explicit cube
tiles (m [128, 128], k [64, 256], n [128, 128]: L0A 16 KiB, L0B 16 KiB, L0C 64 KiB, L1 128 KiB);
the bias add and ReLU are vector ops with their own tile (32, 128).

Pitfalls: none.
Expected diagnostics: none.
"""
import pypto
from pypto.frontend import jit

M, K, N = 128, 256, 128


@jit
def linear_relu(
    a: pypto.Tensor((M, K), pypto.DT_FP16),
    w: pypto.Tensor((K, N), pypto.DT_FP16),
    bias: pypto.Tensor((1, N), pypto.DT_FP32),
    out: pypto.Tensor((M, N), pypto.DT_FP32),
):
    pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])
    acc = pypto.matmul(a, w, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(32, 128)
    out[:] = pypto.relu(acc + bias)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(4)
    return {
        "a": torch.randn(M, K, generator=g).half(),
        "w": (torch.randn(K, N, generator=g) / 16.0).half(),
        "bias": torch.randn(1, N, generator=g),
        "out": torch.zeros(M, N),
    }


def reference(a, w, bias, out):
    import torch

    return {"out": torch.relu(a.float() @ w.float() + bias)}
