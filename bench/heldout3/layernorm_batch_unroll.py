"""LayerNorm over [batch * seq, hidden] fp32, walked batch by batch and seq block by seq block.

Tiling knobs live in one config object so a tuning script can sweep them.
"""
import torch

import pypto

FP32 = pypto.DT_FP32


class LnTiling:
    def __init__(self, batch=4, seq=256, hidden=512, seq_block=32, batch_unroll=(2, 1)):
        self.batch = batch
        self.seq = seq
        self.hidden = hidden
        self.seq_block = seq_block
        self.batch_unroll = list(batch_unroll)


TILING = LnTiling()
EPS = 1e-5


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def layernorm_bs(
    x: pypto.Tensor((TILING.batch * TILING.seq, TILING.hidden), FP32),
    gamma: pypto.Tensor((1, TILING.hidden), FP32),
    beta: pypto.Tensor((1, TILING.hidden), FP32),
    y: pypto.Tensor((TILING.batch * TILING.seq, TILING.hidden), FP32),
):
    cfg = TILING
    inv_h = 1.0 / cfg.hidden
    pypto.set_vec_tile_shapes(8, cfg.hidden)
    for b in pypto.loop(cfg.batch, name="ln_batch", idx_name="b", unroll_list=cfg.batch_unroll):
        for s in pypto.loop(cfg.seq // cfg.seq_block, name="ln_seq", idx_name="s"):
            row0 = b * cfg.seq + s * cfg.seq_block
            xb = pypto.view(x, [cfg.seq_block, cfg.hidden], [row0, 0])
            mean = pypto.sum(xb, -1, keepdim=True) * inv_h
            centered = xb - mean
            var = pypto.sum(centered * centered, -1, keepdim=True) * inv_h
            normed = centered * pypto.rsqrt(var + EPS)
            pypto.assemble(normed * gamma + beta, [row0, 0], y)


def test_layernorm_bs():
    n = TILING.batch * TILING.seq
    x = torch.randn(n, TILING.hidden)
    gamma = torch.rand(1, TILING.hidden) + 0.5
    beta = torch.randn(1, TILING.hidden) * 0.1
    y = torch.zeros(n, TILING.hidden)
    layernorm_bs(x, gamma, beta, y)
    ref = torch.nn.functional.layer_norm(x, (TILING.hidden,), gamma[0], beta[0], EPS)
    assert ref.shape == y.shape
