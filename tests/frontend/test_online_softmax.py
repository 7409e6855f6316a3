"""pypto.experimental.online_softmax / online_softmax_update: lowered as the ops their pages
describe (column statistics over axis 0 of a [k, q] block, then the flash-attention merge), so
both run on every backend with torch's numbers."""

from __future__ import annotations

import pytest
import torch

from pypto_ast import live, pipeline
from support import needs_cxx

BLOCK = """import pypto


@pypto.frontend.jit
def block(scores: pypto.Tensor([64, 32], pypto.DT_FP32), e: pypto.Tensor([64, 32], pypto.DT_BF16),
          cmax: pypto.Tensor([1, 32], pypto.DT_FP32), csum: pypto.Tensor([1, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, 32)
    exp_scores, column_max, column_sum = pypto.experimental.online_softmax(scores, 0.125)
    e[:] = exp_scores
    cmax[:] = column_max
    csum[:] = column_sum


@pypto.frontend.jit
def merge(pm: pypto.Tensor([1, 32], pypto.DT_FP32), ps: pypto.Tensor([1, 32], pypto.DT_FP32),
          po: pypto.Tensor([16, 32], pypto.DT_FP32), cm: pypto.Tensor([1, 32], pypto.DT_FP32),
          cs: pypto.Tensor([1, 32], pypto.DT_FP32), co: pypto.Tensor([16, 32], pypto.DT_FP32),
          m: pypto.Tensor([1, 32], pypto.DT_FP32), s: pypto.Tensor([1, 32], pypto.DT_FP32),
          o: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    m[:], s[:], o[:] = pypto.experimental.online_softmax_update(pm, ps, po, cm, cs, co)
"""


def _kernels(tmp_path):
    path = tmp_path / "online.py"
    path.write_text(BLOCK, encoding="utf-8")
    return live.load_module(str(path))


def _run(kernel, args, backend):
    args = {k: v.clone() for k, v in args.items()}
    pipeline.run(pipeline.lower(kernel, args), args, backend)
    return args


@needs_cxx
@pytest.mark.parametrize("backend", ["interp", "host"])
def test_online_softmax_gives_the_column_statistics(tmp_path, backend):
    scores = torch.randn(64, 32, generator=torch.Generator().manual_seed(1)) * 20
    got = _run(_kernels(tmp_path).block, {"scores": scores, "e": torch.zeros(64, 32, dtype=torch.bfloat16),
                                          "cmax": torch.zeros(1, 32), "csum": torch.zeros(1, 32)}, backend)
    s = scores * 0.125
    m = s.amax(0, keepdim=True)
    e = torch.exp(s - m)
    torch.testing.assert_close(got["cmax"], m, rtol=0, atol=0)
    torch.testing.assert_close(got["csum"], e.sum(0, keepdim=True), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got["e"], e.bfloat16(), rtol=8e-3, atol=1e-6)


@needs_cxx
def test_merging_two_blocks_is_the_softmax_of_both(tmp_path):
    """Two halves of a [128, 32] score block, each through online_softmax and its values (P^T V),
    merged by online_softmax_update, normalise to the softmax of the whole block on both backends."""
    mod = _kernels(tmp_path)
    g = torch.Generator().manual_seed(2)
    scores, v = torch.randn(128, 32, generator=g) * 8, torch.randn(128, 16, generator=g)
    results = {}
    for backend in ("interp", "host"):
        halves = []
        for part in (slice(0, 64), slice(64, 128)):
            st = _run(mod.block, {"scores": scores[part].contiguous(), "e": torch.zeros(64, 32, dtype=torch.bfloat16),
                                  "cmax": torch.zeros(1, 32), "csum": torch.zeros(1, 32)}, backend)
            halves.append((st["cmax"], st["csum"], v[part].t() @ st["e"].float()))
        (pm, ps, po), (cm, cs, co) = halves
        got = _run(mod.merge, {"pm": pm, "ps": ps, "po": po, "cm": cm, "cs": cs, "co": co,
                               "m": torch.zeros(1, 32), "s": torch.zeros(1, 32), "o": torch.zeros(16, 32)}, backend)
        results[backend] = got["o"] / got["s"]
        torch.testing.assert_close(got["m"], (scores * 0.125).amax(0, keepdim=True), rtol=0, atol=0)
    want = v.t() @ torch.softmax(scores * 0.125, dim=0)
    for backend, out in results.items():
        torch.testing.assert_close(out, want, rtol=2e-2, atol=2e-3, msg=backend)
    torch.testing.assert_close(results["host"], results["interp"], rtol=1e-5, atol=1e-6)
