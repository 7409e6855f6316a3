"""Bias add followed by GELU (sigmoid approximation), recorded as a legacy pypto.function graph.

The graph is built directly on tensors converted with pypto.from_torch; leaving the
function context compiles the graph and runs it on the device.
"""
import os

import torch

import pypto

ROWS, COLS = 64, 512
GELU_ALPHA = 1.702
FP32 = pypto.DT_FP32


def launch_bias_gelu(x_t, bias_t, y_t):
    """Run y = gelu(x + bias) on the tensors' device; bias is a [1, COLS] row."""
    x = pypto.from_torch(x_t, "x")
    bias = pypto.from_torch(bias_t, "bias")
    y = pypto.from_torch(y_t, "y")
    with pypto.function("BIAS_GELU", x, bias, y):
        pypto.set_vec_tile_shapes(8, COLS)
        for _ in pypto.loop(1, name="bias_stage", idx_name="s0"):
            h = pypto.add(x, bias)
        for _ in pypto.loop(1, name="gelu_stage", idx_name="s1"):
            y.move(h * pypto.sigmoid(h * GELU_ALPHA))


def bias_gelu_golden(x, bias):
    h = x + bias
    return h * torch.sigmoid(GELU_ALPHA * h)


def test_bias_gelu_onboard():
    import torch_npu  # noqa: F401  (registers the npu device with torch)

    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    device = f"npu:{device_id}"
    x_t = torch.randn(ROWS, COLS, dtype=torch.float32, device=device)
    bias_t = torch.randn(1, COLS, dtype=torch.float32, device=device)
    y_t = torch.zeros(ROWS, COLS, dtype=torch.float32, device=device)

    launch_bias_gelu(x_t, bias_t, y_t)

    expected = bias_gelu_golden(x_t.cpu(), bias_t.cpu())
    torch.testing.assert_close(y_t.cpu(), expected, rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    test_bias_gelu_onboard()
