# near-miss: PTO005 PTO003
"""Shapes bound at the call: Tensor([]), Tensor(()) and Tensor[[...], dt] are not rank 0."""
import torch

import pypto


@pypto.frontend.jit
def scale_rows(
    x: pypto.Tensor([], pypto.DT_FP32),
    bias: pypto.Tensor((), pypto.DT_FP32),
    out: pypto.Tensor[[pypto.STATIC, pypto.STATIC], pypto.DT_FP32],
):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x * 0.5 + bias


def test_scale_rows():
    x = torch.rand(32, 64)
    out = torch.empty(32, 64)
    scale_rows(x, torch.rand(32, 64), out)
