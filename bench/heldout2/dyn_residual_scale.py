"""Residual add with a learned per-channel scale (layer-scale) on a variable token count."""

import torch

import pypto

HID = 256
BLK = 32


def row_block(t, i, n_rows):
    start = i * BLK
    if start + BLK > n_rows:
        rows = n_rows - start
    else:
        rows = BLK
    return pypto.view(t, [BLK, HID], [start, 0], valid_shape=[rows, HID])


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def residual_layer_scale(
    x: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_FP16),
    residual: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_FP16),
    ls: pypto.Tensor([1, HID], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_FP16),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(BLK, HID)
    for i in pypto.loop((n + BLK - 1) // BLK, name="tok", idx_name="i"):
        xb = row_block(x, i, n)
        rb = pypto.view(residual, [BLK, HID], [i * BLK, 0])
        pypto.assemble(rb + xb * ls, [i * BLK, 0], y)


def test_residual_layer_scale():
    for n_tok in (64, 100, 7):
        x = torch.randn(n_tok, HID, dtype=torch.float16)
        res = torch.randn(n_tok, HID, dtype=torch.float16)
        ls = torch.full((1, HID), 0.1, dtype=torch.float16)
        y = torch.zeros(n_tok, HID, dtype=torch.float16)
        residual_layer_scale(x, res, ls, y)
        ref = res + x * ls
        assert y.shape == ref.shape


if __name__ == "__main__":
    test_residual_layer_scale()
