"""SwiGLU up-projection of a feed-forward block, fp16 inputs, fp32 accumulation.

    gate = x @ w_gate,  up = x @ w_up,  out = silu(gate) * up
with x [128, 256], weights [256, 192].
"""
from dataclasses import dataclass

import torch

import pypto

M, K, INTER = 128, 256, 192
FP16 = pypto.DT_FP16
FP32 = pypto.DT_FP32


@dataclass
class FfnTiles:
    """Cube tiling; the N tile is derived from the intermediate size."""

    m: tuple = (64, 64)
    k: tuple = (64, 128)
    n_split: int = 8

    def n(self):
        n0 = INTER // self.n_split
        return [n0, 2 * n0]


TILES = FfnTiles()


@pypto.frontend.function
def swiglu_store(
    gate: pypto.Tensor([M, INTER], FP32),
    up: pypto.Tensor([M, INTER], FP32),
    dst: pypto.Tensor([M, INTER], FP16),
):
    pypto.set_vec_tile_shapes(32, INTER)
    # sigmoid is fp32-only, so the activation is formed before the downcast
    dst[:] = pypto.cast(gate * pypto.sigmoid(gate), FP16)
    dst *= pypto.cast(up, FP16)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def ffn_up_kernel(
    x: pypto.Tensor([M, K], FP16),
    w_gate: pypto.Tensor([K, INTER], FP16),
    w_up: pypto.Tensor([K, INTER], FP16),
    out: pypto.Tensor([M, INTER], FP16),
):
    pypto.set_cube_tile_shapes(list(TILES.m), list(TILES.k), TILES.n())
    gate = pypto.matmul(x, w_gate, FP32)
    up = pypto.matmul(x, w_up, FP32)
    swiglu_store(gate, up, out)


def ffn_golden(x, w_gate, w_up):
    g = x.float() @ w_gate.float()
    u = x.float() @ w_up.float()
    return (torch.nn.functional.silu(g) * u).half()


@pypto.options(name="ffn_up", pass_options={"cube_l1_reuse_setting": {-1: 2}})
def test_ffn_up_fp16():
    torch.manual_seed(0)
    x = torch.randn(M, K, dtype=torch.float16) * 0.1
    w_gate = torch.randn(K, INTER, dtype=torch.float16) * 0.05
    w_up = torch.randn(K, INTER, dtype=torch.float16) * 0.05
    out = torch.empty(M, INTER, dtype=torch.float16)
    ffn_up_kernel(x, w_gate, w_up, out)
    expected = ffn_golden(x, w_gate, w_up)
    assert out.shape == expected.shape
