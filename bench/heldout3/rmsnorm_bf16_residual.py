"""RMSNorm over bf16 activations with fp32 statistics and an optional residual add.

Static block of 256 tokens x 1024 hidden; gamma is a [1, hidden] row.
"""
import os

import torch

import pypto

TOKENS = 256
HIDDEN = 1024
EPS = 1e-6
BF16 = pypto.DT_BF16
FP32 = pypto.DT_FP32

RUN_MODE = pypto.RunMode.NPU if os.environ.get("ASCEND_HOME_PATH") else pypto.RunMode.SIM


@pypto.frontend.jit(runtime_options={"run_mode": RUN_MODE})
def rmsnorm_residual(
    x: pypto.Tensor[[TOKENS, HIDDEN], BF16],
    gamma: pypto.Tensor[[1, HIDDEN], BF16],
    out: pypto.Tensor[[TOKENS, HIDDEN], BF16],
    eps: float = EPS,
    add_residual: bool = False,
):
    # four full rows per tile: the reduction axis is never split
    pypto.set_vec_tile_shapes(4, HIDDEN)
    xf = pypto.cast(x, FP32)
    gf = pypto.cast(gamma, FP32)

    mean_sq = pypto.sum(xf * xf, -1, keepdim=True) * (1.0 / HIDDEN)
    rstd = pypto.rsqrt(mean_sq + eps)
    normed = xf * rstd * gf

    y = pypto.cast(normed, BF16)
    if add_residual:
        y = y + x
    out = y


def rmsnorm_golden(x, gamma, eps=EPS, add_residual=False):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * gamma.float()
    y = y.to(torch.bfloat16)
    if add_residual:
        y = y + x
    return y


@pypto.options(name="rmsnorm_bf16", runtime_options={"stitch_function_max_num": 64})
def test_rmsnorm_residual():
    torch.manual_seed(7)
    x = torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16)
    gamma = (torch.rand(1, HIDDEN) + 0.5).to(torch.bfloat16)
    out = torch.zeros(TOKENS, HIDDEN, dtype=torch.bfloat16)

    rmsnorm_residual(x, gamma, out, EPS, True)

    if RUN_MODE == pypto.RunMode.NPU:
        ref = rmsnorm_golden(x, gamma, add_residual=True)
        torch.testing.assert_close(out.float(), ref.float(), rtol=2e-2, atol=2e-2)


if __name__ == "__main__":
    test_rmsnorm_residual()
