"""transpose: a 2-D fp32 transpose and a 3-D fp16 transpose of the last two axes."""
import pypto

R, C = 32, 64
B = 2
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def transpose_ops(
    x: pypto.Tensor((R, C), F32),
    h: pypto.Tensor((B, R, C), F16),
    xt: pypto.Tensor((C, R), F32),
    ht: pypto.Tensor((B, C, R), F16),
):
    pypto.set_vec_tile_shapes(32, 32)
    xt[:] = pypto.transpose(x, 0, 1) + 1.0
    pypto.set_vec_tile_shapes(1, 32, 32)
    ht[:] = pypto.transpose(h, 1, 2)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(21)
    return {"x": torch.randn(R, C, generator=g), "h": torch.randn(B, R, C, generator=g).half(),
            "xt": torch.zeros(C, R), "ht": torch.zeros(B, C, R, dtype=torch.float16)}


def reference(x, h, xt, ht):
    return {"xt": x.T + 1.0, "ht": h.transpose(1, 2).contiguous()}
