#!/usr/bin/env python3
# coding: utf-8
"""
Variable-length sequences packed along rows (cu_seqlens layout).

Each sequence b occupies rows [cu_seqlens[b], cu_seqlens[b + 1]) of `x`; every row of a
sequence is scaled by the sequence's own factor.  Sequences are at most MAX_SEQ rows.
"""
import os

import torch

import pypto

BATCH = 4
MAX_SEQ = 64
HID = 128
TOTAL = BATCH * MAX_SEQ


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def varlen_scale_kernel(
    x: pypto.Tensor([TOTAL, HID], pypto.DT_FP32),
    cu_seqlens: pypto.Tensor([BATCH + 1], pypto.DT_INT32),
    seq_scale: pypto.Tensor([BATCH, 1], pypto.DT_FP32),
    out: pypto.Tensor([TOTAL, HID], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(32, HID)
    for b in pypto.loop(BATCH, name="SEQ_LOOP", idx_name="b"):
        start = cu_seqlens[b]
        seq_len = cu_seqlens[b + 1] - start
        seg = pypto.view(x, [MAX_SEQ, HID], [start, 0])
        factor = pypto.view(seq_scale, [1, 1], [b, 0])
        pypto.assemble(seg * factor, [start, 0], out)


def test_varlen_scale():
    torch.manual_seed(11)
    lens = [64, 17, 40, 5]
    cu = torch.tensor([0] + list(torch.cumsum(torch.tensor(lens), 0)), dtype=torch.int32)
    x = torch.randn(TOTAL, HID, dtype=torch.float32)
    seq_scale = torch.rand(BATCH, 1, dtype=torch.float32)
    out = torch.zeros(TOTAL, HID, dtype=torch.float32)
    varlen_scale_kernel(x, cu, seq_scale, out)
    if os.environ.get("ASCEND_HOME_PATH"):
        for b, n in enumerate(lens):
            s = int(cu[b])
            torch.testing.assert_close(out[s:s + n], x[s:s + n] * seq_scale[b], atol=1e-5, rtol=1e-5)
