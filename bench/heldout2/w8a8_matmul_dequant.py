"""W8A8 linear layer: int8 x int8 -> int32 matmul, then per-token / per-channel dequant to fp16."""

import torch

import pypto

M_TOK, K_IN, N_OUT = 128, 512, 256

# cube tiling shared by all w8a8 projections of the block
W8A8_CUBE = {
    "m": [64, 128],
    "k": [16, 64],
    "n": [128, 256],
}


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def w8a8_linear(
    xq: pypto.Tensor([M_TOK, K_IN], pypto.DT_INT8),
    wq: pypto.Tensor([K_IN, N_OUT], pypto.DT_INT8),
    x_scale: pypto.Tensor([M_TOK, 1], pypto.DT_FP32),
    w_scale: pypto.Tensor([1, N_OUT], pypto.DT_FP32),
    out: pypto.Tensor([M_TOK, N_OUT], pypto.DT_FP16),
):
    pypto.set_cube_tile_shapes(W8A8_CUBE["m"], W8A8_CUBE["k"], W8A8_CUBE["n"])
    acc = pypto.matmul(xq, wq, pypto.DT_INT32)
    acc_f = pypto.cast(acc, pypto.DT_FP32)
    deq = acc_f * x_scale * w_scale
    out[:] = pypto.cast(deq, pypto.DT_FP16)


def per_token_quant(x):
    s = x.abs().amax(-1, keepdim=True).clamp(min=1e-5) / 127.0
    return torch.round(x / s).clamp(-128, 127).to(torch.int8), s


def per_channel_quant(w):
    s = w.abs().amax(0, keepdim=True).clamp(min=1e-5) / 127.0
    return torch.round(w / s).clamp(-128, 127).to(torch.int8), s


def test_w8a8_linear():
    x = torch.randn(M_TOK, K_IN)
    w = torch.randn(K_IN, N_OUT) * 0.05
    xq, xs = per_token_quant(x)
    wq, ws = per_channel_quant(w)
    out = torch.empty(M_TOK, N_OUT, dtype=torch.float16)
    w8a8_linear(xq, wq, xs, ws, out)
    ref = (xq.int() @ wq.int()).float() * xs * ws
    assert out.shape == ref.shape


if __name__ == "__main__":
    test_w8a8_linear()
