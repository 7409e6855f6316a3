"""Rotary position embedding (rotate-half form) on [batch, seq, head_dim] fp16.

    out = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat(-x2, x1)
cos / sin are precomputed per position and shared by the whole batch.
"""
import os

import torch

import pypto

B, S, D = 4, 128, 64
HALF = D // 2
FP16 = pypto.DT_FP16

# rows of the sequence per tile, full head dim
ROPE_TILE = (32, D)
SIM = os.environ.get("PYPTO_SIM", "1") == "1"


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM if SIM else pypto.RunMode.NPU})
def rope_kernel(
    x: pypto.Tensor[[B, S, D], FP16],
    cos: pypto.Tensor[[1, S, D], FP16],
    sin: pypto.Tensor[[1, S, D], FP16],
    out: pypto.Tensor[[B, S, D], FP16],
):
    pypto.set_vec_tile_shapes(*ROPE_TILE)
    for b in pypto.loop(B, name="rope_batch", idx_name="b"):
        xb = pypto.view(x, [1, S, D], [b, 0, 0])
        print(f"rope: batch {b} view {xb.shape}")
        x1 = xb[:, :, :HALF]
        x2 = xb[:, :, HALF:]
        rotated = pypto.concat([-x2, x1], dim=2)
        out[b:b + 1, :, :] = xb * cos + rotated * sin


def rope_tables(seq, dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(seq).float(), inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos()[None].half(), emb.sin()[None].half()


def rope_golden(x, cos, sin):
    x1, x2 = x[..., :HALF], x[..., HALF:]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


@pypto.options(name="rope", runtime_options={"device_sched_mode": 1})
def test_rope_fp16():
    torch.manual_seed(3)
    x = torch.randn(B, S, D, dtype=torch.float16)
    cos, sin = rope_tables(S, D)
    out = torch.zeros_like(x)
    rope_kernel(x, cos, sin, out)
    if not SIM:
        torch.testing.assert_close(out, rope_golden(x, cos, sin), rtol=1e-2, atol=1e-2)
