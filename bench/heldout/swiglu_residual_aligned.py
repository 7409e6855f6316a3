#!/usr/bin/env python3
# coding: utf-8
"""
SwiGLU + residual in fp16, writing a separate output tensor.

Tile last dim 16 x 2 B = 32 B.  The residual stream is an input; the sum is written
with a slice assignment.
"""
import os

import torch

import pypto

TOKENS = 128
INTER = 512
TILE_ROWS = 32
TILE_COLS = 16


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def swiglu_residual_kernel(
    gate: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    up: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    residual: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
    out: pypto.Tensor([TOKENS, INTER], pypto.DT_FP16),
):
    pypto.set_vec_tile_shapes(TILE_ROWS, TILE_COLS)
    neg_gate = gate * -1.0
    denom = pypto.exp(neg_gate) + 1.0
    act = gate / denom
    update = act * up
    update = update + residual
    out[:] = update


def test_swiglu_residual():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.manual_seed(3)
    gate = torch.randn(TOKENS, INTER, dtype=torch.float16)
    up = torch.randn(TOKENS, INTER, dtype=torch.float16)
    residual = torch.randn(TOKENS, INTER, dtype=torch.float16)
    out = torch.empty_like(residual)
    swiglu_residual_kernel(gate, up, residual, out)
    g = gate.float()
    expected = (residual.float() + g * torch.sigmoid(g) * up.float()).half()
    print(f"device {device_id}: max diff {(out.float() - expected.float()).abs().max().item()}")


if __name__ == "__main__":
    test_swiglu_residual()
