#!/usr/bin/env python3
# coding: utf-8
"""
MoE combine: weighted sum of the expert outputs routed to each token block.

expert_out: [TOPK * TOKENS, HID]  (slot-major: slot e of token t is row e*TOKENS + t)
weights:    [TOKENS, TOPK]        routing weights
n_active:   [TOKENS // TB]        number of valid slots per token block (<= TOPK)
"""
import os

import torch

import pypto

TOKENS = 64
TB = 16
TOPK = 8
HID = 128


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def moe_combine_kernel(
    expert_out: pypto.Tensor([TOPK * TOKENS, HID], pypto.DT_FP32),
    weights: pypto.Tensor([TOKENS, TOPK], pypto.DT_FP32),
    n_active: pypto.Tensor([TOKENS // TB], pypto.DT_INT32),
    out: pypto.Tensor([TOKENS, HID], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TB, HID)
    for t in pypto.loop(TOKENS // TB, name="TOK_BLK", idx_name="t"):
        active = n_active[t]
        acc = pypto.tensor([TB, HID], pypto.DT_FP32, "acc")
        acc[:] = pypto.full([TB, HID], 0.0, pypto.DT_FP32)
        for e in pypto.loop(TOPK, name="SLOT", idx_name="e", unroll_list=[1, 2, 4]):
            if e < active:
                rows = pypto.view(expert_out, [TB, HID], [e * TOKENS + t * TB, 0])
                w = pypto.view(weights, [TB, 1], [t * TB, e])
                acc[:] = acc + rows * w
        out[t * TB:(t + 1) * TB, :] = acc * 1.0


def test_moe_combine():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    if os.environ.get("ASCEND_HOME_PATH"):
        torch.npu.set_device(device_id)
    expert_out = torch.randn(TOPK * TOKENS, HID)
    weights = torch.softmax(torch.randn(TOKENS, TOPK), -1)
    n_active = torch.tensor([8, 6, 2, 8], dtype=torch.int32)
    out = torch.zeros(TOKENS, HID)
    moe_combine_kernel(expert_out, weights, n_active, out)
