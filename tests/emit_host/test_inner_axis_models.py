"""The models' inner-axis forms on the host (issue 18): a reduction over the heads of a tile of
many tokens (``[T, H, D]`` summed over ``H``: more leading slices than a concat of them holds,
so the planner adds the ``H`` strided slices in one kernel), an ``[T, H, 1]``/``[T, 1, H]``
broadcast back over a ``[T, H, H]`` value (a Sinkhorn-style normalisation), and a scalar
expanded to a column (``expand_clone`` of a ``[1, 1]`` scale to ``[tile, 1]``, a per-tensor
quantisation).  Compared with torch and with the interpreter."""

from __future__ import annotations

import pytest
import torch

from pypto_ast import live, pipeline
from support import needs_cxx, write

HEADS_SUM = '''
import pypto


class MixConfig:
    def __init__(self, tokens, heads, dim):
        self.tokens, self.heads, self.dim = tokens, heads, dim


CFG = MixConfig({tokens}, {heads}, {dim})


def _weighted(pre, x):
    return pypto.mul(pre, x)


@pypto.frontend.jit
def mix_heads(pre: pypto.Tensor([CFG.tokens, CFG.heads, 1], pypto.DT_FP32),
              x: pypto.Tensor([CFG.tokens, CFG.heads, CFG.dim], pypto.DT_BF16),
              y: pypto.Tensor([CFG.tokens, CFG.dim], pypto.DT_FP32),
              ym: pypto.Tensor([CFG.tokens, 1, CFG.dim], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, {heads}, 64)
    xf = pypto.cast(x, pypto.DT_FP32)
    w = _weighted(pre, xf)
    y[:] = pypto.sum(w, dim=-2)
    ym[:] = pypto.{reduce}(w, dim=1, keepdim=True)
'''

SINKHORN = '''
import pypto


@pypto.frontend.jit
def sinkhorn(a: pypto.Tensor([{tokens}, 4, 4], pypto.DT_FP32), out: pypto.Tensor([{tokens}, 4, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 16, 32)
    eps = 1e-6
    c = pypto.exp(a - pypto.amax(a, -1, True))
    c = c / pypto.sum(c, -1, True) + eps
    c = c / (pypto.sum(c, -2, True) + eps)
    for _ in range(2):
        c = c / (c.sum(-1, keepdim=True) + eps)
        c = c / (c.sum(-2, keepdim=True) + eps)
    out[:] = c
'''

PER_TENSOR = '''
import pypto


@pypto.frontend.jit
def fake_quant(w: pypto.Tensor([40, 64], pypto.DT_BF16), scale: pypto.Tensor([1, 1], pypto.DT_BF16),
               out: pypto.Tensor([40, 64], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 64)
    s = pypto.maximum(pypto.cast(scale, pypto.DT_FP32), 1e-4)
    for i in pypto.loop(0, 40, 8, name="L", idx_name="i"):
        t = pypto.cast(pypto.view(w, [8, 64], [i, 0]), pypto.DT_FP32)
        sn = pypto.expand_clone(s, [8, 1])
        q = pypto.clip(pypto.round(pypto.div(t, sn), decimals=0), -8.0, 7.0)
        pypto.assemble(pypto.cast(pypto.mul(q, sn), pypto.DT_BF16), [i, 0], out)
'''


def _both(fn, inputs, outs):
    got = {}
    for backend in ("interp", "host"):
        args = {k: v.clone() for k, v in inputs.items()}
        pipeline.run(pipeline.lower(fn, args), args, backend)
        got[backend] = [args[o] for o in outs]
    return got


@needs_cxx
@pytest.mark.parametrize("tokens,heads,dim,reduce", [(70, 4, 128, "amax"), (96, 3, 64, "sum"), (33, 5, 64, "amin")])
def test_a_sum_over_the_heads_of_many_tokens_matches_torch(tmp_path, tokens, heads, dim, reduce):
    src = HEADS_SUM.format(tokens=tokens, heads=heads, dim=dim, reduce=reduce)
    module = live.load_module(str(write(tmp_path / "mix_heads.py", src)))
    g = torch.Generator().manual_seed(tokens)
    pre = torch.rand(tokens, heads, 1, generator=g)
    x = torch.randn(tokens, heads, dim, generator=g).bfloat16()
    x.view(-1)[7] = -0.0
    w = pre * x.float()
    inputs = {"pre": pre, "x": x, "y": torch.zeros(tokens, dim), "ym": torch.zeros(tokens, 1, dim)}
    got = _both(module.mix_heads, inputs, ["y", "ym"])
    want_y = w.sum(dim=-2)
    want_m = getattr(torch, reduce)(w, dim=1, keepdim=True)
    for backend, (y, ym) in got.items():
        torch.testing.assert_close(y, want_y, rtol=1e-6, atol=1e-6, msg=lambda m: f"{backend}: {m}")
        assert torch.equal(ym, want_m) if reduce != "sum" else torch.allclose(ym, want_m, atol=1e-6), backend
    assert torch.equal(got["interp"][1], got["host"][1]) or reduce == "sum"


@needs_cxx
def test_a_sinkhorn_normalisation_broadcasts_over_the_middle_axis(tmp_path):
    module = live.load_module(str(write(tmp_path / "sinkhorn.py", SINKHORN.format(tokens=70))))
    a = torch.randn(70, 4, 4, generator=torch.Generator().manual_seed(3))
    c = torch.exp(a - a.amax(-1, keepdim=True))
    c = c / c.sum(-1, keepdim=True) + 1e-6
    c = c / (c.sum(-2, keepdim=True) + 1e-6)
    for _ in range(2):
        c = c / (c.sum(-1, keepdim=True) + 1e-6)
        c = c / (c.sum(-2, keepdim=True) + 1e-6)
    got = _both(module.sinkhorn, {"a": a, "out": torch.zeros(70, 4, 4)}, ["out"])
    for backend, (out,) in got.items():
        torch.testing.assert_close(out, c, rtol=1e-5, atol=1e-6, msg=lambda m: f"{backend}: {m}")


@needs_cxx
def test_a_per_tensor_scale_expanded_to_a_column_quantises_like_torch(tmp_path):
    module = live.load_module(str(write(tmp_path / "fake_quant.py", PER_TENSOR)))
    w = (torch.randn(40, 64, generator=torch.Generator().manual_seed(5)) * 3).bfloat16()
    scale = torch.tensor([[0.7]]).bfloat16()
    s = scale.float().clamp_min(1e-4)
    want = (torch.clip(torch.round(w.float() / s), -8, 7) * s).bfloat16()
    got = _both(module.fake_quant, {"w": w, "scale": scale, "out": torch.zeros(40, 64).bfloat16()}, ["out"])
    assert torch.equal(got["interp"][0], got["host"][0])
    assert torch.equal(got["host"][0], want)
