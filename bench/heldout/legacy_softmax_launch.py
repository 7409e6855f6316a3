#!/usr/bin/env python3
# coding: utf-8
"""
Row softmax written with the legacy graph-recording API (no jit decorator).

The graph is recorded inside `pypto.function` and launched explicitly with the
runtime helpers, the way the older system tests did it.
"""
from numpy.testing import assert_allclose
import torch

import pypto

ROWS, COLS = 32, 64


def build_softmax_graph(x, res):
    with pypto.function("ROW_SOFTMAX", x, res):
        for _ in pypto.loop(1, name="SOFTMAX_L0", idx_name="s_idx"):
            pypto.set_vec_tile_shapes(8, COLS)
            row_max = pypto.amax(x, -1, keepdim=True)
            shifted = pypto.exp(x - row_max)
            denom = pypto.sum(shifted, -1, keepdim=True)
            res.move(shifted / denom)


def test_row_softmax_legacy():
    pypto.runtime._device_init()
    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    res = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "res")
    build_softmax_graph(x, res)

    x_host = torch.rand(ROWS, COLS, dtype=torch.float32) * 20 - 10
    res_host = torch.zeros(ROWS, COLS, dtype=torch.float32)
    pto_x = pypto.from_torch(x_host, "x_host")
    pto_res = pypto.from_torch(res_host, "res_host")
    pypto.runtime._device_run_once_data_from_host(pto_x, pto_res)

    expected = torch.softmax(x_host, -1)
    assert_allclose(res_host.numpy(), expected.numpy(), atol=1e-4)
    pypto.runtime._device_fini()


if __name__ == "__main__":
    test_row_softmax_legacy()
