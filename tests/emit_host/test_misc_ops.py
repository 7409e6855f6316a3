"""Ops of issue 17 on both backends: transposes of any two axes of any dtype pypto's transpose
page lists (one permute kernel, emit/layout.py), whole and partially valid; the host's numbers
are the interpreter's, bit for bit."""

from __future__ import annotations

import json
import math

import pytest
import torch
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from pypto_ast import live, pipeline
from pypto_ast.emit import layout
from pypto_ast.socs import get_soc
from pypto_ast.ir.interp import InterpError
from support import needs_cxx, write

TDT = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int16": torch.int16,
       "int32": torch.int32}
PDT = {dt: f"pypto.DT_{dt.upper()}" for dt in TDT}
UB_BUDGET = get_soc(None).ub_budget

TRANSPOSE = '''
import pypto


@pypto.frontend.jit
def swap(x: pypto.Tensor({shape}, {dt}), out: pypto.Tensor({oshape}, {dt})):
    pypto.set_vec_tile_shapes({tile})
    out[:] = pypto.transpose(x, {d0}, {d1})
'''


def _bits(shape, dtype: str, g: torch.Generator) -> torch.Tensor:
    """Random elements of every bit pattern but NaN's (so torch.equal compares them)."""
    t = TDT[dtype]
    if t.is_floating_point:
        return (torch.randn(shape, generator=g) * 1000).to(t)
    info = torch.iinfo(t)
    return torch.randint(max(info.min, -2 ** 31), min(info.max, 2 ** 31 - 1), shape, generator=g,
                         dtype=torch.int64).to(t)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    signed = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
    return a.shape == b.shape and torch.equal(a.contiguous().view(signed), b.contiguous().view(signed))


def _run_both(kernel, inputs: dict, out_shape, dtype) -> dict:
    got = {}
    for backend in ("interp", "host"):
        out = torch.zeros(out_shape, dtype=dtype)
        args = dict(inputs, out=out)
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        got[backend] = out
    return got


@st.composite
def _swaps(draw):
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 5, 8, 17, 40]), min_size=rank, max_size=rank)))
    d0, d1 = draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1))
    return shape, d0, d1, draw(st.sampled_from(sorted(TDT)))


@needs_cxx
@settings(max_examples=14, deadline=None)
@given(_swaps())
def test_any_two_axes_of_any_dtype_transpose_bit_for_bit(tmp_path_factory, case):
    shape, d0, d1, dt = case
    note(f"transpose({list(shape)} {dt}, {d0}, {d1})")
    oshape = list(shape)
    oshape[d0], oshape[d1] = oshape[d1], oshape[d0]
    source = TRANSPOSE.format(shape=list(shape), oshape=oshape, dt=PDT[dt], d0=d0, d1=d1,
                              tile=", ".join(str(min(d, 16)) for d in oshape))
    kernel = live.load_module(str(write(tmp_path_factory.mktemp("tr") / "swap.py", source))).swap
    x = _bits(shape, dt, torch.Generator().manual_seed(sum(shape) + d0 * 7 + d1))
    want = x.transpose(d0, d1)
    for backend, out in _run_both(kernel, {"x": x}, oshape, TDT[dt]).items():
        assert _same_bits(out, want), backend


HEADS = '''
import pypto

BF16 = pypto.DT_BF16


@pypto.frontend.jit
def heads(x: pypto.Tensor([3, 4, 2, 16], BF16), w: pypto.Tensor([3, 2, 40, 4], BF16),
          out: pypto.Tensor([3, 2, 4, 16], BF16), out2: pypto.Tensor([3, 4, 40, 2], BF16)):
    pypto.set_vec_tile_shapes(1, 2, 4, 16)
    for i in pypto.loop(0, 2, 1, name="L", idx_name="i"):
        end = pypto.min((i + 1) * 2, 3)
        xv = pypto.view(x, [2, 4, 2, 16], [i * 2, 0, 0, 0], valid_shape=[end - i * 2, 4, 2, 16])
        wv = pypto.view(w, [2, 2, 40, 4], [i * 2, 0, 0, 0], valid_shape=[end - i * 2, 2, 40, 4])
        pypto.assemble(pypto.transpose(xv, 1, 2), [i * 2, 0, 0, 0], out)
        pypto.assemble(pypto.transpose(wv, 1, 3), [i * 2, 0, 0, 0], out2)
'''


@needs_cxx
def test_transposes_of_a_ragged_batch_move_its_valid_slabs_only(tmp_path):
    """The last loop step views one of two batch slabs (valid_shape from min of the loop index):
    a transpose keeping axis 0 moves that slab and writes only its part of the result."""
    kernel = live.load_module(str(write(tmp_path / "heads.py", HEADS))).heads
    g = torch.Generator().manual_seed(17)
    x, w = torch.randn(3, 4, 2, 16, generator=g).bfloat16(), torch.randn(3, 2, 40, 4, generator=g).bfloat16()
    for backend in ("interp", "host"):
        out, out2 = torch.zeros(3, 2, 4, 16, dtype=torch.bfloat16), torch.zeros(3, 4, 40, 2, dtype=torch.bfloat16)
        args = {"x": x, "w": w, "out": out, "out2": out2}
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        assert _same_bits(out, x.transpose(1, 2)), backend
        assert _same_bits(out2, w.transpose(1, 3)), backend


STRIDED = '''
import pypto

F16 = pypto.DT_FP16


@pypto.frontend.jit
def part(x: pypto.Tensor([4, 6, 48], F16), out: pypto.Tensor([20, 6, 4], F16)):
    pypto.set_vec_tile_shapes(8, 6, 4)
    out[:] = pypto.transpose(pypto.view(x, [4, 6, 20], [0, 0, 8]), 0, 2)
'''


@needs_cxx
def test_a_transpose_of_a_strided_view_reads_its_columns_only(tmp_path):
    kernel = live.load_module(str(write(tmp_path / "strided.py", STRIDED))).part
    x = torch.randn(4, 6, 48, generator=torch.Generator().manual_seed(5)).half()
    for backend, out in _run_both(kernel, {"x": x}, (20, 6, 4), torch.float16).items():
        assert _same_bits(out, x[:, :, 8:28].transpose(0, 2)), backend



# -- matrices larger than UB: blocks through UB (layout.blocks) --------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 70000), st.sampled_from([1, 2, 4, 8]), st.booleans(),
       st.sampled_from([4096, 65536, UB_BUDGET]))
def test_a_block_fits_ub_and_is_the_whole_matrix_when_that_fits(rows, cols, es, transposed, budget):
    br, bc = layout.blocks(rows, cols, es, transposed, budget)
    whole = sum(layout._ub_bytes(rows, cols, es, transposed)) <= budget
    assert ((br, bc) == (rows, cols)) == whole
    a = 32 // es
    assert 1 <= br <= rows and 1 <= bc <= cols
    assert sum(layout._ub_bytes(br, bc, es, transposed)) <= budget
    assert br == rows or br % a == 0
    assert bc == cols or bc % a == 0
    if not whole and bc == cols and br + a <= rows:  # as many whole rows as fit
        assert sum(layout._ub_bytes(br + a, bc, es, transposed)) > budget


BIG = {  # name: (shape, dtype, d0, d1): every one over UB
    "kimi_rows": ((64, 512), "fp32", 0, 1),
    "ragged_rows": ((70, 700), "fp32", 1, 0),
    "batched": ((3, 50, 1500), "fp16", 1, 2),
    "last_kept": ((40, 3, 2000), "fp32", 0, 1),
    "wide": ((9, 24001), "int32", 0, 1),
    "bf16_tall": ((1100, 90), "bf16", 0, 1),
}


@needs_cxx
@pytest.mark.parametrize("name", sorted(BIG))
def test_a_transpose_larger_than_ub_moves_in_blocks_bit_for_bit(tmp_path, name):
    shape, dt, d0, d1 = BIG[name]
    oshape = list(shape)
    oshape[d0], oshape[d1] = oshape[d1], oshape[d0]
    source = TRANSPOSE.format(shape=list(shape), oshape=oshape, dt=PDT[dt], d0=d0, d1=d1,
                              tile=", ".join(str(min(d, 16)) for d in oshape))
    kernel = live.load_module(str(write(tmp_path / "swap.py", source))).swap
    x = _bits(shape, dt, torch.Generator().manual_seed(sum(shape)))
    files = pipeline.emit(pipeline.lower(kernel, {"x": x, "out": torch.zeros(oshape, dtype=TDT[dt])}), "ascendc")
    manifest = files["manifest.json"]
    manifest = json.loads(manifest) if isinstance(manifest, str) else manifest
    assert [k.get("blocks") for k in manifest["kernels"] if k["kind"] == "transpose"][0], manifest["kernels"]
    for backend, out in _run_both(kernel, {"x": x}, oshape, TDT[dt]).items():
        assert _same_bits(out, x.transpose(d0, d1)), backend


RAGGED_BIG = '''
import pypto


@pypto.frontend.jit
def tiles(x: pypto.Tensor([100, 600], pypto.DT_FP32), out: pypto.Tensor([600, 100], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(0, 2, 1, name="R", idx_name="i"):
        rows = pypto.min(100 - i * 64, 64)
        part = pypto.view(x, [64, 600], [i * 64, 0], valid_shape=[rows, 600])
        pypto.assemble(pypto.transpose(part, 0, 1), [0, i * 64], out)
'''


@needs_cxx
def test_a_partially_valid_matrix_larger_than_ub_moves_its_valid_blocks_only(tmp_path):
    """[64, 600] fp32 (150 KiB, its transpose as much again) valid in 36 rows at the loop's last step:
    the blocks past the valid rows move nothing, the result's columns past them keep their values."""
    kernel = live.load_module(str(write(tmp_path / "tiles.py", RAGGED_BIG))).tiles
    x = _bits((100, 600), "fp32", torch.Generator().manual_seed(3))
    for backend, out in _run_both(kernel, {"x": x}, (600, 100), torch.float32).items():
        assert _same_bits(out, x.transpose(0, 1)), backend


# -- uniform / normal: pypto's Philox-4x32-10 (ir/random.py, emit/random.py) ------------------

RANDOM = '''
import pypto


@pypto.frontend.jit
def draw(out: pypto.Tensor({shape}, {dt})):
    pypto.set_vec_tile_shapes({tile})
    out[:] = pypto.{kind}({shape}, [{key}], [{c0}, {c1}], [{alg}], {dt})
'''


def _philox_reference(key: int, counter: int, group: int) -> list:
    """Philox-4x32-10 of one counter in plain Python integers (written from the algorithm's
    definition, independently of ir/random.py): counter words [group lo, group hi, counter lo,
    counter hi], key words [key lo, key hi]."""
    mask = 2 ** 32 - 1
    c = [group & mask, group >> 32, counter & mask, counter >> 32]
    k = [key & mask, key >> 32]
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & mask, (p0 >> 32) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + 0x9E3779B9) & mask, (k[1] + 0xBB67AE85) & mask]
    return c


def _reference(kind: str, n: int, dtype: str, key: int, counter: int) -> torch.Tensor:
    """The values in double: uniform from a word's low mantissa bits, normal by Box-Muller."""
    out = []
    for g in range(-(-n // 4)):
        w = _philox_reference(key, counter, g)
        if kind == "uniform":
            bits = {"fp32": 23, "fp16": 10, "bf16": 7}[dtype]
            out += [(x & (2 ** bits - 1)) / 2 ** bits for x in w]
        else:
            for a, b in ((w[0], w[1]), (w[2], w[3])):
                r = math.sqrt(-2 * math.log(max((a & 0x7FFFFF) / 2 ** 23, 1e-7)))
                t = 2 * math.pi * (b & 0x7FFFFF) / 2 ** 23
                out += [r * math.sin(t), r * math.cos(t)]
    return torch.tensor(out[:n], dtype=torch.float64)


@st.composite
def _draws(draw):
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.sampled_from([1, 3, 4, 8, 17, 64]), min_size=rank, max_size=rank))
    if draw(st.booleans()):
        shape[-1] = 300  # rows of 300: several chunks of 512 results, a partial last one
    assume(math.prod(shape) <= 6000)
    return (draw(st.sampled_from(["uniform", "normal"])), tuple(shape), draw(st.sampled_from(["fp32", "fp16", "bf16"])),
            draw(st.integers(0, 2 ** 64 - 1)), draw(st.integers(0, 2 ** 64 - 1)), draw(st.sampled_from([1, 3])))


@needs_cxx
@settings(max_examples=10, deadline=None)
@given(_draws())
def test_uniform_and_normal_are_pypto_philox_on_both_backends(tmp_path_factory, case):
    """Both backends give the same bits, and those are Philox-4x32-10's numbers (uniform exactly;
    normal within fp32 rounding of Box-Muller in double, then the dtype's rounding)."""
    kind, shape, dt, key, counter, alg = case
    note(f"{kind} {list(shape)} {dt} key={key} counter={counter}")
    source = RANDOM.format(kind=kind, shape=list(shape), dt=PDT[dt], key=key, c0=7, c1=counter, alg=alg,
                           tile=", ".join(str(min(d, 64)) for d in shape))
    kernel = live.load_module(str(write(tmp_path_factory.mktemp("rng") / "draw.py", source))).draw
    got = _run_both(kernel, {}, shape, TDT[dt])
    assert _same_bits(got["interp"], got["host"])
    want = _reference(kind, math.prod(shape), dt, key, counter)
    have = got["host"].double().reshape(-1)
    if kind == "uniform":
        assert torch.equal(have, want)
    else:
        tol = {"fp32": 2e-5, "fp16": 2e-3, "bf16": 1.6e-2}[dt]
        assert torch.allclose(have, want, rtol=tol, atol=tol), float((have - want).abs().max())


def test_normal_has_the_moments_of_a_standard_normal():
    """Statistics, as pypto's own tests of random ops look at: 2^16 draws have mean ~0, std ~1."""
    from pypto_ast.ir import random as rng

    x = rng.generate("normal", (1 << 16,), "fp32", 20240601, 3).double()
    assert abs(float(x.mean())) < 0.02 and abs(float(x.std()) - 1.0) < 0.02
    u = rng.generate("uniform", (1 << 16,), "fp32", 20240601, 3).double()
    assert 0.0 <= float(u.min()) and float(u.max()) < 1.0 and abs(float(u.mean()) - 0.5) < 0.01


@pytest.mark.parametrize("args, message", [
    ("[1234], [0, 1], [2]", "alg must be [1]"),
    ("[1, 2], [0, 1], [1]", "key must be a list of one integer"),
    ("[1234], [1], [1]", "counter must be a list of two integers"),
])
def test_random_arguments_against_the_op_page_are_refused(tmp_path, args, message):
    source = ("import pypto\n\n\n@pypto.frontend.jit\ndef bad(out: pypto.Tensor([8], pypto.DT_FP32)):\n"
              "    pypto.set_vec_tile_shapes(8)\n"
              f"    out[:] = pypto.uniform([8], {args}, pypto.DT_FP32)\n")
    with pytest.raises(pipeline.KernelErrors) as info:
        pipeline.lower_file(str(write(tmp_path / "bad.py", source)))
    text = str(info.value)
    assert info.value.code == "PTO106" and message in text and "pypto-uniform.md" in text, (info.value.code, text)


# -- store_scalar ------------------------------------------------------------------------------

POKE = '''
import pypto

I32 = pypto.DT_INT32


@pypto.frontend.jit
def poke(a: pypto.Tensor([8, 16], I32), out: pypto.Tensor([8, 16], I32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = a + 1
    out[2, 3] = a[0, 0] * 2 + a[7, 15]
    out[7, 0] = 5
    out[a[1, 1], 4] = -9
'''


@needs_cxx
def test_scalar_stores_land_in_order_after_the_kernels_before_them(tmp_path):
    kernel = live.load_module(str(write(tmp_path / "poke.py", POKE))).poke
    a = torch.randint(-100, 100, (8, 16), generator=torch.Generator().manual_seed(2), dtype=torch.int32)
    a[1, 1] = 6
    want = a + 1
    want[2, 3] = a[0, 0] * 2 + a[7, 15]
    want[7, 0] = 5
    want[6, 4] = -9
    for backend, out in _run_both(kernel, {"a": a}, (8, 16), torch.int32).items():
        assert torch.equal(out, want), backend


@needs_cxx
@pytest.mark.parametrize("backend", ["interp", "host"])
def test_a_scalar_store_out_of_bounds_is_a_located_error(tmp_path, backend):
    kernel = live.load_module(str(write(tmp_path / "poke.py", POKE))).poke
    a = torch.zeros(8, 16, dtype=torch.int32)
    a[1, 1] = 8  # row 8 of 8
    args = {"a": a, "out": torch.zeros(8, 16, dtype=torch.int32)}
    with pytest.raises((pipeline.KernelErrors, InterpError)) as info:
        pipeline.run(pipeline.lower(kernel, args), args, backend)
    assert "store_scalar" in str(info.value) and "out of bounds" in str(info.value)


# -- valid_shape of size-1 axes from min/max of loop indices -------------------------------------

GATED = '''
import pypto

F32 = pypto.DT_FP32


@pypto.frontend.jit
def gated(x: pypto.Tensor([2, 3, 4, 16], F32), out: pypto.Tensor([2, 3, 4, 16], F32)):
    pypto.set_vec_tile_shapes(1, 1, 4, 16)
    for i in pypto.loop(0, 2, 1, name="I", idx_name="i"):
        for j in pypto.loop(0, 3, 1, name="J", idx_name="j"):
            v = pypto.view(x, [1, 1, 4, 16], [i, j, 0, 0],
                           valid_shape=[pypto.min(2 - i, 1), pypto.max(pypto.min(j - i, 1), 0), 4, 16])
            pypto.assemble(v * 2.0 + 1.0, [i, j, 0, 0], out)
'''


@needs_cxx
def test_size_one_axes_with_a_computed_valid_extent_hold_all_or_nothing(tmp_path):
    """valid_shape [min(2 - i, 1), max(min(j - i, 1), 0), 4, 16] of [1, 1, 4, 16] views: two
    leading axes of one element, each valid or not as the control program computes; blocks with
    j <= i are empty and leave ``out`` as it was."""
    kernel = live.load_module(str(write(tmp_path / "gated.py", GATED))).gated
    x = torch.randn(2, 3, 4, 16, generator=torch.Generator().manual_seed(4))
    want = torch.full_like(x, -1.0)
    for i in range(2):
        for j in range(i + 1, 3):
            want[i, j] = x[i, j] * 2.0 + 1.0
    for backend in ("interp", "host"):
        out = torch.full_like(x, -1.0)
        args = {"x": x, "out": out}
        pipeline.run(pipeline.lower(kernel, args), args, backend)
        assert torch.equal(out, want), backend


SCATTER_TAIL = '''
import pypto

I32 = pypto.DT_INT32


@pypto.frontend.jit
def kv(cache: pypto.Tensor([6, 8], I32), index: pypto.Tensor([2, 3], I32), rows: pypto.Tensor([6, 8], I32),
       out: pypto.Tensor([6, 8], I32)):
    pypto.set_vec_tile_shapes(6, 8)
    for k in pypto.loop(0, 2, 1, name="K", idx_name="k"):
        idx = pypto.view(index, [1, 3], [k, 0], valid_shape=[1, pypto.min(3, 2 + k)])
        out.move(pypto.scatter_update(cache, -2, idx, rows))
'''


@needs_cxx
def test_scatter_update_takes_the_valid_entries_of_a_partially_valid_index(tmp_path):
    kernel = live.load_module(str(write(tmp_path / "kv.py", SCATTER_TAIL))).kv
    g = torch.Generator().manual_seed(8)
    cache, rows = (torch.randint(-50, 50, (6, 8), generator=g, dtype=torch.int32) for _ in range(2))
    index = torch.tensor([[5, 0, 3], [1, 4, 2]], dtype=torch.int32)
    want = cache.clone()
    for j in range(3):  # the last step: index row 1, all three entries
        want[int(index[1, j])] = rows[j]
    for backend, out in _run_both(kernel, {"cache": cache, "index": index, "rows": rows}, (6, 8), torch.int32).items():
        assert torch.equal(out, want), backend
