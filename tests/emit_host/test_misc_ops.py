"""Ops of issue 17 on both backends: transposes of any two axes of any dtype pypto's transpose
page lists (one permute kernel, emit/layout.py), whole and partially valid; the host's numbers
are the interpreter's, bit for bit."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, note, settings
from hypothesis import strategies as st

from pypto_ast import live, pipeline
from support import needs_cxx, write

TDT = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int16": torch.int16,
       "int32": torch.int32}
PDT = {dt: f"pypto.DT_{dt.upper()}" for dt in TDT}

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
