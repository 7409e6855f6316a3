#!/usr/bin/env python3
# coding: utf-8
"""
Decode-step attention score scaling and masking, batch x head nest.

scores: [BATCH * HEADS, KV_LEN] logits for one new token per request;
mask:   [BATCH, KV_LEN] additive mask shared by all heads of a request.
"""
import os

import pytest
import torch

import pypto

BATCH = 8
HEADS = 4
KV_LEN = 256


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def decode_scale_mask_kernel(
    scores: pypto.Tensor([BATCH * HEADS, KV_LEN], pypto.DT_FP32),
    mask: pypto.Tensor([BATCH, KV_LEN], pypto.DT_FP32),
    out: pypto.Tensor([BATCH * HEADS, KV_LEN], pypto.DT_FP32),
    scale: float = 0.0883883,
):
    pypto.set_vec_tile_shapes(1, KV_LEN)
    for b in pypto.loop(BATCH, name="REQ", idx_name="b", unroll_list=[1, 2, 4]):
        m = pypto.view(mask, [1, KV_LEN], [b, 0])
        for h in pypto.loop(HEADS, name="HEAD", idx_name="h"):
            row = b * HEADS + h
            s = pypto.view(scores, [1, KV_LEN], [row, 0])
            out[row:row + 1, :] = s * scale + m


def decode_case(scale):
    scores = torch.randn(BATCH * HEADS, KV_LEN)
    mask = torch.zeros(BATCH, KV_LEN)
    mask[:, 200:] = -1e4
    out = torch.zeros(BATCH * HEADS, KV_LEN)
    decode_scale_mask_kernel(scores, mask, out, scale)
    return scores, mask, out


@pytest.mark.parametrize("scale", [0.0883883, 0.125])
def test_decode_scale_mask(scale):
    scores, mask, out = decode_case(scale)
    if os.environ.get("ASCEND_HOME_PATH"):
        ref = scores * scale + mask.repeat_interleave(HEADS, 0)
        torch.testing.assert_close(out, ref)
