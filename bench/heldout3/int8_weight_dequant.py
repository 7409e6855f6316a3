"""Dequantise an int8 weight matrix with per-row fp16 scales: w = q * scale.

q [200, 256] int8, scale [200, 1] fp16, w [200, 256] fp16. Rows go in blocks of 32;
200 is not a multiple of 32, so the last block is a partial one.
"""
from dataclasses import dataclass

import torch

import pypto

INT8 = pypto.DT_INT8
FP16 = pypto.DT_FP16


@dataclass
class DequantCfg:
    rows: int = 200
    cols: int = 256
    row_blk: int = 32
    vec_cores: int = 48

    @property
    def n_blocks(self):
        return (self.rows + self.row_blk - 1) // self.row_blk

    @property
    def tail_rows(self):
        return self.rows - (self.n_blocks - 1) * self.row_blk


CFG = DequantCfg()


def dequant_block(q, scale, w, blk, cfg):
    """Dequantise row block `blk`; the last block only holds cfg.tail_rows rows."""
    row0 = blk * cfg.row_blk
    if blk == cfg.n_blocks - 1:
        rows = cfg.tail_rows
    else:
        rows = cfg.row_blk
    qb = pypto.view(q, [cfg.row_blk, cfg.cols], [row0, 0], valid_shape=[rows, cfg.cols])
    sb = pypto.view(scale, [cfg.row_blk, 1], [row0, 0], valid_shape=[rows, 1])
    pypto.assemble(pypto.cast(qb, FP16) * sb, [row0, 0], w)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def dequant_int8(
    q: pypto.Tensor([CFG.rows, CFG.cols], INT8),
    scale: pypto.Tensor([CFG.rows, 1], FP16),
    w: pypto.Tensor([CFG.rows, CFG.cols], FP16),
):
    # spread every row block over all vector cores
    tile_rows = CFG.row_blk // CFG.vec_cores
    pypto.set_vec_tile_shapes(tile_rows, CFG.cols)
    for blk in pypto.loop(CFG.n_blocks, name="dequant_rows", idx_name="blk"):
        dequant_block(q, scale, w, blk, CFG)


def test_dequant_int8():
    q = torch.randint(-128, 128, (CFG.rows, CFG.cols), dtype=torch.int8)
    scale = (torch.rand(CFG.rows, 1) / 64).half()
    w = torch.zeros(CFG.rows, CFG.cols, dtype=torch.float16)
    dequant_int8(q, scale, w)
    ref = q.half() * scale
    assert ref.shape == w.shape
