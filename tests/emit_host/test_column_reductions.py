"""Rows wider than UB on the host (issue 18, design.md section 26): a tile that names fewer
columns than its rows runs in column tiles, reductions along the rows folding each column tile's
part into a running fp32 value; row ([R, 1]) and column ([1, C]) broadcasts ride along with each
column tile; a fused chain that fits no tiling is cut into consecutive kernels through GM.
Kernels in the models' style (config objects, helpers, bf16 with scales), compared with torch and
across the interpreter and the host."""

from __future__ import annotations

import json

import pytest
import torch

from pypto_ast import live, pipeline
from pypto_ast.emit import soc
from support import needs_cxx, write

WIDE_NORM = '''
import pypto
from dataclasses import dataclass


@dataclass
class NormTiles:
    rows: int = 8
    cols: int = 4096


TILES = NormTiles()


def _denominator(xf, width, eps):
    """sqrt(mean(x^2) + eps) of each row."""
    return pypto.sqrt(pypto.sum(xf * xf, -1, keepdim=True) / width + eps)


@pypto.frontend.jit
def wide_norm(x: pypto.Tensor([{rows}, {width}], pypto.DT_BF16), xf_out: pypto.Tensor([{rows}, {width}], pypto.DT_FP32),
              den: pypto.Tensor([{rows}, 1], pypto.DT_FP32), top: pypto.Tensor([{rows}, 1], pypto.DT_BF16),
              low: pypto.Tensor([{rows}, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(TILES.rows, TILES.cols)
    xf = pypto.cast(x, pypto.DT_FP32)
    den[:] = _denominator(xf, {width}, 1e-6)
    xf_out[:] = xf
    top[:] = pypto.amax(x, -1, keepdim=True)
    low[:] = pypto.amin(xf, -1, keepdim=True)
'''

PART_VALID = '''
import pypto


@pypto.frontend.jit
def part_valid(x: pypto.Tensor([16, 12288], pypto.DT_FP32), s: pypto.Tensor([16, 1], pypto.DT_FP32),
               m: pypto.Tensor([16, 1], pypto.DT_FP32), h: pypto.Tensor([16, 1], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(4, 4096)
    v = pypto.view(x, [16, 12288], [0, 0], valid_shape=[16, {valid}])
    s[:] = pypto.sum(v, -1, keepdim=True)
    m[:] = pypto.amax(v, -1, keepdim=True)
    h[:] = pypto.sum(pypto.cast(v, pypto.DT_BF16), -1, keepdim=True)
'''

PER_CHANNEL = '''
import pypto


class QuantSpec:
    def __init__(self, bits, eps):
        self.qmax = 2 ** (bits - 1) - 1
        self.eps = eps


SPEC = QuantSpec(4, 1e-4)


@pypto.frontend.jit
def fake_quant(w: pypto.Tensor([256, 4096], pypto.DT_BF16), scale: pypto.Tensor([256, 1], pypto.DT_BF16),
               shift: pypto.Tensor([1, 4096], pypto.DT_FP32), out: pypto.Tensor([256, 4096], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(32, 512)
    s = pypto.maximum(pypto.cast(scale, pypto.DT_FP32), SPEC.eps)
    q = pypto.clip(pypto.round(pypto.cast(w, pypto.DT_FP32) / s), -SPEC.qmax - 1, SPEC.qmax)
    out[:] = pypto.cast(q * s - shift, pypto.DT_BF16)
'''

GATED_NORMS = '''
import pypto


def _rms(v, width, eps):
    return v / pypto.sqrt(pypto.sum(v * v * (1.0 / width), -1, keepdim=True) + eps)


@pypto.frontend.jit
def gated(gates: pypto.Tensor([4, 16384], pypto.DT_FP32), cell: pypto.Tensor([4, 4096], pypto.DT_FP16),
          w: pypto.Tensor([1, 4096], pypto.DT_FP32), b: pypto.Tensor([1, 4096], pypto.DT_FP32),
          h: pypto.Tensor([4, 4096], pypto.DT_FP16), c: pypto.Tensor([4, 4096], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4096)
    i = pypto.sigmoid(pypto.view(gates, [4, 4096], [0, 0]))
    f = pypto.sigmoid(pypto.view(gates, [4, 4096], [0, 4096]))
    o = pypto.sigmoid(pypto.view(gates, [4, 4096], [0, 8192]))
    g = _rms(pypto.view(gates, [4, 4096], [0, 12288]), 4096, 1e-6) * w + b
    new_c = pypto.cast(cell, pypto.DT_FP32) * f + g * pypto.sigmoid(g * 1.702) * i
    h[:] = pypto.cast(_rms(new_c, 4096, 1e-6) * o, pypto.DT_FP16)
    c[:] = new_c
'''

WIDE_VAR = '''
import pypto


@pypto.frontend.jit
def wide_var(x: pypto.Tensor([8, 32768], pypto.DT_FP32), v: pypto.Tensor([8, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 8192)
    v[:] = pypto.var(x, -1, keepdim=True)
'''


def _both(fn, inputs: dict, outs: list) -> dict:
    got = {}
    for backend in ("interp", "host"):
        args = {k: t.clone() for k, t in inputs.items()}
        pipeline.run(pipeline.lower(fn, args), args, backend)
        got[backend] = {o: args[o] for o in outs}
    return got


def _kernels(fn, inputs: dict) -> list:
    files = pipeline.emit(pipeline.lower(fn, {k: t.clone() for k, t in inputs.items()}), "ascendc")
    return [k for k in json.loads(files["manifest.json"])["kernels"] if k.get("kind", "vector") == "vector"]


def _load(tmp_path, name: str, text: str):
    return getattr(live.load_module(str(write(tmp_path / f"{name}.py", text))), name)


@needs_cxx
@pytest.mark.parametrize("rows,width", [(64, 16384), (20, 12288)])
def test_reductions_of_rows_wider_than_ub_fold_their_column_tiles(tmp_path, rows, width):
    """[8, 4096] tiles of [R, 16384] bf16: a row in fp32 is 64 KiB, a tile's rows do not fit UB
    whole; amax / amin are exact in any order, the sum within the documented tolerance."""
    fn = _load(tmp_path, "wide_norm", WIDE_NORM.format(rows=rows, width=width))
    g = torch.Generator().manual_seed(rows)
    x = (torch.randn(rows, width, generator=g) * 3).bfloat16()
    x[1, 5000] = -0.0
    inputs = {"x": x, "xf_out": torch.full((rows, width), float("nan")), "den": torch.full((rows, 1), float("nan")),
              "top": torch.zeros(rows, 1, dtype=torch.bfloat16), "low": torch.full((rows, 1), float("nan"))}
    [info] = _kernels(fn, inputs)
    assert info["tile"][1] == 4096 and info["ub_bytes"] <= soc.get_soc().ub_budget, info
    got = _both(fn, inputs, ["xf_out", "den", "top", "low"])
    f = x.float()
    want = torch.sqrt((f * f).sum(-1, keepdim=True) / width + 1e-6)
    for backend, out in got.items():
        assert torch.equal(out["xf_out"], f), backend
        assert torch.equal(out["top"], x.amax(-1, keepdim=True)), backend
        assert torch.equal(out["low"], f.amin(-1, keepdim=True)), backend
        torch.testing.assert_close(out["den"], want, rtol=2e-6, atol=0, msg=lambda m: f"{backend}: {m}")
    torch.testing.assert_close(got["host"]["den"], got["interp"]["den"], rtol=2e-6, atol=0)


@needs_cxx
@pytest.mark.parametrize("valid", [5000, 4096, 9000])
def test_column_tiles_past_the_valid_columns_add_nothing(tmp_path, valid):
    """A view valid over fewer columns than its tiles: the part of a tile past them (NaN here)
    is not read, a tile with none of them folds nothing; bf16 sums in fp32, rounded once."""
    fn = _load(tmp_path, "part_valid", PART_VALID.format(valid=valid))
    g = torch.Generator().manual_seed(valid)
    x = torch.rand(16, 12288, generator=g) * 0.01
    x[:, valid:] = float("nan")
    inputs = {"x": x, "s": torch.full((16, 1), float("nan")), "m": torch.full((16, 1), float("nan")),
              "h": torch.zeros(16, 1, dtype=torch.bfloat16)}
    got = _both(fn, inputs, ["s", "m", "h"])
    part = x[:, :valid]
    for backend, out in got.items():
        torch.testing.assert_close(out["s"], part.sum(-1, keepdim=True), rtol=2e-6, atol=0, msg=lambda m: f"{backend}: {m}")
        assert torch.equal(out["m"], part.amax(-1, keepdim=True)), backend
        wide = part.bfloat16().float().sum(-1, keepdim=True)  # in fp32, one rounding to bf16: within its half ulp
        torch.testing.assert_close(out["h"].float(), wide, rtol=2 ** -8, atol=0, msg=lambda m: f"{backend}: {m}")


@needs_cxx
def test_row_and_column_broadcasts_ride_along_with_each_column_tile(tmp_path):
    """A per-channel scale ([R, 1]) and a shift per column ([1, C]) in [32, 512] tiles of
    4096-column rows: elementwise, so bit for bit the same on both backends and torch."""
    fn = _load(tmp_path, "fake_quant", PER_CHANNEL)
    g = torch.Generator().manual_seed(9)
    w = (torch.randn(256, 4096, generator=g) * 2).bfloat16()
    scale = (torch.rand(256, 1, generator=g) * 0.5).bfloat16()
    shift = torch.randn(1, 4096, generator=g) * 0.01
    inputs = {"w": w, "scale": scale, "shift": shift, "out": torch.zeros(256, 4096, dtype=torch.bfloat16)}
    [info] = _kernels(fn, inputs)
    assert info["tile"][1] == 512 and info["ub_bytes"] <= soc.get_soc().ub_budget, info
    s = scale.float().clamp_min(1e-4)
    want = (torch.clip(torch.round(w.float() / s), -8, 7) * s - shift).bfloat16()
    got = _both(fn, inputs, ["out"])
    assert torch.equal(got["interp"]["out"], want)
    assert torch.equal(got["host"]["out"], want)


@needs_cxx
def test_a_chain_that_fits_no_tiling_is_cut_into_kernels_through_gm(tmp_path):
    """An LSTM-style cell on one-row tiles of 4096: the fused chain (gates, two RMS norms, row
    broadcasts) needs more UB than one row leaves, and its norms use their sums on whole rows; cut
    after the longest prefix that fits, each part fits, the values cross GM unchanged."""
    fn = _load(tmp_path, "gated", GATED_NORMS)
    g = torch.Generator().manual_seed(4)
    gates = torch.randn(4, 16384, generator=g)
    cell = torch.randn(4, 4096, generator=g).half()
    w, b = torch.rand(1, 4096, generator=g) + 0.5, torch.randn(1, 4096, generator=g) * 0.1
    inputs = {"gates": gates, "cell": cell, "w": w, "b": b, "h": torch.zeros(4, 4096, dtype=torch.float16),
              "c": torch.full((4, 4096), float("nan"))}
    kernels = _kernels(fn, inputs)
    parts = [k for k in kernels if "_1" in k["kernel"][-2:] or "_2" in k["kernel"][-2:]]
    assert len(parts) >= 2 and all(k["ub_bytes"] <= soc.get_soc().ub_budget for k in kernels), kernels

    def rms(v):
        return v / torch.sqrt((v * v * (1.0 / 4096)).sum(-1, keepdim=True) + 1e-6)

    i, f, o = (torch.sigmoid(gates[:, k * 4096:(k + 1) * 4096]) for k in range(3))
    gg = rms(gates[:, 12288:]) * w + b
    new_c = cell.float() * f + gg * torch.sigmoid(gg * 1.702) * i
    got = _both(fn, inputs, ["h", "c"])
    for backend, out in got.items():
        torch.testing.assert_close(out["c"], new_c, rtol=1e-5, atol=1e-5, msg=lambda m: f"{backend}: {m}")
        torch.testing.assert_close(out["h"].float(), (rms(new_c) * o).half().float(), rtol=1e-3, atol=1e-3,
                                   msg=lambda m: f"{backend}: {m}")
    torch.testing.assert_close(got["host"]["c"], got["interp"]["c"], rtol=1e-5, atol=1e-6)


@needs_cxx
def test_a_variance_of_wide_rows_goes_through_its_sums(tmp_path):
    """var = sum((x - sum(x) / N)^2) / (N - 1) over 32768 columns in [2, 8192] tiles: its mean is
    broadcast back over the row, so the chain is cut after the first sum; both sums fold."""
    fn = _load(tmp_path, "wide_var", WIDE_VAR)
    x = torch.randn(8, 32768, generator=torch.Generator().manual_seed(6)) * 2 + 5
    got = _both(fn, {"x": x, "v": torch.full((8, 1), float("nan"))}, ["v"])
    for backend, out in got.items():
        torch.testing.assert_close(out["v"], x.var(-1, keepdim=True), rtol=1e-5, atol=0, msg=lambda m: f"{backend}: {m}")


GRAD_SCALE = '''
import pypto


@pypto.frontend.jit
def grad_scale(g: pypto.Tensor([{rows}, 256], pypto.DT_FP32), w: pypto.Tensor([{rows}, 256], pypto.DT_FP32),
               acc: pypto.Tensor([1, 1], pypto.DT_FP32), per_row: pypto.Tensor([{rows}, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 256)
    part = pypto.sum(pypto.mul(g, w), dim=1, keepdim=True)
    per_row[:] = part
    pypto.set_vec_tile_shapes(512, 1)
    acc[:] = pypto.add(acc, pypto.sum(part, dim=0, keepdim=True))
'''


@needs_cxx
@pytest.mark.parametrize("rows", [64, 1])
def test_a_column_of_row_sums_summed_over_its_rows_runs_in_a_kernel_of_its_own(tmp_path, rows):
    """A QAT-style gradient of a scale: per-row sums of a [N, 256] tile ([N, 1]) summed over N in
    the same chain; N = 1 sums one element (from +0: -0 becomes +0, as torch)."""
    fn = _load(tmp_path, "grad_scale", GRAD_SCALE.format(rows=rows))
    gen = torch.Generator().manual_seed(rows)
    g, w = torch.randn(rows, 256, generator=gen), torch.randn(rows, 256, generator=gen)
    inputs = {"g": g, "w": w, "acc": torch.tensor([[1.5]]), "per_row": torch.zeros(rows, 1)}
    got = _both(fn, inputs, ["acc", "per_row"])
    part = (g * w).sum(1, keepdim=True)
    for backend, out in got.items():
        torch.testing.assert_close(out["per_row"], part, rtol=1e-5, atol=1e-5, msg=lambda m: f"{backend}: {m}")
        torch.testing.assert_close(out["acc"], 1.5 + part.sum(0, keepdim=True), rtol=1e-5, atol=1e-4,
                                   msg=lambda m: f"{backend}: {m}")
