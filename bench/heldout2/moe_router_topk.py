"""MoE gate: softmax over expert logits, top-2 selection and weight renormalisation."""

import os

import torch

import pypto

TOKENS = 512
EXPERTS = 64
TOP_K = 2
TOK_BLK = 64


def record_router(tokens, experts, top_k, blk):
    logits = pypto.tensor([tokens, experts], pypto.DT_FP32, "router_logits")
    weights = pypto.tensor([tokens, top_k], pypto.DT_FP32, "topk_weights")
    ids = pypto.tensor([tokens, top_k], pypto.DT_INT32, "topk_ids")
    n_tiles = tokens // blk
    with pypto.function("MOE_ROUTER", logits, weights, ids):
        for t in pypto.loop(n_tiles, name="tok_tiles", idx_name="t"):
            pypto.set_vec_tile_shapes(blk, experts)
            print("routing tile", t, "of", n_tiles)
            row0 = t * blk
            blk_logits = pypto.view(logits, [blk, experts], [row0, 0])
            probs = pypto.softmax(blk_logits, -1)
            vals, idx = pypto.topk(probs, top_k, -1)
            norm = vals / pypto.sum(vals, -1, keepdim=True)
            pypto.assemble(norm, [row0, 0], weights)
            pypto.assemble(idx, [row0, 0], ids)
    return logits, weights, ids


def run_router(logits_t):
    dev = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(dev)
    weights_t = torch.zeros(TOKENS, TOP_K, dtype=torch.float32)
    ids_t = torch.zeros(TOKENS, TOP_K, dtype=torch.int32)
    record_router(TOKENS, EXPERTS, TOP_K, TOK_BLK)
    pypto.runtime._device_init()
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(logits_t, "router_logits"),
        pypto.from_torch(weights_t, "topk_weights"),
        pypto.from_torch(ids_t, "topk_ids"),
    )
    pypto.runtime._device_fini()
    return weights_t, ids_t


def test_router():
    logits = torch.randn(TOKENS, EXPERTS, dtype=torch.float32)
    w, ids = run_router(logits)
    ref_w, ref_ids = torch.topk(torch.softmax(logits, -1), TOP_K, dim=-1)
    ref_w = ref_w / ref_w.sum(-1, keepdim=True)
    assert w.shape == ref_w.shape and ids.shape == ref_ids.shape


if __name__ == "__main__":
    test_router()
