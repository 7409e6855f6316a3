"""A local block assembled only over the valid rows of a partial group (the last group of a
sequence), then read whole by an elementwise op whose other operand is valid over those rows
only: the op runs over the common valid extent (docs/semantics.md), so the rows never written
are never read and the kernel is right.  A reduction reading the same local whole reads them:
that stays "read before write".  Our own attention-style kernel (bf16 in, fp32 scores)."""

from __future__ import annotations

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from pypto_ast import dropin  # noqa: E402
from support import BACKENDS, write  # noqa: E402

KERNEL = """
    import torch

    import pypto

    GROUP = 16
    D = 64


    @pypto.frontend.jit
    def masked_scores(
        q: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
        keep: pypto.Tensor([GROUP, 2 * D], pypto.DT_BOOL),
        out: pypto.Tensor([pypto.DYNAMIC, 2 * D], pypto.DT_FP32),
    ):
        rows = q.shape[0]  # at most GROUP: a partial group
        pypto.set_vec_tile_shapes(GROUP, D)
        block = pypto.view(q, [GROUP, D], [0, 0], valid_shape=[rows, D])
        q32 = pypto.cast(block, pypto.DT_FP32)
        scores = pypto.tensor([GROUP, 2 * D], pypto.DT_FP32, "scores")
        pypto.assemble(q32 * 0.5, [0, 0], scores)
        pypto.assemble(q32 * q32, [0, D], scores)
        pypto.set_vec_tile_shapes(GROUP, 2 * D)
        mask = pypto.view(keep, [GROUP, 2 * D], [0, 0], valid_shape=[rows, 2 * D])
        masked = pypto.where(mask, scores, -1.0)
        pypto.assemble(pypto.exp(masked), [0, 0], out)


    @pypto.frontend.jit
    def summed_whole(
        q: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
        out: pypto.Tensor([GROUP, 1], pypto.DT_FP32),
    ):
        rows = q.shape[0]
        pypto.set_vec_tile_shapes(GROUP, D)
        block = pypto.view(q, [GROUP, D], [0, 0], valid_shape=[rows, D])
        scores = pypto.tensor([GROUP, D], pypto.DT_FP32, "scores")
        pypto.assemble(pypto.cast(block, pypto.DT_FP32), [0, 0], scores)
        out[:] = pypto.sum(scores, -1, keepdim=True)  # every GROUP row: the ones never written too


    def golden(q, keep):
        v = q.float()
        scores = torch.cat([v * 0.5, v * v], -1)
        rows = v.shape[0]
        return torch.exp(torch.where(keep[:rows], scores, torch.tensor(-1.0)))


    def run(rows):
        q = torch.randn(rows, D).to(torch.bfloat16)
        keep = torch.rand(GROUP, 2 * D) > 0.3
        out = torch.zeros(rows, 2 * D)
        masked_scores(q, keep, out)
        return out, golden(q, keep)
"""


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rows", [5, 16])
def test_elementwise_reads_a_partly_written_local_over_the_valid_rows(tmp_path, backend, rows):
    dropin.install(backend)
    try:
        module = load(write(tmp_path / "partial_local.py", KERNEL), f"partial_local_{backend}_{rows}")
        got, want = module.run(rows)
    finally:
        dropin.uninstall()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_a_reduction_over_the_rows_never_written_is_still_read_before_write(tmp_path):
    dropin.install("interp")
    try:
        module = load(write(tmp_path / "partial_sum.py", KERNEL), "partial_sum_interp")
        with pytest.raises(dropin.KernelError, match=r"read before write: local @scores"):
            module.summed_whole(torch.randn(5, 64).to(torch.bfloat16), torch.zeros(16, 1))
        out = torch.zeros(16, 1)
        q = torch.randn(16, 64).to(torch.bfloat16)
        module.summed_whole(q, out)  # a full group writes every row
        torch.testing.assert_close(out, q.float().sum(-1, keepdim=True), rtol=1e-5, atol=1e-5)
    finally:
        dropin.uninstall()
