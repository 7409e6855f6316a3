#!/usr/bin/env python3
# coding: utf-8
"""
Rotary position embedding applied to Q in token blocks (half-split layout).

q_out[:, :D/2] = q1 * cos - q2 * sin ;  q_out[:, D/2:] = q2 * cos + q1 * sin
"""
import os

import pytest
import torch

import pypto

TOKENS, D = 256, 128
HALF = D // 2
TB = 32


def rotate(q1, q2, cos, sin):
    """Plain helper returning both rotated halves."""
    lo = q1 * cos - q2 * sin
    hi = q2 * cos + q1 * sin
    return lo, hi


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def rope_kernel(
    q: pypto.Tensor([TOKENS, D], pypto.DT_FP32),
    cos: pypto.Tensor([TOKENS, HALF], pypto.DT_FP32),
    sin: pypto.Tensor([TOKENS, HALF], pypto.DT_FP32),
    q_out: pypto.Tensor([TOKENS, D], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TB, HALF)
    for t in pypto.loop(TOKENS // TB, name="ROPE_TOK", idx_name="t"):
        q1 = pypto.view(q, [TB, HALF], [t * TB, 0])
        q2 = pypto.view(q, [TB, HALF], [t * TB, HALF])
        c = pypto.view(cos, [TB, HALF], [t * TB, 0])
        s = pypto.view(sin, [TB, HALF], [t * TB, 0])
        lo, hi = rotate(q1, q2, c, s)
        q_out[t * TB:(t + 1) * TB, 0:HALF] = lo
        q_out[t * TB:(t + 1) * TB, HALF:D] = hi


@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_rope(base):
    pos = torch.arange(TOKENS).float()[:, None]
    inv = base ** (-torch.arange(HALF).float() / HALF)
    cos, sin = torch.cos(pos * inv), torch.sin(pos * inv)
    q = torch.randn(TOKENS, D)
    q_out = torch.zeros(TOKENS, D)
    rope_kernel(q, cos, sin, q_out)
    if os.environ.get("ASCEND_HOME_PATH"):
        q1, q2 = q[:, :HALF], q[:, HALF:]
        ref = torch.cat([q1 * cos - q2 * sin, q2 * cos + q1 * sin], -1)
        torch.testing.assert_close(q_out, ref, rtol=1e-4, atol=1e-4)
