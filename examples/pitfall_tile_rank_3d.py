"""Residual add + ReLU over a batched [B, S, H] activation.

Pitfall PTO003 (tile shape has fewer dims than the op output), line 24 in `residual_relu`: the
author set a 2-D vector tile (32, HIDDEN), thinking in rows x columns, but every op works on
3-D [BATCH, SEQ, HIDDEN] tensors; the tile needs 3 dims, e.g. `set_vec_tile_shapes(1, 32,
HIDDEN)`.  pypto 0.2.0 raises only `Run pass failed.`; the real reason ("Tile shape size 2 is
not matched the output shape size 3") is in the plog.

Expected diagnostics:
    PTO003 line 24
"""
import pypto

BATCH, SEQ, HIDDEN = 4, 64, 128
F32 = pypto.DT_FP32


@pypto.frontend.jit
def residual_relu(
    x: pypto.Tensor((BATCH, SEQ, HIDDEN), F32),
    residual: pypto.Tensor((BATCH, SEQ, HIDDEN), F32),
    out: pypto.Tensor((BATCH, SEQ, HIDDEN), F32),
):
    pypto.set_vec_tile_shapes(32, HIDDEN)  # PTO003
    out[:] = pypto.relu(x + residual)


def example_inputs():
    import torch

    g = torch.Generator().manual_seed(23)
    return {
        "x": torch.randn(BATCH, SEQ, HIDDEN, generator=g),
        "residual": torch.randn(BATCH, SEQ, HIDDEN, generator=g),
        "out": torch.zeros(BATCH, SEQ, HIDDEN),
    }


def reference(x, residual, out):
    import torch

    return {"out": torch.relu(x + residual)}
