#!/usr/bin/env python3
# coding: utf-8
"""
Per-sequence scaling of a padded [B, S, H] batch where only the first act_seqs[b]
rows of each sequence carry data.  The views declare the data-dependent valid extent.
"""
import os

import torch

import pypto

B, S, H = 4, 64, 64


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def seq_scale_kernel(
    inp: pypto.Tensor([B, S, H], pypto.DT_FP32),
    act_seqs: pypto.Tensor([B], pypto.DT_INT32),
    scale: pypto.Tensor([B, 1, H], pypto.DT_FP32),
    out: pypto.Tensor([B, S, H], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, 32, H)
    for b in pypto.loop(B, name="SEQ", idx_name="b"):
        cur_len = act_seqs[b]
        rows = pypto.view(inp, [1, S, H], [b, 0, 0], valid_shape=[1, cur_len, H])
        sc = pypto.view(scale, [1, 1, H], [b, 0, 0])
        out[b:b + 1, :, :] = rows * sc


def run_case(device):
    inp = torch.randn(B, S, H, device=device)
    act = torch.tensor([64, 10, 33, 1], dtype=torch.int32, device=device)
    scale = torch.rand(B, 1, H, device=device)
    out = torch.zeros(B, S, H, device=device)
    seq_scale_kernel(inp, act, scale, out)
    return inp, act, scale, out


def test_seq_scale():
    if os.environ.get("ASCEND_HOME_PATH"):
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        inp, act, scale, out = run_case(f"npu:{device_id}")
        for b in range(B):
            n = int(act[b])
            torch.testing.assert_close(out[b, :n].cpu(), (inp[b, :n] * scale[b]).cpu())
    else:
        run_case("cpu")
