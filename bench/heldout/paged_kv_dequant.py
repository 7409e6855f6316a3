#!/usr/bin/env python3
# coding: utf-8
"""
Paged KV-cache gather + dequant: copy the blocks a request owns into a dense buffer.

block_table[b, j] gives the physical block of the j-th logical block of request b;
seq_lens[b] is the number of valid tokens, so the last block is usually partial.
"""
import os

import torch

import pypto

BATCH = 2
MAX_BLOCKS = 4
BLOCK = 32
DIM = 128
N_PHYS = 16


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def paged_kv_dequant_kernel(
    kv_cache: pypto.Tensor([N_PHYS * BLOCK, DIM], pypto.DT_FP16),
    block_table: pypto.Tensor([BATCH, MAX_BLOCKS], pypto.DT_INT32),
    seq_lens: pypto.Tensor([BATCH], pypto.DT_INT32),
    kv_scale: pypto.Tensor([1, DIM], pypto.DT_FP32),
    dense: pypto.Tensor([BATCH * MAX_BLOCKS * BLOCK, DIM], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(BLOCK, DIM)
    for b in pypto.loop(BATCH, name="REQ_LOOP", idx_name="b"):
        n_tok = seq_lens[b]
        n_blk = (n_tok + BLOCK - 1) // BLOCK
        for j in pypto.loop(n_blk, name="BLK_LOOP", idx_name="j"):
            phys = block_table[b, j]
            print("gather request", b, "block", j, "->", phys)
            raw = pypto.view(kv_cache, [BLOCK, DIM], [phys * BLOCK, 0])
            deq = pypto.cast(raw, pypto.DT_FP32) * kv_scale
            row0 = (b * MAX_BLOCKS + j) * BLOCK
            pypto.assemble(deq, [row0, 0], dense)


def test_paged_kv_dequant():
    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    on_npu = bool(os.environ.get("ASCEND_HOME_PATH"))
    if on_npu:
        torch.npu.set_device(device_id)
    kv_cache = torch.randn(N_PHYS * BLOCK, DIM, dtype=torch.float16)
    block_table = torch.randint(0, N_PHYS, (BATCH, MAX_BLOCKS), dtype=torch.int32)
    seq_lens = torch.tensor([100, 47], dtype=torch.int32)
    kv_scale = torch.rand(1, DIM, dtype=torch.float32)
    dense = torch.zeros(BATCH * MAX_BLOCKS * BLOCK, DIM, dtype=torch.float32)
    paged_kv_dequant_kernel(kv_cache, block_table, seq_lens, kv_scale, dense)
