"""Per-channel int8 weight dequantisation to fp16, with an additive bias row."""

import torch

import pypto

N_OUT = 256
K_DIM = 384
ROW_TILE = 32
LANES = 48


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def dequant_weight(
    wq: pypto.Tensor([N_OUT, K_DIM], pypto.DT_INT8),
    scale: pypto.Tensor([N_OUT, 1], pypto.DT_FP16),
    bias: pypto.Tensor([1, K_DIM], pypto.DT_FP16),
    y: pypto.Tensor([N_OUT, K_DIM], pypto.DT_FP16),
):
    col_tile = K_DIM // LANES
    pypto.set_vec_tile_shapes(ROW_TILE, col_tile)
    w16 = pypto.cast(wq, pypto.DT_FP16)
    y[:] = w16 * scale
    y += bias


def quantize_rows(w):
    amax = w.abs().amax(dim=-1, keepdim=True).clamp(min=1e-4)
    scale = amax / 127.0
    wq = torch.clamp(torch.round(w / scale), -128, 127).to(torch.int8)
    return wq, scale.to(torch.float16)


def test_dequant_weight():
    w = torch.randn(N_OUT, K_DIM, dtype=torch.float32)
    wq, scale = quantize_rows(w)
    bias = torch.randn(1, K_DIM, dtype=torch.float16)
    y = torch.zeros(N_OUT, K_DIM, dtype=torch.float16)
    dequant_weight(wq, scale, bias, y)
    ref = wq.to(torch.float16) * scale + bias
    assert y.shape == ref.shape


if __name__ == "__main__":
    test_dequant_weight()
