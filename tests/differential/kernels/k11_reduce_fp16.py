"""fp16 reductions: amax/amin directly in fp16, sum after an explicit cast to fp32 (sum is
fp32-only), row softmax in fp32 cast back to fp16."""
import pypto

R, C = 16, 128
F16, F32 = pypto.DT_FP16, pypto.DT_FP32


@pypto.frontend.jit
def reduce_fp16(
    x: pypto.Tensor((R, C), F16),
    span: pypto.Tensor((R, 1), F16),
    total: pypto.Tensor((R, 1), F32),
    soft: pypto.Tensor((R, C), F16),
):
    pypto.set_vec_tile_shapes(16, 128)
    span[:] = pypto.amax(x, -1, keepdim=True) - pypto.amin(x, -1, keepdim=True)
    xf = pypto.cast(x, F32)
    total[:] = pypto.sum(xf, -1, keepdim=True)
    e = pypto.exp(xf - pypto.amax(xf, -1, keepdim=True))
    soft[:] = pypto.cast(e / pypto.sum(e, -1, keepdim=True), F16)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(11)
    return {"x": torch.randn(R, C, generator=g).half(), "span": torch.zeros(R, 1, dtype=torch.float16),
            "total": torch.zeros(R, 1), "soft": torch.zeros(R, C, dtype=torch.float16)}


def reference(x, span, total, soft):
    import torch

    xf = x.float()
    return {"span": x.amax(-1, keepdim=True) - x.amin(-1, keepdim=True), "total": xf.sum(-1, keepdim=True),
            "soft": torch.softmax(xf, -1).half()}
