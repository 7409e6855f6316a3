#!/usr/bin/env python3
# coding: utf-8
"""
Fake-quantisation round trip (quantise -> dequantise) recorded with the legacy API.

Stage 1 computes x / s rounded, stage 2 rescales it; both live in one pypto.function.
"""
import os

from numpy.testing import assert_allclose
import torch

import pypto

SHAPE = [128, 64]


def record_fake_quant(x, scale, y):
    with pypto.function("FAKE_QUANT", x, scale, y):
        pypto.set_vec_tile_shapes(32, 64)
        for _ in pypto.loop(1, name="QUANT", idx_name="q_idx"):
            q = pypto.round(x / scale)
            q = pypto.clip(q, -128.0, 127.0)
        for _ in pypto.loop(1, name="DEQUANT", idx_name="d_idx"):
            y.move(q * scale)


def test_fake_quant_legacy():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(device_id)
    pypto.runtime._device_init()

    x = pypto.tensor(SHAPE, pypto.DT_FP32, "x")
    scale = pypto.tensor([SHAPE[0], 1], pypto.DT_FP32, "scale")
    y = pypto.tensor(SHAPE, pypto.DT_FP32, "y")
    record_fake_quant(x, scale, y)

    x_host = torch.randn(*SHAPE) * 4
    s_host = x_host.abs().amax(-1, keepdim=True) / 127.0
    y_host = torch.zeros(*SHAPE)
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x_host, "x_host"), pypto.from_torch(s_host, "s_host"),
        pypto.from_torch(y_host, "y_host"))
    ref = torch.clamp(torch.round(x_host / s_host), -128, 127) * s_host
    assert_allclose(y_host.numpy(), ref.numpy(), atol=1e-5)
    pypto.runtime._device_fini()
