"""Projection with bias: out = a @ w + bias, fp16 inputs, fp32 output.

Pitfall PTO005 (matmul with no cube tile shape), line 24 in `projection`: the author set the
vector tile for the bias add but never called `pypto.set_cube_tile_shapes(...)` before the
matmul.  pypto 0.2.0 raises at op creation: `FC4000 Invalid tile values: kL0=0, ...`.
Fix: `pypto.set_cube_tile_shapes([128, 128], [64, 256], [128, 128])` before the matmul.

Expected diagnostics:
    PTO005 line 24
"""
import pypto

M, K, N = 128, 256, 128


@pypto.frontend.jit
def projection(
    a: pypto.Tensor((M, K), pypto.DT_FP16),
    w: pypto.Tensor((K, N), pypto.DT_FP16),
    bias: pypto.Tensor((1, N), pypto.DT_FP32),
    out: pypto.Tensor((M, N), pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, N)
    acc = pypto.matmul(a, w, pypto.DT_FP32)  # PTO005
    out[:] = acc + bias


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(25)
    return {
        "a": torch.randn(M, K, generator=g).half(),
        "w": (torch.randn(K, N, generator=g) / 16.0).half(),
        "bias": torch.randn(1, N, generator=g),
        "out": torch.zeros(M, N),
    }


def reference(a, w, bias, out):
    return {"out": a.float() @ w.float() + bias}
