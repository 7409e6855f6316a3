"""Linear + bias + ReLU in bf16: out = relu(x @ w + bias).

The cube part and the vector epilogue are written as two stages.
x [64, 512], w [512, 256], bias [1, 256], all bf16; accumulation in fp32.
"""
import os

import torch

import pypto

M, K, N = 64, 512, 256
BF16 = pypto.DT_BF16
FP32 = pypto.DT_FP32


def get_device_id():
    return int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))


@pypto.frontend.jit(
    runtime_options={"run_mode": pypto.RunMode.SIM},
    debug_options={"runtime_debug_mode": 3},
)
def linear_bias_relu(
    x: pypto.Tensor([M, K], BF16),
    w: pypto.Tensor([K, N], BF16),
    bias: pypto.Tensor([1, N], BF16),
    out: pypto.Tensor([M, N], BF16),
):
    pypto.set_vec_tile_shapes(16, N)
    for _ in pypto.loop(1, name="proj", idx_name="p"):
        acc = pypto.matmul(x, w, FP32)
    for _ in pypto.loop(1, name="epilogue", idx_name="q"):
        y = acc + pypto.cast(bias, FP32)
        out[:] = pypto.cast(pypto.relu(y), BF16)


def linear_golden(x, w, bias):
    return torch.relu(x.float() @ w.float() + bias.float()).to(torch.bfloat16)


@pypto.options(name="linear_bias_relu", pass_options={"cube_nbuffer_setting": {-1: 1}})
def test_linear_bias_relu():
    torch.manual_seed(11)
    x = torch.randn(M, K, dtype=torch.bfloat16) * 0.1
    w = torch.randn(K, N, dtype=torch.bfloat16) * 0.1
    bias = torch.randn(1, N, dtype=torch.bfloat16)
    out = torch.empty(M, N, dtype=torch.bfloat16)
    linear_bias_relu(x, w, bias, out)
    expected = linear_golden(x, w, bias)
    assert expected.shape == out.shape


if __name__ == "__main__":
    print("device", get_device_id())
    test_linear_bias_relu()
