"""SwiGLU activation for the MoE expert FFN, built per model config by a kernel factory."""

from dataclasses import dataclass

import torch

import pypto


@dataclass(frozen=True)
class FfnCfg:
    tokens: int = 1024
    inter: int = 1024
    row_blk: int = 32
    col_blk: int = 256


def make_swiglu(cfg: FfnCfg):
    t, i = cfg.tokens, cfg.inter
    rb, cb = cfg.row_blk, cfg.col_blk

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def swiglu(
        gate_up: pypto.Tensor([t, 2 * i], pypto.DT_FP32),
        out: pypto.Tensor([t, i], pypto.DT_FP32),
    ):
        pypto.set_vec_tile_shapes(rb, cb)
        for r in pypto.loop(t // rb, name="tok", idx_name="r", unroll_list=[1, 2, 4]):
            for c in pypto.loop(i // cb, name="col", idx_name="c"):
                g = pypto.view(gate_up, [rb, cb], [r * rb, c * cb])
                u = pypto.view(gate_up, [rb, cb], [r * rb, i + c * cb])
                act = g * pypto.sigmoid(g)
                out[r * rb:(r + 1) * rb, c * cb:(c + 1) * cb] = act * u

    return swiglu


def test_swiglu():
    cfg = FfnCfg()
    kernel = make_swiglu(cfg)
    gu = torch.randn(cfg.tokens, 2 * cfg.inter, dtype=torch.float32)
    out = torch.zeros(cfg.tokens, cfg.inter, dtype=torch.float32)
    kernel(gu, out)
    g, u = gu.chunk(2, dim=-1)
    ref = torch.nn.functional.silu(g) * u
    assert out.shape == ref.shape


if __name__ == "__main__":
    test_swiglu()
