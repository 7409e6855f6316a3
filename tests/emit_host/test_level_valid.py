"""A view valid to a run-time extent along a middle axis (issue 18): Kimi's block attention reads
``[tile, l_max, d]`` of a ``[bt, l, d]`` tensor with ``valid_shape=[tile, l, d]``, ``l`` a DYNAMIC
dim of the call, so each of the ``tile`` levels of ``l_max`` rows holds ``l`` valid rows: not a
row prefix of the block.  The vector kernels carry that count of valid rows per level
(gm.GVal.vg): elementwise ops and reductions along the last axis, the loads and the stores of
only those rows.  A consumer that does not carry it (the batched matmul's per-batch valid K and
N, a reduction over the level's rows) stops with a PTO109 naming the op, the dtype and the form.
Host against the interpreter and torch."""

from __future__ import annotations

import json

import pytest
import torch

from pypto_ast import live, pipeline
from support import needs_cxx, write

ROWS = '''
import pypto


class BlockCfg:
    def __init__(self, tile, l_max):
        self.tile, self.l_max = tile, l_max


CFG = BlockCfg({tile}, {l_max})


def _square(v):
    vf = pypto.cast(v, pypto.DT_FP32)
    return vf, pypto.mul(vf, vf)


@pypto.frontend.jit
def block_rows(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               gamma: pypto.Tensor([pypto.STATIC, pypto.STATIC]),
               rms_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               peak_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               k_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    for i in pypto.loop(0, bt, CFG.tile, name="T", idx_name="i"):
        v = pypto.view(v_flat, [CFG.tile, CFG.l_max, d], [i, 0, 0], valid_shape=[CFG.tile, l, d])
        pypto.set_vec_tile_shapes(1, CFG.l_max, d)
        vf, sq = _square(v)
        rms = pypto.sqrt(pypto.add(pypto.div(pypto.sum(sq, dim=-1, keepdim=True), d), 1e-6))
        pypto.assemble(rms, [i, 0, 0], rms_out)
        pypto.assemble(pypto.amax(pypto.abs(vf), dim=-1, keepdim=True), [i, 0, 0], peak_out)
        pypto.assemble(pypto.cast(pypto.mul(pypto.add(sq, 1.0), gamma), v_flat.dtype), [i, 0, 0], k_out)
'''

BLOCKS = '''
import pypto


class BlockCfg:
    def __init__(self, tile, l_max):
        self.tile, self.l_max = tile, l_max


CFG = BlockCfg({tile}, {l_max})


def _rms(v, d):
    vf = pypto.cast(v, pypto.DT_FP32)
    ms = pypto.sum(pypto.mul(vf, vf), dim=-1, keepdim=True)
    return vf, pypto.sqrt(pypto.add(pypto.div(ms, d), 1e-6))


@pypto.frontend.jit
def mix_blocks(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               q: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC]),
               rms_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
               h_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    for i in pypto.loop(0, bt, CFG.tile, name="T", idx_name="i"):
        v = pypto.view(v_flat, [CFG.tile, CFG.l_max, d], [i, 0, 0], valid_shape=[CFG.tile, l, d])
        pypto.set_vec_tile_shapes(1, CFG.l_max, d)
        vf, rms = _rms(v, d)
        pypto.assemble(rms, [i, 0, 0], rms_out)
        k = pypto.div(vf, rms)
        pypto.set_cube_tile_shapes([CFG.l_max, CFG.l_max], [64, 64], [16, 16])
        logits = pypto.reshape(pypto.matmul(q, k, pypto.DT_FP32, b_trans=True), [CFG.tile, CFG.l_max],
                               valid_shape=[CFG.tile, l])
        pypto.set_vec_tile_shapes(4, CFG.l_max)
        alpha = pypto.reshape(pypto.softmax(logits, dim=-1), [CFG.tile, 1, CFG.l_max], valid_shape=[CFG.tile, 1, l])
        pypto.set_cube_tile_shapes([1, 1], [64, 64], [64, 64])
        pypto.assemble(pypto.matmul(alpha, vf, v_flat.dtype), [i, 0, 0], h_out)
'''

WEIGHTED = '''
import pypto


@pypto.frontend.jit
def weighted(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
             alpha: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC]),
             h_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    for i in pypto.loop(0, bt, {tile}, name="T", idx_name="i"):
        v = pypto.view(v_flat, [{tile}, {l_max}, d], [i, 0, 0], valid_shape=[{tile}, l, d])
        a = pypto.view(alpha, [{tile}, 1, {l_max}], [i, 0, 0], valid_shape=[{tile}, 1, l])
        pypto.set_vec_tile_shapes(1, {l_max}, d)
        vf = pypto.cast(v, pypto.DT_FP32)
        pypto.set_cube_tile_shapes([1, 1], [32, 32], [64, 64])
        pypto.assemble(pypto.matmul(a, vf, v_flat.dtype), [i, 0, 0], h_out)
'''


def _case(bt, l, d, seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(bt, l, d, generator=g).bfloat16()
    v.view(-1)[3] = -0.0
    q = torch.randn(1, 1, d, generator=g) / d ** 0.5
    vf = v.float()
    rms = (vf.pow(2).sum(-1, keepdim=True) / d + 1e-6).sqrt()
    alpha = torch.softmax((q * (vf / rms)).sum(-1), -1)
    h = (alpha.unsqueeze(1) @ vf).bfloat16()
    args = {"v_flat": v, "q": q, "rms_out": torch.zeros(bt, l, 1), "h_out": torch.zeros(bt, 1, d).bfloat16()}
    return args, rms, h


@pytest.mark.parametrize("bt,l,l_max", [(8, 5, 16), (12, 16, 16), (4, 1, 32)])
def test_the_interpreter_runs_the_blocks_valid_to_a_runtime_extent(tmp_path, bt, l, l_max):
    module = live.load_module(str(write(tmp_path / "blocks.py", BLOCKS.format(tile=4, l_max=l_max))))
    args, rms, h = _case(bt, l, 64, bt + l)
    pipeline.run(pipeline.lower(module.mix_blocks, args), args, "interp")
    torch.testing.assert_close(args["rms_out"], rms, rtol=1e-6, atol=0)
    torch.testing.assert_close(args["h_out"].float(), h.float(), rtol=1e-2, atol=1e-2)


def _rows_case(bt, l, d, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(bt, l, d, generator=g).to(dtype)
    v.view(-1)[5] = -0.0
    gamma = torch.rand(1, d, generator=g) + 0.5
    # every output starts at a value no kernel computes: an element stored outside the valid rows shows
    args = {"v_flat": v, "gamma": gamma, "rms_out": torch.full((bt, l, 1), 7.0), "peak_out": torch.full((bt, l, 1), 7.0),
            "k_out": torch.full((bt, l, d), 7.0).to(dtype)}
    vf = v.float()
    sq = vf * vf
    want = {"rms_out": (sq.sum(-1, keepdim=True) / d + 1e-6).sqrt(), "peak_out": vf.abs().amax(-1, keepdim=True),
            "k_out": ((sq + 1.0) * gamma).to(dtype)}
    return args, want


@needs_cxx
@pytest.mark.parametrize("bt,l,l_max,d,dtype", [(8, 5, 8, 64, torch.bfloat16), (12, 8, 8, 96, torch.bfloat16),
                                               (4, 1, 16, 64, torch.float16), (20, 13, 16, 40, torch.bfloat16)])
def test_rows_valid_per_level_run_on_the_host_as_on_the_interpreter(tmp_path, bt, l, l_max, d, dtype):
    module = live.load_module(str(write(tmp_path / "rows.py", ROWS.format(tile=4, l_max=l_max))))
    got = {}
    for backend in ("interp", "host"):
        args, want = _rows_case(bt, l, d, dtype, bt * l)
        pipeline.run(pipeline.lower(module.block_rows, args), args, backend)
        got[backend] = args
    for backend, args in got.items():
        torch.testing.assert_close(args["rms_out"], want["rms_out"], rtol=1e-6, atol=0, msg=lambda m: f"{backend}: {m}")
        assert torch.equal(args["peak_out"], want["peak_out"]), backend
        assert torch.equal(args["k_out"], want["k_out"]), backend
    assert torch.equal(got["interp"]["k_out"], got["host"]["k_out"])
    assert torch.equal(got["interp"]["peak_out"], got["host"]["peak_out"])


def test_a_sum_over_the_rows_of_each_level_is_refused_naming_it(tmp_path):
    src = ROWS.format(tile=4, l_max=8).replace("pypto.amax(pypto.abs(vf), dim=-1, keepdim=True)",
                                                "pypto.sum(vf, dim=1, keepdim=True)").replace(
        "peak_out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC])",
        "peak_out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC])")
    path = write(tmp_path / "rows.py", src)
    module = live.load_module(str(path))
    args, _ = _rows_case(8, 5, 64, torch.bfloat16, 0)
    args["peak_out"] = torch.zeros(8, 1, 64)
    with pytest.raises(pipeline.KernelErrors) as caught:
        pipeline.emit(pipeline.lower(module.block_rows, args), "ascendc")
    message = caught.value.findings[0][0]
    assert caught.value.code == "PTO109" and message.startswith("op 'sum' "), message
    assert "a count of valid rows per level" in message, message


@needs_cxx
@pytest.mark.parametrize("bt,l,l_max", [(8, 13, 16), (12, 16, 16), (4, 1, 32), (8, 20, 32)])
def test_the_batched_matmuls_take_each_blocks_valid_rows_on_the_host(tmp_path, bt, l, l_max):
    """q @ k^T per block gives [tile, 1, l_max] valid in its first l columns; alpha @ v per block
    sums over the valid l only: the cube's valid m, n, k alike for every matrix of the batch."""
    module = live.load_module(str(write(tmp_path / "blocks.py", BLOCKS.format(tile=4, l_max=l_max))))
    got = {}
    for backend in ("interp", "host"):
        args, rms, h = _case(bt, l, 64, bt + l)
        args["h_out"].fill_(7.0)
        pipeline.run(pipeline.lower(module.mix_blocks, args), args, backend)
        got[backend] = args
        torch.testing.assert_close(args["rms_out"], rms, rtol=1e-6, atol=0, msg=lambda m: f"{backend}: {m}")
        torch.testing.assert_close(args["h_out"].float(), h.float(), rtol=1e-2, atol=1e-2, msg=lambda m: f"{backend}: {m}")
    # the same softmax weights on both backends (the RMS's sum may round apart): the same h, bit for bit
    if torch.equal(got["interp"]["rms_out"], got["host"]["rms_out"]):
        assert torch.equal(got["interp"]["h_out"], got["host"]["h_out"])


@needs_cxx
@pytest.mark.parametrize("bt,l,l_max", [(8, 13, 16), (6, 32, 32), (4, 3, 32)])
def test_a_batched_matmul_over_each_blocks_valid_rows_is_the_interpreters_bit_for_bit(tmp_path, bt, l, l_max):
    module = live.load_module(str(write(tmp_path / "weighted.py", WEIGHTED.format(tile=2, l_max=l_max))))
    g = torch.Generator().manual_seed(l)
    v = torch.randn(bt, l, 64, generator=g).bfloat16()
    weights = torch.softmax(torch.randn(bt, 1, l, generator=g), -1)
    alpha = torch.full((bt, 1, l_max), float("nan"))  # past l: never read
    alpha[:, :, :l] = weights
    got = {}
    for backend in ("interp", "host"):
        args = {"v_flat": v, "alpha": alpha, "h_out": torch.full((bt, 1, 64), 7.0).bfloat16()}
        pipeline.run(pipeline.lower(module.weighted, args), args, backend)
        got[backend] = args["h_out"]
    assert torch.equal(got["interp"], got["host"])
    torch.testing.assert_close(got["host"].float(), (weights @ v.float()).bfloat16().float(), rtol=1e-2, atol=1e-2)


OVER_TOKENS = '''
import pypto


@pypto.frontend.jit
def over_tokens(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
                out: pypto.Tensor([pypto.STATIC, pypto.DYNAMIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    v = pypto.view(v_flat, [{tile}, {l_max}, d], [0, 0, 0], valid_shape=[{tile}, l, d])
    pypto.set_vec_tile_shapes(1, {l_max}, d)
    vf = pypto.cast(v, pypto.DT_FP32)
    pypto.assemble(pypto.{reduce}(pypto.mul(vf, 2.0), dim=0, keepdim=True), [0, 0, 0], out)
'''


@needs_cxx
@pytest.mark.parametrize("tile,l,l_max,reduce", [(4, 5, 16, "amax"), (6, 16, 16, "sum"), (3, 1, 8, "amin")])
def test_a_reduction_over_the_tokens_above_each_level_keeps_its_valid_rows(tmp_path, tile, l, l_max, reduce):
    module = live.load_module(str(write(tmp_path / "over.py", OVER_TOKENS.format(tile=tile, l_max=l_max,
                                                                               reduce=reduce))))
    v = torch.randn(tile, l, 48, generator=torch.Generator().manual_seed(l)).bfloat16()
    got = {}
    for backend in ("interp", "host"):
        args = {"v_flat": v, "out": torch.full((1, l, 48), 7.0)}
        pipeline.run(pipeline.lower(module.over_tokens, args), args, backend)
        got[backend] = args["out"]
    want = getattr(torch, reduce)(v.float() * 2.0, dim=0, keepdim=True)
    for backend, out in got.items():
        torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6, msg=lambda m: f"{backend}: {m}")
    if reduce != "sum":
        assert torch.equal(got["interp"], got["host"])


LEVEL_WEIGHTS = '''
import pypto

TILE, LEVELS = {tile}, {l_max}


@pypto.frontend.jit
def level_weights(v_flat: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC, pypto.STATIC]),
                  w: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC]),
                  out: pypto.Tensor([pypto.STATIC, pypto.STATIC, pypto.STATIC])):
    bt, l, d = v_flat.shape
    pypto.set_vec_tile_shapes(1, 1, d)
    acc = pypto.zeros([1, 1, d], dtype=pypto.DT_FP32)
    for i in pypto.loop(0, bt, TILE, name="T", idx_name="i"):
        pypto.set_vec_tile_shapes(1, LEVELS, d)
        v = pypto.view(v_flat, [TILE, LEVELS, d], [i, 0, 0], valid_shape=[TILE, l, d])
        wt = pypto.view(w, [TILE, LEVELS], [i, 0], valid_shape=[TILE, l])
        per_row = pypto.reshape(wt + 0.0, [TILE, LEVELS, 1], valid_shape=[TILE, l, 1])
        weighted = pypto.mul(per_row, v)
        pypto.set_vec_tile_shapes(TILE, 1, 16384 // TILE)
        over_tokens = pypto.sum(weighted, dim=0, keepdim=True)
        pypto.set_vec_tile_shapes(1, LEVELS, 16384 // LEVELS)
        acc[:] = acc + pypto.sum(over_tokens, dim=1, keepdim=True)
    out[:] = acc
'''


@needs_cxx
@pytest.mark.parametrize("tile,l_max,bt,l,d", [(8, 32, 16, 26, 512), (4, 64, 8, 33, 512), (4, 16, 12, 16, 96),
                                               (2, 8, 6, 1, 40)])
def test_a_weighted_sum_over_tokens_and_levels_runs_on_the_host(tmp_path, tile, l_max, bt, l, d):
    """Kimi's weight gradient in our words: a per-row weight (a [T, L] value valid to l, each element
    made a row: [T, L, 1]) times the block, summed over the tokens, then over the levels.  The sum
    over the tokens is the emitter's column reduction of [T, L*D] in its own tile, which pypto never
    judges: where a whole row does not fit UB it runs in column tiles; the sum over the levels adds
    only the l valid rows.  Weights past l are NaN: reading one shows."""
    module = live.load_module(str(write(tmp_path / "weights.py", LEVEL_WEIGHTS.format(tile=tile, l_max=l_max))))
    g = torch.Generator().manual_seed(bt * l + d)
    v = torch.randn(bt, l, d, generator=g)
    w = torch.full((bt, l_max), float("nan"))
    w[:, :l] = torch.randn(bt, l, generator=g)
    want = (w[:, :l, None] * v).sum((0, 1)).reshape(1, 1, d)
    args = {"v_flat": v, "w": w, "out": torch.zeros(1, 1, d)}
    manifest = pipeline.emit(pipeline.lower(module.level_weights, args), "ascendc")["manifest.json"]
    manifest = json.loads(manifest) if isinstance(manifest, str) else manifest
    wide = [k for k in manifest["kernels"] if k.get("shape") == [tile, l_max * d]]
    assert len(wide) == 1, [k.get("shape") for k in manifest["kernels"]]
    if l_max * d * 4 * 2 > 184 * 1024:  # the row and its running sum do not fit: column tiles, one core each
        assert wide[0]["tile"][1] < l_max * d and wide[0]["num_blocks"] > 1, wide[0]
    for backend in ("interp", "host"):
        args = {"v_flat": v, "w": w, "out": torch.full((1, 1, d), 7.0)}
        pipeline.run(pipeline.lower(module.level_weights, args), args, backend)
        torch.testing.assert_close(args["out"], want, rtol=1e-5, atol=1e-4, msg=lambda m: f"{backend}: {m}")
