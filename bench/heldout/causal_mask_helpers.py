#!/usr/bin/env python3
# coding: utf-8
"""
Causal block masking for attention scores, with the per-block decision factored into
plain Python helpers.  Runtime branches in helpers go through pypto.cond; compile-time
switches (Python bools, static shapes) use ordinary `if`.
"""
import os

import pytest
import torch

import pypto

Q_LEN = 128
KV_LEN = 128
QB = 32
NEG = -1e4


def apply_block_mask(scores_blk, qb, kb, tri_mask, out_blk_offset, out):
    """Plain helper: kb > qb fully masked, kb == qb triangular, else untouched."""
    if pypto.cond(kb > qb):
        pypto.assemble(scores_blk * 0.0 + NEG, out_blk_offset, out)
    elif pypto.cond(kb == qb):
        pypto.assemble(scores_blk + tri_mask, out_blk_offset, out)
    else:
        pypto.assemble(scores_blk * 1.0, out_blk_offset, out)


def maybe_scale(blk, use_scale, scale):
    if use_scale and blk.shape[0] == QB:
        return blk * scale
    return blk


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def causal_mask_kernel(
    scores: pypto.Tensor([Q_LEN, KV_LEN], pypto.DT_FP32),
    tri_mask: pypto.Tensor([QB, QB], pypto.DT_FP32),
    out: pypto.Tensor([Q_LEN, KV_LEN], pypto.DT_FP32),
    use_scale: bool = True,
    scale: float = 0.125,
):
    pypto.set_vec_tile_shapes(QB, QB)
    for qb in pypto.loop(Q_LEN // QB, name="QBLK", idx_name="qb"):
        for kb in pypto.loop(KV_LEN // QB, name="KBLK", idx_name="kb"):
            blk = pypto.view(scores, [QB, QB], [qb * QB, kb * QB])
            blk = maybe_scale(blk, use_scale, scale)
            apply_block_mask(blk, qb, kb, tri_mask, [qb * QB, kb * QB], out)


@pytest.mark.parametrize("use_scale", [True, False])
def test_causal_mask(use_scale):
    scores = torch.randn(Q_LEN, KV_LEN)
    tri = torch.triu(torch.full((QB, QB), NEG), diagonal=1)
    out = torch.zeros(Q_LEN, KV_LEN)
    causal_mask_kernel(scores, tri, out, use_scale, 0.125)
