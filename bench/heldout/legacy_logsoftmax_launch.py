#!/usr/bin/env python3
# coding: utf-8
"""
Row log-softmax recorded with pypto.function and launched through the runtime helpers.
"""
import os

from numpy.testing import assert_allclose
import torch

import pypto

ROWS, COLS = 64, 64


def build_log_softmax(x, res):
    with pypto.function("ROW_LOG_SOFTMAX", x, res):
        for _ in pypto.loop(1, name="LSM_L0", idx_name="l_idx"):
            pypto.set_vec_tile_shapes(16, COLS)
            row_max = pypto.amax(x, -1, keepdim=True)
            shifted = x - row_max
            lse = pypto.log(pypto.sum(pypto.exp(shifted), -1, keepdim=True))
            res.move(shifted - lse)


def test_log_softmax_legacy():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()

    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    res = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "res")
    build_log_softmax(x, res)

    x_host = torch.rand(ROWS, COLS, dtype=torch.float32) * 30 - 15
    res_host = torch.zeros(ROWS, COLS, dtype=torch.float32)
    pto_x = pypto.from_torch(x_host, "x_host")
    pto_res = pypto.from_torch(res_host, "res_host")
    pypto.runtime._device_run_once_data_from_host(pto_x, pto_res)

    assert_allclose(res_host.numpy(), torch.log_softmax(x_host, -1).numpy(), atol=1e-4)
    pypto.runtime._device_fini()


if __name__ == "__main__":
    test_log_softmax_legacy()
