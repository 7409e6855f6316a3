#!/usr/bin/env python3
# coding: utf-8
"""
SwiGLU activation fused with the residual update of the FFN output.

`out` holds the residual stream on entry and is updated in place.
"""
import os

import torch

import pypto

TOKENS = 128
INTER = 512
TILE_ROWS = 32
TILE_COLS = 8


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def swiglu_residual_kernel(
    gate: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    up: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    out: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(TILE_ROWS, TILE_COLS)
    # silu(g) = g / (1 + exp(-g)), kept in fp16 end to end
    neg_gate = gate * -1.0
    denom = pypto.exp(neg_gate) + 1.0
    act = gate / denom
    out += act * up


def swiglu_golden(gate, up, residual):
    g = gate.float()
    return (residual.float() + g * torch.sigmoid(g) * up.float()).half()


def test_swiglu_residual():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.manual_seed(3)
    gate = torch.randn(TOKENS, INTER, dtype=torch.float16)
    up = torch.randn(TOKENS, INTER, dtype=torch.float16)
    residual = torch.randn(TOKENS, INTER, dtype=torch.float16)
    out = residual.clone()
    swiglu_residual_kernel(gate, up, out)
    expected = swiglu_golden(gate, up, residual)
    print(f"device {device_id}: max diff {(out.float() - expected.float()).abs().max().item()}")


if __name__ == "__main__":
    test_swiglu_residual()
