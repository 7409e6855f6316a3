"""LayerNorm with affine parameters, processed in large row blocks."""

import torch

import pypto

ROWS = 2048
HIDDEN = 1024
ROW_BLOCK = 512
EPS = 1e-5


def layer_norm_block(xb, gamma, beta):
    inv_h = 1.0 / HIDDEN
    mean = pypto.sum(xb, -1, keepdim=True) * inv_h
    centered = xb - mean
    var = pypto.sum(centered * centered, -1, keepdim=True) * inv_h
    inv_std = pypto.rsqrt(var + EPS)
    normed = centered * inv_std
    return normed * gamma + beta


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def layer_norm(
    x: pypto.Tensor[[ROWS, HIDDEN], pypto.DT_FP32],
    gamma: pypto.Tensor[[1, HIDDEN], pypto.DT_FP32],
    beta: pypto.Tensor[[1, HIDDEN], pypto.DT_FP32],
    y: pypto.Tensor[[ROWS, HIDDEN], pypto.DT_FP32],
):
    # small tiles keep every intermediate well inside UB
    pypto.set_vec_tile_shapes(8, 32)
    for r in pypto.loop(ROWS // ROW_BLOCK, name="ln_rows", idx_name="r"):
        xb = pypto.view(x, [ROW_BLOCK, HIDDEN], [r * ROW_BLOCK, 0])
        yb = layer_norm_block(xb, gamma, beta)
        pypto.assemble(yb, [r * ROW_BLOCK, 0], y)


def test_layer_norm():
    x = torch.randn(ROWS, HIDDEN)
    gamma = torch.rand(1, HIDDEN) + 0.5
    beta = torch.randn(1, HIDDEN) * 0.1
    y = torch.zeros(ROWS, HIDDEN)
    layer_norm(x, gamma, beta, y)
    ref = torch.nn.functional.layer_norm(x, (HIDDEN,), gamma[0], beta[0], EPS)
    assert y.shape == ref.shape


if __name__ == "__main__":
    test_layer_norm()
