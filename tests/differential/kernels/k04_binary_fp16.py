"""fp16 elementwise chain: every op computes in fp32 and rounds once to fp16."""
import pypto

R, C = 64, 64
F16 = pypto.DT_FP16


@pypto.frontend.jit
def binary_fp16(
    a: pypto.Tensor((R, C), F16),
    b: pypto.Tensor((R, C), F16),
    out: pypto.Tensor((R, C), F16),
    peak: pypto.Tensor((R, C), F16),
):
    pypto.set_vec_tile_shapes(32, 64)
    out[:] = (a + b) * a - b / 2.0
    peak[:] = pypto.maximum(a, b) * 0.5 + pypto.minimum(a, 0.0)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(4)
    return {"a": torch.randn(R, C, generator=g).half(), "b": torch.randn(R, C, generator=g).half(),
            "out": torch.zeros(R, C, dtype=torch.float16), "peak": torch.zeros(R, C, dtype=torch.float16)}


def reference(a, b, out, peak):
    import torch

    zero = torch.zeros((), dtype=torch.float16)
    return {"out": (a + b) * a - b / 2.0, "peak": torch.maximum(a, b) * 0.5 + torch.minimum(a, zero)}
