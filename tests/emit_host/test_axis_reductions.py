"""Reductions over any axis, keepdim or not (emit/axes.py): an inner axis of an N-D value is
reduced as row reductions of its slices, on the host as on the interpreter and in torch."""

from __future__ import annotations

import pytest
import torch

from pypto_ast import live, pipeline
from support import needs_cxx, write

CASES = [  # (shape, dim, keepdim, op)
    ((2, 3, 4), 0, False, "sum"), ((2, 3, 4), 1, False, "sum"), ((2, 3, 4), 1, True, "amax"),
    ((2, 3, 4), -1, False, "amin"), ((5, 16), 0, False, "amax"), ((5, 16), 0, True, "sum"),
    ((2, 3, 4, 8), 1, True, "sum"), ((2, 3, 4, 8), 2, False, "amax"), ((3, 1, 16), 1, False, "amin"),
    ((4, 5, 8), 0, True, "amin"), ((3, 1, 16), 1, True, "sum"),
]


def _source(shape, dim, keepdim, op) -> str:
    out = list(shape)
    if keepdim:
        out[dim] = 1
    else:
        out.pop(dim)
    tile = ", ".join("8" for _ in shape)
    return f'''
import pypto


@pypto.frontend.jit
def reduce_axis(a: pypto.Tensor({list(shape)}, pypto.DT_FP32), out: pypto.Tensor({out}, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes({tile})
    out[:] = pypto.{op}(a, dim={dim}, keepdim={keepdim})
'''


@needs_cxx
@pytest.mark.parametrize("shape,dim,keepdim,op", CASES, ids=[f"{op}{list(s)}d{d}{'k' if k else ''}" for s, d, k, op in CASES])
def test_a_reduction_over_any_axis_matches_torch_on_both_backends(tmp_path, shape, dim, keepdim, op):
    module = live.load_module(str(write(tmp_path / "reduce_axis.py", _source(shape, dim, keepdim, op))))
    g = torch.Generator().manual_seed(len(shape) * 10 + dim)
    a = torch.randn(shape, generator=g)
    a.view(-1)[3] = float("nan") if op != "sum" else a.view(-1)[3]  # NaN anywhere: max/min give NaN
    a.view(-1)[5] = -0.0  # a sum starts from +0 (an axis of one -0 sums to +0); max/min keep -0
    want = getattr(torch, op)(a, dim=dim, keepdim=keepdim)
    for backend in ("interp", "host"):
        out = torch.full(want.shape, -99.0)
        inputs = {"a": a, "out": out}
        pipeline.run(pipeline.lower(module.reduce_axis, inputs), inputs, backend)
        torch.testing.assert_close(out, want, equal_nan=True, rtol=1e-6, atol=1e-6,
                                   msg=lambda m: f"{backend}: {m}")
        zeros = want == 0
        assert torch.equal(out[zeros].signbit(), want[zeros].signbit()), f"{backend}: the sign of a zero"
