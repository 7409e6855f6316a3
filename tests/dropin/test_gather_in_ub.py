"""``pypto.experimental.gather_in_ub``: the rows a sparse attention selects from a paged KV cache,
row j the cache row of token ``indices[0, j]`` through the block table, counted from the param
view's origin in the GM cache (pypto's GatherInUB adds the row to the view's base address, so the
view only names the columns and the output's shape).  Our own sparse-selection kernel (bf16
cache, int32 top-k indices valid over a partial tile), compared with torch."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import needs_cxx, write  # noqa: E402

KERNEL = """
    import torch

    import pypto

    BLOCK = 4
    TOPK = 8
    D = 32


    @pypto.frontend.jit
    def select_rows(
        cache: pypto.Tensor([pypto.DYNAMIC, 2 * D], pypto.DT_BF16),
        topk: pypto.Tensor([pypto.DYNAMIC, TOPK], pypto.DT_INT32),
        table: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_INT32),
        out: pypto.Tensor([pypto.DYNAMIC, TOPK, D], pypto.DT_FP32),
        count: int = 6,
    ):
        pypto.set_vec_tile_shapes(TOPK, D)
        for t in pypto.loop(0, topk.shape[0], 1, name="TOKENS", idx_name="t"):
            picks = pypto.view(topk, [1, TOPK], [t, 0], valid_shape=[1, count])
            pages = pypto.view(table, [1, table.shape[1]], [t % table.shape[0], 0])
            values = pypto.view(cache, [TOPK, D], [0, D], valid_shape=[count, D])  # the right half
            rows = pypto.experimental.gather_in_ub(values, picks, pages, BLOCK, -2)
            pypto.assemble(pypto.reshape(pypto.cast(rows, pypto.DT_FP32), [1, TOPK, D], valid_shape=[1, count, D]),
                           [t, 0, 0], out)


    def golden(cache, topk, table, count):
        out = torch.zeros(topk.shape[0], TOPK, D)
        for t in range(topk.shape[0]):
            pages = table[t % table.shape[0]]
            for j in range(count):
                tok = int(topk[t, j])
                out[t, j] = cache[int(pages[tok // BLOCK]) * BLOCK + tok % BLOCK, D:].float()
        return out


    def run(tokens=3, blocks=5):
        cache = torch.randn(blocks * BLOCK, 2 * D).to(torch.bfloat16)
        table = torch.stack([torch.randperm(blocks) for _ in range(2)]).to(torch.int32)
        topk = torch.stack([torch.randperm(blocks * BLOCK)[:TOPK] for _ in range(tokens)]).to(torch.int32)
        out = torch.zeros(tokens, TOPK, D)
        select_rows(cache, topk, table, out)
        return out, golden(cache, topk, table, 6)
"""


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_through_the_block_table_on_interp(tmp_path):
    dropin.install("interp")
    try:
        module = load(write(tmp_path / "gather_rows.py", KERNEL), "gather_rows_interp")
        got, want = module.run()
    finally:
        dropin.uninstall()
    assert torch.equal(got, want)


@needs_cxx
def test_rows_through_the_block_table_on_the_host(tmp_path):
    """The host's kernel moves the same rows (one core, GM -> UB -> GM per index)."""
    dropin.install("host")
    try:
        module = load(write(tmp_path / "gather_rows.py", KERNEL), "gather_rows_host")
        got, want = module.run()
    finally:
        dropin.uninstall()
    assert torch.equal(got, want)


@needs_cxx
@pytest.mark.parametrize("backend", ["interp", "host"])
def test_a_token_past_the_block_table_is_the_same_error_on_both_backends(tmp_path, backend):
    """Token 23 of blocks of 4 is block 5 of a table of 5: refused, with the interpreter's words."""
    dropin.install(backend)
    try:
        module = load(write(tmp_path / "gather_rows.py", KERNEL.replace(
            "torch.randperm(blocks * BLOCK)[:TOPK]", "torch.full((TOPK,), 23)")), f"gather_rows_far_{backend}")
        with pytest.raises(Exception, match=r"gather_in_ub: token 23 \(indices\[0, 0\]\) is outside the block "
                                            r"table's 5 blocks of 4"):
            module.run(blocks=5)
    finally:
        dropin.uninstall()
