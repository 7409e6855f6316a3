#!/usr/bin/env python3
# coding: utf-8
"""
Legacy-API system tests for a gated scaling op and for a plain softmax.

Both tests record the graph with `pypto.function` and launch it on the device.
"""
import os

from numpy.testing import assert_allclose
import torch

import pypto

SHAPE = [64, 128]


def test_gated_scale_legacy():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()
    x = pypto.tensor(SHAPE, pypto.DT_FP32, "x")
    g = pypto.tensor(SHAPE, pypto.DT_FP32, "g")
    res = pypto.tensor(SHAPE, pypto.DT_FP32, "res")

    with pypto.function("GATED_SCALE", x, g, res):
        for _ in pypto.loop(1, name="GATE_L0", idx_name="g_idx"):
            pypto.set_vec_tile_shapes(32, 128)
            gate = pypto.tensor(SHAPE, pypto.DT_FP32, "gate")
            blended = x * pypto.sigmoid(gate)
            res.move(blended + g)

    x_host = torch.randn(*SHAPE)
    g_host = torch.randn(*SHAPE)
    res_host = torch.zeros(*SHAPE)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(g_host, "g_host"),
        pypto.from_torch(res_host, "res_host"))
    pypto.runtime._device_fini()


def test_softmax_legacy():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()
    x = pypto.tensor(SHAPE, pypto.DT_FP32, "x")
    res = pypto.tensor(SHAPE, pypto.DT_FP32, "res")

    with pypto.function("SOFTMAX_LEGACY", x, res):
        for _ in pypto.loop(1, name="SM_L0", idx_name="sm_idx"):
            pypto.set_vec_tile_shapes(16, 128)
            res = pypto.softmax(x, -1)

    x_host = torch.rand(*SHAPE) * 10
    res_host = torch.zeros(*SHAPE)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(res_host, "res_host"))
    assert_allclose(res_host.numpy(), torch.softmax(x_host, -1).numpy(), atol=1e-4)
    pypto.runtime._device_fini()
