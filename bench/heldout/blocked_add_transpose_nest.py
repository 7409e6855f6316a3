#!/usr/bin/env python3
# coding: utf-8
"""
out = (a + b)^T computed tile by tile, followed by a second pass that rescales
the transposed rows.  Nested loops use distinct index names; the sibling pass reuses
the loop names of the first pass, and only the innermost loop is unrolled.
"""
import os

import torch

import pypto

R, C = 128, 128
T = 32


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def add_transpose_kernel(
    a: pypto.Tensor([R, C], pypto.DT_FP32),
    b: pypto.Tensor([R, C], pypto.DT_FP32),
    row_scale: pypto.Tensor([C, 1], pypto.DT_FP32),
    out: pypto.Tensor([C, R], pypto.DT_FP32),
    tmp: pypto.Tensor([C, R], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(T, T)
    for i in pypto.loop(R // T, name="ROW_T", idx_name="i"):
        for j in pypto.loop(C // T, name="COL_T", idx_name="j", unroll_list=[1, 2, 4]):
            sa = pypto.view(a, [T, T], [i * T, j * T])
            sb = pypto.view(b, [T, T], [i * T, j * T])
            pypto.assemble(pypto.transpose(sa + sb, 0, 1), [j * T, i * T], tmp)
    for i in pypto.loop(C // T, name="ROW_T", idx_name="i", submit_before_loop=True):
        rows = pypto.view(tmp, [T, R], [i * T, 0])
        sc = pypto.view(row_scale, [T, 1], [i * T, 0])
        out[i * T:(i + 1) * T, :] = rows * sc


def test_add_transpose():
    dev = "cpu"
    if os.environ.get("ASCEND_HOME_PATH"):
        device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
        torch.npu.set_device(device_id)
        dev = f"npu:{device_id}"
    a = torch.randn(R, C, device=dev)
    b = torch.randn(R, C, device=dev)
    row_scale = torch.rand(C, 1, device=dev)
    out = torch.zeros(C, R, device=dev)
    tmp = torch.zeros(C, R, device=dev)
    add_transpose_kernel(a, b, row_scale, out, tmp)
    if dev != "cpu":
        torch.testing.assert_close(out.cpu(), ((a + b).t() * row_scale).cpu())
